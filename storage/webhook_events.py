"""The events of a collection's life besides its end, and of an account: each written in the
transaction of what it tells, into the outbox of :mod:`storage.webhooks` (same signing,
claims and retries).

- ``collection.started``: with the ``queued`` → ``running`` transition
  (:func:`storage.collections.start`);
- ``collection.page``: one per page result stored, with the page
  (:func:`storage.collection_store.store`, inside its guard against a page stored twice, so
  one per page whatever the retries), its result read at each attempt
  (:func:`with_results`);
- ``account.low_balance``: with the spend that took the balance below the account's
  threshold (:mod:`storage.ledger`).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, insert, select, update
from sqlalchemy.orm import Session

from core import cursors
from core.contract import BASE_PATH
from core.formats import format_utc
from storage import webhooks
from storage.models import Account, Collection, CollectionResult, WebhookEvent, utcnow

#: A page event carries its result inline up to this many bytes of JSON, else ``null`` and
#: only its ``result_url``.
INLINE_RESULT_BYTES = 64 * 1024
_RESULTS = CollectionResult.__table__
_RESULT_COLUMNS = tuple(_RESULTS.c[name] for name in (
    "seq", "url", "final_url", "status", "status_code", "fetched_at", "error", "data",
    "change"))


def started_event(session: Session, row: Collection) -> bool:
    """In the transaction that started ``row``: its ``collection.started`` event, if it asked
    for one; whether it did."""
    if webhooks.STARTED not in webhooks.events_of(row) or row.webhook_url is None:
        return False
    payload = {"id": webhooks.event_id(row.id) + "_started", "event": webhooks.STARTED,
               "created_at": format_utc(row.started_at or utcnow()),
               "collection_id": row.id}
    session.add(WebhookEvent(**webhooks.outbox_row(payload, row.webhook_url, row.account_id,
                                                   row.id)))
    return True


def wants_pages(webhook_url: str | None, webhook_events: str | None) -> bool:
    """Whether a collection with these columns asked for ``collection.page``."""
    return bool(webhook_url and webhook_events
                and webhooks.PAGE in webhook_events.split(","))


def page_events(session: Session, collection_id: str, account_id: str, url: str,
                results: Sequence[dict[str, Any]]) -> int:
    """In the transaction that stored ``results`` (the columns of new
    :class:`~storage.models.CollectionResult` rows): one ``collection.page`` event each, in
    one statement; how many. The rows hold the page, not its result (:func:`page_payload`)."""
    if not results:
        return 0
    now = utcnow()
    created = format_utc(now)
    rows = []
    for result in results:
        row = webhooks.outbox_row({"id": "", "event": webhooks.PAGE}, url, account_id,
                                  collection_id, now)
        row["id"], row["payload"] = page_payload(collection_id, result, created)
        rows.append(row)
    session.execute(insert(WebhookEvent), rows)
    return len(rows)


def page_payload(collection_id: str, result: dict[str, Any], created_at: str
                 ) -> tuple[str, str]:
    """A stored page's event id and body as the outbox keeps it: the page's fields, and
    ``"result":null`` last, in place of the result that :func:`with_results` reads from the
    stored result at each attempt. Why not the result itself: it is most of the event's
    bytes, already stored once, and an outbox row is written three times (stored, claimed,
    recorded; SQLite rewrites a whole row on each), so a copy cost every page four times its
    result's bytes in writes. The row stays about 1 KB."""
    seq = result["seq"]
    error = json.loads(result["error"]) if result["error"] else None
    event = f"{webhooks.event_id(collection_id)}_p{seq}"
    payload: dict[str, Any] = {
        "id": event, "event": webhooks.PAGE, "created_at": created_at,
        "collection_id": collection_id,
        "page": {"seq": seq, "url": result["url"], "final_url": result["final_url"],
                 "status": result["status"], "status_code": result["status_code"],
                 "error": error["error"] if error else None,
                 "error_message": error["message"] if error else None},
        "result_url": result_path(collection_id, seq), "result": None}
    return event, webhooks.render(payload)


#: How a page event's stored body ends while its result is still to be read.
_NO_RESULT = ',"result":null}'
_PAGE_ID = re.compile(r"_p(\d+)$")


