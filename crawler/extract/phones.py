"""Find phone numbers on a page with ``phonenumbers``, and guess the region they are written for.

Small pure functions used by :mod:`crawler.extract.contacts`. A national number such as
"030 901820" only means something for one country, so the page's own signals pick a default
region; without one only international numbers ("+49 30 901820") are read, because guessing a
region turns order numbers and postcodes into "valid" phone numbers.

``Leniency.VALID`` already rejects most dates and prices; :func:`phones_in_text` also drops
numbers labelled as something else ("Order no.", "IBAN", "Konto…") or glued to a currency.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import unquote

import phonenumbers
from phonenumbers import Leniency, PhoneNumber, PhoneNumberFormat, PhoneNumberType

from crawler.extract.emails import split_host

logger = logging.getLogger(__name__)

_TYPES = {value: name.lower() for name, value in vars(PhoneNumberType).items()
          if isinstance(value, int) and name != "UNKNOWN"}
_SUBTAGS = re.compile(r"[-_]")
_REGION_SUBTAG = re.compile(r"[A-Za-z]{2}")
# Country-code TLDs that are sold as generic names: they say nothing about the site's country.
_GENERIC_CCTLDS = frozenset({"ai", "cc", "co", "fm", "gg", "io", "ly", "me", "to", "tv", "ws"})
_CCTLD_REGIONS = {"uk": "GB"}
_TEL = re.compile(r"\s*tel:", re.IGNORECASE)
# The words between the previous number and this one, when they name another kind of number.
_PHONE_LABEL = re.compile(
    r"\b(?:tel|phone|telefon|telephone|fax|mobil\w*|cell|call|ruf\w*|handy|hotline|whatsapp)"
    r"|☎|📞", re.IGNORECASE)
_OTHER_LABEL = re.compile(
    r"(?:#|№|\b(?:order|invoice|isbn|ean|gtin|upc|sku|iban|bic|blz|swift|account|konto\w*"
    r"|kunden\w*|rechnung\w*|artikel\w*|art|ust\w*|vat|tax|steuer\w*|hr[ab]|register\w*"
    r"|reg|ref\w*|tracking|id|no|number|\w*nummer|\w*nr|item|model|serial|ticket|zip|plz"
    r"|postcode|postfach|po box))\W*$", re.IGNORECASE)
_CURRENCY_BEFORE = re.compile(r"[$€£¥₹]\s*$")
_CURRENCY_AFTER = re.compile(r"^\s*(?:[$€£¥₹%]|(?:eur|usd|gbp|chf)\b)", re.IGNORECASE)
_DIGIT = re.compile(r"\d")
_CONTEXT = 40  # characters either side of a match that can hold its label or currency


def default_region(language_tags: Iterable[str | None], hostname: str) -> str | None:
    """The region national numbers on the page are written for: the region subtag of the
    first language tag that has one ("de-AT", "de_AT", "de-DE, en"), else the site's
    country-code TLD; None when no signal names a region ``phonenumbers`` knows.

    Explicit page declarations come first: a locale is the author's statement, a TLD a guess.
    A bare language ("de", "ar") is never read as a region ("ar" would be Argentina).
    """
    for tag in language_tags:
        if (region := _tag_region(tag)) is not None:
            return region
    return _tld_region(hostname)


def _tag_region(tag: str | None) -> str | None:
    subtags = _SUBTAGS.split((tag or "").split(",", 1)[0].strip())
    # the region is the first two-letter subtag after the language (also in "zh-Hant-TW")
    region = next((s.upper() for s in subtags[1:] if _REGION_SUBTAG.fullmatch(s)), None)
    return region if region in phonenumbers.SUPPORTED_REGIONS else None


def _tld_region(hostname: str) -> str | None:
    """``.de`` → DE, ``.co.uk`` → GB; None for gTLDs and ccTLDs sold as generic names."""
    country = split_host(hostname).suffix.rsplit(".", 1)[-1]
    if len(country) != 2 or country in _GENERIC_CCTLDS:
        return None
    region = _CCTLD_REGIONS.get(country, country.upper())
    return region if region in phonenumbers.SUPPORTED_REGIONS else None


def phone_record(number: PhoneNumber, raw: str) -> dict[str, Any]:
    """The output shape for one valid number: E.164, as written, and its line type."""
    return {
        "value": phonenumbers.format_number(number, PhoneNumberFormat.E164),
        "raw": raw.strip(),
        "type": _TYPES.get(phonenumbers.number_type(number)),
    }


def parse_phone(raw: object, region: str | None) -> dict[str, Any] | None:
    """One written number (a ``tel:`` href or a structured-data ``telephone``) as a record;
    None unless ``phonenumbers`` considers it a valid number for ``region``."""
    if not isinstance(raw, str):
        return None
    text = unquote(_TEL.sub("", raw, count=1)).strip()
    if not _DIGIT.search(text):
        return None
    try:
        number = phonenumbers.parse(text, region)
    except phonenumbers.NumberParseException:
        return None
    return phone_record(number, text) if phonenumbers.is_valid_number(number) else None


def phone_from_href(href: str, region: str | None) -> dict[str, Any] | None:
    """The number of a ``tel:`` link; None for any other link."""
    return parse_phone(href, region) if _TEL.match(href) else None


def phones_in_text(text: str, region: str | None) -> Iterator[dict[str, Any]]:
    """Valid numbers written in ``text``, minus those whose surroundings say they are not."""
    for match in phonenumbers.PhoneNumberMatcher(text, region, Leniency.VALID):
        before = text[max(0, match.start - _CONTEXT):match.start]
        if _is_phone_context(before, text[match.end:match.end + _CONTEXT]):
            yield phone_record(match.number, match.raw_string)


def _is_phone_context(before: str, after: str) -> bool:
    """False when the text around a match shows it is a price or a labelled non-phone number.

    Only the words since the previous digit count as this number's label, so "Tel. 030 1234,
    Order no. 2125550123" keeps the first number and drops the second.
    """
    label = _DIGIT.split(before)[-1]
    if _CURRENCY_BEFORE.search(before) or _CURRENCY_AFTER.match(after):
        return False
    return bool(_PHONE_LABEL.search(label)) or not _OTHER_LABEL.search(label)
