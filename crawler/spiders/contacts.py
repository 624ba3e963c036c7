"""``scrapy crawl contacts -a url=…``: the contact discovery operation (``POST /contacts``)."""

from __future__ import annotations

from typing import Any

from scrapy.http import HtmlResponse

from crawler.extract.contacts import extract_contacts
from crawler.spiders.base import SinglePageSpider, headers_of


class ContactsSpider(SinglePageSpider):
    """Emails, phones, social profiles, organisation and suggested pages of one page.

    Suggested pages are listed, never fetched: one request per call, one credit.
    """

    name = "contacts"

    def extract(self, response: HtmlResponse) -> dict[str, Any]:
        return extract_contacts(response.url, response.text, headers_of(response))
