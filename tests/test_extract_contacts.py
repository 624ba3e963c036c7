"""Tests for crawler.extract.contacts.extract_contacts (no network).

Each tests/fixtures/contacts/NAME.html has NAME.json next to it: {"url", "headers"?, "expected"},
where "expected" is the whole result (``asdict`` of the item), compared exactly. The focused
tests below state one rule each, on the smallest page that shows it.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import phonenumbers
import pytest

from crawler.extract import contacts
from crawler.extract.contacts import MAX_ITEMS, MAX_SUGGESTED_PAGES, extract_contacts
from crawler.extract.emails import cloudflare_email, normalise_email
from crawler.extract.phones import country_region, default_region, language_region, phone_record
from crawler.extract.social import social_profile
from tests.support.contact_pages import FIXTURES, URL, emails, fetched, ld, links, page, phones, run
from tests.support.logcheck import our_errors

CASES = sorted(path.stem for path in FIXTURES.glob("*.json"))
KEYS = {"emails", "phones", "social_links", "organization", "suggested_pages"}


def cloudflare_hex(email: str, key: int) -> str:
    return f"{key:02x}" + "".join(f"{ord(char) ^ key:02x}" for char in email)


# --- saved pages -------------------------------------------------------------------------------

def test_fixtures_are_present() -> None:
    assert {"impressum_de", "contact_us", "cloudflare_fr", "no_contacts", "shop_en",
            "impressum_lang_de", "contact_lang_fr", "news_article_de", "company_youtube_en",
            "shop_numbers_de", "impressum_at", "contact_en_gb", "event_de"} <= set(CASES)
    assert all((FIXTURES / f"{name}.html").exists() for name in CASES)


@pytest.mark.parametrize("name", CASES)
def test_fixture_matches_expected_output(name: str) -> None:
    case = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    html = (FIXTURES / f"{name}.html").read_text(encoding="utf-8")
    result = asdict(extract_contacts(fetched(case["url"], html, case.get("headers"))))
    assert result == case["expected"]
    assert json.loads(json.dumps(result)) == result  # plain JSON types only


def test_impressum_fixture_reasons() -> None:
    """Why the German Impressum gives what it gives."""
    html = (FIXTURES / "impressum_de.html").read_text(encoding="utf-8")
    result = extract_contacts(fetched("https://www.musterfirma.de/impressum/", html))
    found = {e.value: e.found_in for e in result.emails}
    assert "support@musterfirma.de" not in found  # only inside a <script>
    assert "office@musterfirma.de" not in found  # only inside an HTML comment
    assert found["presse@musterfirma.de"] == "obfuscated"  # presse(at)musterfirma.de
    values = [p.value for p in result.phones]
    assert values.count("+4930901820") == 1  # tel:, JSON-LD and text: one entry
    assert "+4930901821" not in values  # "Bestellnummer 030901821"
    assert "+49301234567" not in values  # commented out
    assert "https://www.musterfirma.de/impressum/" not in result.suggested_pages  # itself
    assert "https://shop.musterfirma.de/hilfe/" in result.suggested_pages  # same site


def test_shop_fixture_reasons() -> None:
    """Why the English shop page (a .com, lang="en") gives what it gives."""
    html = (FIXTURES / "shop_en.html").read_text(encoding="utf-8")
    result = extract_contacts(fetched("https://www.shoeshop.com/products/air-max-90", html))
    assert result.organization is not None
    assert result.organization.name == "Shoe Shop Ltd"  # not the brand, not the seller
    values = [p.value for p in result.phones]
    assert "+442079460002" in values  # national, read as GB from the shop's addressCountry
    assert "+12079460001" not in values  # "Order no.", and the brand's "US" is no signal
    assert [e.value for e in result.emails] == ["help@shoeshop.com"]  # not "…comMon"
    assert {s.url for s in result.social_links}.isdisjoint({
        "https://www.figma.com/@shoeshop", "https://www.producthunt.com/@shoeshop"})


# --- shape and robustness ----------------------------------------------------------------------

@pytest.mark.parametrize("html", ["", "   ", "<<<>>>", "\x00\x01", "<p>no contacts</p>",
                                  "<html><body></body></html>"])
def test_every_key_present_on_empty_or_odd_input(html: str,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    assert asdict(extract_contacts(fetched(URL, html))) == {
        "emails": [], "phones": [], "social_links": [], "organization": None,
        "suggested_pages": []}
    assert our_errors(caplog) == []


def test_a_bug_in_extraction_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    """No catch-all turns a programming error into an empty answer billed as a success."""
    def broken(*_: Any) -> list[Any]:
        raise TypeError("a bug")

    monkeypatch.setattr(contacts, "id_index", broken)
    with pytest.raises(TypeError):
        extract_contacts(fetched(URL, page('<a href="mailto:a@example.com">a</a>')))


def test_records_carry_source_url_and_no_empty_strings() -> None:
    result = run('<a href="mailto:a@example.com">a</a><a href="tel:+442079460000">t</a>'
                 '<a href="https://github.com/acme">gh</a>',
                 head=ld({"@type": "Organization", "name": "  ", "url": "/"}))
    for record in [*result.emails, *result.phones, *result.social_links]:
        assert record.source_url == URL
    assert result.organization is not None
    assert asdict(result.organization) == {"name": None, "url": "https://www.example.com/",
                                      "logo": None, "address": None}


# --- e-mails -----------------------------------------------------------------------------------

def test_mailto_is_decoded_split_and_stripped_of_its_query() -> None:
    body = ('<a href="mailto:%73ales@Example.ORG,Info@example.org;help@example.org'
            '?subject=Hi%20there&amp;cc=boss@example.org">mail</a>')
    assert emails(body) == [("sales@example.org", "mailto"), ("Info@example.org", "mailto"),
                            ("help@example.org", "mailto")]


def test_text_emails_skip_script_style_and_comments_and_lose_trailing_punctuation() -> None:
    body = ("<p>Write to <b>sales</b>@example.org.</p>"
            "<script>var a = 'script@example.org';</script><style>/* style@example.org */</style>"
            "<!-- comment@example.org --><p>(or info@example.org)</p>")
    assert emails(body) == [("sales@example.org", "text"), ("info@example.org", "text")]


def test_html_entities_are_plain_text_addresses() -> None:
    assert emails("<p>jobs&#64;example.org and buy&commat;example.org</p>") == [
        ("jobs@example.org", "text"), ("buy@example.org", "text")]


def test_structured_emails_json_ld_and_microdata() -> None:
    head = ld({"@type": "Organization", "email": "mailto:hello@example.org",
               "contactPoint": [{"@type": "ContactPoint", "email": ["care@example.org"]}]})
    body = ('<div itemscope itemtype="https://schema.org/Organization">'
            '<meta itemprop="email" content="press@example.org"></div>')
    assert emails(body, head=head) == [("hello@example.org", "json_ld"),
                                       ("care@example.org", "json_ld"),
                                       ("press@example.org", "microdata")]


def test_cloudflare_protected_emails() -> None:
    body = (f'<a href="/cdn-cgi/l/email-protection#{cloudflare_hex("a@example.org", 0x42)}">'
            "mail us</a>"
            f'<span class="__cf_email__" data-cfemail="{cloudflare_hex("b@example.org", 0x17)}">'
            "[email&#160;protected]</span>"
            '<span data-cfemail="not-hex">[email&#160;protected]</span>')
    assert emails(body) == [("a@example.org", "obfuscated"), ("b@example.org", "obfuscated")]


def test_cloudflare_decoding() -> None:
    assert cloudflare_email(cloudflare_hex("Team@Example.org", 0xA5)) == "Team@example.org"
    assert cloudflare_email("abc") is None  # odd length
    assert cloudflare_email("") is None
    assert cloudflare_email(cloudflare_hex("not an address", 0x10)) is None


@pytest.mark.parametrize("written", [
    "name [at] example [dot] com",
    "name (at) example (dot) com",
    "name(at)example.com",
    "name{at}example{dot}com",
    "name [@] example.com",
    "name AT example DOT com",
    "name [at] example (punkt) com",
])
def test_written_obfuscations(written: str) -> None:
    assert emails(f"<p>Mail: {written}.</p>") == [("name@example.com", "obfuscated")]


@pytest.mark.parametrize("prose", [
    "Please look at this page first.",
    "Meet us AT the fair, look at example dot com.",
    "We are at example.com, located at home dot com",
    "Sale at 10 am (at) the shop",
])
def test_prose_is_not_an_obfuscated_address(prose: str) -> None:
    assert run(f"<p>{prose}</p>").emails == []


@pytest.mark.parametrize("candidate", [
    "logo@2x.png", "icon@3x.webp", "package@1.2.3", "user@localhost", "root@example.invalid",
    "user@com", "a..b@example.com", "a.@example.com", "user@-example.com", "x@y",
])
def test_not_addresses(candidate: str) -> None:
    """No public suffix (file names, versions, hosts) or no valid local part/domain."""
    assert normalise_email(candidate) is None
    assert emails(f'<p>{candidate}</p><a href="mailto:{candidate}">m</a>') == []


def test_domain_lower_cased_local_part_kept() -> None:
    assert normalise_email(" Max.Mustermann@Example.DE, ") == "Max.Mustermann@example.de"
    assert normalise_email("info@münchen.de") == "info@münchen.de"  # IDN TLD check works
    assert normalise_email(42) is None


def test_email_priority_and_case_insensitive_dedupe() -> None:
    """mailto beats JSON-LD beats obfuscated beats text, whatever the page order."""
    body = ("<p>SALES@example.org, sales [at] example [dot] org, press@example.org</p>"
            '<a href="mailto:Sales@Example.org">mail</a>')
    head = ld({"@type": "Organization", "email": ["press@EXAMPLE.org", "sales@example.org"]})
    assert emails(body, head=head) == [("Sales@example.org", "mailto"),
                                       ("press@example.org", "json_ld")]


@pytest.mark.parametrize(("body", "expected"), [
    ("<span>info@acme.com</span><span>Call us</span>", "info@acme.com"),
    ("<p>Email:<b>sales@acme.com</b>Phone: 555</p>", "sales@acme.com"),
    ("<b>info@acme.de</b><i>v</i>", "info@acme.de"),  # not info@acme.dev
    ('<a href="/c">jobs@acme.com</a><img src="x.png">Careers', "jobs@acme.com"),
])
def test_an_inline_element_boundary_ends_an_address(body: str, expected: str) -> None:
    assert emails(body) == [(expected, "text")]


@pytest.mark.parametrize(("body", "expected"), [
    ("<p>name<span>@</span>domain.com</p>", ("name@domain.com", "text")),
    ("<p>info@<span>example</span>.org</p>", ("info@example.org", "text")),
    ("<p>sales <span>[at]</span> acme <span>[dot]</span> com</p>",
     ("sales@acme.com", "obfuscated")),
    ("<p><span>sales [at] acme.com</span><span>Phone</span></p>",
     ("sales@acme.com", "obfuscated")),
])
def test_an_address_that_only_exists_across_inline_elements_is_read(
        body: str, expected: tuple[str, str]) -> None:
    assert emails(body) == [expected]


def test_text_addresses_from_both_renderings_keep_page_order() -> None:
    body = ("<p><span>first@acme.com</span><span>x</span> then <b>second</b>@acme.com"
            " then third@acme.com</p>")
    assert emails(body) == [("first@acme.com", "text"), ("second@acme.com", "text"),
                            ("third@acme.com", "text")]


def test_at_most_fifty_emails() -> None:
    body = "".join(f"<p>user{i}@example.org</p>" for i in range(80))
    found = run(body).emails
    assert len(found) == MAX_ITEMS == 50
    assert found[-1].value == "user49@example.org"


# --- phones ------------------------------------------------------------------------------------

def test_tel_links() -> None:
    result = run('<a href="tel:+44%2020%207946%200000">call</a><a href="tel:">empty</a>'
                 '<a href="TEL:+1-800-555-0199">free</a>')
    assert [asdict(phone) for phone in result.phones] == [
        {"value": "+442079460000", "raw": "+44 20 7946 0000", "type": "fixed_line",
         "source_url": URL, "found_in": "tel"},
        {"value": "+18005550199", "raw": "+1-800-555-0199", "type": "toll_free",
         "source_url": URL, "found_in": "tel"},
    ]


def test_structured_telephones() -> None:
    head = ld({"@type": "Organization", "telephone": "+49 151 23456789",
               "contactPoint": {"@type": "ContactPoint", "telephone": "tel:+442079460000"}})
    body = ('<div itemscope itemtype="https://schema.org/LocalBusiness">'
            '<span itemprop="telephone">+33 1 23 45 67 89</span></div>')
    result = run(body, head=head)
    assert [(p.value, p.found_in, p.type) for p in result.phones] == [
        ("+4915123456789", "json_ld", "mobile"),
        ("+442079460000", "json_ld", "fixed_line"),
        ("+33123456789", "microdata", "fixed_line"),
    ]


def test_text_phone_raw_is_as_written() -> None:
    result = run("<p>Telefax: +49 (0)30 901820-99</p>")
    assert [asdict(phone) for phone in result.phones] == [{
        "value": "+493090182099", "raw": "+49 (0)30 901820-99", "type": "fax",
        "source_url": URL, "found_in": "text"}]


def test_unknown_type_is_null() -> None:
    invalid = phonenumbers.parse("+44 7700 900123")  # Ofcom drama range: no known type
    record = phone_record(invalid, " +44 7700 900123 ", source_url=URL, found_in="text")
    assert (record.value, record.raw, record.type) == ("+447700900123", "+44 7700 900123", None)


@pytest.mark.parametrize(("url", "lang", "head", "headers", "national", "expected"), [
    ("https://example.com/", "de-AT", "", None, "01 5123456", "+4315123456"),
    ("https://example.com/", "en", '<meta property="og:locale" content="fr_FR">', None,
     "01 23 45 67 89", "+33123456789"),
    ("https://example.com/", "en", "", {b"Content-Language": [b"en-GB"]},
     "020 7946 0000", "+442079460000"),
    ("https://example.com/", "en", "", {"content-language": "de-DE, en"},
     "030 901820", "+4930901820"),
    ("https://www.example.de/", "de", "", None, "030 901820", "+4930901820"),
    ("https://www.example.co.uk/", "en", "", None, "020 7946 0000", "+442079460000"),
    ("https://example.fr/", "fr", "", None, "01 23 45 67 89", "+33123456789"),
])
def test_region_signals_read_national_numbers(url: str, lang: str, head: str,
                                              headers: dict[Any, Any] | None,
                                              national: str, expected: str) -> None:
    assert phones(f"<p>Tel.: {national}</p>", url=url, lang=lang, head=head,
                  headers=headers) == [(expected, "text")]


def test_region_signal_order() -> None:
    # the page's declared locale beats the TLD; a bare language ("ar") is not a region
    assert default_region(["de-AT"], "www.example.de") == "AT"
    assert default_region(["ar", None, "en_GB"], "example.com") == "GB"
    assert default_region(["zh-Hant-TW"], "example.com") == "TW"
    assert default_region(["de"], "shop.example.co.uk") == "GB"
    assert default_region(["en"], "startup.io") is None  # .io is sold as a generic name
    assert default_region([], "example.eu") is None


def test_without_region_only_international_numbers() -> None:
    body = "<p>London +44 20 7946 0000, locally 020 7946 0001, US (212) 555-0123</p>"
    assert phones(body, url="https://example.com/", lang="en") == [("+442079460000", "text")]


@pytest.mark.parametrize(("lang", "href", "expected"), [
    ("en", "tel:4155552671", "+14155552671"),
    ("pt", "tel:(11) 3456-7890", "+551134567890"),
    ("es", "tel:912 345 678", "+34912345678"),
])
def test_tel_links_fall_back_to_the_languages_region(lang: str, href: str,
                                                     expected: str) -> None:
    """A tel: link is certainly a phone number: with no region signal, the language's most
    likely country reads it. The same number in text needs a real signal when the language
    is written in several countries (en, pt, es…): see test_extract_phones for de, fr."""
    number = href.removeprefix("tel:")
    assert phones(f'<a href="{href}">call</a><p>{number}</p>', url="https://example.com/",
                  lang=lang) == [(expected, "tel")]
    assert phones(f"<p>Tel. {number}</p>", url="https://example.com/", lang=lang) == []


def test_structured_telephone_falls_back_to_the_languages_region() -> None:
    head = ld({"@type": "Organization", "telephone": "(415) 555-2671"})
    assert phones("", head=head, url="https://example.com/") == [("+14155552671", "json_ld")]
    assert phones("", head=head, url="https://example.com/", lang="ar") == []  # no likely one


@pytest.mark.parametrize(("lang", "head", "body", "expected"), [
    ("en", ld({"@type": "Restaurant", "telephone": "(415) 555-2671",
               "address": {"@type": "PostalAddress", "addressCountry": "US"}}),
     "", ("+14155552671", "json_ld")),
    ("fr", ld({"@type": "Organization", "address": {"addressCountry": "FR"}}),
     "<p>Tél. 01 42 68 53 00</p>", ("+33142685300", "text")),
    ("en", ld({"@type": "LocalBusiness", "address": {
        "@type": "PostalAddress", "addressCountry": {"@type": "Country", "name": "France"}}}),
     "<p>Tel. 01 42 68 53 00</p>", ("+33142685300", "text")),
    ("en", ld({"@graph": [{"@type": "WebSite", "publisher": {"@id": "#org"}},
                          {"@type": "Organization", "@id": "#org", "address": {"@id": "#a"}},
                          {"@type": "PostalAddress", "@id": "#a", "addressCountry": "DE"}]}),
     "<p>Tel. 030 901820</p>", ("+4930901820", "text")),
    ("en", "", '<div itemscope itemtype="https://schema.org/Store">'
     '<div itemprop="address" itemscope itemtype="https://schema.org/PostalAddress">'
     '<span itemprop="addressCountry">GB</span></div></div><p>Tel. 020 7946 0000</p>',
     ("+442079460000", "text")),
])
def test_address_country_is_a_region_signal(lang: str, head: str, body: str,
                                            expected: tuple[str, str]) -> None:
    assert phones(body, head=head, url="https://example.com/", lang=lang) == [expected]


def test_address_country_beats_locale_and_tld() -> None:
    head = ld({"@type": "Organization", "address": {"addressCountry": "GB"}})
    assert phones("<p>Tel. 020 7946 0000</p>", head=head, url="https://example.de/",
                  lang="en-US") == [("+442079460000", "text")]


def test_address_country_of_a_brand_or_seller_is_no_region_signal() -> None:
    head = ld({"@type": "Product", "name": "Shoe", "brand": {
        "@type": "Organization", "name": "Adidas", "address": {"addressCountry": "DE"}}})
    assert phones("<p>Tel. 030 901820</p>", head=head, url="https://example.com/") == []


@pytest.mark.parametrize(("value", "region"), [
    ("US", "US"), ("de", "DE"), (" UK ", "GB"), ("USA", "US"), ("Deutschland", "DE"),
    ("United Kingdom", "GB"), ("france", "FR"), ({"@type": "Country", "name": "NL"}, "NL"),
    ({"@type": "Country", "name": "Spain"}, "ES"), (["", "IT"], "IT"), ("Atlantis", None),
    ("XX", None), ("", None), (42, None), (None, None),
])
def test_country_region(value: object, region: str | None) -> None:
    assert country_region(value) == region


def test_language_region() -> None:
    assert language_region(["en"]) == "US"
    assert language_region([None, "", "pt-PT"]) == "BR"  # only ever used without a region
    assert language_region(["ar", "fr_CA"]) == "FR"  # first language in the table
    assert language_region(["ar"]) is None
    assert language_region([]) is None


def test_phone_glued_to_inline_labels() -> None:
    assert phones("<p>Tel:<b>030 901820</b>Fax:<b>030 901821</b></p>", lang="de-DE") == [
        ("+4930901820", "text"), ("+4930901821", "text")]


@pytest.mark.parametrize("region_url", ["https://example.de/", "https://example.com/",
                                        "https://example.co.uk/"])
@pytest.mark.parametrize("text", [
    "Published 2024-03-15, updated 15.03.2024 at 10:30",
    "Now 1.299,00 € instead of $12,345.67",
    "SW1A 1AA London", "10115 Berlin", "Beverly Hills, CA 90210",
    "Order #123456789", "ISBN 978-3-16-148410-0", "Order #2125550123", "SKU 2125550123",
    "Invoice no. 2125550147", "Kontonummer 0532013000", "Bestellnummer 030901821",
    "Preis: 030901821 €", "IBAN DE89 3704 0044 0532 0130 00", "USt-IdNr.: DE123456789",
    "HRB 123456 B", "Version 2.14.3 (build 20240315)",
])
def test_not_phone_numbers(region_url: str, text: str) -> None:
    lang = {"https://example.com/": "en-US"}.get(region_url, "en")
    assert run(f"<p>{text}</p>", url=region_url, lang=lang).phones == []


def test_a_phone_label_wins_over_a_number_label() -> None:
    body = "<p>Phone number: 2125550123. SKU 2125550124. Tel.-Nr. 2125550125</p>"
    assert phones(body, lang="en-US") == [("+12125550123", "text"), ("+12125550125", "text")]


def test_phones_deduplicated_by_e164_first_source_wins() -> None:
    body = ('<p>Tel. 030 901820 or +49 30 901820</p><a href="tel:+4930901820">call</a>')
    head = ld({"@type": "Organization", "telephone": "+49-30-901820"})
    assert phones(body, head=head, lang="de-DE") == [("+4930901820", "tel")]


def test_at_most_fifty_phones() -> None:
    body = "".join(f"<p>+44 20 7946 {i:04d}</p>" for i in range(60))
    assert len(run(body).phones) == MAX_ITEMS


# --- social links ------------------------------------------------------------------------------

@pytest.mark.parametrize(("url", "platform", "handle", "normalised"), [
    ("https://www.linkedin.com/in/jane-doe/", "linkedin", "jane-doe", None),
    ("https://de.linkedin.com/company/acme-gmbh?trk=public", "linkedin", "acme-gmbh",
     "https://de.linkedin.com/company/acme-gmbh"),
    ("https://www.linkedin.com/school/tu-berlin", "linkedin", "tu-berlin", None),
    ("https://twitter.com/AcmeCorp?ref_src=twsrc", "x", "AcmeCorp", "https://twitter.com/AcmeCorp"),
    ("https://x.com/acme", "x", "acme", None),
    ("http://www.facebook.com/acme.inc/", "facebook", "acme.inc",
     "https://www.facebook.com/acme.inc"),
    ("https://www.facebook.com/profile.php?id=100012345&ref=bookmarks", "facebook", None,
     "https://www.facebook.com/profile.php?id=100012345"),
    ("https://www.instagram.com/acme_official/", "instagram", "acme_official", None),
    ("https://www.youtube.com/@AcmeTV", "youtube", "AcmeTV", None),
    ("https://www.youtube.com/channel/UCx9QvNWq1fR3mYTb2kPz8Lw", "youtube",
     "UCx9QvNWq1fR3mYTb2kPz8Lw", None),
    ("https://www.youtube.com/c/AcmeTV", "youtube", "AcmeTV", None),
    ("https://www.youtube.com/user/acmetv", "youtube", "acmetv", None),
    ("https://www.tiktok.com/@acme.shop", "tiktok", "acme.shop", None),
    ("https://github.com/acme-labs", "github", "acme-labs", None),
    ("https://www.pinterest.de/acmedesign/", "pinterest", "acmedesign", None),
    ("https://mastodon.social/@acme", "mastodon", "acme@mastodon.social", None),
    ("https://www.threads.net/@acme", "threads", "acme", None),
    ("https://www.threads.com/@acme", "threads", "acme", None),
    ("https://t.me/acmechannel", "telegram", "acmechannel", None),
    ("https://wa.me/4915123456789", "whatsapp", "4915123456789", None),
    ("https://api.whatsapp.com/send?phone=+4915123456789&text=Hallo", "whatsapp",
     "4915123456789", "https://api.whatsapp.com/send?phone=4915123456789"),
    ("https://discord.gg/acme", "discord", "acme", None),
    ("https://discord.com/invite/acme", "discord", "acme", None),
    ("https://www.reddit.com/r/python/", "reddit", "r/python", None),
    ("https://www.reddit.com/user/spez", "reddit", "u/spez", None),
    ("https://reddit.com/u/spez", "reddit", "u/spez", None),
    ("https://vimeo.com/acmefilms", "vimeo", "acmefilms", None),
])
def test_profiles(url: str, platform: str, handle: str | None, normalised: str | None) -> None:
    expected_url = normalised or url.replace("http://", "https://").rstrip("/")
    assert links(url) == [{"platform": platform, "url": expected_url, "handle": handle,
                           "source_url": URL}]


@pytest.mark.parametrize("url", [
    "https://twitter.com/intent/tweet?text=hi", "https://twitter.com/share?url=x",
    "https://x.com/intent/follow?screen_name=acme", "https://twitter.com/acme/status/1768",
    "https://www.facebook.com/sharer/sharer.php?u=x", "https://www.facebook.com/sharer.php?u=x",
    "https://www.facebook.com/dialog/share?app_id=1", "https://www.facebook.com/acme/posts/1",
    "https://www.facebook.com/profile.php", "https://www.linkedin.com/shareArticle?url=x",
    "https://www.linkedin.com/sharing/share-offsite/?url=x",
    "https://pinterest.com/pin/create/button/?url=x", "https://www.reddit.com/submit?url=x",
    "https://t.me/share/url?url=x", "https://wa.me/?text=hello", "https://twitter.com/login",
    "https://www.facebook.com/privacy/policy", "https://www.facebook.com/policies/cookies/",
    "https://www.linkedin.com/legal/privacy-policy", "https://www.instagram.com/about/",
    "https://github.com/help", "https://www.instagram.com/legal/", "https://www.facebook.com/",
    "https://twitter.com", "https://www.youtube.com/watch?v=dQw4w9WgXcQ", "https://youtu.be/x",
    "https://www.instagram.com/p/C4xYz12AbCd/", "https://github.com/acme/widget",
    "https://discord.com/login", "https://vimeo.com/123456789", "https://docs.github.com/en",
    "https://medium.com/@writer", "https://www.example.com/@author",  # the page's own site
    "mailto:acme@twitter.com",
])
def test_not_profiles(url: str) -> None:
    assert links(url) == []


@pytest.mark.parametrize("url", [
    "https://mastodon.social/@acme", "https://fosstodon.org/@acme", "https://hachyderm.io/@acme",
    "https://mstdn.jp/@acme", "https://chaos.social/@acme", "https://toot.community/@acme",
    "https://social.coop/@acme", "https://infosec.exchange/@acme",
])
def test_fediverse_servers(url: str) -> None:
    host = url.split("/")[2]
    assert links(url) == [{"platform": "mastodon", "url": url, "handle": f"acme@{host}",
                           "source_url": URL}]


@pytest.mark.parametrize("url", [
    "https://www.figma.com/@acme", "https://www.producthunt.com/@acme",
    "https://replit.com/@acme", "https://observablehq.com/@acme", "https://unsplash.com/@acme",
    "https://hashnode.com/@acme", "https://medium.com/@acme", "https://acme.substack.com/@acme",
    "https://odysee.com/@acme", "https://www.example.net/@acme",  # unknown, unclaimed host
])
def test_slash_at_paths_of_other_services_are_not_mastodon(url: str) -> None:
    assert links(url) == []


def test_a_claim_makes_an_unknown_host_a_fediverse_server() -> None:
    """rel="me" and sameAs vouch for an unknown host, never for a known other service."""
    body = ('<a rel="me" href="https://www.example.net/@acme">a</a>'
            '<a rel="noopener ME" href="https://www.figma.com/@acme">b</a>')
    head = ld({"@type": "Organization", "sameAs": ["https://community.acme.net/@team",
                                                  "https://replit.com/@acme"]})
    result = run(body, head=head)
    assert [(s.platform, s.handle) for s in result.social_links] == [
        ("mastodon", "acme@www.example.net"), ("mastodon", "team@community.acme.net")]


def test_fediverse_handle_glued_to_an_inline_element() -> None:
    result = run("<p><span>@acme@fosstodon.org</span><span>Follow us</span></p>")
    assert [s.handle for s in result.social_links] == ["acme@fosstodon.org"]


def test_social_profile_rejects_malformed_urls() -> None:
    assert social_profile("https://[::1/acme", "example.com", source_url=URL) is None
    assert social_profile("ftp://github.com/acme", "example.com", source_url=URL) is None


def test_profiles_from_same_as_and_fediverse_text() -> None:
    head = ld({"@type": "Organization",
               "sameAs": ["https://www.linkedin.com/company/acme", "https://example.com/x"]})
    body = ('<a href="https://github.com/acme">gh</a>'
            "<p>Toot at @acme@fosstodon.org, mail acme@fosstodon.org</p>")
    result = run(body, head=head)
    assert [(s.platform, s.handle) for s in result.social_links] == [
        ("github", "acme"), ("linkedin", "acme"), ("mastodon", "acme@fosstodon.org")]
    assert [asdict(email) for email in result.emails] == [{
        "value": "acme@fosstodon.org", "source_url": URL, "found_in": "text"}]


def test_social_dedupe_by_normalised_url() -> None:
    found = links("https://www.linkedin.com/company/acme/", "http://linkedin.com/company/acme",
                  "https://www.linkedin.com/company/ACME?utm_source=x#top",
                  "https://m.facebook.com/acme", "https://www.facebook.com/acme")
    assert [s["url"] for s in found] == ["https://www.linkedin.com/company/acme",
                                         "https://m.facebook.com/acme"]


def test_at_most_fifty_social_links() -> None:
    assert len(links(*(f"https://github.com/user{i}" for i in range(70)))) == MAX_ITEMS


# --- organization ------------------------------------------------------------------------------

def test_organization_from_json_ld_graph() -> None:
    head = ld({"@context": "https://schema.org", "@graph": [
        {"@type": "WebSite", "name": "Site", "publisher": {"@id": "#org"}},
        {"@type": ["Thing", "Corporation"], "@id": "#org", "name": " Acme  Ltd ",
         "url": "/en/", "logo": {"@id": "#logo"},
         "address": {"@type": "PostalAddress", "streetAddress": "1 High Street",
                     "postalCode": "SW1A 1AA", "addressLocality": "London",
                     "addressRegion": "Greater London",
                     "addressCountry": {"@type": "Country", "name": "United Kingdom"}}},
        {"@type": "ImageObject", "@id": "#logo", "url": "img/logo.png"},
    ]})
    organization = run("", head=head + '<base href="https://cdn.example.com/assets/">'
                       ).organization
    assert organization is not None
    assert asdict(organization) == {
        "name": "Acme Ltd", "url": "https://cdn.example.com/en/",
        "logo": "https://cdn.example.com/assets/img/logo.png",
        "address": "1 High Street, SW1A 1AA London, Greater London, United Kingdom"}


@pytest.mark.parametrize("schema_type", ["Organization", "LocalBusiness", "Corporation",
                                         "Store", "Restaurant", "NGO", "Dentist",
                                         "GovernmentOrganization", "schema:OnlineStore"])
def test_organization_subtypes(schema_type: str) -> None:
    head = ld({"@type": schema_type, "name": "Acme", "logo": "/logo.svg",
               "address": "Main St 1, 12345 Town"})
    organization = run("", head=head).organization
    assert organization is not None
    assert asdict(organization) == {
        "name": "Acme", "url": None, "logo": "https://www.example.com/logo.svg",
        "address": "Main St 1, 12345 Town"}


def test_organization_from_microdata() -> None:
    body = ('<div itemscope itemtype="https://schema.org/Restaurant">'
            '<h2 itemprop="name">Trattoria Esempio</h2><a itemprop="url" href="/">home</a>'
            '<div itemprop="address" itemscope itemtype="https://schema.org/PostalAddress">'
            '<span itemprop="streetAddress">Via Roma 1</span>'
            '<span itemprop="postalCode">00184</span>'
            '<span itemprop="addressLocality">Roma</span>'
            '<span itemprop="addressCountry">IT</span></div></div>')
    organization = run(body).organization
    assert organization is not None
    assert asdict(organization) == {"name": "Trattoria Esempio",
                                    "url": "https://www.example.com/", "logo": None,
                                    "address": "Via Roma 1, 00184 Roma, IT"}


@pytest.mark.parametrize("nested", [
    {"@type": "Product", "name": "Air Max", "brand": {"@type": "Organization", "name": "Nike"}},
    {"@type": "Product", "name": "Air Max", "offers": {
        "@type": "Offer", "seller": {"@type": "Organization", "name": "Nike"}}},
    {"@type": "Product", "manufacturer": {"@type": "Corporation", "name": "Nike"}},
    {"@type": "Article", "author": {"@type": "Organization", "name": "Nike"}},
    {"@type": "CreativeWork", "creator": {"@type": "Organization", "name": "Nike"}},
    {"@type": "Review", "itemReviewed": {"@type": "LocalBusiness", "name": "Nike"}},
])
def test_organization_is_never_a_brand_seller_or_author(nested: dict[str, Any]) -> None:
    own = ld({"@type": "Organization", "name": "Shoe Shop Ltd"})
    organization = run("", head=ld(nested) + own).organization
    assert organization is not None and organization.name == "Shoe Shop Ltd"
    assert run("", head=ld(nested)).organization is None


def test_top_level_organization_beats_a_nested_one_in_microdata() -> None:
    body = ('<div itemscope itemtype="https://schema.org/Product"><span itemprop="name">Air Max'
            '</span><div itemprop="brand" itemscope itemtype="https://schema.org/Organization">'
            '<span itemprop="name">Nike</span></div></div>'
            '<div itemscope itemtype="https://schema.org/Organization">'
            '<span itemprop="name">Shoe Shop Ltd</span></div>')
    organization = run(body).organization
    assert organization is not None and organization.name == "Shoe Shop Ltd"


@pytest.mark.parametrize("key", ["publisher", "provider", "mainEntity", "about"])
def test_organization_reached_through_an_owner_property(key: str) -> None:
    head = ld({"@type": "WebPage", "name": "About us",
               key: {"@type": "Organization", "name": "Acme"},
               "author": {"@type": "Organization", "name": "Agency"}})
    organization = run("", head=head).organization
    assert organization is not None and organization.name == "Acme"


def test_no_organization() -> None:
    head = ld({"@type": "Person", "name": "Jane", "worksFor": {"@type": "WebSite"}})
    assert run("<p>Acme Ltd</p>", head=head).organization is None
    assert run("", head=ld({"@type": "Organization"})).organization is None  # no fields


# --- suggested pages ---------------------------------------------------------------------------

@pytest.mark.parametrize("path", [
    "/contact", "/contact-us/", "/de/kontakt.html", "/es/contacto", "/pt/contato",
    "/it/contatti", "/impressum", "/imprint", "/legal-notice", "/fr/mentions-legales/",
    "/about", "/about-us", "/ueber-uns", "/uber-uns", "/%C3%BCber-uns", "/a-propos",
    "/chi-siamo", "/quienes-somos", "/sobre-nosotros", "/nl/over-ons", "/team", "/our-team",
    "/people", "/support", "/help", "/kundenservice", "/customer-service", "/locations",
    "/offices", "/Contact_Us.php",
])
def test_suggested_page_paths(path: str) -> None:
    body = f'<a href="{path}">more</a>'
    assert run(body, url="https://www.example.com/home").suggested_pages == [
        f"https://www.example.com{path}"]


def test_suggested_page_by_anchor_text() -> None:
    body = ('<a href="/unternehmen/">Über uns</a><a href="/qui/">À propos</a>'
            '<a href="/p?id=7">Contact Us</a><a href="/shop/">Shop</a>')
    assert run(body, url="https://example.com/").suggested_pages == [
        "https://example.com/unternehmen/", "https://example.com/qui/",
        "https://example.com/p?id=7"]


def test_suggested_pages_rules() -> None:
    body = ('<a href="#top">Contact</a>'  # the page itself
            '<a href="/contact#form">Contact</a>'  # itself once the fragment is gone
            '<a href="https://other.org/contact">Contact</a>'  # another site
            '<a href="mailto:a@example.com">Contact</a><a href="javascript:void(0)">Contact</a>'
            '<a href="about/">About</a>'  # relative to <base href>
            '<a href="https://support.example.com/help#faq">Help</a>'  # same registrable domain
            '<a href="/en/about/">About</a><a href="/en/about/#team">About</a>')  # duplicate
    result = run(body, head='<base href="/en/">')
    assert result.suggested_pages == ["https://www.example.com/en/about/",
                                      "https://support.example.com/help"]


def test_at_most_ten_suggested_pages() -> None:
    body = "".join(f'<a href="/office-{i}/contact">c</a>' for i in range(15))
    found = run(body).suggested_pages
    assert len(found) == MAX_SUGGESTED_PAGES == 10
    assert found[0] == "https://www.example.com/office-0/contact"
