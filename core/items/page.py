"""The extraction operation's answer (``POST /scrape``, ``scrapy crawl page``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.items.fields import described


@dataclass(kw_only=True)
class Link:
    """A crawlable link of the page: absolute http(s), fragment removed, first occurrence."""

    url: str = described("Absolute http(s) URL, without its fragment.")
    text: str | None = described("The anchor text, whitespace collapsed.", default=None)
    rel: str | None = described('"nofollow" when the link says so, else null.', default=None)
    internal: bool = described("True when the link stays on the page's host.", default=False)


@dataclass(kw_only=True)
class Metadata:
    """What the page says about itself: meta tags, OpenGraph, Twitter, JSON-LD, microdata."""

    description: str | None = described("Meta or OpenGraph description.", default=None)
    canonical_url: str | None = described("rel=canonical (else og:url), absolute.", default=None)
    author: str | None = described("Author name(s), comma-separated.", default=None)
    published_at: str | None = described("ISO 8601, UTC when the page gives a zone.",
                                         default=None)
    modified_at: str | None = described("ISO 8601, UTC when the page gives a zone.",
                                        default=None)
    site_name: str | None = described("og:site_name, else the JSON-LD publisher.", default=None)
    image: str | None = described("og:image (else twitter:image), absolute.", default=None)
    keywords: list[str] = described("The keywords meta tag, split on commas.", factory=list)
    open_graph: dict[str, str] = described("Every og:* meta tag.", factory=dict)
    twitter: dict[str, str] = described("Every twitter:* meta tag.", factory=dict)
    json_ld: list[dict[str, Any]] = described("The page's JSON-LD items, as written.",
                                              factory=list)
    microdata: list[dict[str, Any]] = described("extruct's microdata items.", factory=list)
    meta: dict[str, str] = described("Every meta tag: name or property → content.",
                                     factory=dict)


@dataclass(kw_only=True)
class Page:
    """Title, readable text, language, links and metadata of one page."""

    title: str | None = described("<title>, else og:title, else the first <h1>.", default=None)
    text: str | None = described(
        "Readable main text; paragraphs separated by blank lines. null when `formats` does not "
        "ask for `text`.", default=None)
    markdown: str | None = described(
        "The content as markdown (headings, lists, tables, code, links); null unless asked "
        "for in `formats`.", default=None)
    html: str | None = described(
        "The content as clean HTML (no scripts, styles, event handlers or tracking "
        "attributes; absolute URLs); null unless asked for in `formats`.", default=None)
    raw_html: str | None = described(
        "The page as fetched, decoded; null unless asked for in `formats`.", default=None)
    language: str | None = described("Primary language subtag, e.g. en.", default=None)
    links: list[Link] = described("[] when include_links is false.", factory=list)
    metadata: Metadata | None = described("null when include_metadata is false.", default=None)
    records: list[dict[str, Any]] | None = described(
        "The records the request's `schema` reads (at most 1,000); null without a schema.",
        default=None)
