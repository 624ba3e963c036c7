"""Collections from Python (batch code): start one through RQ, wait for it, read its results.

A data engineer's job runs next to the platform, not through its HTTP API (docs/python.md,
"Collections from batch code")::

    from collecting.python_api import run_collection

    run = run_collection("acct_…", mode="batch", urls=["https://example.com/"], wait=600)
    run.collection.status                    # "completed"
    for result in run.results:               # the API's result objects, in completion order
        ...

The collection is the API's in every way: the same plan limits, balance check and history
(:mod:`collecting.start`), the same slice jobs on the ``collections`` queue, the same
credits and results — only nobody is waiting on an HTTP request. The configuration is the
deployment's (``DATABASE_URL``, ``REDIS_URL``…, :meth:`core.config.Config.from_env`: the whole
of it, checked as every entry point checks it).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from redis import Redis

from collecting import start
from core.config import Config
from core.contract import COLLECTION_MODES as MODES
from core.contract import DEFAULT_MAX_DEPTH, MAX_DEPTH
from core.operations import COLLECTION_EXTRACTS as EXTRACTS
from core.operations import MAX_AGE_OPTION, option_errors
from core.options import OptionError
from core.patterns import MAX_PATTERNS, pattern_errors
from core.policy import SourcePolicy
from core.scope import page_url_error
from storage import collection_results, collections
from storage.db import Database, shared_for
from storage.models import LIVE_STATUSES, Collection
from worker import queues

logger = logging.getLogger(__name__)

#: Seconds :func:`run_collection` waits for a collection to end by default.
WAIT = 600
#: Seconds between two looks at the collection's row (the API's progress is as fresh).
POLL = 1.0
#: Results read from the database at once while iterating.
RESULTS_PAGE = 500


class CollectionTimeout(TimeoutError):
    """Raised by :func:`wait_collection` when the collection is still running after ``wait``
    seconds; it goes on (wait again with its ``collection_id``, or cancel it through the API).
    """

    def __init__(self, collection_id: str, status: str, wait: float):
        super().__init__(f"Collection {collection_id} is still {status} after {wait:g} s.")
        self.collection_id, self.status = collection_id, status


@dataclass
class FinishedCollection:
    """A collection that ended: its row (``status``, ``stop_reason``, ``succeeded``,
    ``failed``, ``robots_blocked``, ``credits_used``…) and its results, read lazily in
    completion order, each ``{"url", "final_url", "status", "status_code", "fetched_at",
    "error", "data"}`` as ``GET /collections/{id}/results`` answers."""

    collection: Collection
    results: Iterator[dict[str, Any]]


def run_collection(account_id: str, mode: str = "batch", *, wait: float = WAIT,
                   config: Config | None = None, **options: Any) -> FinishedCollection:
    """Start a collection for ``account_id`` and wait until it ends (at most ``wait``
    seconds; :class:`CollectionTimeout` after that). ``options`` are
    :func:`start_collection`'s."""
    config = config or Config.from_env()
    row = start_collection(account_id, mode, config=config, **options)
    return wait_collection(row.id, wait, config=config)


def start_collection(account_id: str, mode: str = "batch", *,
                     urls: Sequence[str] | None = None, url: str | None = None,
                     extract: str = "page", max_pages: int | None = None,
                     max_depth: int = DEFAULT_MAX_DEPTH, include_paths: Sequence[str] = (),
                     exclude_paths: Sequence[str] = (), use_sitemap: bool = True,
                     options: Mapping[str, Any] | None = None,
                     remove_repeated_blocks: bool = True, max_age: int = 0,
                     config: Config | None = None, redis: Redis | None = None) -> Collection:
    """Create the collection and enqueue its first slice; the ``queued`` row.

    ``mode="batch"`` takes ``urls``; ``mode="crawl"`` takes ``url`` and the crawl's options, as
    ``POST /collections`` does (docs/api.md, Collections); ``options`` are the extract's
    (``{"formats": ["markdown"]}``); ``max_age`` lets pages come from the page cache, as the
    API's (docs/api.md, The page cache). A value the API would refuse as
    invalid raises ``ValueError``; the plan's refusals raise as in
    :func:`collecting.start.create` (``TooManyUrls``, ``TooManyPages``, ``PolicyRefusal``,
    ``CollectionLimit``, ``InsufficientCredits``); an unreachable Redis raises its
    ``RedisError`` (the collection is then failed, nothing charged).
    """
    urls, url = _check(mode, extract, urls, url, max_pages, max_depth, include_paths,
                       exclude_paths, use_sitemap)
    if not isinstance(remove_repeated_blocks, bool):
        raise ValueError("remove_repeated_blocks must be True or False")
    try:
        max_age = MAX_AGE_OPTION.kind.check(max_age)
    except OptionError as exc:
        raise ValueError(f"max_age: {exc}") from None
    errors = option_errors(extract, dict(options or {}))
    if errors:
        raise ValueError("; ".join(f"{name}: {message}" for name, message in errors.items()))
    config = config or Config.from_env()
    db = _database(config)
    row = start.create(
        db, SourcePolicy.from_config(config.policy),
        account_id=account_id, mode=mode, extract=extract, urls=urls, url=url,
        max_pages=max_pages, max_depth=max_depth, include_paths=include_paths,
        exclude_paths=exclude_paths, use_sitemap=use_sitemap, options=options,
        remove_repeated_blocks=remove_repeated_blocks, max_age=max_age)
    redis = redis or queues.redis_connection(config.storage.redis_url,
                                             config.storage.redis_timeout)
    start.enqueue(db, redis, row.id, config)
    logger.info("Collection %s started (%s, %s)", row.id, mode, extract)
    return row


