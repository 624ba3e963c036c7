"""The API's side of the page cache (:mod:`core.cache`, :mod:`storage.page_cache`): a request
with ``max_age`` looks for a fresh enough answer before any job is queued; a hit is answered
here, without a worker. On a miss the job is told the entry's key (and a stale entry's
validators, for a conditional fetch): the worker keeps its answer. A request without
``max_age`` leaves the cache alone: keeping every fetch's answer cost every scrape a write
(docs/benchmarks.md, Page cache).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

from flask import current_app
from redis import Redis
from redis.exceptions import RedisError
from sqlalchemy.exc import SQLAlchemyError

from api.extensions import db
from core.cache import END_CLAIM, FILLING, KEEPING, cache_key, shared_url
from core.formats import format_utc
from storage import page_cache

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Lookup:
    """What the cache has for one request: its entry's ``key``, and the entry when it is
    ``fresh`` enough for the request's ``max_age`` (or stale, for its validators)."""

    key: str
    entry: page_cache.Entry | None = None
    fresh: bool = False

    def job_argument(self) -> dict[str, Any]:
        """The job's ``cache`` argument (:func:`worker.jobs.run_operation`)."""
        stale = self.entry
        if stale is None:
            return {"key": self.key}
        return {"key": self.key, "etag": stale.etag, "last_modified": stale.last_modified}

    def answer_fields(self, url: str) -> dict[str, Any]:
        """A fresh entry's answer to a request for ``url``: the job result it keeps (as
        asked: the entry may come from another spelling of the URL), marked cached."""
        assert self.entry is not None
        return {**self.entry.result, "url": url, "cached": True,
                "cached_at": format_utc(self.entry.cached_at)}


#: The answer fields of an answer that was fetched for its request.
FETCHED = {"cached": False, "cached_at": None}
def shared_fields(result: dict[str, Any]) -> dict[str, Any]:
    """The answer fields of another request's fetch, shared: cached, as fetched then."""
    return {"cached": True, "cached_at": result.get("fetched_at")}


@dataclass
class Claim:
    """This request's part in fetching an entry's answer (:func:`filling`): ``leader`` is the
    job id of the request fetching it already (None: this request fetches); ``handed_over``:
    this request's fetch succeeded and its worker keeps the answer, and ends the claim once it
    is kept."""

    leader: str | None
    handed_over: bool = False


def shareable(result: dict[str, Any] | None) -> bool:
    """Whether another request's answer may be shared: it succeeded, and its worker keeps it
    (the page allows a shared cache to)."""
    return bool(result and result["status"] == "succeeded" and result.get(KEEPING))


@contextmanager
def filling(redis: Redis, lookup: Lookup, request_id: str, seconds: float
            ) -> Iterator[Claim]:
    """Claim the fetch of ``lookup``'s answer for this request (its job's id is
    ``request_id``) for at most ``seconds``; the :class:`Claim` says whether another request
    fetches it already, whose answer this one may share instead of a fetch of its own (20
    identical requests at once make one fetch, not 20). The claim ends when the worker has
    kept the answer (requests that come until then share it), or with this request when its
    fetch failed or may not be kept. Without Redis, every request fetches."""
    key = FILLING + lookup.key
    try:
        ours = bool(redis.set(key, request_id, nx=True, px=max(1, int(seconds * 1000))))
        leader = None if ours else redis.get(key)
    except RedisError:
        ours, leader = False, None
    claim = Claim(leader.decode() if isinstance(leader, bytes) else leader)
    try:
        yield claim
    finally:
        if ours and not claim.handed_over:
            with suppress(RedisError):  # else it expires
                redis.eval(END_CLAIM, 1, key, request_id)


def enabled() -> bool:
    return current_app.config["WEBDATA"].cache.cache_max_bytes > 0


def look_up(operation: str, url: str, options: dict[str, Any], max_age: int) -> Lookup | None:
    """The cache's answer to this request; None when it does not use the cache (it is off;
    ``max_age`` is 0: such a fetch neither reads nor fills it, so a client that never asks
    for cached answers pays nothing for them; the URL has a parameter its key drops,
    :func:`~core.cache.shared_url`). A database failure is a miss: the fetch
    answers."""
    if not enabled() or not max_age or not shared_url(url):
        return None
    lookup = Lookup(cache_key(operation, url, options))
    try:
        entry = page_cache.get(db(), lookup.key)
    except SQLAlchemyError as exc:
        logger.warning("The page cache is unavailable: %s", exc)
        return lookup
    if entry is None:
        return lookup
    return Lookup(lookup.key, entry, fresh=entry.age() <= max_age)


def used(lookup: Lookup) -> None:
    """A fresh entry was answered: it becomes the most recently used (a failure is
    ignored)."""
    if lookup.entry is None:
        return
    try:
        page_cache.touch(db(), lookup.entry)
    except SQLAlchemyError as exc:
        logger.warning("The page cache is unavailable: %s", exc)
