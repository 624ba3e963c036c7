"""What the client sends of its options: the names each operation takes, and the parts of a
request's body made from keyword arguments (the client imports nothing of the platform, so it
spells out the service's names)."""

from __future__ import annotations

from typing import Any

#: The options of a page's content (:meth:`Client.scrape`), also a collection's of extract page.
MAP_OPTIONS = ("limit", "search", "sitemap", "include_subdomains", "include_paths",
               "exclude_paths", "discover_links", "max_age")
PAGE_OPTIONS = ("formats", "only_main_content", "include_selectors", "exclude_selectors",
                "include_links", "include_metadata", "schema")


def page_body(options: dict[str, Any]) -> dict[str, Any]:
    """The page options given (not ``None``), sequences as lists; another name is a
    ``TypeError``, as an unknown keyword argument is."""
    for name in options:
        if name not in PAGE_OPTIONS:
            raise TypeError(f"unexpected keyword argument {name!r} (the page options are "
                            f"{', '.join(PAGE_OPTIONS)})")
    return {name: list(value) if isinstance(value, list | tuple) else value
            for name, value in options.items() if value is not None}


def tracking_body(track: str | None) -> dict[str, Any]:
    """``change_tracking`` of a collection: under ``track`` ("": the site's tag); none."""
    if track is None:
        return {}
    return {"change_tracking": {"tag": track} if track else {}}


def batch_body(urls: list[str], *, extract: str, webhook_url: str | None, max_age: int | None,
               track: str | None, options: dict[str, Any],
               webhook_events: list[str] | None = None) -> dict[str, Any]:
    """A batch's body (:meth:`client.http.Client.collect`; a monitor's ``collection``)."""
    return {"mode": "batch", "urls": list(urls), "extract": extract, "webhook_url": webhook_url,
            **events_body(webhook_events),
            **page_body(options), **({"max_age": max_age} if max_age is not None else {}),
            **tracking_body(track)}


def events_body(webhook_events: list[str] | None) -> dict[str, Any]:
    """``webhook_events`` when some were chosen (else the service's default: the end's)."""
    return {"webhook_events": list(webhook_events)} if webhook_events else {}


def crawl_body(url: str, *, extract: str, webhook_url: str | None, track: str | None,
               options: dict[str, Any], webhook_events: list[str] | None = None,
               **rules: Any) -> dict[str, Any]:
    """A crawl's body (:meth:`client.http.Client.crawl`; a monitor's ``collection``):
    ``rules`` (``max_pages``…, ``max_age``) left ``None`` are the service's defaults."""
    return {"mode": "crawl", "url": url, "extract": extract, "webhook_url": webhook_url,
            **events_body(webhook_events),
            **{name: value for name, value in rules.items() if value is not None},
            **page_body(options), **tracking_body(track)}
