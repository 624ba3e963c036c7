"""The content of a page in every format (crawler.extract.content, crawler.extract.markup):
saved pages with the expected text, markdown and HTML beside them, and hostile input.

Each tests/fixtures/markdown/NAME.json names its page (``html_file``), its URL, the options
of the extraction and the expected ``text``, ``markdown`` and ``html``, compared exactly."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from lxml.html import fragment_fromstring

from core.selectors import SelectorBudgetExceeded
from crawler.extract import markup
from crawler.extract.fetched import FetchedPage
from crawler.extract.page import extract_page

FIXTURES = Path(__file__).parent / "fixtures" / "markdown"
CASES = sorted(path.stem for path in FIXTURES.glob("*.json"))
FORMATS = ["text", "markdown", "html"]


def run(name: str) -> tuple[Any, dict[str, Any]]:
    case = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    html = (FIXTURES / case["html_file"]).read_text(encoding="utf-8")
    page = extract_page(FetchedPage.from_html(case["url"], html), formats=FORMATS,
                        **case["options"])
    return page, case["expected"]


@pytest.mark.parametrize("name", CASES)
def test_fixture_matches_expected_formats(name: str) -> None:
    page, expected = run(name)
    assert {"text": page.text, "markdown": page.markdown, "html": page.html} == expected


def test_markdown_keeps_every_construct() -> None:
    page, _ = run("article")
    markdown = page.markdown
    assert markdown.startswith("# Parsing feeds with Python\n\n")
    assert markdown.count("# Parsing feeds with Python") == 1  # the page starts with it
    assert "\n## Install the package\n" in markdown
    assert "```bash\npython -m venv .venv\n" in markdown
    assert "`feedparser`" in markdown and "*RSS*" in markdown and "**Atom**" in markdown
    assert "[standard library](https://example.com/docs/stdlib)" in markdown
    assert "\n- dates, in one of two formats:\n  - RFC 822 in RSS,\n" in markdown
    assert "\n1. fetch the document,\n2. parse it,\n" in markdown
    assert re.search(r"^\| Field +\| RSS 2\.0 +\| Atom 1\.0 +\|$", markdown, re.MULTILINE)
    assert "\n> Be liberal" in markdown
    assert "\n\n\n" not in markdown and "<" not in markdown  # no stray HTML
    assert "Home" not in markdown and "Privacy" not in markdown  # boilerplate


def test_markdown_stripped_of_its_markup_is_the_text() -> None:
    page, _ = run("article")
    marker = re.compile(r"^\s*(?:-|\d+\.)\s", re.MULTILINE)  # "1." in markdown, "-" in text

    def words(text: str) -> list[str]:
        return re.findall(r"\w+", marker.sub("", text.replace("|---|---|---|", "")))

    assert words(markup.plain_text(page.markdown)) == words(page.text)


def test_the_whole_body_keeps_images_and_an_irregular_table_as_html() -> None:
    page, _ = run("whole_body")
    assert "![The shop front](https://example.com/img/front.jpg)" in page.markdown
    assert '<td rowspan="2">Weekdays</td>' in page.markdown
    assert "Secret honeypot" not in page.markdown  # hidden
    assert "| Weekdays | 8:00\u201312:00 |" in page.text  # the text has no HTML


def test_clean_html_has_no_script_style_handler_or_tracking() -> None:
    page, _ = run("whole_body")
    for unwanted in ("<script", "<style", "style=", "onmouseover", "data-track", "<form",
                     "Secret honeypot", 'href="/', 'src="/'):
        assert unwanted not in page.html
    assert 'src="https://example.com/img/front.jpg"' in page.html


def test_a_page_of_links_keeps_its_entries() -> None:
    page, _ = run("docs_index")
    assert page.text.splitlines() == [
        "- [Client](https://example.com/docs/client.html)",
        "- [Collections](https://example.com/docs/collections.html)",
        "- [Exports](https://example.com/docs/collections/export.html)",
        "- [Errors (and their codes)](https://example.com/docs/errors.html)"]
    assert "Docs home" not in page.text and "License" not in page.text
    assert page.markdown.startswith("# API reference\n\n- [Client](")


def test_selectors_choose_and_remove() -> None:
    selected, _ = run("article_selected")
    assert selected.markdown.startswith("## Install the package")  # no title: chosen content
    assert "Feeds are still" not in selected.markdown and "| Date " in selected.markdown
    excluded, _ = run("article_excluded")
    assert "```" not in excluded.markdown and "RFC 822" not in excluded.markdown
    assert "> Be liberal" not in excluded.markdown and "Feeds are still" in excluded.markdown


def test_formats_not_asked_for_are_null_and_raw_html_is_the_page() -> None:
    html = (FIXTURES / "article.html").read_text(encoding="utf-8")
    page = extract_page(FetchedPage.from_html("https://example.com/a", html),
                        formats=["raw_html"])
    assert (page.text, page.markdown, page.html) == (None, None, None)
    assert page.raw_html == html
    assert page.language == "en"  # still read from the text


def test_a_selector_matching_nothing_gives_empty_content() -> None:
    html = (FIXTURES / "article.html").read_text(encoding="utf-8")
    page = extract_page(FetchedPage.from_html("https://example.com/a", html),
                        formats=FORMATS, include_selectors=[".nothing-has-this"])
    assert (page.text, page.markdown, page.html) == (None, None, None)


HOSTILE = {
    "10,000 nested lists": "<ul><li>x" * 10_000 + "</li></ul>" * 10_000,
    "a 50,000-cell table": "<table>" + ("<tr>" + "<td>c</td>" * 100 + "</tr>") * 500
                           + "</table>",
    "1 MB of inline code": "<p>Some words before the code. <code>" + "x = 1; " * 150_000
                           + "</code></p>",
}


@pytest.mark.parametrize("body", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.parametrize("options", [{}, {"only_main_content": False},
                                     {"include_selectors": ["*"]},
                                     {"exclude_selectors": ["* *"]}],
                         ids=["main", "whole", "include-everything", "exclude-everything"])
def test_hostile_pages_get_a_clean_answer(body: str, options: dict[str, Any]) -> None:
    html = f"<html><head><title>Hostile</title></head><body>{body}</body></html>"
    page = extract_page(FetchedPage.from_html("https://example.com/h", html),
                        formats=FORMATS, **options)
    for value in (page.text, page.markdown, page.html):
        assert value is None or isinstance(value, str)
    if options == {"exclude_selectors": ["* *"]}:
        assert page.text is None  # everything in the body removed


def test_too_costly_selectors_stop_cleanly() -> None:
    html = "<html><body>" + "<div><p>x</p></div>" * 50_000 + "</body></html>"
    with pytest.raises(SelectorBudgetExceeded):
        extract_page(FetchedPage.from_html("https://example.com/h", html),
                     include_selectors=[" ".join(["*"] * 30)] * 20)


def test_irregular_tables_stay_html_and_regular_ones_become_pipes() -> None:
    html = ("<table><tr><td><ul><li>a</li><li>b</li></ul></td><td>2</td></tr></table>"
            "<table><tr><th>k</th><th>v</th></tr><tr><td>1</td><td>2</td></tr></table>")
    converted = markup.markdown(html)
    assert "<table><tr><td><ul><li>a</li>" in converted
    assert "| k | v |" in converted
    fragment_fromstring(converted.split("\n\n")[0])  # the kept table is whole HTML


def test_text_that_looks_like_a_tag_is_escaped_outside_code():
    converted = markup.markdown("<p>Staged as &lt;The Palace: Tale of Jang Noksu&gt; in 2018, "
                                "<code>a&lt;b</code>.</p><pre><code>&lt;div&gt;</code></pre>")
    assert converted.startswith("Staged as \\<The Palace: Tale of Jang Noksu> in 2018, `a<b`.")
    assert "```\n<div>\n```" in converted
    assert markup.plain_text(converted).startswith("Staged as <The Palace: Tale of Jang")


def _index_page(body: str) -> Any:
    html = f"<html><head><title>API reference</title></head><body>{body}</body></html>"
    return extract_page(FetchedPage.from_html("https://ex.com/docs/index.html", html),
                        formats=FORMATS)


def test_an_index_read_as_words_gets_its_links_back():
    entries = "".join(f'<li><a href="mod{i}.html">module {i}</a></li>' for i in range(30))
    page = _index_page('<header><a href="/">Docs home</a></header><main><h1>API reference'
                       f'</h1><p>Every module of the package.</p><ul class="toc">{entries}'
                       "</ul></main>")
    lines = page.text.split("\n\n")
    assert lines[:2] == ["API reference", "Every module of the package."]
    assert lines[2].splitlines()[:2] == ["- [module 0](https://ex.com/docs/mod0.html)",
                                         "- [module 1](https://ex.com/docs/mod1.html)"]
    assert page.text.count("module 29") == 1 and "Docs home" not in page.text
    assert page.markdown.count("API reference") == 1  # the title is not repeated
    assert '<li><a href="https://ex.com/docs/mod29.html">module 29</a></li>' in page.html


def test_an_index_without_main_text_lists_its_own_list_not_the_sidebar():
    sidebar = "".join(f'<li><a href="g{i}.html">Chapter {i} of the guide</a></li>'
                      for i in range(12))
    entries = "".join(f'<li><a href="s{i}.html">Section {i}: how to do thing {i}</a></li>'
                      for i in range(25))
    page = _index_page(f'<div class="sidebar"><ul>{sidebar}</ul></div><div class="content">'
                       f"<h1>Guide</h1><ol>{entries}</ol></div>")
    assert page.text.splitlines()[0] == "- [Section 0: how to do thing 0](https://ex.com/docs/s0.html)"
    assert "Chapter" not in page.text and len(page.text.splitlines()) == 25
