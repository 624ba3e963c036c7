"""Tests for what product pages show outside Product markup, and for currencies by locale
(crawler.extract.shown, crawler.extract.labels, crawler.extract.currencies; no network).

The saved pages (tests/fixtures/products/shown_*.html, microdata_loose.html, krw_price.html,
dollar_price_chile.html) are also compared whole by test_extract_products; the tests here say
which rule each part of them exercises.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lxml.html import HtmlElement

from core.items.products import Product
from crawler.extract.currencies import currency_code, page_territories
from crawler.extract.fetched import FetchedPage
from crawler.extract.labels import buy_phrase, stock_phrase
from crawler.extract.offers import parse_price
from crawler.extract.products import extract_products
from crawler.extract.shown import (
    has_buy_button,
    loose_itemprop,
    shown_availability,
    shown_offer,
    shown_price,
    shown_product,
)
from crawler.extract.structured import parse_html

FIXTURES = Path(__file__).parent / "fixtures" / "products"


def page(name: str, url: str) -> FetchedPage:
    return FetchedPage.from_html(url, (FIXTURES / f"{name}.html").read_text(encoding="utf-8"))


def only(found: list[Product]) -> Product:
    assert len(found) == 1, found
    return found[0]


def root(body: str, head: str = "") -> HtmlElement:
    tree = parse_html(f"<html><head>{head}</head><body>{body}</body></html>")
    assert tree is not None
    return tree


# --- saved pages ---------------------------------------------------------------------------------

def test_german_page_without_markup_shows_price_stock_and_article_number() -> None:
    """No markup at all: the price element, "Auf Lager" and "Art.-Nr." of the main product;
    the header's basket total, the old price, the prose "nicht auf Lager" and the related
    products' prices and "Ausverkauft" are not read."""
    product = only(extract_products(
        page("shown_labels_de", "https://www.kuechenhaus.example.de/wasserkocher")).products)
    assert product.source == "page"
    assert product.name == "Wasserkocher Edelstahl 1,7 l"
    assert product.sku == "10240"
    (offer,) = product.offers
    assert (offer.price, offer.currency, offer.availability) == ("29.99", "EUR", "InStock")


def test_french_page_out_of_stock_without_a_buy_button() -> None:
    """"Rupture de stock" with a price makes a product even though the (disabled) button
    does not; "Réf." gives its SKU; the carousel's "En stock" is another product's."""
    product = only(extract_products(
        page("shown_labels_fr", "https://www.maison-lumiere.example.fr/lampe")).products)
    assert (product.name, product.sku) == ("Lampe de bureau articulée noire", "LB-2041")
    (offer,) = product.offers
    assert (offer.price, offer.currency, offer.availability) == ("49.90", "EUR", "OutOfStock")


def test_microdata_attributes_without_an_itemscope() -> None:
    """itemprop price/priceCurrency/sku/availability outside any item are read as written
    (``content``, ``href``), and microdata parsers see no item."""
    fetched = page("microdata_loose", "https://trailhead.example.co.uk/product/mug")
    assert fetched.microdata == []
    product = only(extract_products(fetched).products)
    assert product.sku == "TH-MUG-350"
    (offer,) = product.offers
    assert (offer.price, offer.currency, offer.availability) == ("12.50", "GBP", "InStock")


def test_won_price_in_open_graph() -> None:
    """``og:price`` "2,900원~": the won sign written in Hangul is KRW."""
    product = only(extract_products(
        page("krw_price", "http://www.market.example.kr/deal/5521")).products)
    assert (product.offers[0].price, product.offers[0].currency) == ("2900", "KRW")


def test_dollar_sign_on_a_chilean_shop_is_the_peso() -> None:
    """"$24.990" on a page in es-CL on a .cl domain: Chilean pesos, "." grouping thousands."""
    product = only(extract_products(
        page("dollar_price_chile", "https://www.tienda-andes.example.cl/mochila")).products)
    assert (product.offers[0].price, product.offers[0].currency) == ("24990", "CLP")


