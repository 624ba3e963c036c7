"""``language`` and ``author`` of /scrape on saved-HTML cases of the kinds real pages show:
pages that declare no language, a template's wrong declaration, publishers and addresses in
the author fields. (Dates: tests/test_extract_page.py, test_published_time_normalisation.)"""

from __future__ import annotations

import json

import pytest

from crawler.extract.authors import page_author
from crawler.extract.fetched import FetchedPage
from crawler.extract.language import page_language
from crawler.extract.page import extract_page

GERMAN = ("Die Bundesregierung hat am Dienstag neue Regeln für die Förderung von Wärmepumpen "
          "beschlossen. Hausbesitzer sollen künftig bis zu siebzig Prozent der Kosten erstattet "
          "bekommen, wenn sie ihre alte Ölheizung austauschen. Die Opposition kritisierte, dass "
          "die Anträge weiterhin nur online gestellt werden können und ältere Menschen dadurch "
          "benachteiligt würden. Der Verband der Handwerker begrüßte die Entscheidung dagegen.")
PORTUGUESE = ("O governo anunciou hoje um novo pacote de medidas para apoiar as famílias com "
              "rendimentos mais baixos. Entre as medidas está a redução do preço dos transportes "
              "públicos e um aumento das pensões a partir de janeiro do próximo ano.")
ARABIC = ("أعلنت الحكومة اليوم عن حزمة جديدة من الإجراءات لدعم الأسر ذات الدخل المحدود، "
          "ومن بين هذه الإجراءات خفض أسعار النقل العام وزيادة المعاشات التقاعدية.")
ENGLISH = ("The city council voted on Tuesday to expand the bike lane network across the "
           "downtown area, adding twelve miles of protected lanes over the next three years.")


def article(body: str, lang: str | None = None, head: str = "") -> FetchedPage:
    paragraphs = "".join(f"<p>{body}</p>" for _ in range(2))
    lang_attr = f' lang="{lang}"' if lang else ""
    html = (f"<html{lang_attr}><head><title>Nachrichten</title>{head}</head><body><article>"
            f"<h1>Heute</h1>{paragraphs}</article></body></html>")
    return FetchedPage.from_html("https://news.example/a", html)


@pytest.mark.parametrize(("body", "language"), [
    (GERMAN, "de"), (PORTUGUESE, "pt"), (ARABIC, "ar"), (ENGLISH, "en")])
def test_the_language_of_a_page_that_declares_none_comes_from_its_text(body, language):
    assert extract_page(article(body)).language == language


def test_a_declared_language_is_kept_when_the_text_allows_it():
    assert extract_page(article(PORTUGUESE, lang="pt-BR")).language == "pt"
    assert extract_page(article(GERMAN, lang="de-AT")).language == "de"


def test_a_template_declaration_a_long_text_plainly_contradicts_is_overruled():
    assert extract_page(article(GERMAN, lang="en")).language == "de"


def test_short_text_neither_decides_nor_overrules():
    assert page_language(None, "Impressum") is None
    assert page_language("fr", "Kontakt Tel 0471 Fax") == "fr"
    assert page_language("de", ENGLISH) == "de"  # English, but too short to overrule


def test_pages_without_text_keep_their_declaration():
    assert page_language("it", None) == "it" and page_language(None, None) is None


def ld(node: dict) -> str:
    return f'<script type="application/ld+json">{json.dumps(node)}</script>'


@pytest.mark.parametrize(("head", "author"), [
    # the publisher in the author field
    ('<meta name="author" content="Condé Nast"><meta property="og:site_name" '
     'content="Condé Nast">', None),
    ('<meta name="author" content="Sky">' + ld({"@type": "NewsArticle", "publisher": {
        "@type": "Organization", "name": "Sky"}}), None),
    # an organisation as the JSON-LD author
    (ld({"@type": "NewsArticle", "author": {"@type": "Organization", "name": "Reuters"}}),
     None),
    # addresses
    ('<meta name="author" content="Jane Doe (jane.doe@paper.example)">', "Jane Doe"),
    ('<meta name="author" content="newsroom@paper.example">'
     + ld({"@type": "NewsArticle", "author": {"@type": "Person", "name": "Max Muster"}}),
     "Max Muster"),
    # a profile URL, then a byline in JSON-LD (people and organisations mixed)
    ('<meta property="article:author" content="https://www.facebook.com/janedoe">'
     + ld({"@type": "NewsArticle", "author": [{"@type": "Person", "name": "Jane Doe"},
                                              {"@type": "Organization", "name": "AP"},
                                              {"@type": "Person", "name": "John Roe"}]}),
     "Jane Doe, John Roe"),
    ('<meta name="author" content="By Jane Doe">', "By Jane Doe"),  # a byline stays one
    # a mailto: link is an address, not the author "mailto"
    ('<meta name="author" content="mailto:jane@paper.example">'
     + ld({"@type": "NewsArticle", "author": {"@type": "Person", "name": "Max Muster"}}),
     "Max Muster"),
])
def test_an_author_is_a_person_or_a_byline(head, author):
    assert extract_page(article(ENGLISH, "en", head)).metadata.author == author


def test_odd_types_in_an_author_node_are_read_not_raised_on():
    odd = {"@type": [{"x": 1}, ["Person"], "Person"], "name": "Jane Doe"}
    assert page_author({}, odd, {}, []) == "Jane Doe"


def test_a_referenced_person_is_found_in_the_graph():
    by_id = {"#jane": {"@id": "#jane", "@type": "Person", "name": "Jane Doe"}}
    assert page_author({}, {"@id": "#jane"}, by_id, ["Paper"]) == "Jane Doe"
    assert page_author({"author": "Paper"}, None, {}, ["paper"]) is None  # any case


def test_numbers_json_cannot_write_become_null():
    """``NaN``, ``Infinity`` and overflowing numbers in JSON-LD are read by Python's json, but
    written back they are not JSON: the answer must stay parseable by a strict parser."""
    script = ('<script type="application/ld+json">{"@type": "Product", "name": "N", '
              '"weight": NaN, "depth": -Infinity, "offers": {"price": 1e400, "n": 2.5}}'
              '</script>')
    page = extract_page(article(ENGLISH, "en", script))
    [item] = page.metadata.json_ld
    assert item["weight"] is None and item["depth"] is None
    assert item["offers"] == {"price": None, "n": 2.5}
    json.dumps(item, allow_nan=False)


def test_json_ld_as_deep_as_the_parser_reads_is_kept():
    """Mending the numbers walks without recursion: JSON-LD nested 900 deep (which the
    parser reads) raised RecursionError there, failing the whole page."""
    deep = "[" * 900 + "NaN" + "]" * 900
    script = f'<script type="application/ld+json">{{"@type": "Thing", "x": {deep}}}</script>'
    [item] = extract_page(article(ENGLISH, "en", script)).metadata.json_ld
    innermost = item["x"]
    for _ in range(899):
        innermost = innermost[0]
    assert innermost == [None]


@pytest.mark.parametrize("href", ["javascript:alert(1)", "mailto:desk@paper.example",
                                  "data:text/html,<b>x</b>", "http://paper.example:99999/"])
def test_canonical_and_image_are_http_urls_or_null(href):
    """A client renders them as links or fetches them: another scheme (a script) is null."""
    head = (f'<link rel="canonical" href="{href}"><meta property="og:image" content="{href}">'
            f'<meta property="og:url" content="/kept">')
    metadata = extract_page(article(ENGLISH, "en", head)).metadata
    assert metadata.image is None
    assert metadata.canonical_url == "https://news.example/kept"
