"""``/collections``: batches and crawls run in the background by the workers.

The API only writes the collection's row (with its line of history) and enqueues its first
slice job, in that order (:mod:`collecting.start`): the row exists before any worker can look
for it, so a client never gets "not found" right after creating one; a cancel is
:func:`collecting.control.cancel`. Everything else — seeding the frontier, fetching, storing,
charging, finishing — is the workers' (:mod:`collecting.slice`). This module maps those
functions' refusals to the API's errors and its history.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from flask import current_app, g
from flask_smorest import Blueprint
from redis.exceptions import RedisError

from api import cursors, exports, inflight
from api.auth import authenticated, batch_body, bodyless
from api.errors import ApiError
from api.extensions import db, redis, source_policy
from api.openapi import AUTHENTICATED, BASE_PATH, documented
from api.operations import history_written, refuse
from api.schemas.collection_lists import (
    ChangesPageSchema,
    ChangesQuerySchema,
    ResultsPageSchema,
    ResultsQuerySchema,
    SkippedPageSchema,
    SkippedQuerySchema,
)
from api.schemas.collections import (
    CollectionPageSchema,
    CollectionRequestSchema,
    CollectionSchema,
    PageQuerySchema,
)
from collecting import control
from collecting import start as starting
from collecting.frontier import Frontier
from core import cursors as core_cursors
from core.config import Config
from core.operations import COLLECTION
from core.policy import PolicyRefusal
from storage import (
    collection_changes,
    collection_results,
    collection_skips,
    collections,
    webhooks,
)
from storage.ledger import InsufficientCredits
from storage.models import LIVE_STATUSES, Collection

logger = logging.getLogger(__name__)

OPERATION = collections.OPERATION
#: The kinds of the collections' cursors (:mod:`api.cursors`): the list, a results page, a
#: page of skipped URLs, a page of changes.
LIST_CURSOR, RESULTS_CURSOR, SKIPPED_CURSOR, CHANGES_CURSOR = "c", core_cursors.RESULTS, "s", "h"
#: Bytes of results one results page holds at most (past its first result, always given):
#: a page is written to its client by one API thread, within the worker's write timeout.
RESULTS_PAGE_BYTES = 2 * 1024 * 1024
#: How long a results page's slot of the account is held at most (a process killed while
#: writing it).
RESULTS_LEASE = timedelta(minutes=5)

blp = authenticated(Blueprint("collections", __name__, url_prefix=BASE_PATH,
                              description="Batches of URLs and crawls of one site, run in the "
                                          "background: 1 credit per successful page."))


def _config() -> Config:
    return current_app.config["WEBDATA"]


def _retention() -> timedelta:
    return _config().collections.retention


def position_text(position: tuple[datetime, str]) -> str:
    """A place in the list of collections (``storage.collections.page``) as text: inside the
    API's cursor, and as it is in the console's "Older" link."""
    return f"{position[0].isoformat()}|{position[1]}"


def parse_position(text: str) -> tuple[datetime, str] | None:
    """The place :func:`position_text` wrote, or None for text it did not write."""
    at, _, last = text.partition("|")
    try:
        return (datetime.fromisoformat(at), last) if at and last else None
    except ValueError:
        return None


def bodies(rows: list[Collection]) -> list[dict[str, Any]]:
    """The collection objects (docs/api.md, Collections), with the ``webhook`` delivery of
    those that asked."""
    shown = webhooks.deliveries(db(), rows)
    return [{**collections.collection_body(row), "webhook": shown.get(row.id)} for row in rows]


def body(row: Collection) -> dict[str, Any]:
    return bodies([row])[0]


def _own(collection_id: str) -> Collection:
    row = collections.get(db(), collection_id, g.principal.account_id)
    if row is None:
        raise ApiError("not_found", "No such collection.")
    return row


@blp.route("/collections", methods=["POST"])
@batch_body
@documented(blp, "createCollection", CollectionSchema,
            (*AUTHENTICATED, 400, 402, 403, 413, 422), success=202, operation=COLLECTION,
            descriptions={
                413: "too_many_urls: the batch has more URLs than the plan's `max_batch_urls`; "
                     "or body_too_large: the body is over `MAX_BODY_BYTES` plus 2,052 bytes "
                     "for each URL the plan's `max_batch_urls` allows.",
                429: "rate_limited (the plan's requests per minute), or collection_limit: the "
                     "account already runs its plan's `max_running_collections`.",
                402: "insufficient_credits: the balance cannot pay for the first page."})
@blp.arguments(CollectionRequestSchema)
def create(args: dict):
    """Start a collection.

    A batch fetches each URL of `urls` once; a crawl follows links within the start URL's site
    (and its sitemap) up to `max_depth` hops and `max_pages` pages. Answers 202 with the
    collection at once; the pages are fetched in the background. 1 credit per successful page,
    booked as it is stored; failed pages, duplicates and anything after a cancel cost nothing.
    """
    return body(start(args)), 202


def start(args: dict) -> Collection:
    """Create the collection ``args`` (a loaded :class:`CollectionRequestSchema`) for the
    account being served, with its line of history, and enqueue its first slice; or raise the
    ApiError of the refusal, recorded in the history. The API and the console both start
    collections here."""
    url = args.get("url")
    if args["webhook_url"]:
        try:
            source_policy().check_url(args["webhook_url"])
        except PolicyRefusal as exc:
            raise refuse(OPERATION, ApiError(
                "validation_error", "Invalid request: check webhook_url.",
                errors={"webhook_url": [exc.message]}), url=url) from None
    try:
        row = starting.create(db(), source_policy(), account_id=g.principal.account_id,
                              request_id=g.request_id, **starting.arguments(args))
    except starting.TooManyUrls as exc:
        raise refuse(OPERATION, ApiError("too_many_urls", str(exc))) from None
    except starting.TooManyPages as exc:
        raise refuse(OPERATION, ApiError(
            "validation_error", "Invalid request: check max_pages.",
            errors={"max_pages": [str(exc)]}), url=url) from None
    except PolicyRefusal as exc:
        raise refuse(OPERATION, ApiError(exc.code, exc.message, details={
            "url": url, "target_status": None}), url=url) from None
    except collections.CollectionLimit as exc:
        raise refuse(OPERATION, ApiError("collection_limit", str(exc)), url=url) from None
    except InsufficientCredits as exc:
        raise refuse(OPERATION, ApiError(
            "insufficient_credits", f"A collection needs at least 1 credit for its first page; "
            f"the balance is {exc.balance}."), url=url) from None
    history_written()  # by collections.create
    try:
        starting.enqueue(db(), redis(), row.id, _config())
    except RedisError:
        raise ApiError("unavailable", "The job queue is unreachable; nothing was charged. "
                                      "Try again shortly.") from None
    return row


@blp.route("/collections", methods=["GET"])
@documented(blp, "listCollections", CollectionPageSchema, (*AUTHENTICATED, 422))
@blp.arguments(PageQuerySchema, location="query")
def list_collections(args: dict):
    """Your collections, newest first; pass `next_cursor` back for more."""
    before = None
    if args["cursor"]:
        before = parse_position(cursors.decode(LIST_CURSOR, args["cursor"]))
        if before is None:
            raise cursors.invalid()
    rows, position = collections.page(db(), g.principal.account_id, before=before,
                                      limit=args["limit"])
    cursor = cursors.encode(LIST_CURSOR, position_text(position)) if position else None
    return {"collections": bodies(rows), "next_cursor": cursor}


@blp.route("/collections/<collection_id>", methods=["GET"])
@documented(blp, "getCollection", CollectionSchema, (*AUTHENTICATED, 404))
def get_collection(collection_id: str):
    """A collection's status and progress (at most about a second old)."""
    return body(_own(collection_id))


