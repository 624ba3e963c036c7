"""Monitors and their runs (docs/api.md, Monitors): the only code that speaks SQL about them.

A due slot is taken by one conditional ``UPDATE`` of the monitor's ``next_run_at``
(:func:`claim`): two schedulers never start one slot twice. A run's collection is created with
its run row in one transaction (:func:`storage.collections.create`), and the run takes the
collection's outcome in the transaction of its terminal transition (:func:`run_ended`).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session, defer

from core.formats import format_utc
from core.operations import MONITOR, MONITOR_DELETE, MONITOR_UPDATE
from storage import page_versions
from storage.db import Database
from storage.models import (
    LIVE_STATUSES,
    Account,
    Activity,
    Collection,
    Outcome,
    Plan,
    as_utc,
    utcnow,
)
from storage.monitor_models import Monitor, MonitorRun, MonitorStatus, RunStatus

#: Runs kept per monitor (older ones are deleted as new ones come).
KEPT_RUNS = 100
#: Why a monitor is paused: asked by its account; its account could not pay for a run.
ASKED, INSUFFICIENT_CREDITS = "paused", "insufficient_credits"


class MonitorLimit(Exception):
    """Raised by :func:`create` when the account has as many monitors as its plan allows."""

    def __init__(self, limit: int):
        super().__init__(f"This account has {limit} monitor(s), as many as its plan allows; "
                         "delete one first.")
        self.limit = limit


def new_id() -> str:
    return "mon_" + secrets.token_hex(12)


def create(db: Database, *, account_id: str, name: str | None, collection: Mapping[str, Any],
           schedule: Mapping[str, Any], webhook_url: str | None, notify: str,
           request_id: str | None = None) -> Monitor:
    """A new active monitor, due at once (its first run is the baseline), with its line of
    history; :class:`MonitorLimit` past the plan's ``max_monitors``."""
    now = utcnow()
    with db.write() as session:
        # The account's row locked first: two creations at once count one after the other.
        max_monitors = session.scalar(
            select(Plan.max_monitors).join(Account, Account.plan_id == Plan.id)
            .where(Account.id == account_id).with_for_update(of=Account)) or 0
        count = session.scalar(select(func.count()).select_from(Monitor)
                               .where(Monitor.account_id == account_id)) or 0
        if count >= max_monitors:
            raise MonitorLimit(max_monitors)
        row = Monitor(id=new_id(), account_id=account_id, name=name,
                      collection=json.dumps(collection), summary=json.dumps(summary(collection)),
                      schedule=json.dumps(schedule),
                      webhook_url=webhook_url, notify=notify, status=MonitorStatus.ACTIVE,
                      next_run_at=now.replace(microsecond=0), created_at=now, updated_at=now)
        session.add(row)
        _history(session, account_id, MONITOR.name, request_id, row)
    return row


def _history(session: Session, account_id: str, operation: str, request_id: str | None,
             row: Monitor) -> None:
    """The line of history of a change to ``row``, with the URL its runs start from."""
    body = json.loads(row.collection)
    session.add(Activity(account_id=account_id, operation=operation, credits=0,
                         status=Outcome.SUCCEEDED, request_id=request_id,
                         url=body.get("url") or (body.get("urls") or [None])[0]))


def summary(collection: Mapping[str, Any]) -> dict[str, Any]:
    """What a list of monitors shows of one's collection: small whatever the collection."""
    return {"mode": collection.get("mode"), "extract": collection.get("extract", "page"),
            "url": collection.get("url"), "url_count": len(collection.get("urls") or ())}


def get(db: Database, monitor_id: str, account_id: str) -> Monitor | None:
    with db.session() as session:
        return session.scalar(select(Monitor).where(Monitor.id == monitor_id,
                                                    Monitor.account_id == account_id))


def of_account(db: Database, account_id: str) -> list[Monitor]:
    """The account's monitors, newest first (all: a plan caps how many), without their
    collection bodies (a batch of 10,000 URLs each: the list shows their summaries)."""
    with db.session() as session:
        return list(session.scalars(
            select(Monitor).options(defer(Monitor.collection, raiseload=True))
            .where(Monitor.account_id == account_id)
            .order_by(Monitor.created_at.desc(), Monitor.id.desc())))


def update_monitor(db: Database, monitor_id: str, account_id: str, values: Mapping[str, Any],
                   request_id: str | None = None) -> Monitor | None:
    """Change the monitor's columns ``values`` (JSON ones already text), with the request's
    line of history; the row after, None if the account has no such monitor."""
    with db.write() as session:
        done = session.execute(update(Monitor).where(
            Monitor.id == monitor_id, Monitor.account_id == account_id).values(
            **values, updated_at=utcnow()))
        if done.rowcount != 1:
            return None
        row = session.scalar(select(Monitor).where(Monitor.id == monitor_id))
        _history(session, account_id, MONITOR_UPDATE.name, request_id, row)
        return row


def delete_monitor(db: Database, monitor_id: str, account_id: str,
                   request_id: str | None = None) -> bool:
    """Delete the monitor and its runs (a run under way finishes as a plain collection)."""
    with db.write() as session:
        row = session.scalar(select(Monitor).where(Monitor.id == monitor_id,
                                                   Monitor.account_id == account_id))
        if row is None:
            return False
        _history(session, account_id, MONITOR_DELETE.name, request_id, row)
        session.execute(delete(MonitorRun).where(MonitorRun.monitor_id == monitor_id))
        session.execute(delete(Monitor).where(Monitor.id == monitor_id))
    return True


