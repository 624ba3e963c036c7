"""Starting a collection: the plan's limits, the row, the first slice job — for every producer.

``POST /collections`` (:mod:`api.resources.collection_routes`, and the console through it)
and batch code (:mod:`collecting.python_api`) start collections the same way, so they share
this: one place decides what a plan allows, and the row always exists before its first slice
is enqueued (a worker never looks for a collection that is not there yet; warehouse's habit).
Each refusal is an exception of its own, which the API turns into its error (413, 422, 403,
429, 402) and batch code sees as it is.

Free of Flask and of the crawler (the API process imports it): storage, the source policy's
pure URL rules and the queue (:func:`collecting.control.enqueue_slice`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from redis import Redis
from redis.exceptions import RedisError

from collecting.control import enqueue_slice
from core.canonical import site_key
from core.config import Config
from core.contract import DEFAULT_MAX_DEPTH
from core.operations import COLLECTION_OPTIONS
from core.policy import SourcePolicy
from storage import accounts, collections
from storage.db import Database
from storage.models import Collection

logger = logging.getLogger(__name__)


class TooManyUrls(Exception):
    """Raised by :func:`create`: the batch has more URLs than the plan's ``max_batch_urls``."""

    def __init__(self, count: int, limit: int):
        super().__init__(f"This batch has {count} URLs; the plan allows {limit}.")
        self.count, self.limit = count, limit


class TooManyPages(Exception):
    """Raised by :func:`create`: a crawl's ``max_pages`` is over the plan's
    ``max_crawl_pages``."""

    def __init__(self, limit: int):
        super().__init__(f"At most {limit} on this plan.")
        self.limit = limit


def arguments(body: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`create`'s keyword arguments for a collection's request body as the API loaded
    it (its defaults filled): the API's collections and a monitor's runs start alike."""
    names = ("mode", "extract", "urls", "url", "max_pages", "max_depth", "include_paths",
             "exclude_paths", "use_sitemap", "remove_repeated_blocks", "webhook_url",
             "webhook_events", "max_age", "change_tracking")
    return {**{name: body[name] for name in names if name in body},
            "options": {name: body[name] for name in COLLECTION_OPTIONS if name in body}}


def create(db: Database, policy: SourcePolicy, *, account_id: str, mode: str,
           extract: str = "page", url: str | None = None, request_id: str | None = None,
           webhook_url: str | None = None, run: tuple[str, datetime] | None = None,
           webhook_events: Sequence[str] | None = None, **rules: Any) -> Collection:
    """A new ``queued`` collection of the account, within its plan, with its line of history.

    Checked in this order: the rules (:func:`prepare`); then, in the transaction that writes
    the row, the plan's running collections (:class:`~storage.collections.CollectionLimit`)
    and a balance of at least 1 (:class:`~storage.ledger.InsufficientCredits`). ``run``: it
    is the run of a monitor (its id, the slot's time; :mod:`collecting.monitors`).
    """
    spec, max_running = prepare(db, policy, account_id=account_id, mode=mode, url=url, **rules)
    return collections.create(db, account_id=account_id, mode=mode, extract=extract, spec=spec,
                              max_running=max_running, request_id=request_id, url=url,
                              webhook_url=webhook_url, run=run,
                              webhook_events=webhook_events)


def prepare(db: Database, policy: SourcePolicy, *, account_id: str, mode: str,
            urls: Sequence[str] | None = None, url: str | None = None,
            max_pages: int | None = None, max_depth: int = DEFAULT_MAX_DEPTH,
            include_paths: Sequence[str] = (), exclude_paths: Sequence[str] = (),
            use_sitemap: bool = True, options: Mapping[str, Any] | None = None,
            remove_repeated_blocks: bool = True, max_age: int = 0,
            change_tracking: Mapping[str, Any] | None = None) -> tuple[dict[str, Any], int]:
    """The stored ``spec`` of a collection the account's plan allows, and the plan's
    ``max_running_collections``: a monitor checks its collection here when it is created.

    Checked in this order: a batch's size (:class:`TooManyUrls`); a crawl's ``max_pages``
    (default: the plan's ``max_crawl_pages``; :class:`TooManyPages`) and its start URL
    against ``policy`` (:class:`~core.policy.PolicyRefusal`). The values themselves are taken
    as valid (the API's schema, or :func:`collecting.python_api.start_collection`, checked
    them).
    """
    with db.session() as session:
        account = accounts.find_account(session, account_id)
        if account is None:
            raise LookupError(f"No account {account_id!r}.")
        plan = account.plan
        limits = (plan.max_batch_urls, plan.max_crawl_pages, plan.max_running_collections)
    max_batch_urls, max_crawl_pages, max_running = limits
    if mode == "batch":
        urls = list(urls or ())
        if len(urls) > max_batch_urls:
            raise TooManyUrls(len(urls), max_batch_urls)
        spec: dict[str, Any] = {"urls": urls}
    else:
        max_pages = max_pages or max_crawl_pages
        if max_pages > max_crawl_pages:
            raise TooManyPages(max_crawl_pages)
        policy.check_url(url)
        spec = {"url": url, "max_pages": max_pages, "max_depth": max_depth,
                "include_paths": list(include_paths), "exclude_paths": list(exclude_paths),
                "use_sitemap": use_sitemap, "remove_repeated_blocks": remove_repeated_blocks}
    if options:  # the extract's options as given (checked already); its spider defaults others
        spec["options"] = dict(options)
    if max_age:  # its pages may come from the page cache (collecting.page_cache)
        spec["max_age"] = max_age
    if change_tracking is not None:  # its pages compared with the tag's (collecting.changes)
        spec["change_tracking"] = {"tag": change_tracking.get("tag") or site_key(
            url if mode == "crawl" else (urls or [""])[0]) or "default"}
    return spec, max_running


def enqueue(db: Database, redis: Redis, collection_id: str, config: Config) -> None:
    """Enqueue the collection's first slice; if Redis cannot take it, the collection fails
    (``stop_reason: "unavailable"``, nothing was fetched or charged) and the RedisError is
    raised again."""
    try:
        enqueue_slice(redis, collection_id, config)
    except RedisError as exc:
        logger.error("Could not enqueue collection %s: %s", collection_id, exc)
        collections.fail_start(
            db, collection_id, stop_reason="unavailable",
            retention=config.collections.retention)
        raise
