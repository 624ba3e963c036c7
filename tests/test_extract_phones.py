"""Phone numbers as Impressum, contact, news and shop pages write them: national numbers on a
page whose only region signal is its language, fax numbers told from phones, and the digit
runs of running text (dates, file numbers, ISBNs, prices) that are no phone. Pure functions
of (url, html); the rules are in crawler/extract/phones.py and phone_labels.py.
"""

from __future__ import annotations

import pytest

from crawler.extract.phone_labels import is_date, is_isbn
from crawler.extract.phones import main_language_region
from tests.support.contact_pages import fixture, ld, run

COM = "https://www.example.com/kontakt"  # a gTLD: no region from the host


def typed(body: str, url: str = COM, lang: str = "de", head: str = "") -> list[tuple[str, str]]:
    return [(p.value, p.type or "") for p in run(body, url=url, lang=lang, head=head).phones]


# --- the language's main region ----------------------------------------------------------------

@pytest.mark.parametrize(("lang", "text", "expected"), [
    ("de", "Tel.: 0471 80 60 745", "+494718060745"),
    ("fr", "Tél. : 01 42 68 53 00", "+33142685300"),
    ("it", "Tel. 06 1234 5678", "+390612345678"),
    ("nl", "Telefoon: 020 123 4567", "+31201234567"),
    ("pl", "tel. 22 123 45 67", "+48221234567"),
    ("sv", "Telefon: 08 123 456 78", "+46812345678"),
])
def test_a_language_written_in_one_country_reads_national_numbers(
        lang: str, text: str, expected: str) -> None:
    assert [value for value, _ in typed(f"<p>{text}</p>", lang=lang)] == [expected]


@pytest.mark.parametrize(("lang", "text"), [
    ("en", "Call (212) 555-0123"), ("en", "Tel. 020 7946 0000"), ("es", "Tel. 912 345 678"),
    ("pt", "Tel. (11) 3456-7890"), ("ar", "هاتف 02 1234567"), ("zh", "电话 010 1234 5678"),
    ("ru", "Тел. 8 495 123-45-67"), ("", "Tel. 030 901820"),
])
def test_a_language_shared_by_several_countries_names_no_region(lang: str, text: str) -> None:
    """"Truly ambiguous" pages keep the old rule: only international numbers in text."""
    assert typed(f"<p>{text}</p>", lang=lang) == []


def test_a_number_not_valid_in_the_languages_region_is_not_read() -> None:
    assert typed("<p>Tel. 01 5123456</p>", lang="de") == []  # Vienna, not valid in DE
    assert typed("<p>Tel. 01 5123456</p>", lang="de-AT") == [("+4315123456", "fixed_line")]


def test_stronger_signals_still_win_over_the_language() -> None:
    head = ld({"@type": "Organization", "address": {"addressCountry": "AT"}})
    assert typed("<p>Tel. 01 5123456</p>", lang="de", head=head) == [
        ("+4315123456", "fixed_line")]
    assert typed("<p>Tel. 01 5123456</p>", url="https://example.at/", lang="de") == [
        ("+4315123456", "fixed_line")]


@pytest.mark.parametrize(("tags", "region"), [
    (["de"], "DE"), (["fr"], "FR"), (["de-CH"], "DE"), ([None, "", "fr_FR"], "FR"),
    (["en"], None), (["en-GB"], None), (["es"], None), (["pt-BR"], None), (["de", "en"], "DE"),
    (["en", "de"], None), ([], None), (["xx"], None),
])
def test_main_language_region(tags: list[str | None], region: str | None) -> None:
    """Only the page's own (first) language counts; its region subtag is default_region's."""
    assert main_language_region(tags) == region


def test_impressum_whose_only_signal_is_its_language() -> None:
    result = fixture("impressum_lang_de")
    assert [(p.value, p.raw, p.type) for p in result.phones] == [
        ("+494718060745", "0471 80 60 745", "fixed_line"),
        ("+494718060746", "0471 80 60 746", "fax"),
        ("+491701234567", "0170 1234567", "mobile"),
    ]


def test_french_contact_page_whose_only_signal_is_its_language() -> None:
    result = fixture("contact_lang_fr")
    assert [(p.value, p.type) for p in result.phones] == [
        ("+33142685300", "fixed_line"), ("+33142685301", "fax"), ("+33612345678", "mobile")]


# --- fax numbers -------------------------------------------------------------------------------

@pytest.mark.parametrize("body", [
    "<p>Telefax: 0471 80 60 746</p>", "<p>Fax: 0471 80 60 746</p>",
    "<p>Faxnummer 0471 80 60 746</p>", "<p>Télécopie : 0471 80 60 746</p>",
    "<p>T 0471 80 60 745 · F 0471 80 60 746</p>", "<p>0471 80 60 746 (Fax)</p>",
    "<table><tr><td>Telefax</td><td>0471 80 60 746</td></tr></table>",
    '<p>Fax: <a href="tel:+494718060746">0471 80 60 746</a></p>',
])
def test_a_number_the_page_labels_fax_is_a_fax(body: str) -> None:
    assert ("+494718060746", "fax") in typed(body)
    assert ("+494718060745", "fax") not in typed(body)


