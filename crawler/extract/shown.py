"""What a product page shows of its main product outside Product markup: price, stock, SKU.

Many shops mark up nothing (or only a name) and still show the buyer everything: a price in an
element its template calls "price", "In stock" / "Auf Lager" / "Rupture de stock" next to the
buy button, "SKU: …" in the details. Others scatter microdata attributes outside any
``itemscope`` (``itemprop="price" content="19.99"``), which microdata parsers ignore, or link
the schema.org availability (``href="https://schema.org/InStock"``) without a typed item.

Everything here reads the page's *main* area: headers, footers, navigation, asides and blocks
whose class or id names a carousel of other products ("related", "recommended", "similar",
"also bought", …) are skipped, since what they show belongs to other products. The caller
uses it only for a page's lone product (``products.extract_products``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from lxml import etree
from lxml.html import HtmlElement
from price_parser import Price

from crawler.extract.labels import MAX_STOCK_TEXT, buy_phrase, labelled_sku, stock_phrase
from crawler.extract.offers import availability

# blocks that show other products, or the site's frame, by tag or by class/id wording
_FRAME_TAGS = frozenset({"header", "footer", "nav", "aside", "del", "s", "strike"})
_OTHER_PRODUCTS = re.compile(
    r"related|recommend|similar|carousel|upsell|up-sell|cross-?sell|also|bought|recently"
    r"|viewed|sponsor|p13n|suggest|accessor|bundle|compare|wishlist|minicart|mini-cart"
    r"|footer|navbar|megamenu|mega-menu|breadcrumb",
    re.IGNORECASE,
)
# a price element's own class/id saying it is not the price paid now
_NOT_THE_PRICE = re.compile(
    r"old|was|strike|regular|list|before|orig|compare|rrp|uvp|msrp|sav(?:e|ing)|discount"
    r"|unit|per-|shipping|delivery|instal|month|crossed|prev|reference|range|filter|slider",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d+(?:[.,\s\u00a0\u202f']\d+)*")
_MAX_PRICE_TEXT = 40
_PRICE_ELEMENTS = etree.XPath(
    "//body//*[contains(translate(@class, 'PRICE', 'price'), 'price')"
    " or contains(translate(@id, 'PRICE', 'price'), 'price')]"
)
# short visible texts only: a stock phrase is at most MAX_STOCK_TEXT characters
_SHORT_TEXTS = etree.XPath(
    "//body//text()[string-length(normalize-space()) > 1"
    f" and string-length(normalize-space()) <= {MAX_STOCK_TEXT}]"
    "[not(ancestor::script or ancestor::style"
    " or ancestor::noscript or ancestor::template or ancestor::option)]"
)
_BUY_CONTROLS = etree.XPath(
    "//button | //input[@type='submit' or @type='button' or @type='image']"
    " | //a[@href or @role='button']"
)
# ids and classes e-commerce templates give their buy button (WooCommerce, OpenCart, Magento…)
_BUY_NAMES = re.compile(
    r"add[-_]?to[-_]?(?:cart|basket|bag)|buy[-_]?now|button[-_]cart|btn[-_]cart"
    r"|cart[-_]button|btn[-_]buy|buy[-_]button|addtocart",
    re.IGNORECASE,
)


def in_main_area(element: HtmlElement) -> bool:
    """False for what sits in the page's frame or in a block of other products."""
    for ancestor in element.iterancestors():
        if not isinstance(ancestor.tag, str):
            continue
        if ancestor.tag in _FRAME_TAGS:
            return False
        names = f"{ancestor.get('class') or ''} {ancestor.get('id') or ''}"
        if _OTHER_PRODUCTS.search(names):
            return False
    return True


def _main(elements: list[Any]) -> Iterator[HtmlElement]:
    for element in elements:
        if isinstance(element, HtmlElement) and in_main_area(element):
            yield element


def loose_itemprop(root: HtmlElement, name: str) -> str | None:
    """The first value of ``itemprop=name`` anywhere in the main area, inside an item or not:
    ``content``, else ``href`` (availability links), else the element's text."""
    for element in _main(root.xpath(f"//*[@itemprop='{name}']")):
        for value in (element.get("content"), element.get("href"), element.text_content()):
            if value and value.strip():
                return " ".join(value.split())
    return None


def shown_price(root: HtmlElement) -> str | None:
    """The text of the first element its template calls a price ("price", "product-price",
    "priceblock_ourprice") that holds one amount with its currency, in the main area and not
    marked as an old, list or unit price."""
    for element in _PRICE_ELEMENTS(root):
        names = f"{element.get('class') or ''} {element.get('id') or ''}"
        if _NOT_THE_PRICE.search(names) or element.tag in _FRAME_TAGS:
            continue
        text = " ".join(element.text_content().split())
        if not text or len(text) > _MAX_PRICE_TEXT or len(_NUMBER.findall(text)) != 1:
            continue
        parsed = Price.fromstring(text)
        if parsed.amount and parsed.amount > 0 and parsed.currency and in_main_area(element):
            return text
    return None


def shown_availability(root: HtmlElement) -> str | None:
    """schema.org availability the page states for its main product: a loose
    ``itemprop="availability"``, a link to a schema.org availability, else a stock phrase
    that is the whole of a short text ("In stock.", "Rupture de stock")."""
    if found := availability(loose_itemprop(root, "availability")):
        return found
    for element in _main(root.xpath("//body//*[contains(@href, 'schema.org/')]")):
        if found := availability(element.get("href")):
            return found
    for text in _SHORT_TEXTS(root):
        if (found := stock_phrase(text)) and in_main_area(text.getparent()):
            return found
    return None


def has_buy_button(root: HtmlElement) -> bool:
    """True when the main area has an enabled control that puts the product in a cart or
    buys it ("Add to cart", "In den Warenkorb", "Ajouter au panier", "加入購物車", …)."""
    for control in _BUY_CONTROLS(root):
        if control.get("disabled") is not None:
            continue
        label = " ".join(filter(None, (control.text_content(), control.get("value"),
                                       control.get("title"), control.get("aria-label"))))
        names = " ".join(filter(None, (control.get("id"), control.get("name"),
                                       control.get("class"))))
        if (buy_phrase(label) or _BUY_NAMES.search(names)) and in_main_area(control):
            return True
    return False


def shown_offer(root: HtmlElement) -> dict[str, Any]:
    """An Offer node (JSON-LD shaped) from the price and stock the main area shows."""
    stock = shown_availability(root) or ("InStock" if has_buy_button(root) else None)
    return {"@type": "Offer",
            "price": loose_itemprop(root, "price") or shown_price(root),
            "priceCurrency": loose_itemprop(root, "priceCurrency"),
            "availability": stock}


def shown_product(root: HtmlElement, name: str | None) -> dict[str, Any] | None:
    """A Product node (JSON-LD shaped) for a page without product markup, from what it shows;
    None unless the page plainly sells one thing: it has a buy button, or it states the stock
    of something with a price or a SKU, or it shows a price and a SKU. An article or a list
    page has none of these."""
    offer = shown_offer(root)
    price, stock = offer["price"], offer["availability"]
    sku = loose_itemprop(root, "sku") or labelled_sku(root)
    if not ((stock and (price or sku)) or (price and sku) or has_buy_button(root)):
        return None
    if not (price or stock or sku):
        return None
    return {"@type": "Product", "name": name, "sku": sku, "offers": offer}
