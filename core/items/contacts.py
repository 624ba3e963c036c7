"""The contact discovery operation's answer (``POST /contacts``, ``scrapy crawl contacts``)."""

from __future__ import annotations

from dataclasses import dataclass

from core.items.fields import described


@dataclass(kw_only=True)
class Email:
    value: str = described("The address; its domain lower-cased.")
    source_url: str = described("The page it was found on.")
    found_in: str = described("mailto|text|json_ld|microdata|obfuscated")


@dataclass(kw_only=True)
class Phone:
    value: str = described("E.164.")
    raw: str = described("As written on the page; a tel: link's without tel:, percent-decoded.")
    type: str | None = described(
        "fax when the page labels the number a fax (Fax, Telefax, Télécopie…, or a structured "
        "faxNumber) and nowhere a phone; else its line type: fixed_line, mobile, "
        "fixed_line_or_mobile, toll_free, voip, …; null unknown.",
        default=None)
    source_url: str = described("The page it was found on.")
    found_in: str = described("tel|text|json_ld|microdata")


@dataclass(kw_only=True)
class SocialLink:
    platform: str = described("linkedin, x, facebook, instagram, youtube, …, mastodon.")
    url: str = described(
        "The profile's URL: https, no trailing slash, no query but a numeric id it needs.")
    handle: str | None = described(
        "The account name (a YouTube channel's UC… id for /channel/ links), when the URL "
        "shows one.", default=None)
    source_url: str = described("The page it was found on.")


@dataclass(kw_only=True)
class Organization:
    """The page's own organisation (never a product's brand or an offer's seller)."""

    name: str | None = described("Its name.", default=None)
    url: str | None = described("Its website.", default=None)
    logo: str | None = described("Its logo, absolute URL.", default=None)
    address: str | None = described("Postal address on one line.", default=None)


@dataclass(kw_only=True)
class Contacts:
    """Emails, phones, social profiles and organisation of one page; at most 50 of each."""

    emails: list[Email] = described("De-duplicated case-insensitively.", factory=list)
    phones: list[Phone] = described("De-duplicated by E.164.", factory=list)
    social_links: list[SocialLink] = described(
        "Profiles, not share or login links; de-duplicated by URL (case, www./m. ignored).",
        factory=list)
    organization: Organization | None = described("null when the page names none.",
                                                  default=None)
    suggested_pages: list[str] = described(
        "Same-site contact, about, imprint, team or support pages, at most 10 (not fetched).",
        factory=list)
