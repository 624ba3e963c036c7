"""The input every extractor takes: one fetched page, parsed once, on demand.

A collection runs several extractors on the same page (``page`` then ``contacts``, say); each
parse here (the lxml tree, ``<base href>``, ``<meta>``, JSON-LD, microdata) is computed the
first time an extractor asks for it and kept on the object, so the page is parsed once
however many extractors read it. Extractors only read the tree: nothing here is mutated.

Scrapy-free on purpose: tests and benchmarks build a page from saved HTML with
:meth:`FetchedPage.from_html`; spiders build it from a response
(``crawler.spiders.base.fetched_page``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import trafilatura
from lxml import etree
from lxml.html import HtmlElement

from core.controls import escaped
from crawler.extract.structured import (
    base_url,
    header,
    json_ld,
    meta_tags,
    microdata,
    parse_html,
)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class FetchedPage:
    """One page as fetched. Only ``url`` and ``html`` are required.

    ``url`` is the URL as requested; ``final_url`` the one after redirects (the page's own
    address: links, ``<base href>`` and ``source_url`` fields are resolved against it);
    ``status`` the HTTP status; ``headers`` the response headers (name → first value, any
    case); ``html`` the decoded body.
    """

    url: str
    html: str
    final_url: str | None = None
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_html(cls, url: str, html: str, headers: Mapping[str, str] | None = None
                  ) -> FetchedPage:
        """A page fetched from ``url`` without redirects (saved HTML in tests and benches)."""
        return cls(url=url, html=html, final_url=url, headers=dict(headers or {}))

    @property
    def address(self) -> str:
        """Where the page was found in the end: ``final_url``, else ``url``."""
        return self.final_url or self.url

    def header(self, name: str) -> str | None:
        """A response header, by case-insensitive name."""
        return header(self.headers, name)

    @cached_property
    def _parsed(self) -> tuple[HtmlElement | None, bool]:
        """(tree, whether it is a whole document).

        Parsed with trafilatura's loader, so that the main-text extraction sees exactly the
        tree it would build itself. trafilatura refuses bare fragments without ``<html>``;
        those get a plain lxml parse (links, metadata, contacts still work; no main text).
        """
        if not self.html or not self.html.strip():
            return None, False
        try:
            tree = trafilatura.load_html(self.html)
        except (ValueError, UnicodeError, etree.LxmlError):  # garbage input
            logger.debug("trafilatura could not load %s", escaped(self.address), exc_info=True)
            tree = None
        if tree is not None:
            return tree, True
        return parse_html(self.html), False

    @property
    def tree(self) -> HtmlElement | None:
        """The parsed page as its parser returned it; None for empty or unparsable input."""
        return self._parsed[0]

    @property
    def is_document(self) -> bool:
        """True when the page is a whole HTML document (main-text extraction applies)."""
        return self._parsed[1]

    @cached_property
    def root(self) -> HtmlElement | None:
        """The ``<html>`` element of :attr:`tree`."""
        tree = self.tree
        return None if tree is None else tree.getroottree().getroot()

    @cached_property
    def base(self) -> str:
        """The URL relative links resolve against (``<base href>``, else the page's address)."""
        return self.address if self.root is None else base_url(self.root, self.address)

    @cached_property
    def meta(self) -> tuple[dict[str, str], dict[str, str]]:
        """``<meta>`` name/property → content, and http-equiv → content (lower-case keys)."""
        return ({}, {}) if self.root is None else meta_tags(self.root)

    @cached_property
    def json_ld(self) -> list[dict[str, Any]]:
        """The page's JSON-LD items, script by script (see ``structured.json_ld``)."""
        return [] if self.root is None else json_ld(self.root)

    @cached_property
    def microdata(self) -> list[dict[str, Any]]:
        """extruct's microdata items (``{"type", "properties"}``)."""
        return [] if self.root is None else microdata(self.root, self.base)
