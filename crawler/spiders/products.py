"""``scrapy crawl products -a url=…``: the product data operation (``POST /products``)."""

from __future__ import annotations

from typing import Any

from scrapy.http import HtmlResponse

from crawler.extract.products import extract_products
from crawler.spiders.base import SinglePageSpider, headers_of


class ProductsSpider(SinglePageSpider):
    """Products and their offers from JSON-LD, else microdata, RDFa or OpenGraph markup."""

    name = "products"

    def extract(self, response: HtmlResponse) -> dict[str, Any]:
        return extract_products(response.url, response.text, headers_of(response))
