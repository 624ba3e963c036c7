"""Find phone numbers on a page with ``phonenumbers``, and guess the region they are written for.

Small pure functions used by :mod:`crawler.extract.contacts`. A national number such as
"030 901820" only means something for one country, so the page's own signals pick a default
region. :func:`default_region` reads them in this order, most specific to the numbers first:

1. the ``addressCountry`` of the page's own structured address (JSON-LD or microdata): a
   business writes its own numbers in its own country's format, whatever language the page
   is in ("en-US" is also the default ``lang`` of many CMS themes, whoever uses them);
2. the region subtag of the page's locale: ``<html lang>``, ``xml:lang``, ``og:locale``,
   then the Content-Language header ("de-AT" → AT);
3. the site's country-code TLD (``.de`` → DE, ``.co.uk`` → GB; not ``.io``, ``.co``…).

Without any of these, the page's language still names a region when it is written in one
country above all (de → DE, fr → FR: :func:`main_language_region`), and free text is read
for that region: "Tel.: 0471 80 60 745" on a German page means Bremerhaven, and a number
that is not valid there (an Austrian one) is not read. A language written in several
countries with their own numbering plans (en, es, pt, ar, zh, ru…: ``_SHARED_LANGUAGES``)
names none, and such a page's text is read for international numbers ("+49 30 901820") only,
because guessing a region turns order numbers and postcodes into "valid" phone numbers.
A ``tel:`` link or a structured ``telephone`` is certainly a phone number, so for those
:func:`language_region` adds one last, weaker guess: the country where the page's language
is most often written (en → US, pt → BR…), see ``_LANGUAGE_REGIONS``.

``Leniency.VALID`` (valid for the region, national prefix present where the region writes
one) rejects most digit runs of running text; what it lets through, and what the page calls
each number (phone or fax), is read by :mod:`~crawler.extract.phone_labels`. A number is a
fax (``type: "fax"``) when the page labels it so (or a structured ``faxNumber`` holds it)
and never labels it a phone: :func:`with_fax_types`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from functools import lru_cache
from typing import NamedTuple
from urllib.parse import unquote

import phonenumbers
from phonenumbers import Leniency, PhoneNumber, PhoneNumberFormat, PhoneNumberType

from core.items.contacts import Phone
from crawler.extract.domains import split_host
from crawler.extract.phone_labels import Label, is_other_number, label_of

logger = logging.getLogger(__name__)

_TYPES = {value: name.lower() for name, value in vars(PhoneNumberType).items()
          if isinstance(value, int) and name != "UNKNOWN"}
_SUBTAGS = re.compile(r"[-_]")
_REGION_SUBTAG = re.compile(r"[A-Za-z]{2}")
# Country-code TLDs that are sold as generic names: they say nothing about the site's country.
_GENERIC_CCTLDS = frozenset({"ai", "cc", "co", "fm", "gg", "io", "ly", "me", "to", "tv", "ws"})
_CCTLD_REGIONS = {"uk": "GB"}
# addressCountry values that are neither an ISO 3166 code nor a name phonenumbers knows.
_COUNTRY_ALIASES = {"uk": "GB", "usa": "US", "u.s.a.": "US", "u.s.": "US"}
# The region a language is most often written for (CLDR's likely subtags), for numbers that
# are certainly phone numbers only. pt → BR: most Portuguese on the web is Brazilian, and a
# Portuguese number is unaffected (it fails as Brazilian and needs a signal, as before).
# Languages without one clearly dominant country (ar, sw…) are left out on purpose.
_LANGUAGE_REGIONS = {
    "en": "US", "fr": "FR", "de": "DE", "es": "ES", "it": "IT", "pt": "BR", "nl": "NL",
    "pl": "PL", "ja": "JP", "ko": "KR", "zh": "CN", "ru": "RU", "uk": "UA", "sv": "SE",
    "da": "DK", "nb": "NO", "nn": "NO", "no": "NO", "fi": "FI", "cs": "CZ", "sk": "SK",
    "hu": "HU", "ro": "RO", "bg": "BG", "el": "GR", "tr": "TR", "he": "IL", "hi": "IN",
    "id": "ID", "th": "TH", "vi": "VN", "hr": "HR", "sl": "SI", "sr": "RS", "et": "EE",
    "lv": "LV", "lt": "LT", "is": "IS", "ca": "ES", "ms": "MY", "fa": "IR", "bn": "BD",
}
# Languages written in several countries with numbering plans of their own, none of which
# dominates: their likely region is a guess too weak for free text (en: US, GB, IN, AU…;
# es: ES, MX, AR…; pt: BR, PT; ar; zh: CN, TW, HK; ru: RU, BY, KZ; ms, sr, bn, fa).
_SHARED_LANGUAGES = frozenset({"en", "es", "pt", "ar", "zh", "ru", "ms", "sr", "bn", "fa"})
_TEL = re.compile(r"\s*tel:", re.IGNORECASE)
_DIGIT = re.compile(r"\d")
FAX = "fax"  # the ``type`` of a number the page labels a fax


class Found(NamedTuple):
    """A number read on the page, with what the page calls it there (None: says nothing)."""

    phone: Phone
    label: Label | None = None


def default_region(language_tags: Iterable[str | None], hostname: str,
                   countries: Iterable[object] = ()) -> str | None:
    """The region national numbers on the page are written for (see the module docstring for
    the order): the first of ``countries`` (structured ``addressCountry`` values) that names a
    region, else the region subtag of the first language tag that has one ("de-AT", "de_AT",
    "de-DE, en"), else the site's country-code TLD; None when no signal names a region
    ``phonenumbers`` knows.

    A bare language ("de", "ar") is never read as a region here ("ar" would be Argentina).
    """
    for region in map(country_region, countries):
        if region is not None:
            return region
    for tag in language_tags:
        if (region := _tag_region(tag)) is not None:
            return region
    return _tld_region(hostname)


def language_region(language_tags: Iterable[str | None]) -> str | None:
    """The country the first known language of ``language_tags`` is most often written for
    ("en" → US); a weak guess, only for ``tel:`` links and structured telephones."""
    for language in filter(None, map(_language, language_tags)):
        if (region := _LANGUAGE_REGIONS.get(language)) is not None:
            return region
    return None


def main_language_region(language_tags: Iterable[str | None]) -> str | None:
    """The region of the page's language when it is written in one country above all (de →
    DE, fr → FR), for national numbers in free text; None for a language shared by several
    countries' numbering plans (en, es, pt…) or none. Only the first tag present counts: it
    is the page's own (``<html lang>``), the others restate or contradict it."""
    language = next(filter(None, map(_language, language_tags)), None)
    return None if language in _SHARED_LANGUAGES else _LANGUAGE_REGIONS.get(language or "")


