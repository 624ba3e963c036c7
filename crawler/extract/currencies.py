"""Currency codes from what shops write: ISO codes, symbols, and the page's country.

A symbol such as "€" or "₩" names one currency; "$", "¥" and "kr" name several (US, Canadian,
Taiwanese dollars, Chilean and Mexican pesos…), and a shop writes the one of its own country.
So an ambiguous symbol is read against the page's territories — the region of its declared
language (``<html lang="es-CL">``, ``og:locale``) and its country-code domain — and kept only
when that territory's currency is written with that very symbol there (Unicode CLDR, via
babel): "$" on a ``.cl`` shop is CLP, "kr" on a ``.se`` shop SEK, "$" on a ``.de`` shop stays
unknown (None) rather than guessed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from functools import cache
from urllib.parse import urlsplit

from babel import Locale, UnknownLocaleError
from babel.numbers import get_currency_symbol, get_territory_currencies, list_currencies

#: Every ISO 4217 code Unicode CLDR knows (current and historical), via babel: three letters
#: are not a currency by shape alone ("lei", "Dhs", "SFr" are not codes).
ISO_4217 = frozenset(list_currencies())
# symbols (lower-cased) that name one currency; "$", "¥", "kr", "Rs", "R" and "lei" name
# several and are read against the page's territory
_SYMBOLS = {
    "€": "EUR", "£": "GBP", "₹": "INR", "₽": "RUB", "\u0440\u0443\u0431": "RUB",  # Cyrillic "rub"
    "₩": "KRW", "원": "KRW", "円": "JPY", "₺": "TRY", "₴": "UAH", "₪": "ILS", "฿": "THB",
    "₫": "VND", "₱": "PHP", "₦": "NGN", "₸": "KZT", "₼": "AZN", "₾": "GEL", "zł": "PLN",
    "kč": "CZK", "ft": "HUF", "kn": "HRK", "лв": "BGN", "r$": "BRL", "us$": "USD",
    "c$": "CAD", "ca$": "CAD", "a$": "AUD", "au$": "AUD", "nz$": "NZD", "hk$": "HKD",
    "s$": "SGD", "mx$": "MXN", "nt$": "TWD",
}
# country-code domains that are not the ISO 3166 code of their country
_TLD_TERRITORY = {"uk": "GB"}
_REGION = re.compile(r"^[a-z]{2,3}(?:[-_][a-z]{4})?[-_]([a-z]{2})\b", re.IGNORECASE)


def currency_code(value: object, territories: Iterable[str] = ()) -> str | None:
    """ISO 4217 code from a code in any case, an unambiguous symbol (€ → EUR, 원 → KRW), or
    an ambiguous one ($, ¥, kr) that the first of ``territories`` (ISO 3166 codes) whose
    currency it writes so resolves; None otherwise: the price is kept, its currency not
    guessed."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = unicodedata.normalize("NFKC", value.strip())
    if text.upper() in ISO_4217:
        return text.upper()
    if code := _SYMBOLS.get(text.lower()):
        return code
    symbol = _symbol_key(text)
    for territory in territories:
        code, written = _local_currency(territory)
        if code and symbol and (written == symbol or (symbol == "$" and written.endswith("$"))):
            return code
    return None


def page_territories(url: str, lang: str | None, meta: Mapping[str, str]) -> tuple[str, ...]:
    """The countries a page addresses, most explicit first: the region of its language
    (``lang="en-AU"``), of ``og:locale`` (``es_CL``), then its country-code domain."""
    found: list[str] = []
    for tag in (lang, meta.get("og:locale")):
        if tag and (match := _REGION.match(tag.strip())):
            found.append(match.group(1).upper())
    try:
        tld = (urlsplit(url).hostname or "").rsplit(".", 1)[-1].lower()
    except ValueError:
        tld = ""
    if len(tld) == 2 and tld.isalpha():
        found.append(_TLD_TERRITORY.get(tld, tld.upper()))
    return tuple(dict.fromkeys(found))


@cache
def _local_currency(territory: str) -> tuple[str | None, str]:
    """(the territory's current currency, the symbol its main language writes it with)."""
    try:
        code = get_territory_currencies(territory)[0]
        return code, _symbol_key(get_currency_symbol(code, Locale.parse(f"und_{territory}")))
    except (UnknownLocaleError, ValueError, IndexError):
        return None, ""


def _symbol_key(symbol: str) -> str:
    """A symbol compared without case, width or a trailing dot ("kr." is "kr", "￥" is "¥")."""
    return unicodedata.normalize("NFKC", symbol).strip().rstrip(".").lower()
