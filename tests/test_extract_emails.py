"""E-mail addresses as Impressum and contact pages hide them from harvesters: inline-hidden
spans inside the address, written separators, HTML entities. Pure functions of (url, html).
"""

from __future__ import annotations

import pytest

from tests.support.contact_pages import emails, fixture


@pytest.mark.parametrize("body", [
    '<p>info<span style="display:none">-remove-this-</span>@example.de</p>',
    '<p>info@<span style="DISPLAY: None;">spam.</span>example.de</p>',
    '<p>info<span style="color:red; visibility:hidden">x</span>@example.de</p>',
    '<p>info<b style="display:none">nospam@trap.example.org </b>@example.de</p>',
])
def test_inline_hidden_text_is_not_part_of_an_address(body: str) -> None:
    """An anti-spam span a reader never sees is no part of the address (nor an address)."""
    assert emails(body) == [("info@example.de", "text")]


@pytest.mark.parametrize(("head", "body"), [
    ("<style>.nospam { display: none; }</style>",
     '<p>info<span class="nospam">-remove-this-</span>@example.de</p>'),
    ("<style>/* anti-spam */ p.x, span.hide-me{color:red;display:none !important}</style>",
     '<p>info<span class="a hide-me">@trap.example.org </span>@example.de</p>'),
    ("<style>.v{visibility:hidden}</style>",
     '<p>info<b class="v">nospam@trap.example.org </b>@example.de</p>'),
    ("", '<p>info<span hidden>-remove-this-</span>@example.de</p>'),
])
def test_text_hidden_by_the_pages_own_styles_is_not_read(head: str, body: str) -> None:
    """The same trick with a class the page's own <style> hides, or the hidden attribute."""
    assert emails(body, head=head) == [("info@example.de", "text")]


@pytest.mark.parametrize("head", [
    "<style>@media (max-width: 600px) { .desk { display: none } }</style>",  # some screens
    "<style>.nav .desk { display: none }</style>",  # not a plain class selector
    "<style>.desk { display: block }</style>",
    "",  # a class alone hides nothing
    # hidden, then shown again: on wide screens, when open, by a later rule
    "<style>.desk{display:none}@media(min-width:768px){.desk{display:block}}</style>",
    "<style>.desk{display:none}.desk.open{display:flex}</style>",
    "<style>.desk{display:none !important} .desk { display: inline }</style>",
    "<style>.desk{visibility:hidden}.wide .desk{visibility:visible}</style>",
    # Bootstrap's "hidden, but a block on wide screens" as two classes of the element
    "<style>.d-none{display:none!important}@media (min-width:768px){.d-md-block"
    "{display:block!important}}</style>",
    # style blocks that do not apply on a screen
    '<style media="print">.desk{display:none}</style>',
    "<noscript><style>.desk{display:none}</style></noscript>",
    "<template><style>.desk{display:none}</style></template>",
])
def test_a_class_that_does_not_surely_hide_keeps_its_text(head: str) -> None:
    assert emails('<p class="desk d-none d-md-block">shown@example.org</p>', head=head) == [
        ("shown@example.org", "text")]


def test_hidden_honeypot_address_is_not_reported() -> None:
    assert emails('<div style="display: none">trap@example.org</div>'
                  "<p>real@example.org</p>") == [("real@example.org", "text")]


def test_a_style_that_only_mentions_none_does_not_hide() -> None:
    body = ('<p style="border: none; text-decoration:none">shown@example.org</p>'
            '<p style="display:inline-block">also@example.org</p>')
    assert emails(body) == [("shown@example.org", "text"), ("also@example.org", "text")]


def test_impressum_with_a_hidden_span_in_its_address() -> None:
    found = [(e.value, e.found_in) for e in fixture("impressum_lang_de").emails]
    assert ("kanzlei@weserblick-recht.com", "text") in found
    assert not [value for value, _ in found if "entfernen" in value]


@pytest.mark.parametrize(("written", "expected"), [
    ("name @ example . com", "name@example.com"),
    ("name @ example . co . uk", "name@example.co.uk"),
    ("name@ example . com", "name@example.com"),
    ("name @ mail.example . com", "name@mail.example.com"),
    ("name@example(dot)com", "name@example.com"),
    ("name@example [.] de", "name@example.de"),
    ("name(at)example.de", "name@example.de"),
    ("name (at) example (dot) de", "name@example.de"),
    ("name[at]example[dot]de", "name@example.de"),
    ("name [arobase] exemple [point] fr", "name@exemple.fr"),
    ("name&#64;example&#46;com", "name@example.com"),
    ("name&#x40;example.com", "name@example.com"),
    ("name&commat;example&period;com", "name@example.com"),
    ("name [at] example [dot] de . Weiter geht es", "name@example.de"),
])
def test_written_separators(written: str, expected: str) -> None:
    assert [value for value, _ in emails(f"<p>Kontakt: {written}</p>")] == [expected]


@pytest.mark.parametrize("prose", [
    "Follow us @ twitter.com for news.",
    "Our engineers post build logs at <a href='/x'>@northwind.engineering</a>.",
    "Meet the team @ booth 5. Come early.",
    "Tickets @ 19.99 each . Book now",
    "We are @ home\n. com",
])
def test_spaced_at_in_prose_is_no_address(prose: str) -> None:
    assert emails(f"<p>{prose}</p>") == []


def test_a_written_dot_after_a_plain_address_is_the_sentence() -> None:
    """"a@b.com . In …" keeps b.com: only a spaced "@" may have spaced dots."""
    assert emails("<p>Mail info@example.com . In the meantime, call.</p>") == [
        ("info@example.com", "text")]


def test_an_address_ends_at_a_line_break() -> None:
    assert emails("<p>name @ example . com</p><p>. Info</p>") == [
        ("name@example.com", "obfuscated")]


def test_french_contact_page_written_addresses() -> None:
    found = {e.value: e.found_in for e in fixture("contact_lang_fr").emails}
    assert found == {"devis@atelier-lumiere.com": "text",  # &#64; and &#46: plain text
                     "presse@atelier-lumiere.com": "obfuscated",  # presse @ … . com
                     "contact@atelier-lumiere.com": "obfuscated"}  # hidden span, [at] [dot]


@pytest.mark.parametrize("css", [
    "a" * 300_000,  # no brace at all
    "@media {" + ".x{display:none}" * 30_000,  # an at-rule never closed
    "/*" * 100_000 + ".x{display:none}",  # comments never closed
    "{" * 100_000 + "}" * 100_000,
])
def test_a_hostile_style_block_is_read_in_one_pass(css: str) -> None:
    """Whatever a page puts in its <style>, reading it costs one pass (a backtracking
    pattern here would hold the worker on one page); nothing in it hides the address."""
    assert emails('<p class="x">shown@example.org</p>', head=f"<style>{css}</style>") == [
        ("shown@example.org", "text")]
