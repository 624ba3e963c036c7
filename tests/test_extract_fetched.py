"""The extractors' one input: a fetched page parsed once, however many extractors read it."""

from __future__ import annotations

from typing import Any

import pytest
import trafilatura

from crawler.extract import fetched as fetched_module
from crawler.extract import structured
from crawler.extract.contacts import extract_contacts
from crawler.extract.fetched import FetchedPage
from crawler.extract.page import extract_page
from crawler.extract.products import extract_products

HTML = """<!doctype html><html lang="en-GB"><head><title>Tide clock</title>
<base href="https://shop.example/base/">
<meta property="og:locale" content="en_GB">
<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Product",
 "name": "Tide clock", "sku": "TC-1", "offers": {"@type": "Offer", "price": "12.50",
 "priceCurrency": "GBP"}}</script></head>
<body><article><h1>Tide clock</h1><p>A brass clock that shows the tide, not the time.</p>
<p>Call 020 7946 0000 or write to <a href="mailto:shop@example.co.uk">us</a>.</p>
<a href="more">More</a></article></body></html>"""


def counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    """Count the calls of ``module.name`` (a parser) made through this test."""
    calls: list[int] = []
    real = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_three_extractors_parse_the_page_once(monkeypatch: pytest.MonkeyPatch) -> None:
    trees = counting(monkeypatch, trafilatura, "load_html")
    ld_reads = counting(monkeypatch, fetched_module, "json_ld")
    page = FetchedPage(url="https://shop.example/c", final_url="https://shop.example/clock",
                       html=HTML, headers={"Content-Language": "en"})

    article = extract_page(page)
    contacts = extract_contacts(page)
    products = extract_products(page)

    assert (len(trees), len(ld_reads)) == (1, 1)
    assert article.title == "Tide clock"
    assert article.links[0].url == "https://shop.example/base/more"  # <base href>
    assert [e.value for e in contacts.emails] == ["shop@example.co.uk"]
    assert contacts.emails[0].source_url == "https://shop.example/clock"  # final URL
    assert [p.value for p in contacts.phones] == ["+442079460000"]
    assert [(p.name, p.sku) for p in products.products] == [("Tide clock", "TC-1")]
    assert article.metadata is not None and article.metadata.json_ld is page.json_ld


def test_a_fragment_is_parsed_but_is_not_a_document() -> None:
    page = FetchedPage.from_html("https://example.com/a/b", "<a href='c#x'>C</a>")
    assert page.root is not None and not page.is_document
    assert page.base == "https://example.com/a/b"
    assert extract_page(page).text is None


@pytest.mark.parametrize("html", ["", "   ", None])
def test_nothing_to_parse(html: Any) -> None:
    page = FetchedPage.from_html("https://example.com/", html)
    assert (page.tree, page.root, page.json_ld, page.microdata, page.meta) == (
        None, None, [], [], ({}, {}))
    assert page.base == "https://example.com/"


def test_address_and_headers() -> None:
    page = FetchedPage(url="http://a.example/", html="", final_url="https://b.example/",
                       headers={"content-LANGUAGE": "de"})
    assert page.address == "https://b.example/"
    assert page.header("Content-Language") == "de"
    assert FetchedPage(url="http://a.example/", html="").address == "http://a.example/"
    assert structured.header(page.headers, "content-language") == "de"
