"""Find the contact details one HTML page offers: e-mails, phones, social profiles, the
organisation behind it, and which of its links probably lead to more (contact, imprint…).

Pure function (no network, no Scrapy): the page is parsed once and every detail is read from
the same tree, its visible text, its links and its JSON-LD/microdata. The per-kind rules live
in :mod:`~crawler.extract.emails`, :mod:`~crawler.extract.phones` and
:mod:`~crawler.extract.social`; this module decides where to look and in which order.

Priority (first occurrence of a duplicate wins, so it decides ``found_in``): what the site made
clickable (``mailto:``/``tel:``), then what it declared (JSON-LD, then microdata), then what it
hid (Cloudflare and written obfuscations), then plain text. Within one source, page order.

Text is what a reader sees (:mod:`~crawler.extract.visible_text`: no scripts, no inline-hidden
spans), read twice, inline elements glued and spaced.

The organisation and the strongest phone-region hint (``addressCountry``) come from the page's
own structured nodes: top-level and ``@graph`` items, then what they name through
``_OWNER_KEYS``; never a Product's ``brand``, an Offer's ``seller`` or an ``author``.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple, TypeVar
from urllib.parse import unquote, urlsplit

from lxml.html import HtmlElement
from w3lib.html import strip_html5_whitespace

from core.items.contacts import Contacts, Email, Organization, SocialLink
from crawler.extract.domains import registrable_domain
from crawler.extract.emails import (
    cloudflare_email,
    deobfuscated_emails,
    emails_from_mailto,
    emails_in_text,
    normalise_email,
)
from crawler.extract.fetched import FetchedPage
from crawler.extract.phones import (
    FAX,
    Found,
    default_region,
    language_region,
    main_language_region,
    parse_phone,
    phone_from_href,
    phones_in_text,
    with_fax_types,
)
from crawler.extract.registry import extracts
from crawler.extract.schema import from_microdata, id_index, local_name, resolve, walk
from crawler.extract.social import dedupe_key, mastodon_in_text, social_profile
from crawler.extract.structured import (
    clean,
    host,
    join,
    json_ld_nodes,
)
from crawler.extract.visible_text import in_text, visible_text

logger = logging.getLogger(__name__)

MAX_ITEMS = 50  # per category: a directory page must not produce an unbounded answer
MAX_SUGGESTED_PAGES = 10

_CLOUDFLARE = "//*[@data-cfemail] | //a[contains(@href, '/cdn-cgi/l/email-protection#')]"
_SLUG_SEPARATORS = re.compile(r"[^a-z0-9]+")
_PAGE_EXTENSION = re.compile(r"\.(?:html?|php|aspx?|jsp|cfm)$")
# Slugs (lower case, accents stripped, words joined by "-") of pages that list contacts.
_CONTACT_PAGES = frozenset({
    "contact", "contacts", "contact-us", "contactus", "get-in-touch", "kontakt", "contacto",
    "contactenos", "contato", "contatti", "contattaci", "impressum", "imprint", "legal-notice",
    "mentions-legales", "aviso-legal", "colofon", "about", "about-us", "aboutus", "ueber-uns",
    "uber-uns", "a-propos", "qui-sommes-nous", "chi-siamo", "quienes-somos", "sobre-nosotros",
    "sobre-nos", "over-ons", "team", "our-team", "unser-team", "people", "leadership",
    "support", "help", "hilfe", "help-center", "help-centre", "support-center",
    "kundenservice", "customer-service", "customer-support", "contact-form", "kontaktformular",
    "locations", "offices", "standorte",
})
_ORGANIZATION_TYPES = frozenset({
    "Organization", "Corporation", "LocalBusiness", "NGO", "Airline", "Consortium",
    "LibrarySystem", "PerformingGroup", "WorkersUnion", "Store", "Restaurant", "Hotel",
    "FoodEstablishment", "LodgingBusiness", "ProfessionalService", "LegalService",
    "Attorney", "Notary", "Dentist", "Physician", "MedicalClinic", "Pharmacy", "Bakery",
    "CafeOrCoffeeShop", "BarOrPub", "RealEstateAgent", "TravelAgency", "InsuranceAgency",
    "EmploymentAgency", "AccountingService", "BankOrCreditUnion", "FinancialService",
})
# Subtypes not listed above still follow schema.org's naming ("GovernmentOrganization"…).
_ORGANIZATION_SUFFIXES = ("Organization", "Business", "Store")
# Properties through which a page's node names the organisation behind the page. Only these
# are followed from top-level nodes; brand, seller, manufacturer, author, creator and
# itemReviewed name *other* organisations and are never followed.
_OWNER_KEYS = ("publisher", "provider", "copyrightHolder", "mainEntity", "about", "isPartOf")
_T = TypeVar("_T")


class _Anchor(NamedTuple):
    href: str  # as written, for mailto:/tel:
    url: str | None  # absolute http(s), for profiles and pages
    text: str | None
    rel_me: bool  # rel="me": the page claims the target as its own identity


@extracts("contacts")
def extract_contacts(page: FetchedPage) -> Contacts:
    """Contacts found on one page.

    The page's address (after redirects) is each record's ``source_url`` and, with
    ``<base href>``, resolves links; Content-Language is one of the region hints. Malformed
    input never raises (the parsers are guarded where they are called); a bug here does, so
    that the crawl reports a failure instead of a blank result billed as a success.
    """
    root = page.root
    if root is None:
        return Contacts()
    url, base = page.address, page.base
    anchors = _anchors(root, base)
    text = visible_text(root)
    sources = {"json_ld": page.json_ld, "microdata": list(map(from_microdata, page.microdata))}
    by_id = id_index(list(sources.values()))
    own = list(_own_nodes(sources, by_id))
    site = registrable_domain(host(url))
    languages = [root.get("lang"), root.get("xml:lang"), page.meta[0].get("og:locale"),
                 page.header("content-language")]
    region = default_region(languages, host(url), _countries(own, by_id))
    text_region = region or main_language_region(languages)
    return Contacts(
        emails=_unique(_emails(root, anchors, sources, text, url), MAX_ITEMS,
                       lambda email: email.value.lower()),
        phones=_unique(with_fax_types(_phones(anchors, sources, text, url, text_region,
                                              region or language_region(languages))),
                       MAX_ITEMS, lambda phone: phone.value),
        social_links=_unique(_profiles(anchors, sources, text, base, site, url), MAX_ITEMS,
                             dedupe_key),
        organization=_organization(own, by_id, base),
        suggested_pages=_unique(_suggested_pages(anchors, url, site), MAX_SUGGESTED_PAGES,
                                lambda suggested: suggested),
    )


def _unique(records: Iterable[_T], limit: int, key: Callable[[_T], str]) -> list[_T]:
    """The first ``limit`` records with distinct keys, in order."""
    seen: set[str] = set()
    unique: list[_T] = []
    for record in records:
        if len(unique) >= limit:
            break
        if (record_key := key(record)) not in seen:
            seen.add(record_key)
            unique.append(record)
    return unique


def _anchors(root: HtmlElement, base: str) -> list[_Anchor]:
    anchors = []
    for element in root.iter("a", "area"):
        href = strip_html5_whitespace(element.get("href") or "")
        if href:  # a "#fragment" href is this very document, even under <base href>
            absolute = None if href.startswith("#") else join(base, href)
            is_web = absolute is not None and absolute.startswith(("http://", "https://"))
            anchors.append(_Anchor(href, absolute if is_web else None,
                                   clean(element.text_content()),
                                   "me" in (element.get("rel") or "").lower().split()))
    return anchors


def _values(items: Any, key: str) -> Iterator[Any]:
    """Every value of ``key`` anywhere in a structured-data tree, lists flattened."""
    for node in walk(items):
        value = node.get(key)
        yield from value if isinstance(value, list) else [value]


def _emails(root: HtmlElement, anchors: list[_Anchor], sources: dict[str, Any],
            text: str, url: str) -> Iterator[Email]:
    """Every address of the page, ``url``, in priority order (duplicates included)."""
    for anchor in anchors:
        for email in emails_from_mailto(anchor.href):
            yield Email(value=email, source_url=url, found_in="mailto")
    for found_in, items in sources.items():
        for email in filter(None, map(normalise_email, _values(items, "email"))):
            yield Email(value=email, source_url=url, found_in=found_in)
    for element in root.xpath(_CLOUDFLARE):
        encoded = element.get("data-cfemail") or element.get("href", "").partition("#")[2]
        if (email := cloudflare_email(encoded)) is not None:
            yield Email(value=email, source_url=url, found_in="obfuscated")
    for email in in_text(text, deobfuscated_emails):
        yield Email(value=email, source_url=url, found_in="obfuscated")
    for email in in_text(text, emails_in_text):
        yield Email(value=email, source_url=url, found_in="text")


def _phones(anchors: list[_Anchor], sources: dict[str, Any], text: str, url: str,
            region: str | None, certain_region: str | None) -> Iterator[Found]:
    """``certain_region`` (``region`` or the language's likely one) serves ``tel:`` links and
    structured numbers, which are phone numbers whatever they look like; free text keeps
    ``region`` (the page's region, or its language's main one), so that without a signal
    only international numbers are read there. A structured ``telephone`` is labelled a
    phone, a ``faxNumber`` a fax; a ``tel:`` link says neither (sites link their fax too)."""
    for anchor in anchors:
        if (phone := phone_from_href(anchor.href, certain_region, source_url=url)) is not None:
            yield Found(phone)
    for found_in, items in sources.items():
        for key, label in (("telephone", "phone"), ("faxNumber", FAX)):
            for value in _values(items, key):
                phone = parse_phone(value, certain_region, source_url=url, found_in=found_in)
                if phone is not None:
                    yield Found(phone, label)
    yield from in_text(text, lambda rendering: phones_in_text(rendering, region,
                                                              source_url=url))


def _profiles(anchors: list[_Anchor], sources: dict[str, Any], text: str, base: str,
              site: str, url: str) -> Iterator[SocialLink]:
    """Links in page order, then structured ``sameAs`` (a claim, like ``rel="me"``), then
    ``@user@host`` in text."""
    claims = [(anchor.url, anchor.rel_me) for anchor in anchors]
    claims += [(join(base, value), True) for items in sources.values()
               for value in _values(items, "sameAs") if isinstance(value, str)]
    yield from filter(None, (social_profile(target, site, claimed, source_url=url)
                             for target, claimed in claims if target))
    yield from in_text(text, lambda rendering: mastodon_in_text(rendering, site,
                                                                 source_url=url))


def _suggested_pages(anchors: list[_Anchor], page_url: str, site: str) -> Iterator[str]:
    """Same-site links that look like contact/about/imprint/team/support pages."""
    page = (join(page_url, page_url) or page_url).partition("#")[0]
    for anchor in anchors:
        url = (anchor.url or "").partition("#")[0]
        if not url or url == page or registrable_domain(host(url)) != site:
            continue
        last_segment = urlsplit(url).path.rstrip("/").rpartition("/")[2]
        slugs = {_slug(_PAGE_EXTENSION.sub("", unquote(last_segment).lower())),
                 _slug(anchor.text or "")}
        if slugs & _CONTACT_PAGES:
            yield url


def _slug(value: str) -> str:
    """"Über uns" → "uber-uns", "À propos" → "a-propos", "Contact_Us" → "contact-us"."""
    ascii_text = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode()
    return _SLUG_SEPARATORS.sub("-", ascii_text.lower()).strip("-")


def _own_nodes(sources: dict[str, Any], by_id: Mapping[str, dict[str, Any]]
               ) -> Iterator[dict[str, Any]]:
    """The page's own nodes, breadth-first: top-level items and ``@graph`` members (JSON-LD,
    then microdata), then the nodes they reach through ``_OWNER_KEYS``, references resolved."""
    queue = deque(node for items in sources.values() for node in json_ld_nodes(items))
    seen: set[int] = set()
    while queue:
        node = queue.popleft()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        for key in _OWNER_KEYS:
            value = node.get(key)
            queue.extend(_deref(item, by_id) for item in (
                value if isinstance(value, list) else [value]) if isinstance(item, dict))


def _countries(own: list[dict[str, Any]], by_id: Mapping[str, dict[str, Any]]
               ) -> Iterator[Any]:
    """``addressCountry`` of the page's own nodes' addresses, in node order."""
    for node in own:
        address = _resolve(node.get("address"), by_id)
        if isinstance(address, dict):
            yield address.get("addressCountry")


def _organization(own: list[dict[str, Any]], by_id: Mapping[str, dict[str, Any]],
                  base: str) -> Organization | None:
    """The first of the page's own Organization (or subtype) nodes with at least one field."""
    for node in filter(_is_organization, own):
        logo = _resolve(node.get("logo"), by_id)
        if isinstance(logo, dict):
            logo = _first(logo.get("url")) or _first(logo.get("contentUrl"))
        organization = Organization(
            name=clean(_first(node.get("name"))),
            url=join(base, clean(_first(node.get("url")))),
            logo=join(base, clean(logo)),
            address=_address(_resolve(node.get("address"), by_id)),
        )
        if any(vars(organization).values()):
            return organization
    return None


