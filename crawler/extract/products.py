"""Read the products one HTML page describes, with their offers, from its structured data.

Pure function (no network, no Scrapy) shared by the API, the crawler and the benchmarks. The
syntaxes are tried in order of how complete shops make them: JSON-LD, then microdata, then RDFa,
then OpenGraph product tags; the first that yields a product is the answer (``source`` says
which). They are not merged: on the product benchmark no page describes its product in two
syntaxes with complementary values, so merging gained nothing and would blur ``source``.
Microdata and RDFa are reshaped into JSON-LD-like nodes (``crawler.extract.schema``) so one
walker and one reader serve all four. Prices, currencies and availability are normalised in
``crawler.extract.offers``; the page's main product may take a SKU its markup lacks from the
page text (``crawler.extract.labels``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import astuple, fields
from typing import Any

from lxml.html import HtmlElement

from core.items.products import Product, Products, Rating
from core.numbers import parse_count
from crawler.extract.currencies import page_territories
from crawler.extract.fetched import FetchedPage
from crawler.extract.labels import labelled_sku
from crawler.extract.offers import offers
from crawler.extract.registry import extracts
from crawler.extract.schema import (
    MAX_DEPTH,
    Reader,
    from_microdata,
    from_rdfa,
    id_index,
    prop,
    types,
    walk,
)
from crawler.extract.shown import shown_offer, shown_product
from crawler.extract.structured import clean, rdfa

logger = logging.getLogger(__name__)

MAX_PRODUCTS = 20
# schema.org Product and its subtypes (lower-case local names, as schema.types() gives them)
PRODUCT_TYPES = frozenset({
    "product", "productgroup", "productmodel", "individualproduct", "someproducts",
    "vehicle", "car", "motorcycle", "busorcoach", "motorizedbicycle",
})
OFFER_TYPES = frozenset({"offer", "aggregateoffer"})
_ARTICLE_TYPES = frozenset({
    "article", "newsarticle", "blogposting", "reportagenewsarticle", "analysisnewsarticle",
    "opinionnewsarticle", "reviewnewsarticle", "techarticle", "report", "liveblogposting",
})
# properties whose value is never a product the page sells: the work a page is part of (a
# paywalled article's publication, which Google's subscription markup types Product: "WIRED",
# "The New York Times"), its publisher, what it is about or based on
_NOT_SOLD_HERE = frozenset(name.lower() for name in (
    "isPartOf", "subjectOf", "publisher", "sourceOrganization", "isBasedOn",
))
# properties that point at other products the shop shows beside this one (carousels of
# related, similar, accessory items): such a product is kept only with an offer of its own,
# since a bare name and picture is a link to another page, not a product sold here
_BESIDE = frozenset(name.lower() for name in (
    "isRelatedTo", "isSimilarTo", "isAccessoryOrSparePartFor", "isConsumableFor",
))
_GTINS = ("gtin", "gtin8", "gtin12", "gtin13", "gtin14")
# what identifies one variant rather than the group: never copied from a ProductGroup
_VARIANT_ONLY = frozenset({
    "@id", "@type", "sku", "mpn", *_GTINS, "productID", "color", "size", "hasVariant",
    "isVariantOf", "productGroupID", "variesBy", "inProductGroupWithID",
})
# schema.org property → OpenGraph / Facebook catalogue <meta> tags, first one present wins
_OPEN_GRAPH = {
    "name": ("og:title",),
    "description": ("og:description",),
    "url": ("og:url",),
    "image": ("og:image", "og:image:url", "og:image:secure_url"),
    "brand": ("product:brand", "og:brand"),
    "sku": ("product:retailer_item_id", "product:sku"),
    "mpn": ("product:mfr_part_no",),
    "gtin": ("product:gtin", "product:ean", "product:upc"),
    "category": ("product:category",),
    "color": ("product:color",),
}
_OPEN_GRAPH_OFFER = {
    # the sale price, when there is one, is what a buyer pays now; price:amount is the regular
    "price": ("product:sale_price:amount", "product:price:amount", "og:price:amount",
              "og:price"),
    "priceCurrency": ("product:sale_price:currency", "product:price:currency",
                      "og:price:currency"),
    "availability": ("product:availability", "og:availability"),
    "itemCondition": ("product:condition", "og:condition"),
}
_RATING_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
# tried in this order, the first with a product is the answer: the later ones are slower (RDFa
# parses the page again) or poorer (OpenGraph describes one product, without identifiers)
SOURCES = ("json_ld", "microdata", "rdfa", "opengraph")


@extracts("products")
def extract_products(page: FetchedPage) -> Products:
    """The products of one page; ``products`` is [] when the page has none.

    URLs are made absolute against the page's address (after redirects) and ``<base href>``.

    Malformed input never raises: markup one syntax's parser cannot read gives that syntax no
    items (:mod:`~crawler.extract.structured` guards each parser), and the next syntax is
    tried. A bug in this code does raise, so that the crawl reports a failure instead of an
    empty answer billed as a success.
    """
    root = page.root
    if root is None:
        return Products()
    for source in SOURCES:
        if found := _from_source(source, page):
            if len(found) == 1:  # on a list page the text's SKU belongs to no one product
                _complete_sku(found[0], root)
                _complete_offer(found[0], root, territories(page))
            return Products(products=found)
    return Products(products=_from_source("page", page))


def _from_source(source: str, page: FetchedPage) -> list[Product]:
    """One syntax's products, [] when it describes none."""
    nodes, reader = _read(source, page)
    return _unique(_product(node, source, reader, offer)
                   for node, offer in product_nodes(nodes, reader))