@blp.route("/collections/<collection_id>/cancel", methods=["POST"])
@bodyless
@documented(blp, "cancelCollection", CollectionSchema,
            (*AUTHENTICATED, 400, 404, 409, 413, 422), descriptions={
                400: "bad_request: the body, if any, is not JSON.",
                422: "validation_error."})
def cancel(collection_id: str):
    """Cancel a collection: answered once no further page will be fetched or charged.

    Pages stored before stay (and stay charged). Cancelling a cancelled collection answers the
    same again; a completed or failed one is a 409 conflict.
    """
    return body(stop(collection_id))


def stop(collection_id: str) -> Collection:
    """Cancel the account's collection ``collection_id`` (:func:`collecting.control.cancel`:
    its line of history, the slices told, its webhook announced); ApiError 404 or 409. The
    API's cancel and the console's."""
    try:
        row = control.cancel(db(), redis(), collection_id, g.principal.account_id,
                             retention=_retention(), request_id=g.request_id)
    except collections.NotCancellable as exc:
        raise ApiError("conflict", f"This collection is {exc.args[0]} already; only a queued "
                                   "or running collection can be cancelled.") from None
    if row is None:
        raise ApiError("not_found", "No such collection.")
    history_written()  # by collections.cancel
    return row


@blp.route("/collections/<collection_id>/results", methods=["GET"])
@documented(blp, "listCollectionResults", ResultsPageSchema, (*AUTHENTICATED, 404, 410, 422))
@blp.arguments(ResultsQuerySchema, location="query")
def results(args: dict, collection_id: str):
    """The collection's page results in completion order, each exactly once across pages.

    Works while the collection runs: keep passing `next_cursor` back; it is null once the
    collection is final and everything was returned. A page holds at most `limit` results
    and about 2 MiB of them (a larger first result comes alone), so a page may hold fewer
    than `limit` while more follow. Each page counts as one of the account's requests in
    flight (the plan's `max_concurrent_requests`) until its client has read it.
    """
    row = readable(collection_id)
    selection = selection_of(row, args["field_names"])
    principal = g.principal
    inflight.hold_until_sent(redis(), principal.account_id, f"results:{g.request_id}",
                             principal.max_concurrent_requests, lease=RESULTS_LEASE)
    final = row.status not in LIVE_STATUSES  # read first: nothing is stored after it
    after = cursors.decode_id(RESULTS_CURSOR, args["cursor"], lowest=0) if args["cursor"] else 0
    rows, more = collection_results.page(db(), collection_id, after=after, limit=args["limit"],
                                         status=args["status"], max_bytes=RESULTS_PAGE_BYTES)
    position = rows[-1].seq if rows else after
    cursor = None if final and more is None else cursors.encode(RESULTS_CURSOR, position)
    results = [collection_results.body(r) for r in rows]
    if selection is not None:
        results = [exports.pick(result, selection) for result in results]
    return {"results": results, "next_cursor": cursor}