def with_results(session: Session | Connection,
                 events: Sequence[tuple[str, str, str | None, str]]) -> dict[str, str]:
    """The bodies to send of ``events`` (id, event, collection id, stored body): a page
    event's with its result as ``/results`` gives it now, read from the stored result (one
    query per collection), inline up to :data:`INLINE_RESULT_BYTES` of JSON (else ``null``,
    and its ``result_url``); any other as stored. A result stored once is not encoded again:
    its ``data`` goes in as stored."""
    wanted: dict[str | None, dict[int, str]] = {}
    bodies: dict[str, str] = {}
    for event_id, event, collection_id, body in events:
        bodies[event_id] = body
        found = _PAGE_ID.search(event_id)
        if event == webhooks.PAGE and found and body.endswith(_NO_RESULT):
            wanted.setdefault(collection_id, {})[int(found.group(1))] = event_id
    for collection_id, by_seq in wanted.items():
        for row in session.execute(select(*_RESULT_COLUMNS).where(
                _RESULTS.c.collection_id == collection_id, _RESULTS.c.seq.in_(list(by_seq)))):
            event_id = by_seq[row.seq]
            shown = _result_json(row)
            if len(shown) <= INLINE_RESULT_BYTES and len(shown.encode()) <= INLINE_RESULT_BYTES:
                bodies[event_id] = bodies[event_id][:-len("null}")] + shown + "}"
    return bodies


def _result_json(row: Any) -> str:
    """A stored result as ``/results`` shows it, in JSON: ``data`` spliced in as stored."""
    error = json.loads(row.error) if row.error else None
    rest = webhooks.render({
        "data": None, "url": row.url, "final_url": row.final_url, "status": row.status,
        "status_code": row.status_code, "fetched_at": row.fetched_at,
        "error": {"error": error["error"], "message": error["message"]} if error else None,
        "change": json.loads(row.change) if row.change else None})
    return '{"data":' + (row.data or "null") + rest[len('{"data":null'):]


def result_path(collection_id: str, seq: int) -> str:
    """The path of ``/results`` that answers the result at position ``seq`` alone."""
    return (f"{BASE_PATH}/collections/{collection_id}/results"
            f"?cursor={cursors.encode(cursors.RESULTS, seq - 1)}&limit=1")


def low_balance_payload(account_id: str, balance: int, threshold: int) -> dict[str, Any]:
    """The ``account.low_balance`` event of a fall below ``threshold``."""
    return {"id": "evt_" + secrets.token_hex(12), "event": webhooks.LOW_BALANCE,
            "created_at": format_utc(utcnow()), "account_id": account_id,
            "balance": balance, "threshold": threshold}


_ACCOUNTS = Account.__table__


def after_debit(db: Session | Connection, account_id: str, balance: int, amount: int,
                threshold: int | None, notified: bool) -> bool:
    """In the transaction that took ``amount`` credits, leaving ``balance`` (the debit
    returned the account's threshold and mark with it: nothing more is read): when that
    crossed ``threshold`` downwards and the account was not told yet, mark it told and write
    its ``account.low_balance`` event (to its ``webhook_url``; none without one). One
    conditional ``UPDATE``, only on the crossing; whether an event was written."""
    if threshold is None or notified or not balance < threshold <= balance + amount:
        return False
    told = db.execute(
        update(_ACCOUNTS)
        .where(_ACCOUNTS.c.id == account_id, _ACCOUNTS.c.low_balance_notified.is_(False),
               _ACCOUNTS.c.webhook_url.is_not(None))
        .values(low_balance_notified=True).returning(_ACCOUNTS.c.webhook_url)).first()
    if told is None:
        return False
    payload = low_balance_payload(account_id, balance, threshold)
    db.execute(insert(WebhookEvent.__table__),
               [webhooks.outbox_row(payload, told[0], account_id, None)])
    return True


def rearm(session: Session, account_id: str) -> None:
    """In a grant's transaction: a balance back at its threshold may be told again when it
    next falls below (a released reservation does not re-arm: a balance flapping around the
    threshold would send an event at each flap)."""
    session.execute(update(_ACCOUNTS).where(
        _ACCOUNTS.c.id == account_id, _ACCOUNTS.c.low_balance_notified.is_(True),
        _ACCOUNTS.c.balance >= _ACCOUNTS.c.low_balance_threshold)
        .values(low_balance_notified=False))
