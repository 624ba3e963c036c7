"""A page operation's job with the page cache (:mod:`storage.page_cache`): the fetch asks
conditionally when the API has a stale entry, a 304 makes that entry fresh again without
extracting anything, and a successful answer the page lets a shared cache keep is kept.

The worker does this, not the API: only it sees the page's response headers (``Cache-Control``,
``ETag``, ``Last-Modified``), which never reach the answer.
"""

from __future__ import annotations

import concurrent.futures
import functools
import logging
import threading
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from redis.exceptions import RedisError
from rq import get_current_job
from sqlalchemy.exc import SQLAlchemyError

from core.cache import END_CLAIM, FILLING, KEEPING
from core.canonical import canonical_url
from core.config import Config
from core.contract import PageStatus
from core.formats import utc_now
from core.items import NOT_MODIFIED, PageResult, ResponseCaching, plain
from storage import page_cache
from storage.db import Database, shared_for

logger = logging.getLogger(__name__)


@functools.cache
def _settings() -> tuple[Database, int]:
    """This worker's database and cache cap (read once: a job must not parse the environment
    on the path a client waits on)."""
    config = Config.from_env()
    return shared_for(config.storage), config.cache.cache_max_bytes


def fetch(crawl: Callable[..., list[Any]], cache: dict[str, Any], *, operation: str,
          url: str) -> dict[str, Any]:
    """The page's result by ``crawl(**spider_arguments)`` (see the module); ``cache`` is the
    API's ``{"key", "etag"?, "last_modified"?}``."""
    db, max_bytes = _settings()
    key = cache["key"]
    validators = {"if_none_match": cache.get("etag"),
                  "if_modified_since": cache.get("last_modified")}
    items = crawl(report_caching=True, **{k: v for k, v in validators.items() if v})
    result: PageResult = items[0]
    if not_modified(result):
        entry, kept = revalidated(db, key, _caching_of(items))
        if entry is not None:  # unchanged: the cached answer, as fetched now
            if kept:
                _claim_ender(key)()
            return {**entry.result, "url": url, "fetched_at": utc_now(), KEEPING: kept}
        items = crawl(report_caching=True)  # evicted meanwhile: fetch it whole
        result = items[0]
    answer = plain(result)
    caching = _caching_of(items)
    keeping = answer["status"] == PageStatus.SUCCEEDED and caching.storable and bool(max_bytes)
    end_claim = _claim_ender(key)
    if keeping:
        keeping = keep(db, key, operation=operation, url=canonical_url(url), result=answer,
                       max_bytes=max_bytes, caching=caching, then=end_claim)
    return {**answer, KEEPING: keeping}


def not_modified(result: PageResult) -> bool:
    """Whether ``result`` is a page's 304 to a conditional fetch: the cached answer stands."""
    return result.status == PageStatus.SUCCEEDED and result.status_code == NOT_MODIFIED


def revalidated(db: Database, key: str, said: ResponseCaching
                ) -> tuple[page_cache.Entry | None, bool]:
    """The entry of ``key``, which its page just said is unchanged (a 304 that said
    ``said``), and whether it stays kept: refreshed (fresh again, with the 304's validators),
    or, when the page no longer lets a shared cache keep it, forgotten after this once. None
    when it is gone (evicted meanwhile, or the database failed): fetch the page whole. A job's
    answer and a collection's page alike."""
    if not said.storable:
        entry = safely(lambda: page_cache.get(db, key))
        safely(lambda: page_cache.forget(db, key))
        return entry, False
    return safely(lambda: page_cache.refresh(db, key, etag=said.etag,
                                             last_modified=said.last_modified)), True


def keep(db: Database, key: str, *, operation: str, url: str, result: dict[str, Any],
         max_bytes: int, caching: ResponseCaching, then: Callable[[], None] | None = None
         ) -> bool:
    """Keep ``result`` under ``key`` with the response's validators, in this process's cache
    writer (after the answer: :func:`keep_later`), then call ``then``: a job's answer and a
    collection's page alike. Whether it will be written."""
    def put() -> None:
        try:
            safely(lambda: page_cache.put(db, key, operation=operation, url=url, result=result,
                                          max_bytes=max_bytes, etag=caching.etag,
                                          last_modified=caching.last_modified))
        finally:
            if then is not None:
                then()

    return keep_later(put)


def _caching_of(items: list[Any]) -> ResponseCaching:
    """What the response said about keeping its answer (a spider that says nothing: it may
    be kept, without validators)."""
    return next((item for item in items if isinstance(item, ResponseCaching)),
                ResponseCaching())


def _claim_ender(key: str) -> Callable[[], None]:
    """What ends this job's claim on fetching ``key``'s answer (:data:`core.cache.FILLING`),
    once the answer is kept; nothing outside a job."""
    job = get_current_job()
    if job is None:
        return lambda: None

    def end() -> None:
        with suppress(RedisError):  # else it expires
            job.connection.eval(END_CLAIM, 1, FILLING + key, job.id)
    return end


#: Answers waiting to be written to the cache, at most; past them an answer is not kept (a
#: slow database must not grow the worker's memory).
PENDING = 16
_writer = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="page-cache")
_room = threading.BoundedSemaphore(PENDING)


def keep_later(put: Callable[[], Any]) -> bool:
    """Run ``put`` in this process's cache writer, after the job has answered: compressing
    and writing the answer cost a fetch about 3 ms on the path a client waits on
    (docs/benchmarks.md, Page cache). Whether it will run (not when the writer is behind)."""
    if not _room.acquire(blocking=False):
        logger.warning("The page cache writer is behind: an answer is not kept")
        return False

    def write() -> None:
        try:
            put()
        finally:
            _room.release()

    _writer.submit(write)
    return True



def safely(call: Callable[[], Any]) -> Any:
    """``call()``, or None when the database fails: the cache is an optimisation, and the
    page's answer stands without it."""
    try:
        return call()
    except SQLAlchemyError as exc:
        logger.warning("The page cache is unavailable: %s", exc)
        return None