def latest_runs(db: Database, monitor_ids: Sequence[str], limit: int
                ) -> dict[str, list[MonitorRun]]:
    """The last ``limit`` runs of each monitor, newest first (one query)."""
    if not monitor_ids:
        return {}
    rank = func.row_number().over(partition_by=MonitorRun.monitor_id,
                                  order_by=MonitorRun.id.desc()).label("rank")
    ranked = select(MonitorRun.id, rank).where(
        MonitorRun.monitor_id.in_(list(monitor_ids))).subquery()
    with db.session() as session:
        rows = session.scalars(select(MonitorRun).join(ranked, ranked.c.id == MonitorRun.id)
                               .where(ranked.c.rank <= limit).order_by(MonitorRun.id.desc()))
        found: dict[str, list[MonitorRun]] = {monitor_id: [] for monitor_id in monitor_ids}
        for row in rows:
            found[row.monitor_id].append(row)
    return found


def due(db: Database, now: datetime, limit: int = 200) -> list[Monitor]:
    """Active monitors whose next run is due, the most overdue first."""
    with db.session() as session:
        return list(session.scalars(
            select(Monitor).where(Monitor.status == MonitorStatus.ACTIVE,
                                  Monitor.next_run_at <= now)
            .order_by(Monitor.next_run_at).limit(limit)))


def claim(db: Database, monitor: Monitor, next_run_at: datetime, now: datetime) -> bool:
    """Take the monitor's due slot (it was due at ``monitor.next_run_at``), moving it to
    ``next_run_at``; whether this call took it (exactly one caller does)."""
    with db.session() as session:
        done = session.execute(update(Monitor).where(
            Monitor.id == monitor.id, Monitor.status == MonitorStatus.ACTIVE,
            Monitor.next_run_at == monitor.next_run_at).values(
            next_run_at=next_run_at, last_run_at=now))
        return done.rowcount == 1


def live_run(db: Database, monitor_id: str) -> str | None:
    """The id of the monitor's collection still queued or running, if any."""
    with db.session() as session:
        return session.scalar(select(Collection.id).where(
            Collection.monitor_id == monitor_id, Collection.status.in_(LIVE_STATUSES))
            .limit(1))


def add_run(session: Session, monitor_id: str, due_at: datetime, *, status: RunStatus,
            collection_id: str | None = None, reason: str | None = None,
            message: str | None = None) -> None:
    """A run of the monitor, in ``session``'s transaction; runs past :data:`KEPT_RUNS` go."""
    session.add(MonitorRun(monitor_id=monitor_id, due_at=due_at, created_at=utcnow(),
                           collection_id=collection_id, status=status, reason=reason,
                           message=message, pages=0, credits_used=0))
    session.flush()
    kept = select(MonitorRun.id).where(MonitorRun.monitor_id == monitor_id).order_by(
        MonitorRun.id.desc()).offset(KEPT_RUNS).limit(1)
    oldest_dropped = session.scalar(kept)
    if oldest_dropped is not None:
        session.execute(delete(MonitorRun).where(MonitorRun.monitor_id == monitor_id,
                                                 MonitorRun.id <= oldest_dropped))


def skip(db: Database, monitor_id: str, due_at: datetime, reason: str, message: str, *,
         pause: bool = False) -> None:
    """Record that the slot due at ``due_at`` started nothing, and why; ``pause``: the
    monitor is paused for that reason too (it resumes by PATCH)."""
    with db.session() as session:
        add_run(session, monitor_id, due_at, status=RunStatus.SKIPPED, reason=reason,
                message=message)
        if pause:
            session.execute(update(Monitor).where(Monitor.id == monitor_id).values(
                status=MonitorStatus.PAUSED, paused_reason=reason, updated_at=utcnow()))


def run_ended(session: Session, row: Collection) -> None:
    """In the transaction of the terminal transition of ``row``, a monitor's run: its run
    takes the collection's outcome."""
    if row.monitor_id is None:
        return
    session.execute(update(MonitorRun).where(MonitorRun.collection_id == row.id).values(
        status=row.status, reason=row.stop_reason, changes=row.changes, pages=row.succeeded,
        credits_used=row.credits_used, finished_at=row.finished_at))


def run_body(run: MonitorRun) -> dict[str, Any]:
    """A run as the API shows it (docs/api.md, Monitors)."""
    return {
        "collection_id": run.collection_id, "status": run.status, "reason": run.reason,
        "message": run.message, "due_at": format_utc(as_utc(run.due_at)),
        "started_at": format_utc(as_utc(run.created_at)) if run.collection_id else None,
        "finished_at": format_utc(as_utc(run.finished_at)) if run.finished_at else None,
        "pages": run.pages, "credits_used": run.credits_used,
        "changes": page_versions.counted(run.changes),
    }


def monitor_body(row: Monitor, runs: Sequence[MonitorRun], *, full: bool = True
                 ) -> dict[str, Any]:
    """The monitor object (docs/api.md, Monitors) with ``runs``, newest first; not ``full``
    (a list), its collection's summary instead of its body."""
    return {
        "id": row.id, "name": row.name, "status": row.status,
        "paused_reason": row.paused_reason, "schedule": json.loads(row.schedule),
        "notify": row.notify, "webhook_url": row.webhook_url,
        "collection": json.loads(row.collection) if full else json.loads(row.summary or "{}"),
        "next_run_at": None if row.status == MonitorStatus.PAUSED
        else format_utc(as_utc(row.next_run_at)),
        "last_run_at": format_utc(as_utc(row.last_run_at)) if row.last_run_at else None,
        "created_at": format_utc(as_utc(row.created_at)),
        "updated_at": format_utc(as_utc(row.updated_at)),
        "runs": [run_body(run) for run in runs],
    }
