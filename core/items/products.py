"""The product data operation's answer (``POST /products``, ``scrapy crawl products``)."""

from __future__ import annotations

from dataclasses import dataclass

from core.items.fields import described


@dataclass(kw_only=True)
class Rating:
    rating_value: float | None = described("The average rating.", default=None)
    review_count: int | None = described("How many reviews (else ratings).", default=None)
    best_rating: float | None = described("The top of the scale.", default=None)


@dataclass(kw_only=True)
class Offer:
    price: str | None = described(
        "Decimal string, '.' as separator, no thousands separator.", default=None)
    currency: str | None = described(
        "ISO 4217; null for a symbol several currencies use ($, ¥, kr).", default=None)
    availability: str | None = described(
        "schema.org name without prefix, e.g. InStock.", default=None)
    item_condition: str | None = described(
        "schema.org name without prefix, e.g. NewCondition.", default=None)
    price_valid_until: str | None = described("ISO 8601, UTC when the page gives a zone.",
                                              default=None)
    seller: str | None = described("The seller's name.", default=None)
    url: str | None = described("The offer's page, absolute.", default=None)
    sku: str | None = described("The offer's own SKU.", default=None)


@dataclass(kw_only=True)
class Product:
    source: str = described(
        "json_ld|microdata|rdfa|opengraph|page (no product markup: what the page shows)")
    name: str | None = described("The product's name.", default=None)
    description: str | None = described("Its description.", default=None)
    url: str | None = described("Its page, absolute.", default=None)
    sku: str | None = described(
        "Stock keeping unit, else productID; a page's only product without one (nor on its "
        "offers) takes the SKU labelled in the page's text.", default=None)
    mpn: str | None = described("Manufacturer part number.", default=None)
    gtin: str | None = described("GTIN-8/12/13/14 (any gtin* field).", default=None)
    brand: str | None = described("The brand's name.", default=None)
    category: str | None = described("As the page states it.", default=None)
    color: str | None = described("As the page states it.", default=None)
    images: list[str] = described("Absolute image URLs.", factory=list)
    aggregate_rating: Rating | None = described("null when the page states none.",
                                                default=None)
    offers: list[Offer] = described(
        "At most 20, best first: priced, then not stated unavailable, then cheapest (0 last).",
        factory=list)


@dataclass(kw_only=True)
class Products:
    """The products the page's structured data describes, at most 20, from the first syntax
    that describes any (JSON-LD, microdata, RDFa, then OpenGraph: they are not merged)."""

    products: list[Product] = described("At most 20 products, at most 20 offers each.",
                                        factory=list)
