"""The links a crawl follows (``crawler.extract.links``), on saved HTML: pure, no network."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crawler.extract.fetched import FetchedPage
from crawler.extract.links import PageLinks, link_url, page_links
from crawler.extract.page import extract_page

PAGE_FIXTURES = Path(__file__).parent / "fixtures" / "page"
URL = "https://www.example.com/docs/guide/start"


def links_of(html: str, url: str = URL, final_url: str | None = None) -> PageLinks:
    return page_links(FetchedPage(url=url, html=html, final_url=final_url or url))


def body(anchors: str, head: str = "") -> str:
    return f"<html><head><title>t</title>{head}</head><body>{anchors}</body></html>"


def test_links_resolved_in_document_order_first_occurrence_kept() -> None:
    result = links_of(body(
        '<a href="b">B</a> <a href="/a">A</a> <a href="b#part">B again</a>'
        '<a href="https://other.example/x">elsewhere</a> <a href="/a?b=1&amp;a=2">A, query</a>'))
    assert result.links == (
        "https://www.example.com/docs/guide/b",
        "https://www.example.com/a",
        "https://other.example/x",  # other sites too: the crawl scope decides, not the page
        "https://www.example.com/a?b=1&a=2",  # not canonicalised here: the frontier does that
    )
    assert result.canonical is None


def test_relative_links_use_the_final_url_and_base_href() -> None:
    redirected = links_of(body('<a href="next">n</a>'), url="http://example.com/old",
                          final_url="https://example.com/new/page")
    assert redirected.links == ("https://example.com/new/next",)
    based = links_of(body('<a href="intro.html">i</a> <a href="/root">r</a>',
                          head='<base href="https://cdn.example.com/docs/v2/">'))
    assert based.links == ("https://cdn.example.com/docs/v2/intro.html",
                           "https://cdn.example.com/root")


def test_only_http_links_without_fragment() -> None:
    result = links_of(body(
        '<a href="#top">top</a> <a href="">empty</a> <a>none</a>'
        '<a href="javascript:void(0)">js</a> <a href=" JavaScript:alert(1)">js</a>'
        '<a href="mailto:a@example.com">m</a> <a href="tel:+1555">t</a>'
        '<a href="data:text/html,hi">d</a> <a href="ftp://example.com/f">f</a>'
        '<a href="http://[::1">bad v6</a> <a href="http://exa mple.com/">space</a>'
        '<a href="http://example.com:0/">port 0</a> <a href="http://example.com:70000/">big</a>'
        '<a href="https://example.com/page#section">kept, without fragment</a>'))
    assert result.links == ("https://example.com/page",)


def test_idn_and_spaces_are_encoded() -> None:
    result = links_of(body('<a href="https://bücher.example/">idn</a>'
                           '<a href="search?q=a b&amp;p=2">q</a> <a href="\n  /x  ">ws</a>'))
    assert result.links == ("https://xn--bcher-kva.example/",
                            "https://www.example.com/docs/guide/search?q=a%20b&p=2",
                            "https://www.example.com/x")


def test_nofollow_anchors_are_not_followed() -> None:
    result = links_of(body(
        '<a href="/ad" rel="sponsored NoFollow">ad</a> <a href="/ugc" rel="ugc nofollow">c</a>'
        '<a href="/ok" rel="noopener">ok</a> <a href="/ugc">same URL, followable</a>'))
    assert result.links == ("https://www.example.com/ok", "https://www.example.com/ugc")


@pytest.mark.parametrize("content", ["nofollow", "noindex, nofollow", "NOFOLLOW", "none",
                                     "noarchive,nofollow"])
def test_meta_robots_nofollow_means_no_links(content: str) -> None:
    html = body('<a href="/a">a</a>', head=f'<meta name="robots" content="{content}">'
                '<link rel="canonical" href="/docs/">')
    assert links_of(html) == PageLinks(links=(), canonical="https://www.example.com/docs/")


@pytest.mark.parametrize("content", ["noindex", "index, follow", "nofollowing"])
def test_other_robots_directives_keep_the_links(content: str) -> None:
    html = body('<a href="/a">a</a>', head=f'<meta name="robots" content="{content}">')
    assert links_of(html).links == ("https://www.example.com/a",)


@pytest.mark.parametrize(("head", "canonical"), [
    ('<link rel="canonical" href="https://example.com/guide">', "https://example.com/guide"),
    ('<link rel="Canonical" href="../intro#x">', "https://www.example.com/docs/intro"),
    ('<base href="https://example.com/v2/"><link rel="canonical" href="page">',
     "https://example.com/v2/page"),
    ('<link rel="alternate" href="/fr/"><link rel="canonical" href="/en/">',
     "https://www.example.com/en/"),
    ('<link rel="canonical" href="">', None),
    ('<link rel="canonical">', None),
    ('<link rel="canonical" href="ftp://example.com/x">', None),
    ('<link rel="canonical" href="http://[::1">', None),
    ("", None),
])
def test_canonical(head: str, canonical: str | None) -> None:
    assert links_of(body("", head=head)).canonical == canonical


@pytest.mark.parametrize("html", ["", "   ", "\x00", "<a href='/x'>fragment only</a>",
                                  "not html at all", "<html><body><a href='/y'"])
def test_odd_pages(html: str) -> None:
    result = links_of(html)
    assert isinstance(result, PageLinks)
    assert set(result.links) <= {"https://www.example.com/x", "https://www.example.com/y"}


def test_a_bare_fragment_still_gives_its_links() -> None:
    assert links_of("<a href='/x'>x</a>").links == ("https://www.example.com/x",)


def test_agrees_with_the_links_of_scrape() -> None:
    """One rule for a usable link: the crawl follows what /scrape lists, minus nofollow."""
    case = json.loads((PAGE_FIXTURES / "links.json").read_text(encoding="utf-8"))
    page = FetchedPage.from_html(case["url"], (PAGE_FIXTURES / "links.html").read_text("utf-8"))
    listed = extract_page(page).links
    assert links_of(page.html, case["url"]).links == tuple(
        link.url for link in listed if link.rel != "nofollow")
    assert len(listed) > 10  # the fixture really has links


def test_link_url() -> None:
    assert link_url("https://example.com/a/", "b?x=1#f") == "https://example.com/a/b?x=1"
    assert link_url("https://example.com/a/", "//cdn.example.org/f") == "https://cdn.example.org/f"
    assert link_url("https://example.com/", None) is None
    assert link_url("https://example.com/", "  #frag") is None
    assert link_url("https://example.com/", "mailto:x@example.com") is None