def _read(source: str, page: FetchedPage) -> tuple[list[Any], Reader]:
    """One syntax's items as JSON-LD-shaped nodes, and the reader that resolves them."""
    base, where = page.base, territories(page)
    if source == "json_ld":
        return page.json_ld, Reader(base, id_index(page.json_ld), where)
    if source == "microdata":
        return from_microdata(page.microdata), Reader(base, territories=where)
    if source == "rdfa":
        assert page.root is not None
        return from_rdfa(rdfa(page.html, page.root, base)), Reader(base, territories=where)
    if source == "opengraph":
        return _open_graph(page.meta[0]), Reader(base, territories=where)
    assert page.root is not None
    node = None if _is_article(page) else shown_product(page.root, _page_name(page))
    return ([node] if node else []), Reader(base, territories=where)


def _is_article(page: FetchedPage) -> bool:
    """True for a page that declares itself an article (``og:type`` article, or an Article,
    NewsArticle, BlogPosting… in JSON-LD): its prices and "Buy now" links are a review's or a
    deals post's, not a shop's offer."""
    if page.meta[0].get("og:type", "").lower().startswith("article"):
        return True
    return any(kind in _ARTICLE_TYPES for node in walk(page.json_ld) for kind in types(node))


def _page_name(page: FetchedPage) -> str | None:
    """The product's name on a page without markup: ``og:title``, else the first ``<h1>``."""
    if name := page.meta[0].get("og:title"):
        return name
    assert page.root is not None
    return next(filter(None, (clean(h1.text_content()) for h1 in page.root.iter("h1"))), None)


def territories(page: FetchedPage) -> tuple[str, ...]:
    """The countries the page addresses, for prices written with "$" or "kr"."""
    lang = page.root.get("lang") if page.root is not None else None
    return page_territories(page.address, lang, page.meta[0])


def _complete_sku(product: Product, root: HtmlElement) -> None:
    """Give the page's only product the SKU its text shows when no markup states one for it
    or its offers (with several products, nothing says whose SKU the text shows)."""
    if not product.sku and not any(offer.sku for offer in product.offers):
        product.sku = labelled_sku(root)


def _complete_offer(product: Product, root: HtmlElement, where: tuple[str, ...]) -> None:
    """Give the page's only product the price and stock its main area shows when its markup
    states none: many templates mark up a product's name and identifiers but print its
    price or its "In stock" as plain text."""
    first = product.offers[0] if product.offers else None
    if first is not None and first.price is not None and first.availability is not None:
        return
    shown = offers(shown_offer(root), Reader("", territories=where))
    if not shown:
        return
    if first is None:
        product.offers = shown
        return
    if first.price is None and shown[0].price is not None:
        first.price, first.currency = shown[0].price, first.currency or shown[0].currency
    first.availability = first.availability or shown[0].availability


def product_nodes(items: list[Any], reader: Reader
                  ) -> Iterator[tuple[dict[str, Any], dict[str, Any] | None]]:
    """(product node, the Offer it was found in) for every Product at any depth.

    Document order, parents before children: top level, arrays, ``@graph``,
    ``ItemList``/``ListItem.item``, ``WebPage.mainEntity``, ``Offer.itemOffered`` (that offer
    is kept for a product without offers of its own). A ProductGroup with variants gives its
    variants instead of itself, each completed from the group (``_inherit``); a product found
    through ``isVariantOf`` is completed the same way. A product the page shows beside its
    own (``isRelatedTo``, ``isSimilarTo``…) counts only with offers of its own.
    """
    seen: set[int] = set()

    def visit(value: Any, offer: dict[str, Any] | None, depth: int, beside: bool = False
              ) -> Iterator[tuple[dict[str, Any], dict[str, Any] | None]]:
        if depth > MAX_DEPTH:
            return
        if isinstance(value, list):
            for item in value:
                yield from visit(item, offer, depth + 1, beside)
            return
        if not isinstance(value, dict) or id(value := reader.resolve(value)) in seen:
            return
        seen.add(id(value))
        kinds = types(value)
        if beside and not prop(value, "offers"):
            return  # a related item with no offer of its own: not sold on this page
        if kinds & PRODUCT_TYPES and set(value) - {"@id", "@type"}:
            variants = [v for v in reader.nodes(prop(value, "hasVariant"))
                        if types(v) & PRODUCT_TYPES]
            for variant in variants:
                if id(variant) not in seen:
                    seen.add(id(variant))
                    yield _inherit(value, variant), offer
            if not variants:
                group = reader.node(prop(value, "isVariantOf"))
                yield (_inherit(group, value) if group else value), offer
        offered = value if kinds & OFFER_TYPES else None
        for key, child in value.items():
            if key.lower() not in _NOT_SOLD_HERE:
                yield from visit(child, offered if key == "itemOffered" else None, depth + 1,
                                 key.lower() in _BESIDE)

    yield from visit(items, None, 0)


