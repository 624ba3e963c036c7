"""Tests for crawler.extract.products.extract_products and its readers (no network).

Each tests/fixtures/products/NAME.html has NAME.json next to it: {"url", "expected"}, where
"expected" is the whole result as plain JSON (what the API and ``scrapy crawl`` write), compared
exactly, key order included. The focused tests below say which rule each part of a fixture
exercises, and cover the rules too small for a fixture of their own; they read the item's
attributes.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from itemadapter import ItemAdapter

from core.items.products import Offer, Product, Products
from crawler.extract import products as products_module
from crawler.extract import structured
from crawler.extract.fetched import FetchedPage
from crawler.extract.labels import labelled_sku
from crawler.extract.offers import availability, currency_code, item_condition, parse_price
from crawler.extract.products import MAX_PRODUCTS, extract_products
from crawler.extract.schema import (
    from_rdfa,
    id_index,
    local_name,
    number_text,
    prop,
    resolve,
    types,
)
from crawler.extract.structured import json_ld, lenient_json, parse_html
from tests.support.logcheck import our_errors

#: Saved HTML as a page fetched from that URL, what extractors take.
fetched = FetchedPage.from_html

FIXTURES = Path(__file__).parent / "fixtures" / "products"
CASES = sorted(path.stem for path in FIXTURES.glob("*.json"))
PRODUCT_KEYS = {"source", "name", "description", "url", "sku", "mpn", "gtin", "brand",
                "category", "color", "images", "aggregate_rating", "offers"}
OFFER_KEYS = {"price", "currency", "availability", "item_condition", "price_valid_until",
              "seller", "url", "sku"}
URL = "https://shop.example.com/p/1"


def run(name: str) -> tuple[Products, dict[str, Any]]:
    case = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    html = (FIXTURES / f"{name}.html").read_text(encoding="utf-8")
    return extract_products(fetched(case["url"], html, case.get("headers"))), case["expected"]


def ld(*items: Any) -> str:
    """A page with one JSON-LD script per item."""
    scripts = "".join(f'<script type="application/ld+json">{json.dumps(item)}</script>'
                      for item in items)
    return f"<html><head>{scripts}</head><body></body></html>"


def first(html: str, url: str = URL) -> Product:
    found = extract_products(fetched(url, html)).products
    assert found, "no product found"
    return found[0]


def offer(**fields: Any) -> dict[str, Any]:
    return {"@type": "Offer", **fields}


# --- saved pages -------------------------------------------------------------------------------

def test_fixtures_are_present() -> None:
    assert len(CASES) >= 8
    assert all((FIXTURES / f"{name}.html").exists() for name in CASES)


@pytest.mark.parametrize("name", CASES)
def test_fixture_matches_expected_output(name: str) -> None:
    result, expected = run(name)
    assert isinstance(result, Products)
    assert all(isinstance(p, Product) and all(isinstance(o, Offer) for o in p.offers)
               for p in result.products)
    plain = ItemAdapter(result).asdict()  # what worker jobs return and feed exports write
    assert plain == asdict(result) == expected
    # plain JSON types only, every key in the contract's order
    assert json.dumps(plain) == json.dumps(expected)
    for product in plain["products"]:
        assert set(product) == PRODUCT_KEYS
        assert all(set(o) == OFFER_KEYS for o in product["offers"])
        assert "" not in product.values()
        assert all("" not in o.values() for o in product["offers"])


def test_graph_references_and_price_specification() -> None:
    """@graph nodes linked by @id (WebPage.mainEntity, offers, brand, seller) are resolved."""
    result, _ = run("jsonld_graph")
    (product,) = result.products
    assert product.brand == "Peak & Co"  # HTML entity in JSON-LD text unescaped
    assert product.sku == "40021" and product.gtin == "4006381333931"  # numbers, no float
    assert product.url == "https://shop.example.com/trail-runner-2"  # joined with <base>
    assert product.images == ["https://shop.example.com/catalogue/img/tr2-side.jpg",
                              "https://cdn.example.net/tr2-top.jpg"]  # no dupes, no data:
    assert product.aggregate_rating is not None
    assert asdict(product.aggregate_rating) == {"rating_value": 4.6, "review_count": 87,
                                                "best_rating": 5.0}
    (sold,) = product.offers
    assert sold.price == "119.90"  # the sale specification, not the ListPrice
    assert sold.currency == "EUR"  # "eur" upper-cased
    assert sold.availability == "LimitedAvailability"
    assert sold.seller == "Example Outdoor"


def test_item_list_broken_scripts_and_offer_order() -> None:
    result, _ = run("jsonld_itemlist")
    names = [p.name for p in result.products]
    # ListItem.item products in list order; the CDATA script and its clean copy are one
    # product; the whole-script HTML-escaped JSON is read too
    assert names == ["Kettle One", "Kettle Two", "Kettle Three", "Kettle Four"]
    one, two, three, _ = result.products
    assert one.offers[0].price == "24.50"  # AggregateOffer lowPrice
    # the available offer comes before the out-of-stock one; "£1,049.00" parsed, £ → GBP
    assert [(o.price, o.availability) for o in two.offers] == [
        ("39.99", "InStock"), ("1049.00", "OutOfStock")]
    assert two.offers[1].currency == "GBP"
    assert three.offers[0].price == "19.9"  # JSON number kept as written


def test_product_group_variants_inherit_from_the_group() -> None:
    result, _ = run("jsonld_product_group")
    small, medium, large = result.products
    assert [p.sku for p in result.products] == ["LS-100-S", "LS-100-M", "LS-100-L"]
    # name, description, brand (first of a list), url and images come from the group
    assert small.name == medium.name == "Linen shirt"
    assert {p.brand for p in result.products} == {"Example Wear"}
    assert all(p.images == ["https://wear.example.com/img/linen.jpg"]
               for p in result.products)
    assert large.name == "Linen shirt, large"  # a variant's own value wins
    # identifiers and colour are never copied; offers are, when the variant has none
    assert medium.gtin is None and medium.color == "Sand"
    assert medium.offers[0].availability == "SoldOut"
    assert large.offers[0].price == "45"  # the group's AggregateOffer lowPrice


def test_microdata_fallback() -> None:
    result, _ = run("microdata")
    main, related = result.products
    assert main.source == "microdata"  # microdata beats the OpenGraph tags of the page
    assert main.name == "Espresso machine Barista Pro"
    assert main.offers[0].price == "1299.00"  # "1.299,00 €"
    assert main.offers[0].currency == "EUR"  # from the € written with the price
    assert main.sku == "BP-778"  # productID when there is no sku
    assert main.aggregate_rating is not None and main.aggregate_rating.review_count == 1204
    assert related.name == "Milk jug"  # nested isRelatedTo product, after its parent
    assert related.offers[0].currency == "EUR"  # "pricecurrency": case ignored


def test_rdfa_fallback() -> None:
    result, _ = run("rdfa")
    (product,) = result.products
    assert product.source == "rdfa"
    assert product.brand == "Example Lights"  # nested Brand node re-attached
    assert product.offers[0].price == "39.00"  # content attribute, not "$39.00"
    assert product.offers[0].availability == "OutOfStock"


def test_opengraph_fallback() -> None:
    result, _ = run("opengraph")
    (product,) = result.products
    assert product.source == "opengraph"
    assert product.sku == "WB-140"  # product:retailer_item_id
    assert product.offers[0].price == "69.90"  # the sale price, comma decimal
    assert product.offers[0].availability == "OutOfStock"  # "oos"
    assert product.offers[0].item_condition == "NewCondition"


def test_labelled_sku_completes_the_main_product() -> None:
    result, _ = run("labelled_sku")
    assert result.products[0].sku == "GH-25/000731"  # not the JS-only value


def test_no_product_page() -> None:
    """An Article with offers is not a product, and page text alone makes no product."""
    result, _ = run("no_product")
    assert asdict(result) == {"products": []}


# --- JSON-LD rules -----------------------------------------------------------------------------

@pytest.mark.parametrize("kind", [
    "Product", "product", ["Product", "Thing"], "http://schema.org/Product",
    "https://schema.org/IndividualProduct", "schema:Product", ["Car", "Product"], "Vehicle",
])
def test_product_type_spellings(kind: Any) -> None:
    assert first(ld({"@type": kind, "name": "Thing one"})).name == "Thing one"


def test_non_products_are_ignored() -> None:
    html = ld({"@type": "Event", "name": "Gig", "offers": offer(price="10")},
              {"@type": "Offer", "price": "5"}, [1, "two"], {"@type": "Product"})
    assert asdict(extract_products(fetched(URL, html))) == {"products": []}


def test_top_level_array_and_several_scripts() -> None:
    html = ld([{"@type": "Organization", "name": "Shop"}, {"@type": "Product", "name": "A"}],
              {"@type": "Product", "name": "B"})
    assert [p.name for p in extract_products(fetched(URL, html)).products] == ["A", "B"]


def test_nested_products_main_entity_and_item_offered() -> None:
    html = ld({"@type": "WebPage", "mainEntity": {"@type": "Product", "name": "Main"}},
              {"@type": "Offer", "price": "12.00", "priceCurrency": "USD",
               "itemOffered": {"@type": "Product", "name": "Offered"}})
    main, offered = extract_products(fetched(URL, html)).products
    assert main.name == "Main" and main.offers == []
    # a product without offers of its own takes the Offer it was found in
    assert offered.name == "Offered"
    assert offered.offers[0].price == "12.00"
    assert offered.offers[0].currency == "USD"


def test_self_reference_does_not_make_a_second_product() -> None:
    html = ld({"@context": "https://schema.org", "@graph": [
        {"@type": "Product", "@id": "#p", "name": "Lamp",
         "offers": offer(price="9", itemOffered={"@id": "#p", "@type": "Product"})}]})
    assert [p.name for p in extract_products(fetched(URL, html)).products] == ["Lamp"]


def test_variant_listed_before_its_group_is_not_repeated_nor_is_the_group() -> None:
    html = ld({"@graph": [
        {"@type": "Product", "@id": "#v1", "sku": "V1", "isVariantOf": {"@id": "#g"}},
        {"@type": "ProductGroup", "@id": "#g", "name": "Group", "hasVariant": [{"@id": "#v1"}]},
    ]})
    (variant,) = extract_products(fetched(URL, html)).products
    assert (variant.name, variant.sku) == ("Group", "V1")


def test_product_group_without_variants_is_a_product() -> None:
    assert first(ld({"@type": "ProductGroup", "name": "Solo"})).name == "Solo"


def test_broken_json_ld_is_read() -> None:
    broken = ('{"@type": "Product", /* note */ "name": "Line one\nline two", '
              '"sku": "A\\\'1", "offers": [{"@type": "Offer", "price": "5",},],}')
    html = f'<html><head><script type="application/ld+json">{broken}</script></head></html>'
    product = first(html)
    assert product.name == "Line one line two"
    assert product.sku == "A'1"  # the invalid \' escape
    assert product.offers[0].price == "5"


def test_duplicate_products_are_dropped() -> None:
    item = {"@type": "Product", "name": "Twin", "sku": "T", "offers": offer(price="3")}
    assert len(extract_products(fetched(URL, ld(item, item, dict(item)))).products) == 1
    other = {**item, "offers": offer(price="4")}
    assert len(extract_products(fetched(URL, ld(item, other))).products) == 2


def test_at_most_20_products_and_20_offers() -> None:
    many = [{"@type": "Product", "name": f"P{i}", "offers": [offer(price=str(i * 100 + j))
                                                               for j in range(30)]}
            for i in range(30)]
    found = extract_products(fetched(URL, ld({"@type": "ItemList", "itemListElement": many})))
    assert len(found.products) == MAX_PRODUCTS
    assert [p.name for p in found.products[:2]] == ["P0", "P1"]
    assert all(len(p.offers) == 20 for p in found.products)


def test_missing_values_are_null_and_lists_empty() -> None:
    product = first(ld({"@type": "Product", "name": "  ", "sku": "", "brand": {"name": ""},
                        "image": [], "offers": offer(price="", availability="unknown"),
                        "description": "Only this"}))
    assert asdict(product) == {
        "source": "json_ld", "name": None, "description": "Only this", "url": None,
        "sku": None, "mpn": None, "gtin": None, "brand": None, "category": None,
        "color": None, "images": [], "aggregate_rating": None, "offers": []}


def test_brand_seller_and_category_names() -> None:
    product = first(ld({"@type": "Product", "name": "X", "brand": ["Acme", "Other"],
                        "category": {"@type": "CategoryCode", "name": "Tools"},
                        "offers": offer(price="1", seller="Shop Ltd", sku=12)}))
    assert (product.brand, product.category) == ("Acme", "Tools")
    assert (product.offers[0].seller, product.offers[0].sku) == ("Shop Ltd", "12")


@pytest.mark.parametrize(("keys", "gtin"), [
    ({"gtin": "0001"}, "0001"), ({"gtin8": 12345670}, "12345670"),
    ({"gtin12": "036000291452"}, "036000291452"), ({"gtin14": 10012345678902}, "10012345678902"),
])
def test_gtin_from_any_gtin_property(keys: dict[str, Any], gtin: str) -> None:
    assert first(ld({"@type": "Product", "name": "X", **keys})).gtin == gtin


def test_rating_count_fallback_and_numbers() -> None:
    product = first(ld({"@type": "Product", "name": "X", "aggregateRating": {
        "ratingValue": 4, "ratingCount": "1,204", "bestRating": "10"}}))
    assert product.aggregate_rating is not None
    assert asdict(product.aggregate_rating) == {"rating_value": 4.0, "review_count": 1204,
                                                "best_rating": 10.0}


# --- offers ------------------------------------------------------------------------------------

def offers_of(offers: Any) -> list[Offer]:
    return first(ld({"@type": "Product", "name": "X", "offers": offers})).offers


def test_aggregate_offer_low_price_and_nested_offers_inherit() -> None:
    found = offers_of({"@type": "AggregateOffer", "lowPrice": "10", "highPrice": "20",
                       "priceCurrency": "SEK", "offers": [offer(price="15"), offer(price="10.5")]})
    assert [(o.price, o.currency) for o in found] == [
        ("10", "SEK"), ("10.5", "SEK"), ("15", "SEK")]


def test_an_aggregate_offer_summing_up_its_offers_is_not_one_more() -> None:
    """Its lowPrice is one of its offers' price: that offer, with what it states (stock),
    not a copy that states less listed first."""
    found = offers_of({"@type": "AggregateOffer", "lowPrice": "9.99", "highPrice": "9.99",
                       "priceCurrency": "EUR",
                       "offers": [offer(price="9.99", availability="InStock")]})
    assert [(o.price, o.currency, o.availability) for o in found] == [
        ("9.99", "EUR", "InStock")]


def test_wrapper_offer_without_price_is_replaced_by_its_offers() -> None:
    found = offers_of(offer(itemCondition="Used", offers=offer(price="51", priceCurrency="GBP")))
    assert [asdict(o) for o in found] == [{
        "price": "51", "currency": "GBP", "availability": None, "item_condition": "UsedCondition",
        "price_valid_until": None, "seller": None, "url": None, "sku": None}]


@pytest.mark.parametrize("spec", [
    {"@type": "UnitPriceSpecification", "price": "7.50", "priceCurrency": "CHF"},
    [{"@type": "UnitPriceSpecification", "priceType": "StrikethroughPrice", "price": "9",
      "priceCurrency": "CHF"},
     {"@type": "UnitPriceSpecification", "price": "7.50", "priceCurrency": "CHF"}],
    [{"@type": "PriceSpecification", "minPrice": "7.50", "priceCurrency": "CHF"}],
])
def test_price_specification(spec: Any) -> None:
    (found,) = offers_of(offer(priceSpecification=spec))
    assert (found.price, found.currency) == ("7.50", "CHF")


def test_offer_order_priced_available_then_cheapest() -> None:
    found = offers_of([offer(availability="InStock"), offer(price="0"),
                       offer(price="30", availability="OutOfStock"), offer(price="25"),
                       offer(price="20")])
    assert [(o.price, o.availability) for o in found] == [
        ("20", None), ("25", None), ("0", None), ("30", "OutOfStock"), (None, "InStock")]


def test_unstated_availability_stays_null() -> None:
    priced, unpriced = offers_of([offer(price="5"), offer(url="/buy", seller="Shop")])
    assert priced.availability is None  # a priced offer is not assumed to be in stock
    assert unpriced.availability is None


@pytest.mark.parametrize(("value", "expected"), [
    (19.9, ("19.9", None)), (450, ("450", None)), (Decimal("1E+2"), ("100", None)),
    ("19.90", ("19.90", None)), ("23.450", ("23.450", None)), (" +5 ", ("5", None)),
    ("$1,299.00", ("1299.00", None)), ("1.299,00 €", ("1299.00", "EUR")),
    ("1 299,00", ("1299.00", None)), ("£ 12", ("12", "GBP")), ("EUR 19,99", ("19.99", "EUR")),
    ("-5", (None, None)), (-5, (None, None)), (float("nan"), (None, None)), (True, (None, None)),
    ("", (None, None)), ("Call us", (None, None)), (None, (None, None)),
    # digits of other scripts are digits: full-width (Japanese shops), Arabic-Indic
    ("\uff11\uff0c\uff12\uff13\uff10", ("1230", None)),
    ("\uff11\uff12\uff13\uff10", ("1230", None)),
    ("\u20ac\uff11\uff0c\uff12\uff13\uff10", ("1230", "EUR")),
    ("\u0661\u0662\u0663\u066b\u0665\u0660", ("123.50", None)),
    ("\u0661\u066c\u0662\u0663\u0660", ("1230", None)), ("\u06f1\u06f2\u06f3", ("123", None)),
])
def test_parse_price(value: Any, expected: tuple[str | None, str | None]) -> None:
    assert parse_price(value) == expected


@pytest.mark.parametrize(("value", "expected"), [
    ("usd", "USD"), (" EUR ", "EUR"), ("€", "EUR"), ("£", "GBP"), ("zł", "PLN"), ("R$", "BRL"),
    ("US$", "USD"), ("$", None), ("¥", None), ("kr", None), ("dollars", None), (None, None),
    ("lei", None), ("abc", None), ("SFr", None), ("Dhs", None), ("ron", "RON"),
])
def test_currency_code(value: Any, expected: str | None) -> None:
    assert currency_code(value) == expected


@pytest.mark.parametrize(("value", "expected"), [
    ("https://schema.org/InStock", "InStock"), ("http://schema.org/OutOfStock", "OutOfStock"),
    ("schema:PreOrder", "PreOrder"), ("instock", "InStock"), ("in stock", "InStock"),
    ("IN_STOCK", "InStock"), ("out of stock", "OutOfStock"), ("oos", "OutOfStock"),
    ("Discontinued", "Discontinued"), ("https://schema.org/BackOrder/", "BackOrder"),
    ({"@id": "http://schema.org/SoldOut"}, "SoldOut"), (["", "MadeToOrder"], "MadeToOrder"),
    ("maybe", None), ("", None), (None, None), (True, None),
])
def test_availability(value: Any, expected: str | None) -> None:
    assert availability(value) == expected


@pytest.mark.parametrize(("value", "expected"), [
    ("https://schema.org/NewCondition", "NewCondition"), ("used", "UsedCondition"),
    ("Refurbished", "RefurbishedCondition"), ("Mint", None),
])
def test_item_condition(value: str, expected: str | None) -> None:
    assert item_condition(value) == expected


# --- readers and helpers -----------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    '{"a": 1,}',  # trailing comma
    '// comment\n{"a": 1}',
    '<!--\n{"a": 1}\n-->',
    '<![CDATA[{"a": 1}]]>',
    '{&quot;a&quot;: 1}',
    '{"a": 1}\x00',
])
def test_lenient_json(text: str) -> None:
    assert lenient_json(text) == [{"a": 1}]


def test_lenient_json_keeps_values_before_a_broken_one() -> None:
    assert lenient_json('{"a": 1} {"b": 2}; {"c": ') == [{"a": 1}, {"b": 2}]
    assert lenient_json('{"a": "new\nline"}') == [{"a": "new\nline"}]
    assert lenient_json("not json") == []


def test_json_ld_reads_scripts_extruct_rejects() -> None:
    root = parse_html('<script type="application/ld+json"><![CDATA[{"@type": "Product"}]]>'
                      '</script><script type="application/ld+json">{"@type": "Thing"}{"x": 1}'
                      '</script><script type="application/ld+json">{{{</script>')
    assert root is not None
    assert json_ld(root) == [{"@type": "Product"}, {"@type": "Thing"}, {"x": 1}]


def test_schema_helpers() -> None:
    assert local_name("http://schema.org/InStock") == "InStock"
    assert local_name("schema:Product") == "Product"
    assert types({"@type": ["http://schema.org/Product", "Thing", 3]}) == {"product", "thing"}
    assert number_text(1e21) == "1000000000000000000000"
    assert number_text(0.1) == "0.1"
    assert prop({"SKU": "a"}, "sku") == "a" and prop({"sku": "b", "SKU": "a"}, "sku") == "b"


def test_from_rdfa_survives_reference_cycles() -> None:
    graph = [{"@id": "_:a", "@type": ["https://schema.org/Product"],
              "https://schema.org/isRelatedTo": [{"@id": "_:b"}]},
             {"@id": "_:b", "@type": ["https://schema.org/Product"],
              "https://schema.org/isRelatedTo": [{"@id": "_:a"}],
              "https://schema.org/name": [{"@value": "B"}]}]
    nodes = from_rdfa(graph)
    assert nodes[0]["isRelatedTo"]["name"] == "B"
    assert nodes[0]["isRelatedTo"]["isRelatedTo"] == "_:a"  # cycle cut, reference kept


@pytest.mark.parametrize(("body", "sku"), [
    ("<p>SKU: 4711-A</p>", "4711-A"),
    ("<dl><dt>Artikelnummer</dt><dd>100 200</dd></dl>", "100"),
    ("<span>Item #418295</span>", "418295"),
    ("<p>Réf. : XX802</p>", "XX802"),
    ("<p>商品編號\uff1aM14876706</p>", "M14876706"),  # full-width colon
    ("<p>SKU: none yet</p><p>Product code: 64981901.</p>", "64981901"),
    ("<p>Reference manual</p>", None),  # no value with a digit
    ("<script>var s = 'SKU: 123';</script><p>Skunk 12</p>", None),  # not visible, not a label
])
def test_labelled_sku(body: str, sku: str | None) -> None:
    root = parse_html(f"<html><body>{body}</body></html>")
    assert root is not None
    assert labelled_sku(root) == sku


def test_labelled_sku_only_fills_the_missing_sku_of_a_lone_product() -> None:
    lone = ld({"@type": "Product", "name": "A"}).replace("<body>", "<body><p>SKU: 555</p>")
    assert first(lone).sku == "555"
    # with several products nothing says whose SKU the text shows (here: C's)
    html = ld({"@type": "Product", "name": "A"}, {"@type": "Product", "name": "B"},
              {"@type": "Product", "name": "C", "sku": "C-1"}).replace(
        "<body>", "<body><p>SKU: C-1</p>")
    products = extract_products(fetched(URL, html)).products
    assert [p.sku for p in products] == [None, None, "C-1"]
    offer_sku = ld({"@type": "Product", "name": "A", "offers": offer(price="1", sku="O-1")})
    assert first(offer_sku.replace("<body>", "<body>SKU: 555")).sku is None


def test_json_ld_wins_over_other_syntaxes() -> None:
    html = ld({"@type": "Product", "name": "From JSON-LD"}).replace(
        "<body>", '<body><div itemscope itemtype="http://schema.org/Product">'
                  '<span itemprop="name">From microdata</span></div>')
    assert first(html).source == "json_ld"


def test_an_unreadable_syntax_does_not_hide_the_next(monkeypatch: pytest.MonkeyPatch,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    """extruct choking on a page's microdata (its parser raises) leaves the OpenGraph tags."""
    class Choking:
        def extract_items(self, *_: Any) -> Any:
            raise ValueError("malformed itemref soup")

    monkeypatch.setattr(structured, "_MICRODATA", Choking())
    html = ('<html><head><meta property="og:type" content="product">'
            '<meta property="og:title" content="Kept"></head><body><div itemscope '
            'itemtype="http://schema.org/Product"><span itemprop="name">Lost</span></div>'
            '</body></html>')
    assert first(html).name == "Kept"
    assert our_errors(caplog) == []