def wait_collection(collection_id: str, wait: float = WAIT, *,
                    config: Config | None = None) -> FinishedCollection:
    """The collection once it has ended; :class:`CollectionTimeout` if it has not within
    ``wait`` seconds, ``LookupError`` if there is no such collection."""
    config = config or Config.from_env()
    db = _database(config)
    deadline = time.monotonic() + wait
    while True:
        row = collections.get(db, collection_id)
        if row is None:
            raise LookupError(f"No collection {collection_id!r}.")
        if row.status not in LIVE_STATUSES:
            return FinishedCollection(row, results(db, collection_id))
        if time.monotonic() >= deadline:
            raise CollectionTimeout(collection_id, row.status, wait)
        time.sleep(min(POLL, max(0.0, deadline - time.monotonic())))


def results(db: Database, collection_id: str, status: str | None = None
            ) -> Iterator[dict[str, Any]]:
    """Every stored result of the collection in completion order (only ``status``'s, when
    given), read :data:`RESULTS_PAGE` at a time: a collection of any size in constant
    memory."""
    after = 0
    while True:
        rows, more = collection_results.page(db, collection_id, after=after, limit=RESULTS_PAGE,
                                         status=status)
        for row in rows:
            yield collection_results.body(row)
        if more is None:
            return
        after = more


def _database(config: Config) -> Database:
    return shared_for(config.storage)


def _check(mode: str, extract: str, urls: Sequence[str] | None, url: str | None,
           max_pages: int | None, max_depth: int, include_paths: Sequence[str],
           exclude_paths: Sequence[str], use_sitemap: bool
           ) -> tuple[list[str] | None, str | None]:
    """What the API's schema refuses with a 422, as ``ValueError`` (nothing is created), by
    the same rules (:func:`core.scope.page_url_error`, :func:`core.patterns.pattern_errors`);
    the URLs stripped, as the API stores them."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if extract not in EXTRACTS:
        raise ValueError(f"extract must be one of {', '.join(EXTRACTS)}, not {extract!r}")
    foreign = {"url": url, "max_pages": max_pages} if mode == "batch" else {"urls": urls}
    given = [name for name, value in foreign.items() if value is not None]
    if given:
        raise ValueError(f"{', '.join(given)}: not a field of mode {mode}")
    if mode == "batch":
        if isinstance(urls, str) or not urls:
            raise ValueError("a batch needs urls=[…], a list of at least one URL")
        errors = {index: _url_error(value) for index, value in enumerate(urls)}
        bad = "; ".join(f"[{index}] {error}" for index, error in errors.items() if error)
        if bad:
            raise ValueError(f"urls: {bad}")
        return [value.strip() for value in urls], None
    error = _url_error(url)
    if error:
        raise ValueError(f"a crawl needs url=…, an http(s) URL: {error}")
    if max_pages is not None and not (_whole(max_pages) and max_pages >= 1):
        raise ValueError(f"max_pages must be a whole number of at least 1, not {max_pages!r}")
    if not (_whole(max_depth) and 0 <= max_depth <= MAX_DEPTH):
        raise ValueError(f"max_depth must be a whole number from 0 to {MAX_DEPTH}")
    if not isinstance(use_sitemap, bool):
        raise ValueError(f"use_sitemap must be True or False, not {use_sitemap!r}")
    for name, patterns in (("include_paths", include_paths), ("exclude_paths", exclude_paths)):
        if isinstance(patterns, str):
            raise ValueError(f"{name} must be a list of regexes")
        if len(patterns) > MAX_PATTERNS:
            raise ValueError(f"{name}: at most {MAX_PATTERNS} patterns")
        errors = pattern_errors(list(patterns))
        if errors:
            raise ValueError(f"{name}: " + "; ".join(f"[{i}] {m}" for i, m in errors.items()))
    assert url is not None
    return None, url.strip()


def _url_error(value: Any) -> str | None:
    return page_url_error(value) if isinstance(value, str) else "Not a string."


def _whole(value: Any) -> bool:
    """An int that is no bool (``True`` is an int to Python, not a number of pages)."""
    return isinstance(value, int) and not isinstance(value, bool)
