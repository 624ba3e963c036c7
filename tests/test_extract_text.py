"""The readable text of /scrape (crawler.extract.text): an article split by advertising rows
is read to its end, a fragment is checked against recall mode, empty table cells are dropped,
what a reader never sees (a hover card) is not read."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from crawler.extract import text
from crawler.extract.fetched import FetchedPage
from crawler.extract.page import extract_page
from crawler.extract.visible_text import page_styles

FIXTURES = Path(__file__).parent / "fixtures" / "text"

SECTION = ("<p>Paragraph {n} of section {s}: the council's plan for the harbour front was "
           "debated for hours, and residents spoke for and against the new ferry pier.</p>")


def section(number: int) -> str:
    return "".join(SECTION.format(n=n, s=number) for n in range(1, 5))


def test_an_article_split_by_ad_rows_is_read_to_its_end():
    html = ("<html><head><title>Harbour</title></head><body><main><article><h1>Harbour</h1>"
            f"<div class='grid'><div class='article__body'>{section(1)}</div>"
            "<aside class='rail'><div class='ad'>Advertisement</div></aside></div>"
            "<div class='row full-bleed-ad'><span>Advertisement</span></div>"
            f"<div class='grid'><div class='article__body'>{section(2)}</div></div>"
            "<div class='row full-bleed-ad'><span>Advertisement</span></div>"
            f"<div class='grid'><div class='article__body'>{section(3)}</div></div>"
            "</article></main><footer><p>© Harbour News</p></footer></body></html>")
    result = extract_page(FetchedPage.from_html("https://news.example/harbour", html))
    assert result.text is not None
    for number in (1, 2, 3):
        assert f"Paragraph 4 of section {number}" in result.text
    assert result.text.index("section 1") < result.text.index("section 3")
    assert "Advertisement" not in result.text


def test_containers_that_are_not_a_body_are_left_alone():
    cards = "".join(f"<div class='card'>{section(n)}</div>" for n in (1, 2))
    page = FetchedPage.from_html("https://news.example/", f"<html><body>{cards}</body></html>")
    assert text._joined_bodies(page.tree) is None
    assert all(el.get("data-webdata-body") is None for el in page.tree.iter())  # unmarked


@pytest.mark.parametrize(("precise", "recalled", "expected"), [
    ("Added to bag", "A linen shirt, cut loose, in four colours. " * 20, "recall"),
    ("Cookie notice " * 40, "Cookie notice " * 40 + "A long product text " * 50, "precision"),
    ("We'll let you know when it's in stock", "We'll let you know", "precision"),
    ("", "Home About Blog Contact " * 10, "precision"),  # no main text: not the menu instead
])
def test_a_fragment_is_checked_against_recall_mode(monkeypatch, precise, recalled, expected):
    runs: list[str] = []

    def extract(tree, url, **mode):
        runs.append("recall" if mode.get("favor_recall") else "precision")
        return blocks(recalled if mode.get("favor_recall") else precise)

    monkeypatch.setattr(text, "_extract", extract)
    monkeypatch.setattr(text, "_visible_length", lambda tree: 100_000)
    chosen = text._best(FetchedPage.from_html("https://shop.example/", "<p>x</p>").tree, "u")
    assert text.blocks_text(chosen) == " ".join(
        (recalled if expected == "recall" else precise).split())
    assert runs[0] == "precision"
    assert ("recall" in runs) == (0 < len(precise) < text.FRAGMENT)


def blocks(lines: str) -> list:
    """trafilatura's XML blocks of ``lines``: one paragraph each (blank-line separated)."""
    made = []
    for line in filter(None, lines.split("\n\n")):
        paragraph = etree.Element("p")
        paragraph.text = line
        made.append(paragraph)
    return made


def test_empty_table_cells_do_not_leak():
    rows = "".join(f"<tr><td></td><td>Item No :</td><td>awe{n}</td><td></td></tr>"
                   for n in range(3))
    html = (f"<html><body><article><h1>Jeans</h1>{section(1)}<table>"
            f"<tr><td></td><td></td></tr>{rows}</table></article></body></html>")
    result = extract_page(FetchedPage.from_html("https://shop.example/jeans", html))
    assert result.text is not None
    assert "| |" not in result.text and "\n\n|\n" not in result.text


def test_an_address_block_keeps_every_line():
    """Issue 13: an Impressum whose address block lost its company name (a line directly in
    a div, without a full stop, which precision mode drops)."""
    legal = "".join("<p>Haftung für Inhalte: Die Inhalte unserer Seiten wurden mit größter "
                    f"Sorgfalt erstellt, ohne Gewähr für ihre Richtigkeit. Absatz {n}.</p>"
                    for n in range(3))
    html = ("<html lang='de'><head><title>Impressum</title></head><body><nav><a href='/'>"
            "Start</a><a href='/kontakt'>Kontakt</a></nav><main><h1>Impressum</h1>"
            "<h2>Angaben gemäß § 5 TMG</h2><div class='imprint'>Musterfirma GmbH<br>"
            "Musterstraße 12<br>10115 Berlin</div><h2>Kontakt</h2><div>Telefon: 030 901820"
            "<br>E-Mail: info@musterfirma.example</div><h2>Vertreten durch</h2>"
            f"<div>Erika Mustermann</div><h2>Haftung</h2>{legal}</main>"
            "<footer><a href='/datenschutz'>Datenschutz</a></footer></body></html>")
    page = FetchedPage.from_html("https://musterfirma.example/impressum", html)
    result = extract_page(page)
    assert result.text is not None
    lines = result.text.split("\n\n")
    assert lines.index("Musterfirma GmbH") < lines.index("Musterstraße 12")
    assert "Erika Mustermann" in lines and "Start" not in lines and "Datenschutz" not in lines
    assert text.blocks_text(text._extract(page.tree, page.address, favor_precision=True)
                            ).count("Musterfirma GmbH") == 0  # precision mode alone: gone


