"""``/monitors``: a collection re-run on a schedule, each run compared with the one before.

The API writes and changes the monitor's row; the runs are started by the workers when due
(:mod:`collecting.monitors`) as ordinary collections. A monitor's collection is checked when
it is created as ``POST /collections`` checks one (the same refusals), so a monitor that is
created can run.
"""

from __future__ import annotations

import json
from typing import Any

from flask import g
from flask_smorest import Blueprint

from api.auth import authenticated, batch_body
from api.errors import ApiError
from api.extensions import db, source_policy
from api.openapi import AUTHENTICATED, BASE_PATH, documented
from api.operations import history_written, refuse
from api.schemas.monitors import (
    MonitorDeletedSchema,
    MonitorListSchema,
    MonitorRequestSchema,
    MonitorSchema,
    MonitorUpdateSchema,
)
from collecting import start as starting
from core.operations import MONITOR
from core.policy import PolicyRefusal
from core.schedules import Schedule
from storage import accounts, monitors
from storage.models import as_utc, utcnow
from storage.monitor_models import Monitor, MonitorStatus

blp = authenticated(Blueprint("monitors", __name__, url_prefix=BASE_PATH,
                              description="Collections re-run on a schedule: each run is a "
                                          "collection with change tracking, billed per page."))

#: Runs shown with one monitor; with each monitor of a list, its last.
RUNS_SHOWN = 20
NOT_FOUND = {404: "not_found: no such monitor on this account."}


def _body(row: Monitor, runs: int = RUNS_SHOWN) -> dict[str, Any]:
    return monitors.monitor_body(row, monitors.latest_runs(db(), [row.id], runs)[row.id])


def _own(monitor_id: str) -> Monitor:
    row = monitors.get(db(), monitor_id, g.principal.account_id)
    if row is None:
        raise ApiError("not_found", "No such monitor.")
    return row


def _check_webhook(url: str | None) -> ApiError | None:
    """The 422 of a webhook URL the source policy refuses, None for a good one (or none)."""
    if url:
        try:
            source_policy().check_url(url)
        except PolicyRefusal as exc:
            return ApiError("validation_error", "Invalid request: check webhook_url.",
                            errors={"webhook_url": [exc.message]})
    return None


@blp.route("/monitors", methods=["POST"])
@batch_body
@documented(blp, "createMonitor", MonitorSchema, (*AUTHENTICATED, 400, 403, 413, 422),
            success=201, descriptions={
                403: "source_policy: the collection's start URL is refused; or "
                     "monitor_limit: the account has its plan's `max_monitors` already.",
                413: "too_many_urls: the batch has more URLs than the plan's "
                     "`max_batch_urls`; or body_too_large."})
@blp.arguments(MonitorRequestSchema)
def create(args: dict):
    """Create a monitor.

    Its first run starts at once (within `SWEEP_INTERVAL`, a minute by default): it is the
    baseline the next runs are compared with. Each run is a collection of `collection` with
    change tracking under the monitor's id, billed 1 credit per stored page as any collection.
    """
    return _body(create_monitor(args)), 201


def create_monitor(args: dict) -> Monitor:
    """Create the monitor ``args`` (a loaded :class:`MonitorRequestSchema`) for the account
    being served, with its line of history; or raise the ApiError of the refusal, recorded in
    the history. The API and the console both create monitors here."""
    collection = args["collection"]
    refused = _check_webhook(args.get("webhook_url"))
    if refused is not None:
        raise refuse(MONITOR.name, refused)
    url = collection.get("url")
    try:
        starting.prepare(db(), source_policy(), account_id=g.principal.account_id,
                         **{name: value for name, value in starting.arguments(collection).items()
                            if name not in ("extract", "webhook_url")})
    except starting.TooManyUrls as exc:
        raise refuse(MONITOR.name, ApiError("too_many_urls", str(exc))) from None
    except starting.TooManyPages as exc:
        raise refuse(MONITOR.name, ApiError(
            "validation_error", "Invalid request: check collection.max_pages.",
            errors={"collection": {"max_pages": [str(exc)]}}), url=url) from None
    except PolicyRefusal as exc:
        raise refuse(MONITOR.name, ApiError(exc.code, exc.message, details={
            "url": url, "target_status": None}), url=url) from None
    try:
        row = monitors.create(
            db(), account_id=g.principal.account_id, name=args.get("name"),
            collection={name: value for name, value in collection.items()
                        if name not in ("webhook_url", "change_tracking")},
            schedule=Schedule.of(args["schedule"]).as_dict(),
            webhook_url=args.get("webhook_url"), notify=args.get("notify", "changes"),
            request_id=g.request_id)
    except monitors.MonitorLimit as exc:
        raise refuse(MONITOR.name, ApiError("monitor_limit", str(exc)), url=url) from None
    history_written()  # by monitors.create
    return row


