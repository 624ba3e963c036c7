"""The events of a collection's life besides its end, and of an account: each written in the
transaction of what it tells, into the outbox of :mod:`storage.webhooks` (same signing,
claims and retries).

- ``collection.started``: with the ``queued`` → ``running`` transition
  (:func:`storage.collections.start`);
- ``collection.page``: one per page result stored, with the page
  (:func:`storage.collection_store.store`, inside its guard against a page stored twice, so
  one per page whatever the retries);
- ``account.low_balance``: with the spend that took the balance below the account's
  threshold (:mod:`storage.ledger`).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, insert, update
from sqlalchemy.orm import Session

from core import cursors
from core.contract import BASE_PATH
from core.formats import format_utc
from storage import collection_results, webhooks
from storage.models import Account, Collection, CollectionResult, WebhookEvent, utcnow

#: A page event carries its result inline up to this many bytes of JSON, else ``null`` and
#: only its ``result_url``.
INLINE_RESULT_BYTES = 64 * 1024


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
    one statement; how many."""
    if not results:
        return 0
    now = utcnow()
    created = format_utc(now)
    rows = [webhooks.outbox_row(page_payload(collection_id, result, created), url,
                                account_id, collection_id, now) for result in results]
    session.execute(insert(WebhookEvent), rows)
    return len(rows)


def page_payload(collection_id: str, result: dict[str, Any], created_at: str
                 ) -> dict[str, Any]:
    """A stored page's event: the page, and its result as ``/results`` gives it (``null``
    past :data:`INLINE_RESULT_BYTES`; ``result_url`` fetches it either way)."""
    seq = result["seq"]
    body = collection_results.body(CollectionResult(**result))
    error = body["error"]
    inline: dict[str, Any] | None = body
    if len(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
           ) > INLINE_RESULT_BYTES:
        inline = None
    return {
        "id": f"{webhooks.event_id(collection_id)}_p{seq}", "event": webhooks.PAGE,
        "created_at": created_at, "collection_id": collection_id,
        "page": {"seq": seq, "url": body["url"], "final_url": body["final_url"],
                 "status": body["status"], "status_code": body["status_code"],
                 "error": error["error"] if error else None,
                 "error_message": error["message"] if error else None},
        "result": inline, "result_url": result_path(collection_id, seq)}


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
