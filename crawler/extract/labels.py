"""Values a page shows next to a label that names them, for what its markup leaves out.

Many shops mark up a product's name and price but print its identifier only as text:
"Item number: 302474151804", "Art.-Nr. 10240", "Šifra: 0638". That text is what a visitor sees
and quotes, so it is a sound fallback for a missing SKU. Labels are the usual ones in major
shop languages, never one site's wording; a value must contain a digit, which keeps words that
follow a label by chance ("Ref. Standard") out.
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
    r"品番", r"상품번호",
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