@blp.route("/collections/<collection_id>/skipped", methods=["GET"])
@documented(blp, "listCollectionSkipped", SkippedPageSchema, (*AUTHENTICATED, 404, 410, 422))
@blp.arguments(SkippedQuerySchema, location="query")
def skipped(args: dict, collection_id: str):
    """The URLs the collection saw and did not fetch, with the reason, in the order they were
    decided, each exactly once across pages.

    Works while the collection runs, as the results do: keep passing `next_cursor` back; it
    is null once the collection is final, the URLs a stop left are recorded, and every URL
    kept was returned. The first 100,000 are kept; `progress.skipped` counts them all.
    """
    row = readable(collection_id)
    # read first: once final, and once a stop's leftovers are recorded, nothing comes after
    final = row.status not in LIVE_STATUSES and not _leftovers(collection_id)
    after = cursors.decode_id(SKIPPED_CURSOR, args["cursor"], lowest=0) if args["cursor"] else 0
    rows, more = collection_skips.page(db(), collection_id, after=after, limit=args["limit"],
                                       reason=args["reason"])
    position = rows[-1].seq if rows else after
    cursor = None if final and more is None else cursors.encode(SKIPPED_CURSOR, position)
    return {"skipped": [collection_skips.body(r) for r in rows], "next_cursor": cursor}


@blp.route("/collections/<collection_id>/changes", methods=["GET"])
@documented(blp, "listCollectionChanges", ChangesPageSchema,
            (*AUTHENTICATED, 404, 409, 410, 422), descriptions={
                409: "conflict: the collection does not track changes (it was created "
                     "without `change_tracking`)."})
@blp.arguments(ChangesQuerySchema, location="query")
def changes(args: dict, collection_id: str):
    """What changed in the pages of a collection with change tracking, against the latest
    earlier collection of its tag.

    Its results' changes in completion order (`new`, `same`, `changed` with a unified diff),
    then, once the collection completed, the pages of earlier collections it did not find
    again (`removed`). `status` filters, comma-separated or repeated; by default every change
    but `same`. Works while the collection runs: keep passing `next_cursor` back; it is null
    once the collection is final and every change was returned. A page holds at most `limit`
    changes and about 2 MiB of them, and counts as one of the account's requests in flight
    until its client has read it. Free; no line of history. A collection without change
    tracking is a 409.
    """
    row = readable(collection_id)
    if not collections.tracked(row):
        raise ApiError("conflict", "This collection does not track changes: it was created "
                                   "without change_tracking.")
    principal = g.principal
    inflight.hold_until_sent(redis(), principal.account_id, f"changes:{g.request_id}",
                             principal.max_concurrent_requests, lease=RESULTS_LEASE)
    final = row.status not in LIVE_STATUSES  # read first: nothing is stored after it
    after = collection_changes.Position()
    if args["cursor"]:
        after = collection_changes.Position.parse(cursors.decode(CHANGES_CURSOR,
                                                                 args["cursor"]))
        if after is None or after.seq >= cursors.MAX_ROW_ID:
            raise cursors.invalid()
    entries, position = collection_changes.page(
        db(), collection_id, statuses=args["status"], final=final, after=after,
        limit=args["limit"], max_bytes=RESULTS_PAGE_BYTES)
    cursor = None if position is None else cursors.encode(CHANGES_CURSOR, position.text())
    return {"changes": entries, "next_cursor": cursor}


def _leftovers(collection_id: str) -> int:
    """URLs a stopped collection still has in its frontier: recorded as skips in a moment
    (:mod:`collecting.skips`); 0 when Redis cannot tell."""
    try:
        return Frontier(redis(), collection_id).left()
    except RedisError:
        return 0


def readable(collection_id: str) -> Collection:
    """The account's collection, while its results may still be downloaded (else 404, 410)."""
    row = _own(collection_id)
    if collections.expired(row):
        raise ApiError("expired", "This collection's results are past their download window.")
    return row


def selection_of(row: Collection, names: list[str] | None) -> exports.Selection | None:
    """What ``fields`` keeps of each result of ``row`` (None: everything); 422 naming any name
    its results do not have."""
    if not names:
        return None
    try:
        return exports.select(row.extract, names, tracked=collections.tracked(row))
    except exports.UnknownFields as exc:
        raise ApiError("validation_error", "Invalid request: check fields.",
                       errors={"fields": [str(exc)]}) from None