# --- rules ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("In stock.", "InStock"), ("Only 1 left in stock.", "InStock"), ("Auf Lager", "InStock"),
    ("En Stock", "InStock"), ("Subito Disponibile", "InStock"), ("Op voorraad", "InStock"),
    ("Disponible", "InStock"), ("  Sofort lieferbar ", "InStock"),
    ("Currently unavailable.", "OutOfStock"), ("Derzeit nicht verfügbar.", "OutOfStock"),
    ("Nicht verfügbar", "OutOfStock"), ("Rupture de stock", "OutOfStock"),
    ("Agotado", "OutOfStock"), ("Esaurito", "OutOfStock"), ("Non disponibile.", "OutOfStock"),
    ("Out of Stock", "OutOfStock"), ("Sold out", "OutOfStock"),
    # captions and sentences are not a product's stock
    ("Image not available for", None), ("Bild nicht verfügbar", None),
    ("Disponible desde el 05 de Dic. a las 20:30hrs", None),
    ("We don't know when or if this item will be back in stock.", None), ("", None),
])
def test_stock_phrase(text: str, expected: str | None) -> None:
    assert stock_phrase(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Add to cart", True), ("In den Warenkorb", True), ("Ajouter au panier", True),
    ("Añadir al carrito", True), ("Aggiungi al carrello", True), ("加入購物車", True),
    ("Read more", False), ("Add to wishlist", False),
    ("Click here to add to cart the items you have selected in the list below, all at once",
     False),
])
def test_buy_phrase(text: str, expected: bool) -> None:
    assert buy_phrase(text) is expected


def test_buy_button_by_label_or_name_not_when_disabled() -> None:
    assert has_buy_button(root('<button type="submit">Add to basket</button>'))
    assert has_buy_button(root('<input type="submit" name="add-to-cart" value="42">'))
    assert not has_buy_button(root("<button disabled>Add to cart</button>"))
    assert not has_buy_button(root('<div class="related"><a href="/x">Buy now</a></div>'))


def test_shown_price_skips_old_unit_and_other_products_prices() -> None:
    body = ('<header><span class="cart-price">£0.00</span></header>'
            '<div class="price-box"><span class="old-price">£20.00</span>'
            '<span class="price">£15.00</span></div>'
            '<div class="related-products"><span class="price">£9.00</span></div>')
    assert shown_price(root(body)) == "£15.00"
    # a block holding two amounts is not one price; an amount without currency is no price
    assert shown_price(root('<div class="price">£15.00 £12.50 incl. VAT</div>')) is None
    assert shown_price(root('<span class="price">15</span>')) is None


def test_availability_from_itemprop_link_or_text() -> None:
    assert shown_availability(root(
        '<link itemprop="availability" href="http://schema.org/OutOfStock">')) == "OutOfStock"
    assert shown_availability(root(
        '<a href="https://schema.org/PreOrder">pre-order</a>')) == "PreOrder"
    assert shown_availability(root("<p>Nicht verfügbar</p>")) == "OutOfStock"
    assert shown_availability(root(
        '<div class="similar-items"><p>In stock</p></div>')) is None


def test_loose_itemprop_reads_content_href_then_text() -> None:
    tree = root('<span itemprop="sku">AB-1</span><meta itemprop="price" content="3.50">')
    assert (loose_itemprop(tree, "sku"), loose_itemprop(tree, "price")) == ("AB-1", "3.50")
    assert loose_itemprop(tree, "gtin13") is None


def test_no_product_without_a_sign_that_the_page_sells_one() -> None:
    """A price alone (a blog post quoting one), or a stock word alone, is not a product."""
    assert shown_product(root('<span class="price">£15.00</span>'), "Post") is None
    assert shown_product(root("<p>In stock</p>"), "Post") is None
    assert shown_product(root('<span class="price">£15.00</span><p>In stock</p>'), "Kettle")


def test_an_article_is_not_a_shop_page() -> None:
    """A deals post with prices and "Buy now" links declares itself an article: no product."""
    body = ('<h1>The 10 best deals</h1><span class="price">$139.00</span>'
            '<a href="https://shop.example/x" class="btn">Buy now</a>')
    for head in ('<meta property="og:type" content="article">',
                 '<script type="application/ld+json">{"@type": "NewsArticle",'
                 ' "headline": "The 10 best deals"}</script>'):
        html = f"<html><head>{head}</head><body>{body}</body></html>"
        assert extract_products(FetchedPage.from_html("https://news.example/deals", html)
                                ).products == []
    html = f"<html><head></head><body>{body}</body></html>"
    assert extract_products(FetchedPage.from_html("https://news.example/deals", html)).products


@pytest.mark.parametrize(("value", "territories", "expected"), [
    ("$", ("CL",), "CLP"), ("$", ("US",), "USD"), ("$", ("TW",), "TWD"), ("$", ("CA",), "CAD"),
    ("$", ("HK",), "HKD"), ("kr", ("SE",), "SEK"), ("kr.", ("DK",), "DKK"),
    ("kr", ("NO",), "NOK"), ("¥", ("JP",), "JPY"), ("￥", ("JP",), "JPY"), ("¥", ("CN",), "CNY"),
    ("원", (), "KRW"), ("₩", (), "KRW"),
    # a symbol the territory does not write its currency with stays unknown
    ("$", ("DE",), None), ("kr", ("GB",), None), ("$", (), None), ("$", ("ZZ",), None),
    ("$", ("DE", "US"), "USD"),
])
def test_currency_by_territory(value: str, territories: tuple[str, ...],
                               expected: str | None) -> None:
    assert currency_code(value, territories) == expected


