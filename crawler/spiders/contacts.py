"""``scrapy crawl contacts -a url=…``: the contact discovery operation (``POST /contacts``)."""

from __future__ import annotations

from core.items.contacts import Contacts
from crawler.extract.contacts import extract_contacts
from crawler.extract.fetched import FetchedPage
from crawler.spiders.base import SinglePageSpider


class ContactsSpider(SinglePageSpider):
    """Emails, phones, social profiles, organisation and suggested pages of one page.

    Suggested pages are listed, never fetched: one request per call, one credit.
    """

    name = "contacts"

    def extract(self, page: FetchedPage) -> Contacts:
        return extract_contacts(page)
