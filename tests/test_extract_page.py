"""Tests for crawler.extract.page.extract_page on saved pages (no network).

Each tests/fixtures/page/NAME.html has NAME.json next to it: {"url", "headers"?, "expected"},
where "expected" is the whole result dict, text included, compared exactly.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest
from itemadapter import ItemAdapter

from core.contract import PageStatus
from core.items import PageResult, plain
from crawler.extract import page as page_module
from crawler.extract.fetched import FetchedPage
from crawler.extract.page import extract_page
from tests.support.logcheck import our_errors

#: Saved HTML as a page fetched from that URL, what extractors take.
fetched = FetchedPage.from_html

FIXTURES = Path(__file__).parent / "fixtures" / "page"
CASES = sorted(path.stem for path in FIXTURES.glob("*.json"))
METADATA_KEYS = {
    "description", "canonical_url", "author", "published_at", "modified_at", "site_name",
    "image", "keywords", "open_graph", "twitter", "json_ld", "microdata", "meta",
}


def load(name: str) -> tuple[dict[str, Any], str]:
    case = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return case, (FIXTURES / f"{name}.html").read_text(encoding="utf-8")


def run(name: str, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    case, html = load(name)
    page = extract_page(fetched(case["url"], html, case.get("headers")), **kwargs)
    return asdict(page), case["expected"]


def test_fixtures_are_present() -> None:
    assert len(CASES) >= 4
    assert all((FIXTURES / f"{name}.html").exists() for name in CASES)


@pytest.mark.parametrize("name", CASES)
def test_fixture_matches_expected_output(name: str) -> None:
    result, expected = run(name)
    assert result["text"] == expected["text"]
    assert result == expected
    assert json.loads(json.dumps(result)) == result  # plain JSON types only


@pytest.mark.parametrize("name", CASES)
def test_plain_gives_what_itemadapter_gives(name: str) -> None:
    """``plain`` (what jobs return and collections store) is ``ItemAdapter.asdict``, faster."""
    case, html = load(name)
    result = PageResult(url=case["url"], status=PageStatus.SUCCEEDED,
                        data=extract_page(fetched(case["url"], html, case.get("headers"))))
    assert plain(result) == ItemAdapter(result).asdict()
    assert plain(result)["data"] == case["expected"]


def test_plain_keeps_a_dataclass_without_fields_a_dict() -> None:
    @dataclass
    class Empty:
        pass

    assert plain(Empty()) == {} and plain([Empty(), (1, "a")]) == [{}, [1, "a"]]


def test_article_fields() -> None:
    """Spot checks that say *why* the article fixture looks the way it does."""
    result, _ = run("article")
    meta = result["metadata"]
    assert result["title"] == "River towns rebuild after the spring floods | Valley Herald"
    assert result["language"] == "en"  # <html lang="en-US"> beats og:locale en_GB
    assert result["text"].count("\n\n") == 5  # headline + five paragraphs
    assert "All rights reserved" not in result["text"]  # footer boilerplate left out
    assert "Contact us" not in result["text"]  # navigation left out
    assert meta["canonical_url"] == "https://example.com/news/river-towns-rebuild"
    assert meta["author"] == "Jane Doe"
    assert meta["published_at"] == "2024-03-05T08:30:00Z"  # 09:30+01:00 in UTC
    assert meta["modified_at"] == "2024-03-06T23:00:00Z"  # JSON-LD 18:00-05:00 in UTC
    assert meta["image"] == "https://example.com/images/levee.jpg"  # first og:image, absolute
    assert meta["keywords"] == ["floods", "levees", "infrastructure"]
    assert meta["open_graph"]["og:site_name"] == "Valley Herald"
    assert meta["twitter"] == {
        "twitter:card": "summary_large_image",
        "twitter:site": "@valleyherald",
        "twitter:image": "https://cdn.example.net/levee-twitter.jpg",
    }
    assert meta["json_ld"][0]["@type"] == "NewsArticle"
    assert meta["microdata"][0]["properties"]["author"]["properties"]["name"] == "Jane Doe"
    assert meta["meta"]["description"].startswith("Three river towns")  # "Description" key
    nofollow = [link for link in result["links"] if link["rel"] == "nofollow"]
    assert nofollow == [{"url": "https://twitter.com/valleyherald", "text": "Follow us",
                         "rel": "nofollow", "internal": False}]


def test_links_rules() -> None:
    result, _ = run("links")
    urls = [link["url"] for link in result["links"]]
    assert urls[0] == "https://example.com/docs/guide/intro.html"  # <base href> used
    assert urls.count("https://example.com/docs/guide/intro.html") == 1  # fragment + dedup
    assert result["links"][0]["text"] == "Introduction to the guide"  # first occurrence text
    assert "https://example.com/docs/api/index.html?v=2" in urls  # fragment removed
    assert not any(url.startswith(("javascript", "mailto", "tel", "data", "ftp")) for url in urls)
    assert not any("#" in url for url in urls)
    assert not any(" " in url for url in urls)  # bad host dropped, query space encoded
    assert "https://example.com/docs/guide/search?q=a%20b&page=2" in urls
    assert "https://xn--bcher-kva.example/" in urls  # IDN host, punycode
    internal = {link["url"]: link["internal"] for link in result["links"]}
    assert internal["https://www.example.com/blog/"] is True  # www. ignored
    assert internal["http://sub.example.com/x"] is False
    assert internal["https://cdn.example.org/file.pdf"] is False
    gallery = next(link for link in result["links"] if link["url"].endswith("/gallery/"))
    assert gallery["text"] is None  # image-only anchor


def test_broken_json_ld_is_skipped_not_fatal() -> None:
    result, _ = run("broken_jsonld")
    meta = result["metadata"]
    assert [item.get("@type") for item in meta["json_ld"]] == [None, "Thing"]  # @graph, Thing
    assert meta["author"] == "Ana Lima"  # resolved through the @graph "@id" reference
    assert meta["site_name"] == "Kitchen Notes GmbH"
    assert meta["published_at"] == "2023-08-20"  # no timezone: kept as found
    assert meta["modified_at"] == "2023-08-21T08:15:00Z"
    assert result["title"] == "Recipe: plum cake"  # no <title>: og:title
    assert result["language"] == "de"  # meta http-equiv Content-Language


def test_no_title_no_metadata_falls_back_to_h1_and_header_language() -> None:
    result, _ = run("h1_only")
    assert result["title"] == "Opening hours"  # <svg><title> is not the page title
    assert result["language"] == "es"  # from the Content-Language header
    assert result["metadata"]["meta"] == {}
    assert all(result["metadata"][key] is None for key in (
        "description", "canonical_url", "author", "published_at", "modified_at", "site_name",
        "image"))


def test_include_links_false() -> None:
    result, expected = run("article", include_links=False)
    assert result["links"] == []
    assert result == {**expected, "links": []}


def test_include_metadata_false() -> None:
    result, expected = run("article", include_metadata=False)
    assert result["metadata"] is None
    assert result == {**expected, "metadata": None}
    fallback, _ = run("broken_jsonld", include_metadata=False)
    assert fallback["title"] == "Recipe: plum cake"  # og:title fallback needs no metadata
    assert fallback["language"] == "de"  # nor does http-equiv Content-Language


def test_both_flags_off() -> None:
    result, expected = run("links", include_links=False, include_metadata=False)
    assert result == {**expected, "links": [], "metadata": None}


def assert_blank(result: dict[str, Any]) -> None:
    assert set(result) == {"title", "text", "markdown", "html", "raw_html", "language", "links",
                           "metadata", "records"}
    assert result["title"] is None
    assert result["text"] is None
    assert result["language"] is None
    assert result["links"] == []
    assert set(result["metadata"]) == METADATA_KEYS
    assert result["metadata"]["json_ld"] == []
    assert result["metadata"]["keywords"] == []
    assert result["metadata"]["meta"] == {}
    assert all(value is None for key, value in result["metadata"].items()
               if key not in {"keywords", "open_graph", "twitter", "json_ld", "microdata", "meta"})


@pytest.mark.parametrize("html", [
    "",
    "   \n\t ",
    bytes(range(256)).decode("latin-1") * 8,
    "\x00\x00\x00\ufffe\uffff",
    "<html>",
    "<html><frameset><frame src='left.html'><frame src='right.html'></frameset></html>",
    "<div>" * 5000 + "deep" + "</div>" * 5000,
    "<html><head><script type='application/ld+json'>" + "[" * 100_000 + "</script></head></html>",
], ids=["empty", "whitespace", "binary", "control-chars", "bare-html", "frameset", "deep",
        "deep-json-ld"])
def test_odd_input_never_raises_and_yields_none(html: str,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    assert_blank(asdict(extract_page(fetched("https://example.com/odd", html))))
    assert our_errors(caplog) == []


def test_none_body_does_not_raise(caplog: pytest.LogCaptureFixture) -> None:
    assert_blank(asdict(extract_page(fetched("https://example.com/odd", None))))  # type: ignore[arg-type]
    assert our_errors(caplog) == []


def test_huge_attribute_does_not_raise(caplog: pytest.LogCaptureFixture) -> None:
    html = ("<html><head><title>Big</title></head><body><div data-x='" + "x" * 2_000_000
            + "'>hi</div><a href='/next'>Next</a></body></html>")
    result = asdict(extract_page(fetched("https://example.com/big", html)))
    assert result["title"] == "Big"
    assert [link["url"] for link in result["links"]] == ["https://example.com/next"]
    # beyond libxml2's 10 MB attribute limit the rest of the page is lost, but nothing raises
    bigger = html.replace("x" * 2_000_000, "x" * 11_000_000)
    huge = asdict(extract_page(fetched("https://example.com/big", bigger)))
    assert (huge["title"], huge["links"]) == ("Big", [])
    assert our_errors(caplog) == []


def test_a_bug_in_extraction_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    """No catch-all turns a programming error into a blank page billed as a success."""
    def broken(*_: Any) -> Any:
        return None.title  # type: ignore[attr-defined]

    monkeypatch.setattr(page_module, "_title", broken)
    _, html = load("article")
    with pytest.raises(AttributeError):
        asdict(extract_page(fetched("https://example.com/a", html)))


def test_fragment_without_html_still_gives_links() -> None:
    result = asdict(extract_page(fetched("https://example.com/a/b", "<a href='c#x'>C</a>")))
    assert result["links"] == [
        {"url": "https://example.com/a/c", "text": "C", "rel": None, "internal": True}]
    assert result["text"] is None


@pytest.mark.parametrize(("headers", "language"), [
    ({"content-language": "pt-BR"}, "pt"),
    ({b"Content-Language": [b"it"]}, "it"),  # Scrapy Headers shape
    ({"Content-Language": "{{ lang }}"}, None),
    ({"Content-Language": "english"}, None),  # not a 2-3 letter code
    ({"Content-Language": "und"}, None),
    ({"Content-Type": "text/html"}, None),
    (None, None),
])
def test_content_language_header_fallback(headers: Any, language: str | None) -> None:
    html = "<html lang='{{ lang }}'><head><title>T</title></head><body><p>x</p></body></html>"
    assert extract_page(fetched("https://example.com/", html, headers)).language == language


def test_html_lang_wins_over_header() -> None:
    case, html = load("article")
    page = fetched(case["url"], html, {"Content-Language": "de"})
    assert extract_page(page).language == "en"


@pytest.mark.parametrize("url", ["", "not a url", "http://[::1/broken", "ftp://example.com/"])
def test_odd_page_url_does_not_raise(url: str, caplog: pytest.LogCaptureFixture) -> None:
    _, html = load("links")
    result = asdict(extract_page(fetched(url, html)))
    assert our_errors(caplog) == []
    assert result["title"] == "Link soup"
    assert result["links"][0]["url"] == "https://example.com/docs/guide/intro.html"  # <base>


@pytest.mark.parametrize(("value", "expected"), [
    ("2024-03-05T09:30:00+01:00", "2024-03-05T08:30:00Z"),
    ("2024-03-05T23:30:00.123-02:30", "2024-03-06T02:00:00Z"),
    ("2024-03-05T08:30:00Z", "2024-03-05T08:30:00Z"),
    ("2024-03-05T09:30:00", "2024-03-05T09:30:00"),  # no offset: the page's local time
    ("2019-11-20T06:37:00.250", "2019-11-20T06:37:00"),
    ("2024-03-05", "2024-03-05"),
    ("March 5, 2024", "2024-03-05"),
    ("2020.07.23", "2020-07-23"),
    ("23.07.2020", "2020-07-23"),  # dotted: day first
    ("23.07.2020 14:05", "2020-07-23T14:05:00"),
    ("2020/07/23", "2020-07-23"),
    ("Tue, 10 Oct 2006 10:00:00 GMT", "2006-10-10T10:00:00Z"),
    ("Tue, 10 Oct 2006 12:00:00 +0200", "2006-10-10T10:00:00Z"),
    ("1700000000", "2023-11-14T22:13:20Z"),  # unix seconds
    ("9999999999", None),  # 2286: not a page's date
    ("0000000000", None),  # 1970: a zero, not a date
    ("2024", None),  # a year is not a date
    ("October 2024", None),
    ("yesterday", None),
    ("0001-01-01T00:00:00Z", None),  # placeholder dates
])
def test_published_time_normalisation(value: str, expected: str | None) -> None:
    html = (f"<html><head><meta property='article:published_time' content='{value}'>"
            "</head><body></body></html>")
    metadata = asdict(extract_page(fetched("https://example.com/", html)))["metadata"]
    assert metadata["published_at"] == expected


def test_time_element_in_article_is_the_last_resort() -> None:
    html = ("<html><body><time datetime='2020-01-01T00:00:00Z'>outside</time><article><p>x</p>"
            "<time datetime='2021-06-01T12:00:00+02:00'>June</time></article></body></html>")
    assert asdict(extract_page(fetched("https://example.com/", html)))["metadata"][
        "published_at"] == (
        "2021-06-01T10:00:00Z")