@pytest.mark.parametrize(("url", "lang", "meta", "expected"), [
    ("https://shop.example.cl/p", "es-CL", {}, ("CL",)),
    ("https://shop.example.com/p", "en-US", {"og:locale": "en_CA"}, ("US", "CA")),
    ("https://shop.example.co.uk/p", "en", {}, ("GB",)),
    ("https://shop.example.com/p", "zh-Hant-TW", {}, ("TW",)),
    ("https://shop.example.com/p", None, {}, ()),
    ("http://[::1", None, {}, ()),
])
def test_page_territories(url: str, lang: str | None, meta: dict[str, str],
                          expected: tuple[str, ...]) -> None:
    assert page_territories(url, lang, meta) == expected


def test_parse_price_reads_a_dollar_sign_against_territories() -> None:
    assert parse_price("$3.340", ("CL",)) == ("3340", "CLP")
    assert parse_price("$1,299.00") == ("1299.00", None)


# --- the page's only product completed; no invented products ---------------------------------

def test_lone_product_takes_the_stock_its_page_shows() -> None:
    """Microdata with a price but no availability, and an enabled "Add to Cart" for the
    page's only product: InStock (a buyer can put it in the cart now); the sentence "Not
    available in stores." is not its stock."""
    product = only(extract_products(
        page("buy_button_microdata", "https://www.babydepot.example.com/p/crib")).products)
    assert product.source == "microdata"
    (offer,) = product.offers
    assert (offer.price, offer.currency, offer.availability) == ("169.99", "USD", "InStock")


def test_stated_stock_wins_over_the_buy_button() -> None:
    body = '<span class="price">£15.00</span><p>Out of stock</p><button>Add to cart</button>'
    assert shown_offer(root(body))["availability"] == "OutOfStock"
    assert shown_offer(root('<button>Add to cart</button>'))["availability"] == "InStock"
    assert shown_offer(root('<span class="price">£15.00</span>'))["availability"] is None


def test_several_products_are_not_completed_from_the_page() -> None:
    """With two products, nothing says whose "In stock" the text shows."""
    html = ld({"@type": "Product", "name": "A", "offers": {"@type": "Offer", "price": "1"}},
              {"@type": "Product", "name": "B", "offers": {"@type": "Offer", "price": "2"}},
              body="<p>In stock</p><button>Add to cart</button>")
    found = extract_products(FetchedPage.from_html("https://shop.example/list", html)).products
    assert [o.availability for p in found for o in p.offers] == [None, None]


def test_paywalled_article_publication_is_not_a_product() -> None:
    """Google's subscription markup types the publication an article is part of as Product
    ("WIRED", "The New York Times"): not a product a store sells."""
    assert extract_products(
        page("paywall_article", "https://www.dailyledger.example/story/banking")).products == []


def test_related_carousel_page_keeps_its_main_product_first() -> None:
    """The main product comes first with its offer; related items follow (markup does not
    say they are not sold here, see docs/benchmarks.md, Product extraction quality)."""
    found = extract_products(
        page("related_carousel", "https://hearth.example.co.uk/p/oak-board-large")).products
    assert found[0].name == "Oak chopping board, large"
    assert (found[0].sku, found[0].offers[0].availability) == ("HH-OAK-L", "InStock")


def ld(*items: object, body: str = "") -> str:
    scripts = "".join(f'<script type="application/ld+json">{json.dumps(item)}</script>'
                      for item in items)
    return f"<html><head>{scripts}</head><body>{body}</body></html>"


def test_a_related_product_counts_only_with_an_offer_of_its_own() -> None:
    """Issue 13: the items a product page shows beside its own (isRelatedTo, isSimilarTo…)
    are links to other pages unless the markup sells them here too."""
    node = {"@context": "https://schema.org", "@type": "Product", "name": "Oak board",
            "offers": {"@type": "Offer", "price": "34.00", "priceCurrency": "GBP"},
            "isRelatedTo": [{"@type": "Product", "name": "Board oil",
                             "url": "https://shop.example/p/oil"},
                            {"@type": "Product", "name": "Knife", "offers": {
                                "@type": "Offer", "price": "18.00", "priceCurrency": "GBP"}}],
            "isSimilarTo": {"@type": "Product", "name": "Walnut board"}}
    html = (f'<html><head><script type="application/ld+json">{json.dumps(node)}</script>'
            "</head><body><h1>Oak board</h1></body></html>")
    found = extract_products(FetchedPage.from_html("https://shop.example/p/oak", html))
    assert [p.name for p in found.products] == ["Oak board", "Knife"]
