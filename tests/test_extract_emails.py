"""E-mail addresses as Impressum and contact pages hide them from harvesters: inline-hidden
spans inside the address, written separators, HTML entities. Pure functions of (url, html).
"""

from __future__ import annotations

import pytest

from tests.contact_pages import emails, fixture


@pytest.mark.parametrize("body", [
    '<p>info<span style="display:none">-remove-this-</span>@example.de</p>',
    '<p>info@<span style="DISPLAY: None;">spam.</span>example.de</p>',
    '<p>info<span style="color:red; visibility:hidden">x</span>@example.de</p>',
    '<p>info<b style="display:none">nospam@trap.example.org </b>@example.de</p>',
])
def test_inline_hidden_text_is_not_part_of_an_address(body: str) -> None:
    """An anti-spam span a reader never sees is no part of the address (nor an address)."""
    assert emails(body) == [("info@example.de", "text")]


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