@pytest.mark.parametrize("body", [
    "<p>Tel./Fax: 0471 80 60 746</p>", "<p>Telefon und Fax 0471 80 60 746</p>",
    "<p>Tel. 0471 80 60 746</p><p>Fax: 0471 80 60 746</p>",
    '<p><a href="tel:04718060746">anrufen</a></p>',
])
def test_a_number_also_labelled_a_phone_or_unlabelled_is_not_a_fax(body: str) -> None:
    assert typed(body) == [("+494718060746", "fixed_line")]


def test_structured_fax_numbers() -> None:
    head = ld({"@type": "Organization", "telephone": "+49 471 80 60 745",
               "faxNumber": "+49 471 80 60 746"})
    assert typed("", head=head) == [("+494718060745", "fixed_line"), ("+494718060746", "fax")]


def test_fax_is_not_a_phone_word() -> None:
    """"Telefax" starts like "Telefon": the fax word is taken out before a phone word is
    looked for, so it is not read as a phone label."""
    assert typed("<p>Telefax 0471 80 60 746</p>") == [("+494718060746", "fax")]


# --- running text ------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "Das Gericht entschied am 02.12.2022.", "Stand: 02-12-2022", "Urteil vom 02.12.2022, 10 Uhr",
    "Vorlage 0212/2022 wurde beschlossen.", "Az. 0212/2022", "Drucksache 0212-2022",
    "Die Erstausgabe (0-306-40615-2) ist vergriffen.", "Art.-Nr. 0212202201",
    "Gutscheincode 0800 2022", "Preis 019,90 EUR", "Sendungsnummer 0212 2990 1234",
    "Kundennummer: 04718060745", "Versicherungsnummer 0471 2022 3381",
])
def test_running_text_numbers_are_not_phones(text: str) -> None:
    for url, lang in (("https://www.example.de/", "de-DE"), (COM, "de")):
        assert typed(f"<p>{text}</p>", url=url, lang=lang) == [], (text, url)


@pytest.mark.parametrize(("lang", "text"), [
    ("de-AT", "DVR: 0123456"), ("de-AT", "Firmenbuchnummer 0123456"), ("de-AT", "UID 0123456"),
    ("de-DE", "Handelsregister 0471806074"), ("it", "P.IVA 01234567890"),
    ("it", "Partita IVA: 01234567890"),
])
def test_registry_numbers_are_not_phones(lang: str, text: str) -> None:
    assert typed(f"<p>{text}</p>", lang=lang) == []


def test_austrian_impressum_registry_and_fax() -> None:
    assert [(p.value, p.type) for p in fixture("impressum_at").phones] == [
        ("+4315123456", "fixed_line"), ("+431512345699", "fax"), ("+436641234567", "mobile")]


@pytest.mark.parametrize("text", ["Commande n° 0142685399", "Dossier 0142685399",
                                  "Facture 0142685399", "le 03/12/2022 à 10h00"])
def test_french_running_text_numbers_are_not_phones(text: str) -> None:
    assert typed(f"<p>{text}</p>", lang="fr") == []


@pytest.mark.parametrize(("text", "expected"), [
    ("Zentrale: 0212 299-0", "+492122990"),
    ("Tel. 0212/2022", "+492122022"),  # a labelled number keeps its file-number shape
    ("0471/8060745", "+494718060745"),
    ("Hinweise unter 0212 299-201 (Stand 02.12.2022)", "+49212299201"),
])
def test_phone_numbers_in_running_text_are_kept(text: str, expected: str) -> None:
    assert [value for value, _ in typed(f"<p>{text}</p>", lang="de")] == [expected]


def test_news_article_gives_only_the_newsroom_numbers() -> None:
    assert [p.value for p in fixture("news_article_de").phones] == [
        "+49212299201", "+49212299200"]


def test_book_shop_gives_only_its_hotline() -> None:
    assert [(p.value, p.type) for p in fixture("shop_numbers_de").phones] == [
        ("+498007234567", "toll_free")]


@pytest.mark.parametrize(("raw", "date"), [
    ("02.12.2022", True), ("2.12.22", True), ("12/03/2022", True), ("03-12-2022", True),
    ("2022-12-03", True), ("2022.12.03", True), ("13/13/2022", False), ("02.32.2022", False),
    ("01.42.68.53.00", False), ("0212 2022", False), ("2022-13-03", False),
])
def test_is_date(raw: str, date: bool) -> None:
    assert is_date(raw) is date


@pytest.mark.parametrize(("raw", "isbn"), [
    ("0-306-40615-2", True), ("978-3-16-148410-0", True), ("3-16-148410-X", True),
    ("0-306-40615-3", False), ("0471-80-60-745", False), ("0306406152", False),
    ("030 901820-9", False), ("0 306 40615 2", False),  # a phone may end in one digit
    ("0212 299 20 1", False),
])
def test_is_isbn(raw: str, isbn: bool) -> None:
    assert is_isbn(raw) is isbn