def _inherit(group: dict[str, Any], variant: dict[str, Any]) -> dict[str, Any]:
    """The variant, completed with what its ProductGroup says for all variants (name,
    description, brand, images, offers, …) where the variant says nothing; identifiers, colour
    and size are the variant's own and never copied."""
    merged = {key: value for key, value in group.items() if key not in _VARIANT_ONLY}
    merged.update((key, value) for key, value in variant.items()
                  if value not in (None, "", [], {}))
    return merged


def _product(node: dict[str, Any], source: str, reader: Reader,
             offer: dict[str, Any] | None) -> Product:
    """The output shape of one product node. ``sku`` falls back to ``productID`` (schema.org's
    "product identifier", which shops fill with their own code); the offers are the node's,
    else the Offer the node was found in (``Offer.itemOffered``)."""
    product_offers = offers(prop(node, "offers"), reader) or offers(offer, reader)
    return Product(
        source=source,
        name=reader.text(prop(node, "name")),
        description=reader.text(prop(node, "description")),
        url=reader.url(prop(node, "url")),
        sku=reader.text(prop(node, "sku")) or reader.text(prop(node, "productID")),
        mpn=reader.text(prop(node, "mpn")),
        gtin=next(filter(None, (reader.text(prop(node, key)) for key in _GTINS)), None),
        brand=reader.name(prop(node, "brand")),
        category=reader.name(prop(node, "category")),
        color=reader.text(prop(node, "color")),
        images=reader.urls(prop(node, "image")),
        aggregate_rating=_rating(reader.node(prop(node, "aggregateRating")), reader),
        offers=product_offers,
    )


def _rating(node: dict[str, Any] | None, reader: Reader) -> Rating | None:
    """Numbers of an AggregateRating; None when it has none of them."""
    if node is None:
        return None
    count = parse_count(reader.text(prop(node, "reviewCount")))
    if count is None:
        count = parse_count(reader.text(prop(node, "ratingCount")))
    rating = Rating(
        rating_value=_rating_number(reader.text(prop(node, "ratingValue"))),
        review_count=count,
        best_rating=_rating_number(reader.text(prop(node, "bestRating"))),
    )
    return rating if any(value is not None for value in astuple(rating)) else None


def _rating_number(text: str | None) -> float | None:
    """``"4.5"``, ``"4,5"`` and ``"4.5 / 5"`` → 4.5."""
    match = _RATING_NUMBER.search(text or "")
    return float(match.group().replace(",", ".")) if match else None


def _unique(products: Iterator[Product]) -> list[Product]:
    """Products that say something, each once (same source, name, sku, url and offers)."""
    found: dict[Hashable, Product] = {}
    for product in products:
        if not any(getattr(product, field.name) for field in fields(product)
                   if field.name != "source"):
            continue
        key = (product.source, product.name, product.sku, product.url,
               tuple(astuple(offer) for offer in product.offers))
        found.setdefault(key, product)
        if len(found) == MAX_PRODUCTS:
            break
    return list(found.values())


def _open_graph(meta: Mapping[str, str]) -> list[dict[str, Any]]:
    """One Product node from OpenGraph / Facebook product tags, when the page is a product
    (``og:type`` mentions product) or states a price; [] otherwise."""
    def first(keys: tuple[str, ...]) -> str | None:
        return next((meta[key] for key in keys if meta.get(key)), None)

    offer = {key: first(keys) for key, keys in _OPEN_GRAPH_OFFER.items()}
    if "product" not in meta.get("og:type", "").lower() and offer["price"] is None:
        return []
    node: dict[str, Any] = {key: first(keys) for key, keys in _OPEN_GRAPH.items()}
    node["@type"] = "Product"
    node["offers"] = offer
    return [node]