def test_gaps_are_filled_only_between_kept_lines():
    precise = "Impressum\n\nMusterstraße 12\n\n10115 Berlin"
    default = "Menu\n\nImpressum\n\nMusterfirma GmbH\n\nMusterstraße 12\n\n10115 Berlin\n\n© 2024"
    assert text.blocks_text(text._fill_gaps(blocks(precise), blocks(default))) == (
        "Impressum\n\nMusterfirma GmbH\n\nMusterstraße 12\n\n10115 Berlin")
    long_gap = "Impressum\n\n" + "\n\n".join(f"line {n}" for n in range(5)) + "\n\nEnd"
    assert text.blocks_text(text._fill_gaps(blocks("Impressum\n\nEnd"), blocks(long_gap))
                            ) == "Impressum\n\nEnd"  # > MAX_GAP


@pytest.mark.parametrize("beside", [
    "<aside><h2>Read next</h2><article><div class='article__body'>{other}</div></article>"
    "</aside>",
    "<article><h1>Next story</h1><div class='article__body'>{other}</div></article>",
])
def test_another_story_on_the_page_is_not_joined_to_this_one(beside):
    other = "".join(f"<p>Paragraph {n} of the OTHER story, about the city's new tram line and "
                    "the roadworks it brings to the old town this summer.</p>"
                    for n in range(3))
    html = ("<html><head><title>Harbour</title></head><body><main><article><h1>Harbour</h1>"
            f"<div class='article__body'>{section(1)}</div></article>"
            f"{beside.format(other=other)}</main></body></html>")
    page = FetchedPage.from_html("https://news.example/harbour", html)
    assert text._joined_bodies(page.tree) is None
    assert "OTHER" not in (extract_page(page).text or "")


def test_a_hover_card_is_not_glued_into_the_text():
    """A person's link with a card the page shows only on hover: the card's text came out
    glued to the link's ("Kristi NoemKristi Lynn Noem is…"). The sentence keeps its words."""
    html = (FIXTURES / "hover_card.html").read_text(encoding="utf-8")
    result = extract_page(FetchedPage.from_html("https://news.example/politics/water", html))
    assert result.text is not None
    assert "Kristi Noem signed the long-debated water bill" in result.text
    assert "Kristi Lynn Noem" not in result.text
    assert "33rd governor" not in result.text
    # the contact extractors still read the card: a reader can see it by pointing at it
    root = FetchedPage.from_html("https://news.example/", html).tree
    assert "person__card" not in page_styles(root).hidden
    assert "person__card" in page_styles(root, on_interaction=False).hidden


def test_hidden_text_is_not_read_and_the_page_is_left_as_it_was():
    html = ("<html><head><title>Pier</title><style>.promo{display:none}</style></head><body>"
            f"<article><h1>Pier</h1>{section(1)}<p class='promo'>Subscribe for one euro now."
            "</p><p hidden>Honeypot paragraph for bots.</p>"
            f"<p style='display: none'>Another hidden paragraph.</p>{section(2)}</article>"
            "</body></html>")
    page = FetchedPage.from_html("https://news.example/pier", html)
    result = extract_page(page)
    assert result.text is not None and "Paragraph 4 of section 2" in result.text
    for hidden in ("Subscribe", "Honeypot", "Another hidden"):
        assert hidden not in result.text
    assert "Subscribe for one euro" in page.tree.text_content()  # a copy was cleaned


def test_much_hidden_text_is_content_a_script_shows_and_is_read():
    """A whole article hidden until a script reveals it (anti-flicker, "read more") stays."""
    html = ("<html><head><title>Ferry</title></head><body><article><h1>Ferry</h1>"
            f"<div class='story' style='display:none'>{section(1)}{section(2)}</div>"
            "</article></body></html>")
    result = extract_page(FetchedPage.from_html("https://news.example/ferry", html))
    assert result.text is not None and "Paragraph 4 of section 2" in result.text


def test_a_page_hidden_until_its_scripts_load_is_read():
    html = ("<html><head><title>Dock</title><style>.preload{display:none}</style></head>"
            "<body class='preload' style='visibility:hidden'><main class='preload'>"
            "<h1>Dock</h1><p>The new dock opens on Monday after two years of building work "
            "and a long fight over the ferry timetable.</p></main></body></html>")
    result = extract_page(FetchedPage.from_html("https://news.example/dock", html))
    assert result.text is not None and "The new dock opens on Monday" in result.text


def test_a_page_hiding_thousands_of_classes_is_read_in_one_piece():
    """Each hidden class was one XPath test: libxml2 refuses a few thousand of them."""
    rules = "".join(f".h{n}{{display:none}}" for n in range(6000))
    html = (f"<html><head><title>Quay</title><style>{rules}</style></head><body><article>"
            f"<h1>Quay</h1>{section(1)}<p class='h5999'>Hidden promo text.</p>{section(2)}"
            "</article></body></html>")
    result = extract_page(FetchedPage.from_html("https://news.example/quay", html))
    assert result.text is not None and "Paragraph 4 of section 2" in result.text
    assert "Hidden promo" not in result.text