def _is_organization(node: dict[str, Any]) -> bool:
    types = node.get("@type")
    for name in types if isinstance(types, list) else [types]:
        # microdata types are URLs ("https://schema.org/Store"), JSON-LD may prefix "schema:"
        short = local_name(name) if isinstance(name, str) else ""
        if short in _ORGANIZATION_TYPES or short.endswith(_ORGANIZATION_SUFFIXES):
            return True
    return False


def _first(value: Any) -> Any:
    return (value[0] if value else None) if isinstance(value, list) else value


def _resolve(value: Any, by_id: Mapping[str, dict[str, Any]]) -> Any:
    """The first of a value's items, a bare ``{"@id"}`` reference replaced by its node."""
    return _deref(_first(value), by_id)


def _deref(value: Any, by_id: Mapping[str, dict[str, Any]]) -> Any:
    return resolve(value, by_id) if isinstance(value, dict) else value


def _address(value: Any) -> str | None:
    """A PostalAddress as one line: street, postcode + town, region, country."""
    if not isinstance(value, dict):
        return clean(value)
    country = _first(value.get("addressCountry"))
    country = country.get("name") if isinstance(country, dict) else country
    town = " ".join(filter(None, (clean(_first(value.get(key)))
                                  for key in ("postalCode", "addressLocality"))))
    parts = (_first(value.get("streetAddress")), town, _first(value.get("addressRegion")),
             _first(country))
    return ", ".join(filter(None, map(clean, parts))) or None
