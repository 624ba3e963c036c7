"""Records read by a schema (crawler.extract.records) from saved pages, and what a hostile
schema or page gets: an answer or a clean SelectorBudgetExceeded, never minutes of work.

Fixtures in tests/fixtures/records/: ``<name>.html`` read by ``<name>.schema.json`` gives
``<name>.expected.json``; ``<name>.<variant>.schema.json`` (the XPath variants) reads the same
page into the same records.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.record_schema import parse_schema
from core.selectors import MAX_STEPS, SelectorBudgetExceeded
from crawler.extract.fetched import FetchedPage
from crawler.extract.records import (
    MAX_ANSWER_CHARS,
    MAX_LIST_ITEMS,
    MAX_RECORDS,
    AnswerTooLarge,
    extract_records,
    first_number,
)

FIXTURES = Path(__file__).parent / "fixtures" / "records"
SCHEMAS = sorted(FIXTURES.glob("*.schema.json"))


def _records(html: str, schema: dict, url: str = "https://shop.example/list", **options):
    return extract_records(FetchedPage.from_html(url, html), parse_schema(schema), **options)


@pytest.mark.parametrize("schema_file", SCHEMAS, ids=lambda path: path.name)
def test_saved_pages_give_the_expected_records(schema_file):
    name = schema_file.name.split(".")[0]
    html = (FIXTURES / f"{name}.html").read_text(encoding="utf-8")
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    expected = json.loads((FIXTURES / f"{name}.expected.json").read_text(encoding="utf-8"))
    assert _records(html, schema, f"https://{name}.example/list") == expected


def test_every_fixture_has_an_xpath_variant():
    names = {path.name.split(".")[0] for path in SCHEMAS}
    assert {path.name for path in SCHEMAS} >= {f"{name}.xpath.schema.json" for name in names}
    assert len(names) >= 4


PAGE = """<html><body>
<div class="item"><h2>One</h2><span class="price">12 €</span><a href="/one">go</a></div>
<div class="item"><h2>Two</h2></div>
</body></html>"""


def test_a_field_that_matches_nothing_has_its_default():
    records = _records(PAGE, {"base_selector": ".item", "fields": [
        {"name": "price", "selector": ".price", "type": "number", "default": -1},
        {"name": "link", "selector": "a", "type": "url"},
        {"name": "note", "selector": ".note", "default": "none"},
        {"name": "shop", "selector": ".shop", "type": "nested", "fields": [{"name": "n"}]},
        {"name": "tags", "selector": ".tag", "type": "list"},
    ]})
    assert records == [
        {"price": 12, "link": "https://shop.example/one", "note": "none", "shop": None,
         "tags": []},
        {"price": -1, "link": None, "note": "none", "shop": None, "tags": []},
    ]


def test_a_field_reads_inside_its_own_record_only():
    records = _records(PAGE, {"base_selector": ".item", "fields": [
        {"name": "price", "selector": "div .price"}, {"name": "link", "selector": "body a",
                                                      "type": "url"}]})
    assert [r["price"] for r in records] == ["12 €", None]
    assert [r["link"] for r in records] == ["https://shop.example/one", None]


def test_a_css_selector_is_matched_against_the_page_then_kept_inside_the_record():
    html = "<html><body><ul class='l'><li>a</li><li>b</li></ul><li>outside</li></body></html>"
    records = _records(html, {"base_selector": "ul", "fields": [
        {"name": "items", "selector": ".l > li", "type": "list"},
        {"name": "self", "selector": "ul"}]})  # strictly inside: not the record itself
    assert records == [{"items": ["a", "b"], "self": None}]


def test_no_base_selector_reads_the_whole_page_as_one_record():
    assert _records(PAGE, {"fields": [{"name": "titles", "selector": "h2", "type": "list"}]}
                    ) == [{"titles": ["One", "Two"]}]
    assert extract_records(FetchedPage.from_html("https://e.com/", ""),
                           parse_schema({"fields": [{"name": "t"}]})) == []


def test_text_is_the_text_content_without_scripts_and_styles_whitespace_collapsed():
    html = ("<html><body><div id='d'> A <b>b</b>c<script>x()</script><style>p{}</style>"
            "<!-- no -->\n\t d </div><p id='e'>  </p></body></html>")
    records = _records(html, {"fields": [{"name": "d", "selector": "#d"},
                                         {"name": "e", "selector": "#e", "default": "empty"},
                                         {"name": "s", "selector": "script"}]})
    assert records == [{"d": "A bc d", "e": "empty", "s": None}]


def test_html_is_the_outer_html_without_scripts_styles_comments_or_handlers():
    html = ("<html><body><div class='d' onClick='steal()'>Hi <a href='/x' onmouseover='y()'>"
            "there</a><script>s()</script><style>.a{}</style><!-- c --></div>tail"
            "</body></html>")
    records = _records(html, {"fields": [{"name": "h", "selector": ".d", "type": "html"}]})
    assert records == [{"h": '<div class="d">Hi <a href="/x">there</a></div>'}]


def test_urls_are_absolute_http_urls_or_the_default():
    html = ("<html><head><base href='https://cdn.example/a/'></head><body>"
            "<a class='r' href='b/c#frag'>x</a><a class='j' href='javascript:alert(1)'>j</a>"
            "<img src='i.png'><a class='m' href='mailto:x@y.z'>m</a><a class='n'>n</a>"
            "</body></html>")
    records = _records(html, {"fields": [
        {"name": n, "selector": s, "type": "url", "default": "-"}
        for n, s in [("r", ".r"), ("j", ".j"), ("i", "img"), ("m", ".m"), ("n", ".n")]]})
    assert records == [{"r": "https://cdn.example/a/b/c", "j": "-",
                        "i": "https://cdn.example/a/i.png", "m": "-", "n": "-"}]


def test_xpath_values_stand_for_themselves():
    html = "<html><body><p data-n='7'>x</p><p>y</p></body></html>"
    records = _records(html, {"selector_type": "xpath", "fields": [
        {"name": "count", "selector": "number(.//p/@data-n) * 2", "type": "number"},
        {"name": "none", "selector": "number(.//p/@missing)", "type": "number", "default": 0},
        {"name": "has", "selector": "boolean(.//p[@data-n])"},
        {"name": "joined", "selector": "concat(./body/p/@data-n, '-', ./body/p[2]/text())"}]})
    assert records == [{"count": 14, "none": 0, "has": "true", "joined": "7-y"}]


def test_an_xpath_union_gives_its_nodes_in_document_order_once_each():
    html = "<html><body><div><h3>a</h3><h2>b</h2><h3>c</h3></div></body></html>"
    records = _records(html, {"selector_type": "xpath", "base_selector": "//div", "fields": [
        {"name": "first", "selector": "./h2 | ./h3"},
        {"name": "all", "selector": "./h2 | ./h3 | ./h2", "type": "list"},
        {"name": "none", "selector": "./h1 | ./h4", "default": "-"}]})
    assert records == [{"first": "a", "all": ["a", "b", "c"], "none": "-"}]


@pytest.mark.parametrize(("text", "number"), [
    ("1,234.56", 1234.56), ("1.234,56", 1234.56), ("12 €", 12), ("€12,50", 12.5),
    ("1 234,56 €", 1234.56), ("1\u202f234,5", 1234.5), ("1'234'567.5", 1234567.5),
    ("1,234", 1234), ("1.234", 1234), ("0.125", 0.125), ("12.00", 12.0), ("3.14159", 3.14159),
    ("1.234.567", 1234567), ("1,23,45,678", 12345678), ("12.5.2024", 12.5),
    ("-5 °C", -5), ("\u22123,5", -3.5), ("A-5", 5), ("sizes 38 40 42", 38),
    ("Price on request", None), ("", None), ("9" * 31, None), ("9" * 30, int("9" * 30)),
])
def test_the_first_number(text, number):
    found = first_number(text)
    assert found == number and type(found) is type(number)


def test_a_page_of_a_thousand_and_one_records_gives_a_thousand():
    html = "<html><body>" + "<p>x</p>" * (MAX_RECORDS + 1) + "</body></html>"
    for schema in ({"base_selector": "p", "fields": [{"name": "t"}]},
                   {"selector_type": "xpath", "base_selector": "//p",
                    "fields": [{"name": "t", "selector": "text()"}]}):
        assert _records(html, schema) == [{"t": "x"}] * MAX_RECORDS


def test_a_list_holds_at_most_a_thousand_items():
    html = "<html><body><ul>" + "<li>x</li>" * (MAX_LIST_ITEMS + 5) + "</ul></body></html>"
    records = _records(html, {"fields": [{"name": "l", "selector": "li", "type": "list"}]})
    assert len(records[0]["l"]) == MAX_LIST_ITEMS


HUGE = ("<html><body><ul>" + "<li><a href='/x'>x</a> <span>1</span></li>" * 16_700 + "</ul>"
        + "<div>" * 300 + "deep" + "</div>" * 300 + "</body></html>")  # 50,000 elements


@pytest.mark.parametrize(("schema", "max_steps"), [
    ({"base_selector": "*", "fields": [{"name": f"f{i}", "selector": "*"} for i in range(100)]},
     MAX_STEPS),
    ({"base_selector": "*", "fields": [{"name": "h", "type": "html"}, {"name": "t"}]},
     MAX_STEPS // 10),
    ({"base_selector": "*", "fields": [{"name": f"f{i}", "selector": "* " * (i % 9 + 1) + "*",
                                        "type": "list"} for i in range(100)]}, MAX_STEPS // 10),
    ({"selector_type": "xpath", "base_selector": "//*",
      "fields": [{"name": f"f{i}", "selector": ".//*[not(@x)]", "type": "list"}
                 for i in range(100)]}, MAX_STEPS // 10),
    ({"fields": [{"name": "a", "selector": "*", "type": "list", "fields": [
        {"name": "b", "selector": "*", "type": "list", "fields": [
            {"name": "c", "selector": "*", "type": "list"}]}]}]}, MAX_STEPS // 10),
], ids=["100-star-texts", "html-of-everything", "100-lists", "xpath-lists", "nested-lists"])
def test_a_schema_matching_everything_on_a_huge_page_answers_or_stops_cleanly(schema,
                                                                              max_steps):
    """The page's budget (a tenth of it, to keep the tests quick, but for the first) bounds
    every schema: each one answers or raises, and none holds the worker for long."""
    try:
        records = _records(HUGE, schema, max_steps=max_steps)
    except SelectorBudgetExceeded as exc:
        assert "element visits" in str(exc) or "characters" in str(exc)
    else:
        assert len(records) <= MAX_RECORDS
        assert len(json.dumps(records)) <= 2 * MAX_ANSWER_CHARS


def test_the_budget_stops_a_page_that_needs_too_many_visits():
    html = "<html><body>" + "<div><p>x</p></div>" * 2_000 + "</body></html>"
    schema = {"base_selector": "div", "fields": [{"name": "t", "selector": "p"}]}
    assert len(_records(html, schema)) == MAX_RECORDS
    with pytest.raises(SelectorBudgetExceeded, match="element visits"):
        _records(html, schema, max_steps=20_000)


def test_an_xpath_is_charged_for_the_subtree_it_reads_before_it_runs():
    """translate() on 250 nested records each holding 1 MB of text: 15 ms a record in
    libxml2, charged as such; the budget stops it after a few records."""
    html = "<html><body>" + "<div>" * 250 + "y" * 1_000_000 + "</div>" * 250 + "</body></html>"
    schema = {"selector_type": "xpath", "base_selector": "//div", "fields": [
        {"name": "t", "selector": ".//*[translate(text(), 'y', 'z') = 'q']"}]}
    with pytest.raises(SelectorBudgetExceeded):
        _records(html, schema, max_steps=2_000_000)


def test_records_nested_in_each_other_cannot_repeat_the_page_without_bound():
    """250 records nested in each other, each one's text the page's 100 KB: 25 MB of answer."""
    html = "<html><body>" + "<div>" * 250 + "y" * 100_000 + "</div>" * 250 + "</body></html>"
    with pytest.raises(AnswerTooLarge, match="characters"):
        _records(html, {"base_selector": "div", "fields": [{"name": "t"}]})


def test_a_schema_of_500_fields_on_a_thousand_records_answers():
    html = "<html><body>" + "<div class='r'><b>1</b></div>" * MAX_RECORDS + "</body></html>"
    schema = {"base_selector": ".r", "fields": [
        {"name": f"n{i}", "selector": "b", "type": "nested",
         "fields": [{"name": f"f{j}", "type": "number"} for j in range(99)]}
        for i in range(5)]}
    records = _records(html, schema)
    assert len(records) == MAX_RECORDS and records[0]["n4"]["f98"] == 1
