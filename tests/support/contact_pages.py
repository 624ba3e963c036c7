"""Small pages for the contact-extraction tests: build one, run the extractor on it, and read
its answer back as the few fields a test states a rule about. Also the saved-page fixtures."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from core.items.contacts import Contacts
from crawler.extract.contacts import extract_contacts
from crawler.extract.fetched import FetchedPage

#: Saved HTML as a page fetched from that URL, what extractors take.
fetched = FetchedPage.from_html

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "contacts"
URL = "https://www.example.com/contact"


def page(body: str, head: str = "", lang: str = "en") -> str:
    return (f'<!DOCTYPE html><html lang="{lang}"><head><title>t</title>{head}</head>'
            f"<body>{body}</body></html>")


def ld(data: Any) -> str:
    return f'<script type="application/ld+json">{json.dumps(data)}</script>'


def run(body: str, url: str = URL, head: str = "", lang: str = "en",
        headers: dict[Any, Any] | None = None) -> Contacts:
    return extract_contacts(fetched(url, page(body, head, lang), headers))


def emails(body: str, **kwargs: Any) -> list[tuple[str, str]]:
    return [(e.value, e.found_in) for e in run(body, **kwargs).emails]


def phones(body: str, **kwargs: Any) -> list[tuple[str, str]]:
    return [(p.value, p.found_in) for p in run(body, **kwargs).phones]


def links(*hrefs: str, url: str = URL) -> list[dict[str, Any]]:
    found = run("".join(f'<a href="{href}">x</a>' for href in hrefs), url=url).social_links
    return [asdict(profile) for profile in found]


def fixture(name: str) -> Contacts:
    """The answer for the saved page NAME.html, fetched from the URL its NAME.json names."""
    case = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    html = (FIXTURES / f"{name}.html").read_text(encoding="utf-8")
    return extract_contacts(fetched(case["url"], html, case.get("headers")))