def _language(tag: str | None) -> str:
    """The primary language subtag, lower case: "de-AT" → "de", "fr_FR, en" → "fr"."""
    return _SUBTAGS.split((tag or "").split(",", 1)[0].strip(), 1)[0].lower()


def country_region(value: object) -> str | None:
    """A schema.org ``addressCountry`` as a region code: "US", "de", "Deutschland", "United
    Kingdom", or a Country object naming one of those; the first usable one of a list."""
    if isinstance(value, list):
        return next(filter(None, map(country_region, value)), None)
    if isinstance(value, dict):
        return country_region([value.get(key) for key in ("identifier", "name", "alternateName")])
    if not isinstance(value, str):
        return None
    name = value.strip().casefold()
    region = _COUNTRY_ALIASES.get(name) or (name.upper() if len(name) == 2 else None)
    if region in phonenumbers.SUPPORTED_REGIONS:
        return region
    return _country_names().get(name)


@lru_cache(maxsize=1)
def _country_names() -> dict[str, str]:
    """Country names in every language ``phonenumbers`` describes regions in ("germany",
    "deutschland", "allemagne" → DE), read once, when a page first writes a country by name."""
    from phonenumbers.geodata.locale import LOCALE_DATA  # ~0.3 s to load: only when needed

    names: dict[str, str] = {}
    for region, by_language in LOCALE_DATA.items():
        if region not in phonenumbers.SUPPORTED_REGIONS:
            continue
        for name in by_language.values():  # "*en" means "the same as the English name"
            name = by_language.get(name[1:], "") if name.startswith("*") else name
            names.setdefault(name.casefold(), region)
    return names


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


def phone_record(number: PhoneNumber, raw: str, *, source_url: str, found_in: str) -> Phone:
    """The answer's record of one valid number: E.164, as written, its line type, and where
    it was found (the page, and ``tel``/``text``/``json_ld``/``microdata`` on it)."""
    return Phone(
        value=phonenumbers.format_number(number, PhoneNumberFormat.E164),
        raw=raw.strip(),
        type=_TYPES.get(phonenumbers.number_type(number)),
        source_url=source_url,
        found_in=found_in,
    )


def parse_phone(raw: object, region: str | None, *, source_url: str, found_in: str
                ) -> Phone | None:
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
    if not phonenumbers.is_valid_number(number):
        return None
    return phone_record(number, text, source_url=source_url, found_in=found_in)


def phone_from_href(href: str, region: str | None, *, source_url: str) -> Phone | None:
    """The number of a ``tel:`` link; None for any other link."""
    if not _TEL.match(href):
        return None
    return parse_phone(href, region, source_url=source_url, found_in="tel")


def phones_in_text(text: str, region: str | None, *, source_url: str
                   ) -> Iterator[tuple[int, int, Found]]:
    """Valid numbers written in ``text`` with their labels, minus those that are another kind
    of number (see :mod:`~crawler.extract.phone_labels`); each with the span it was read
    from, so that the caller can merge several renderings."""
    for match in phonenumbers.PhoneNumberMatcher(text, region, Leniency.VALID):
        label = label_of(text, match.start, match.end)
        if not is_other_number(text, match.start, match.end, label):
            yield match.start, match.end, Found(phone_record(
                match.number, match.raw_string, source_url=source_url, found_in="text"), label)


def with_fax_types(found: Iterable[Found]) -> list[Phone]:
    """The phones in order, ``type`` "fax" for every number labelled a fax somewhere on the
    page and a phone nowhere ("Tel./Fax: …" is a line that answers calls)."""
    found = list(found)
    faxes = {item.phone.value for item in found if item.label == FAX}
    faxes -= {item.phone.value for item in found if item.label == "phone"}
    return [replace(item.phone, type=FAX) if item.phone.value in faxes else item.phone
            for item in found]