@blp.route("/monitors", methods=["GET"])
@documented(blp, "listMonitors", MonitorListSchema, AUTHENTICATED)
def list_monitors():
    """Your monitors, newest first, each with its last run and, for its collection, a summary
    (`mode`, `extract`, `url`, `url_count`): `GET /monitors/{id}` has the whole body."""
    rows = monitors.of_account(db(), g.principal.account_id)
    runs = monitors.latest_runs(db(), [row.id for row in rows], 1)
    return {"monitors": [monitors.monitor_body(row, runs[row.id], full=False) for row in rows]}


@blp.route("/monitors/<monitor_id>", methods=["GET"])
@documented(blp, "getMonitor", MonitorSchema, (*AUTHENTICATED, 404), descriptions=NOT_FOUND)
def get_monitor(monitor_id: str):
    """A monitor with its last 20 runs, newest first."""
    return _body(_own(monitor_id))


@blp.route("/monitors/<monitor_id>", methods=["PATCH"])
@documented(blp, "updateMonitor", MonitorSchema, (*AUTHENTICATED, 400, 402, 404, 413, 422),
            descriptions={**NOT_FOUND, 402: "insufficient_credits: resuming needs a balance "
                                            "that pays for a page."})
@blp.arguments(MonitorUpdateSchema)
def update(args: dict, monitor_id: str):
    """Pause or resume a monitor, or change its schedule, webhook, notify or name.

    A new schedule takes effect from the last run (or from now, before the first). A monitor
    resumed after its next slot passed runs once, at once.
    """
    return _body(change_monitor(monitor_id, args))


def change_monitor(monitor_id: str, args: dict) -> Monitor:
    """Apply the change ``args`` (a loaded :class:`MonitorUpdateSchema`) to the account's
    monitor, with its line of history; ApiError 404, 402 (resuming without credits). The API
    and the console both change monitors here."""
    row = _own(monitor_id)
    refused = _check_webhook(args.get("webhook_url"))
    if refused is not None:  # a refused change writes no history: only a POST's refusals do
        raise refused
    values: dict[str, Any] = {name: args[name] for name in ("name", "webhook_url", "notify")
                              if name in args}
    if "schedule" in args:
        schedule = Schedule.of(args["schedule"])
        values["schedule"] = json.dumps(schedule.as_dict())
        if row.last_run_at is not None:
            values["next_run_at"] = schedule.next_after(as_utc(row.last_run_at), utcnow())
    if args.get("status") == MonitorStatus.PAUSED:
        values.update(status=MonitorStatus.PAUSED, paused_reason=monitors.ASKED)
    elif args.get("status") == MonitorStatus.ACTIVE:
        with db().session() as session:
            balance = accounts.find_account(session, g.principal.account_id).balance
        if balance < 1:
            raise ApiError("insufficient_credits", "A run needs at least 1 credit; the "
                                                   f"balance is {balance}.")
        values.update(status=MonitorStatus.ACTIVE, paused_reason=None)
    row = monitors.update_monitor(db(), monitor_id, g.principal.account_id, values,
                                  request_id=g.request_id)
    if row is None:
        raise ApiError("not_found", "No such monitor.")
    return row


@blp.route("/monitors/<monitor_id>", methods=["DELETE"])
@documented(blp, "deleteMonitor", MonitorDeletedSchema, (*AUTHENTICATED, 404),
            descriptions=NOT_FOUND)
def delete(monitor_id: str):
    """Delete a monitor and its runs' list. A run under way finishes as a plain collection;
    the collections of its runs stay until they expire."""
    if not monitors.delete_monitor(db(), monitor_id, g.principal.account_id,
                                   request_id=g.request_id):
        raise ApiError("not_found", "No such monitor.")
    return {"id": monitor_id, "deleted": True}
