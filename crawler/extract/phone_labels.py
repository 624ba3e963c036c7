"""What the words around a number in running text, and its own shape, say it is.

``phonenumbers.PhoneNumberMatcher`` (``Leniency.VALID``) finds every digit run that is a valid
number for the region, and on a German page "02.12.2022" is one (0212 is Solingen's area
code). Its metadata cannot know what the page means, so :mod:`crawler.extract.phones` asks
this module three things about each match:

* its **label**, the words between the previous digit and the number ("Tel.:", "Telefax",
  "T"/"F" in a footer, "Fax" after it in brackets): ``"phone"``, ``"fax"`` or None. A fax
  label is how a fax number is told from a phone; either label outweighs the weaker signs
  below;
* whether its **shape** is another kind of number: a calendar date (02.12.2022, 2022-12-03,
  12/03/2022) or an ISBN with a valid check digit (0-306-40615-2), whatever the label (news
  and shops write these in running text all the time; nobody writes a phone number so), or,
  when unlabelled, a file number ending in a year ("Vorlage 0212/2022");
* whether it is glued to a currency (a price), or, when unlabelled, an **other label** names
  it as something else (order, invoice, file, customer, tax, bank, tracking and company
  registry numbers, in the usual words and abbreviations of the major European languages).
"""

from __future__ import annotations

import re
from typing import Literal

Label = Literal["phone", "fax"]

_CONTEXT = 40  # characters either side of a match that can hold its label or currency
_DIGIT = re.compile(r"\d")
_FAX_WORD = re.compile(
    r"\b(?:tele)?fax\w*|\bt[ée]l[ée]copi\w*|\btelefaks\w*|\bfaks\w*|\bfacsimile\b"
    r"|(?<![\w.])(?-i:F)\W{0,3}$", re.IGNORECASE)
_PHONE_WORD = re.compile(
    r"\b(?:t[ée]l|telefon\w*|t[ée]l[ée]phon\w*|tel[ée]fono|phone\w*|fon|mobil\w*|cell\w*"
    r"|call\w*|ruf\w*|handy|hotline|whatsapp|tlf|tfn|puh|portable|gsm|zentrale|switchboard)\b"
    r"|☎|📞|(?<![\w.])(?-i:T)\W{0,3}$", re.IGNORECASE)
_FAX_AFTER = re.compile(r"\s*[(\[]\s*(?:tele)?fax\b", re.IGNORECASE)
_OTHER_LABEL = re.compile(
    r"(?:#|№|\bn[°º]|\b(?:order|invoice|isbn|ean|gtin|upc|sku|iban|bic|blz|swift|account"
    r"|konto\w*|kunden\w*|rechnung\w*|artikel\w*|art|ust\w*|vat|tax|steuer\w*|hr[ab]"
    r"|\w*register\w*|reg|ref\w*|tracking|id|no|number|\w*nummer|\w*nr|item|model|serial"
    r"|ticket|zip|plz|\w*code|postfach|po box|az|aktenzeichen|gz|geschäftszeichen"
    r"|vorlage|drucksache|vorgang|beschluss|urteil|commande|facture|dossier|colis|suivi"
    r"|pedido|factura|ordine|fattura|bestelling|factuur"
    # company, tax and registry identifiers (DE/AT/CH, FR, NL/BE, IT, ES, PL, CZ, DK, EU…)
    r"|firmenbuch\w*|fn|dvr|zvr|uid|gln|mwst|siret|siren|rcs|tva|ape|naf|kvk|btw|rsin"
    r"|p\.?\s?iva|iva|cif|nif|nip|regon|krs|ičo|dič|cvr|abn|acn|eori|lei|duns))\W*$",
    re.IGNORECASE)
_CURRENCY_BEFORE = re.compile(r"[$€£¥₹]\s*$")
_CURRENCY_AFTER = re.compile(r"^\s*(?:[$€£¥₹%]|(?:eur|usd|gbp|chf)\b)", re.IGNORECASE)
# Shapes: day.month.year (also / and -, two- or four-digit year), year-month-day, and a
# file number "N/YYYY". An ISBN is 10 or 13 digits in four or five hyphenated groups.
_DAY_FIRST = re.compile(r"(\d{1,2})([./-])(\d{1,2})\2(\d{4}|\d{2})")
_YEAR_FIRST = re.compile(r"((?:19|20)\d{2})([./-])(\d{1,2})\2(\d{1,2})")
_FILE_NUMBER = re.compile(r"\d+\s*/\s*(?:19|20)\d{2}")
_ISBN = re.compile(r"(?:97[89]-)?\d{1,5}-\d{1,7}-\d{1,7}-[\dX]", re.IGNORECASE)


def label_of(text: str, start: int, end: int) -> Label | None:
    """What the page calls the number at ``text[start:end]``: the words since the previous
    digit before it ("Tel.: ", "· Fax: "), or "(Fax)" right after it. A label naming both
    ("Tel./Fax:") is a phone: the line answers calls."""
    label = _DIGIT.split(text[max(0, start - _CONTEXT):start])[-1]
    without_fax = _FAX_WORD.sub(" ", label)
    if _PHONE_WORD.search(without_fax):
        return "phone"
    if without_fax != label or _FAX_AFTER.match(text, end):
        return "fax"
    return None


def is_other_number(text: str, start: int, end: int, label: Label | None) -> bool:
    """True when the number at ``text[start:end]`` is not a phone number: glued to a currency,
    shaped like a date or an ISBN; or, unless the page labels it a phone or fax, labelled as
    another kind of number or shaped like a file number ("0212/2022")."""
    raw = text[start:end].strip(" \t\r\n()[]")  # the matcher keeps a leading "("
    before, after = text[max(0, start - _CONTEXT):start], text[end:end + _CONTEXT]
    if _CURRENCY_BEFORE.search(before) or _CURRENCY_AFTER.match(after):
        return True
    if is_date(raw) or is_isbn(raw):
        return True
    if label is not None:
        return False
    return bool(_OTHER_LABEL.search(_DIGIT.split(before)[-1]) or _FILE_NUMBER.fullmatch(raw))


def is_date(raw: str) -> bool:
    """02.12.2022, 2/12/22, 12-03-2022 (either of the first two a month), 2022-12-03."""
    raw = raw.strip()
    if (match := _DAY_FIRST.fullmatch(raw)) is not None:
        first, second = int(match.group(1)), int(match.group(3))
        return 1 <= min(first, second) <= 12 and 1 <= max(first, second) <= 31
    if (match := _YEAR_FIRST.fullmatch(raw)) is not None:
        return 1 <= int(match.group(3)) <= 12 and 1 <= int(match.group(4)) <= 31
    return False


def is_isbn(raw: str) -> bool:
    """An ISBN-10 or ISBN-13 written in its hyphenated groups, with a valid check digit."""
    if not _ISBN.fullmatch(raw.strip()):
        return False
    digits = [10 if char in "xX" else int(char) for char in raw if char.isdigit() or char in "xX"]
    if len(digits) == 10:
        return sum((10 - i) * digit for i, digit in enumerate(digits)) % 11 == 0
    if len(digits) == 13 and 10 not in digits:
        return sum(digit * (1 if i % 2 == 0 else 3) for i, digit in enumerate(digits)) % 10 == 0
    return False