def test_a_bug_in_extraction_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    """No catch-all turns a programming error into an empty answer billed as a success."""
    def broken(*_: Any) -> Any:
        raise AttributeError("a bug")

    monkeypatch.setattr(products_module, "from_microdata", broken)
    html = ('<div itemscope itemtype="http://schema.org/Product">'
            '<span itemprop="name">A</span></div>')
    with pytest.raises(AttributeError):
        extract_products(fetched(URL, html))


@pytest.mark.parametrize("html", [
    "", "   ", "\x00\x01", "<<<>>>", "<html>", "plain text, no markup",
    '<script type="application/ld+json">' + "[" * 5000 + "</script>",
    '<script type="application/ld+json">{"@type": "Product", "name": {"@value": null},'
    ' "offers": {"offers": {"offers": {"@id": "#x"}}}, "image": {"url": 5}}</script>',
    '<div itemscope itemtype="http://schema.org/Product"><div itemprop="offers" itemscope>'
    '<span itemprop="price">abc</span></div></div>',
])
def test_never_raises(html: str, caplog: pytest.LogCaptureFixture) -> None:
    page = fetched("not a url", html, {"Content-Type": "text/html"})
    assert asdict(extract_products(page)) == {"products": []}
    assert our_errors(caplog) == []


def test_price_valid_until_is_written_in_utc() -> None:
    html = ld({"@type": "Product", "name": "A", "offers": offer(
        price="5", priceValidUntil="2025-12-31T23:59:59+02:00")})
    assert first(html).offers[0].price_valid_until == "2025-12-31T21:59:59Z"
    dated = ld({"@type": "Product", "name": "A", "offers": offer(
        price="5", priceValidUntil="2025-12-31")})
    assert first(dated).offers[0].price_valid_until == "2025-12-31"


def test_one_id_index_and_one_resolver() -> None:
    """schema.id_index/resolve serve every extractor: bare references only, first node wins."""
    items = [{"@graph": [
        {"@type": "WebPage", "author": {"@id": "#ana"}, "about": {"@id": "#ana", "name": "A"}},
        {"@type": "Person", "@id": "#ana", "name": "Ana Lima"},
        {"@type": "Person", "@id": "#ana", "name": "Someone else"},
        {"@type": "Person", "@id": "#bare"},
    ]}]
    index = id_index(items)
    assert set(index) == {"#ana"}  # the inline {"@id", "name"} is a node too, and comes first
    assert index["#ana"] == {"@id": "#ana", "name": "A"}
    page = items[0]["@graph"][0]
    assert resolve(page["author"], index) is index["#ana"]
    assert resolve(page["about"], index) is page["about"]  # says more than its @id: itself
    assert resolve({"@id": "#unknown"}, index) == {"@id": "#unknown"}
