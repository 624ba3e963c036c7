"""What a slice makes of a page that landed: the outcome to store, or a skip; and the links
it found, sorted into those to admit and those refused (:mod:`collecting.slice` flushes them
together)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from collecting.frontier import Entry, Frontier, Skip, page_addresses, sort_links
from core.contract import FETCH_REFUSALS, ErrorCode, PageStatus, SkipReason
from core.items import PageResult, plain
from core.scope import CrawlScope
from crawler.spiders.collected import CollectedPage
from storage import collection_results
from storage.collection_store import PageOutcome


@dataclass
class Landed:
    """A page done: ``outcome`` None when it is a skip (then in ``refused``)."""

    entry: Entry
    outcome: PageOutcome | None
    found: list[Entry] = field(default_factory=list)  #: links to admit
    refused: list[Skip] = field(default_factory=list)  #: links refused, or the page itself


def land(frontier: Frontier, scope: CrawlScope | None, entry: Entry, page: CollectedPage
         ) -> Landed:
    """``page``, fetched for ``entry`` by a crawl of ``scope`` (None: a batch)."""
    result = plain(page.result)
    if scope is not None:
        skip = _skip(frontier, entry, result, page.canonical)
        if skip is not None:
            return Landed(entry, None, refused=[skip])
    error = result["error"]
    outcome = PageOutcome(
        key=collection_results.page_key(entry.key), url=entry.url, status=result["status"],
        final_url=result["final_url"], status_code=result["status_code"],
        fetched_at=result["fetched_at"], error=error, data=result["data"],
        robots_blocked=bool(error and error.get("error") == ErrorCode.ROBOTS_DISALLOWED))
    if scope is None or not page.links:
        return Landed(entry, outcome)
    return Landed(entry, outcome, *sort_links(scope, page.links, entry.depth + 1,
                                              page.refusals))


def _skip(frontier: Frontier, entry: Entry, result: dict[str, Any], canonical: str | None
          ) -> Skip | None:
    """A crawl's page that is a skip after its fetch was tried: a duplicate (another page
    claimed its address first: a crawl meets one page under many addresses), or a link
    robots.txt or the policy refused only then (its site's robots.txt was not read when it
    was admitted). Either way its budget slot goes to the next URL waiting. The start page is
    never a skip: a refused one is the crawl's failed result, saying why."""
    if result["status"] == PageStatus.SUCCEEDED:
        owner = frontier.claim(entry, page_addresses(result["final_url"], canonical))
        if owner is None:
            return None
        return Skip(entry.url, entry.key, SkipReason.DUPLICATE, owner, fetched=True)
    reason = FETCH_REFUSALS.get((result["error"] or {}).get("error"))
    if reason is None or entry.depth == 0:
        return None
    frontier.release_slot()
    return Skip(entry.url, entry.key, reason, fetched=True)


def failure(url: str, code: ErrorCode, message: str) -> CollectedPage:
    """A page that never reached its spider (a timeout, an error of ours), as one."""
    return CollectedPage(PageResult(url=url, status=PageStatus.FAILED,
                                    error={"error": code, "message": message}))
