"""Offers of a product, and the normalisers for what they hold: price, currency, availability
and item condition.

Every syntax (JSON-LD, microdata, RDFa, OpenGraph) ends up in ``offers()``, so "1.299,00 €",
``19.9`` and ``"http://schema.org/InStock"`` are read one way whatever carried them. A value
that cannot be read with confidence (a "$" price's currency, an unknown availability word)
gives None rather than a guess (``crawler.extract.currencies`` reads "$" or "kr" only against
the page's country). In particular an offer that states no availability has
``availability: null``: the contract promises what the page says, and a client must be able to
tell a stated InStock from an unstated one (inferring InStock from a price alone would add ~.10
availability F1 on the benchmark, by its own convention, but it is a guess). What a page
states outside its markup ("In stock", an enabled buy button) is read in
``crawler.extract.shown``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import astuple
from decimal import Decimal
from typing import Any

from price_parser import Price

from core.formats import iso_utc
from core.items.products import Offer
from crawler.extract.currencies import currency_code
from crawler.extract.schema import MAX_DEPTH, Reader, local_name, number_text, prop

MAX_OFFERS = 20

# schema.org writes prices with "." as decimal separator and no grouping: such text is kept as
# written ("23.450" is 23.45, not 23450 as price-parser would read it); anything else is parsed.
_PLAIN_DECIMAL = re.compile(r"\+?([0-9]+(?:\.[0-9]+)?)")
#: Arabic decimal and thousands separators, as the "." and "," price-parser reads.
_ARABIC_SEPARATORS = str.maketrans({"\u066b": ".", "\u066c": ","})
_AVAILABILITY = {name.lower(): name for name in (
    "InStock", "OutOfStock", "PreOrder", "BackOrder", "Discontinued", "LimitedAvailability",
    "OnlineOnly", "InStoreOnly", "SoldOut", "PreSale", "MadeToOrder", "Reserved",
)} | {  # spellings of feeds and OpenGraph (product:availability) that mean the same
    "available": "InStock", "oos": "OutOfStock", "unavailable": "OutOfStock",
    "notavailable": "OutOfStock", "backordered": "BackOrder",
}
_CONDITION = {name.lower(): name for name in (
    "NewCondition", "UsedCondition", "RefurbishedCondition", "DamagedCondition",
)} | {"new": "NewCondition", "used": "UsedCondition", "refurbished": "RefurbishedCondition",
      "damaged": "DamagedCondition"}
# price specifications that are not what the buyer pays now (schema.org PriceTypeEnumeration)
_REFERENCE_PRICES = {name.lower(): name for name in (
    "ListPrice", "StrikethroughPrice", "MSRP", "SRP", "InvoicePrice")}
_UNAVAILABLE = frozenset({"OutOfStock", "SoldOut", "Discontinued"})
# what a nested offer takes from the AggregateOffer (or wrapping Offer) around it
_INHERITED = ("currency", "availability", "item_condition", "price_valid_until", "seller")
_NON_LETTERS = re.compile(r"[^a-z]")


def parse_price(value: Any, territories: tuple[str, ...] = ()
                ) -> tuple[str | None, str | None]:
    """(price as plain decimal text, currency code written next to it) from a number or text.

    Numbers keep the digits they were written with (19.9 → "19.9", 450 → "450"); text in
    schema.org's format is kept as is ("19.90"); other text goes through price-parser
    ("$1,299.00", "1.299,00 €", "1 299,00" → "1299.00"). Negative amounts give None. A symbol
    several currencies use is read against ``territories`` (``currencies.currency_code``).
    """
    if isinstance(value, int | float | Decimal) and not isinstance(value, bool):
        text = number_text(value)
        return (text if text and not text.startswith("-") else None), None
    if not isinstance(value, str) or not value.strip():
        return None, None
    value = ascii_digits(value)
    if plain := _PLAIN_DECIMAL.fullmatch(value.strip()):
        return plain.group(1), None
    if value.strip().startswith("-"):
        return None, None
    parsed = Price.fromstring(value)
    amount = number_text(parsed.amount) if parsed.amount is not None else None
    return amount, currency_code(parsed.currency, territories)


def ascii_digits(text: str) -> str:
    """``text`` with the digits of any script as ASCII digits: full-width ones (as many
    Japanese shops write prices), Arabic-Indic ones and their separators. price-parser reads
    only ASCII digits: it took a full-width 1,230 for 1."""
    text = unicodedata.normalize("NFKC", text).translate(_ARABIC_SEPARATORS)
    return "".join(str(unicodedata.decimal(char)) if char.isdecimal() and not char.isascii()
                   else char for char in text)


def availability(value: Any) -> str | None:
    """schema.org ItemAvailability name from its IRI, its name in any case or spacing
    (``"in stock"``, ``"in_stock"``, ``"https://schema.org/InStock"``) or an OpenGraph value."""
    return _enumeration(value, _AVAILABILITY)


def item_condition(value: Any) -> str | None:
    """schema.org OfferItemCondition name, from its IRI or from new/used/refurbished/damaged."""
    return _enumeration(value, _CONDITION)


def _enumeration(value: Any, names: dict[str, str]) -> str | None:
    if isinstance(value, dict):
        value = value.get("@id") or value.get("@value") or value.get("name")
    if isinstance(value, list):
        return next(filter(None, (_enumeration(item, names) for item in value)), None)
    if not isinstance(value, str):
        return None
    text = value.strip().rstrip("/")
    if "/" in text or text.lower().startswith("schema:"):  # an IRI: its last segment
        text = local_name(text)
    return names.get(_NON_LETTERS.sub("", text.lower()))


def offers(value: Any, reader: Reader) -> list[Offer]:
    """The offers of a product's ``offers`` value, the one a buyer would take first.

    Nested offers (an AggregateOffer's ``offers``) inherit what their parent states and they
    do not (currency, condition, seller…); a parent without a price that only wraps them, or
    whose price is one of theirs (an AggregateOffer's ``lowPrice``), is replaced by them.
    Offers that say nothing are dropped. At most MAX_OFFERS, best first (``_rank``).
    """
    return sorted(_offers(value, reader, None, 0), key=_rank)[:MAX_OFFERS]


def _rank(offer: Offer) -> tuple[bool, bool, bool, Decimal]:
    """Sort key: priced offers first, available before unavailable, then the lowest positive
    price (a sale price listed beside the regular one, the cheapest seller); a price of 0 is
    more often a placeholder than a gift and comes after the others. Stable, so ties keep
    document order."""
    price = Decimal(offer.price or 0)
    return offer.price is None, offer.availability in _UNAVAILABLE, price == 0, price


def _offers(value: Any, reader: Reader, parent: Offer | None, depth: int) -> list[Offer]:
    found: list[Offer] = []
    for node in reader.nodes(value) if depth <= MAX_DEPTH else []:
        own = _offer(node, reader)
        if parent is not None:
            for name in _INHERITED:
                if getattr(own, name) is None:
                    setattr(own, name, getattr(parent, name))
        nested = _offers(prop(node, "offers"), reader, own, depth + 1)
        # an AggregateOffer's lowPrice is often one of its offers' prices: that offer says more
        summary = any((o.price, o.currency) == (own.price, own.currency) for o in nested)
        if any(astuple(own)) and (own.price is not None or not nested) and not summary:
            found.append(own)
        found.extend(nested)
    return found


def _offer(node: dict[str, Any], reader: Reader) -> Offer:
    """One offer. The price is ``price``, else ``lowPrice`` (AggregateOffer), else the buyer's
    price of ``priceSpecification``; the currency is ``priceCurrency``, else the one written
    with that price."""
    where = reader.territories
    price, written_currency = parse_price(_first_value(node, "price", "lowPrice"), where)
    currency = currency_code(reader.text(prop(node, "priceCurrency")), where)
    if price is None and (spec := _price_specification(node, reader)) is not None:
        price, written_currency = parse_price(_first_value(spec, "price", "minPrice"), where)
        currency = currency or currency_code(reader.text(prop(spec, "priceCurrency")), where)
    return Offer(
        price=price,
        currency=currency or written_currency,
        availability=availability(prop(node, "availability")),
        item_condition=item_condition(prop(node, "itemCondition")),
        price_valid_until=iso_utc(reader.text(prop(node, "priceValidUntil"))),
        seller=reader.name(prop(node, "seller")),
        url=reader.url(prop(node, "url")),
        sku=reader.text(prop(node, "sku")),
    )


def _price_specification(node: dict[str, Any], reader: Reader) -> dict[str, Any] | None:
    """The specification of the price paid now: list and strike-through prices come last."""
    specs = [spec for spec in reader.nodes(prop(node, "priceSpecification"))
             if _first_value(spec, "price", "minPrice") is not None]

    def is_reference(spec: dict[str, Any]) -> bool:
        return _enumeration(prop(spec, "priceType"), _REFERENCE_PRICES) is not None

    return min(specs, key=is_reference, default=None)


def _first_value(node: dict[str, Any], *keys: str) -> Any:
    """The first of ``keys`` with a value (a one-item list is unwrapped; "" counts as none)."""
    for key in keys:
        value = prop(node, key)
        if isinstance(value, list):
            value = next((v for v in value if v not in (None, "")), None)
        if isinstance(value, dict):
            value = value.get("@value")
        if value not in (None, ""):
            return value
    return None
