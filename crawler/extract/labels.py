"""Values a page shows next to a label that names them, for what its markup leaves out.

Many shops mark up a product's name and price but print its identifier only as text:
"Item number: 302474151804", "Art.-Nr. 10240", "Šifra: 0638". That text is what a visitor sees
and quotes, so it is a sound fallback for a missing SKU. Labels are the usual ones in major
shop languages, never one site's wording; a value must contain a digit, which keeps words that
follow a label by chance ("Ref. Standard") out.

Stock is shown the same way: "In stock", "Auf Lager", "Rupture de stock", "Agotado". Such a
phrase is read only when it is the whole of a short text ("Currently unavailable.", "Only 2
left in stock"), never inside a sentence ("we don't know when it will be back in stock") or
a caption ("Image not available").
"""

from __future__ import annotations

import re

from lxml.html import HtmlElement

_SKU_LABELS = (
    r"sku", r"item\s*(?:number|no\.|#)", r"product\s*(?:code|number|no\.|id)",
    r"article\s*(?:number|no\.)", r"stock\s*(?:code|number)",
    r"art(?:ikel)?\.?\s*-?\s*nr\.?", r"artikelnummer", r"bestellnummer", r"best\.?\s*-?\s*nr\.?",
    r"r[ée]f[ée]rence", r"r[ée]f\.", r"code\s+(?:article|produit)", r"num[ée]ro\s+d'article",
    r"referencia", r"c[óo]digo\s+(?:de\s+)?(?:producto|produto|art[íi]culo)",
    r"codice\s+(?:articolo|prodotto)", r"cod\.?\s+(?:produs|articol|articolo)",
    r"kod\s+(?:produktu|towaru)", r"k[óo]d\s+(?:produktu|tovaru|zbo[žz][íi])", r"[šs]ifra",
    r"cikksz[áa]m", r"артикул", r"код\s+товара", r"商品編號", r"商品编号", r"货号", r"商品番号",
    r"品番", r"상품번호", r"asin",
)
_LABELLED_SKU = re.compile(
    # a label is a whole word, but may end in "#" or "." right before its value ("Item #41")
    rf"(?<!\w)(?:{'|'.join(_SKU_LABELS)})(?!(?<=\w)\w)\s*[:\uff1a#]?\s*([0-9A-Za-z][\w./-]{{1,39}})",
    re.IGNORECASE,
)
_VISIBLE_TEXT = (
    "//body//text()[not(ancestor::script or ancestor::style or ancestor::noscript"
    " or ancestor::template)]"
)


def labelled_sku(root: HtmlElement) -> str | None:
    """The first identifier the page's visible text gives after a SKU-like label."""
    text = " ".join(root.xpath(_VISIBLE_TEXT))
    for match in _LABELLED_SKU.finditer(" ".join(text.split())):
        value = match.group(1).rstrip("./-")
        if any(char.isdigit() for char in value):
            return value
    return None


# words that may stand before a stock phrase: "Currently", "Only 2 left", "Subito", "Derzeit"
_QUALIFIER = (
    r"(?:(?:currently|temporarily|derzeit|momentan|zurzeit|aktuell|actuellement|"
    r"temporairement|attualmente|temporaneamente|subito|sofort|actualmente|temporalmente|"
    r"immediately|momenteel|obecnie|only \d+ left|nur noch \d+|plus que \d+|solo \d+)\s+)?"
)
_OUT_OF_STOCK = (
    r"out of stock", r"sold out", r"unavailable", r"not available", r"no longer available",
    r"nicht verfügbar", r"nicht lieferbar", r"nicht auf lager", r"ausverkauft", r"vergriffen",
    r"rupture de stock", r"épuisé", r"indisponible", r"non disponible", r"agotado",
    r"sin stock", r"no disponible", r"esaurito", r"non disponibile", r"uitverkocht",
    r"niet op voorraad", r"niet leverbaar", r"brak w magazynie", r"niedostępny",
    r"wyprzedany", r"nedostupné", r"vyprodáno", r"není skladem", r"nie je skladom",
    r"vypredané", r"ni na zalogi", r"rasprodano", r"nema na zalihi", r"esgotado",
    r"indisponível", r"нет в наличии", r"распродано", r"품절", r"缺貨", r"缺货", r"售完",
    r"在庫切れ", r"売り切れ", r"stokta yok", r"tükendi",
)
_IN_STOCK = (
    r"(?:left )?in stock", r"available", r"auf lager", r"lieferbar", r"verfügbar",
    r"en stock", r"disponible", r"en existencia", r"disponibile", r"op voorraad", r"leverbaar",
    r"na stanie", r"dostępny", r"skladem", r"na skladě", r"na sklade", r"skladom",
    r"na zalogi", r"na zalihi", r"dostupno", r"disponível", r"em estoque", r"в наличии",
    r"есть в наличии", r"재고 있음", r"現貨", r"有現貨", r"有货", r"在庫あり", r"stokta",
    r"stokta var", r"i lager", r"på lager", r"varastossa",
)
_STOCK = re.compile(
    rf"{_QUALIFIER}(?:(?P<out>{'|'.join(_OUT_OF_STOCK)})|(?P<in>{'|'.join(_IN_STOCK)}))[.!]?",
    re.IGNORECASE,
)
MAX_STOCK_TEXT = 40  # "Only 12 left in stock - order soon." is about the longest such text


def stock_phrase(text: str) -> str | None:
    """"InStock" or "OutOfStock" when ``text`` as a whole says so ("In stock.", "Derzeit
    nicht verfügbar"), else None."""
    text = " ".join(text.split())
    if len(text) > MAX_STOCK_TEXT or not (match := _STOCK.fullmatch(text)):
        return None
    return "OutOfStock" if match.group("out") else "InStock"


# what a shop's buy button says, in the major shop languages
_BUY = re.compile(
    r"(?<!\w)(?:add to (?:cart|basket|bag|trolley)|buy now|buy it now"
    r"|in den (?:warenkorb|einkaufswagen)|jetzt kaufen|ajouter au panier|acheter"
    r"|añadir al carrito|agregar al carrito|comprar(?: ahora)?|aggiungi al carrello"
    r"|acquista(?: ora)?|in winkelwagen|in winkelmand|toevoegen aan winkelwagen|do koszyka"
    r"|kup teraz|do košíku|do košíka|v košarico|u košaricu|naroči|kupi|в корзину|купить"
    r"|adicionar ao carrinho|lägg i varukorg|legg i handlekurv|læg i kurv|ostoskoriin"
    r"|kosárba|sepete ekle|加入購物車|加入购物车|立即購買|立即购买|我要購買|カートに入れる"
    r"|장바구니|구매하기)(?!\w)",
    re.IGNORECASE,
)


def buy_phrase(text: str) -> bool:
    """True when a control's short label asks to buy or add to the cart."""
    text = " ".join(text.split())
    return len(text) <= MAX_STOCK_TEXT and _BUY.search(text) is not None
