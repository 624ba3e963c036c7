"""``scrapy crawl products -a url=…``: the product data operation (``POST /products``)."""

from __future__ import annotations

from core.items.products import Products
from crawler.extract.fetched import FetchedPage
from crawler.extract.products import extract_products
from crawler.spiders.base import SinglePageSpider


class ProductsSpider(SinglePageSpider):
    """Products and their offers from JSON-LD, else microdata, RDFa or OpenGraph markup."""

    name = "products"

    def extract(self, page: FetchedPage) -> Products:
        return extract_products(page)
