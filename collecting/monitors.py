"""Starting the monitors' runs when they are due (docs/api.md, Monitors).

The cron process enqueues :func:`worker.maintenance.run_due_monitors` every
``SWEEP_INTERVAL``; it calls :func:`run_due`, which takes each due slot (:func:`storage.
monitors.claim`: one taker), moves the monitor to its next slot — after a downtime that is the
next one to come, so a monitor runs once, not once per slot it missed — and starts the run as
an ordinary collection of the account with change tracking under the monitor's id, exactly as
``POST /collections`` would (:mod:`collecting.start`). A slot whose previous run still goes,
or that the account's plan or balance refuses, starts nothing and is recorded as skipped,
saying why; a balance that cannot pay for one page pauses the monitor.

Free of Flask and of the crawler, like :mod:`collecting.start`.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime
from typing import Any

from redis import Redis
from redis.exceptions import RedisError

from collecting import start as starting
from core.config import Config
from core.policy import PolicyRefusal, SourcePolicy
from core.schedules import Schedule, ScheduleError
from storage import collections, monitors
from storage.db import Database
from storage.ledger import InsufficientCredits
from storage.models import as_utc, utcnow
from storage.monitor_models import Monitor

logger = logging.getLogger(__name__)

#: Why a due slot started nothing (a run's ``reason``, besides the pause's): the run before
#: still goes; the schedule has no next run (the monitor is paused); an unexpected failure.
OVERLAP, INVALID_SCHEDULE, ERROR = "overlap", "invalid_schedule", "error"


def run_due(db: Database, redis: Redis, config: Config, now: datetime | None = None
            ) -> dict[str, str]:
    """Start the run of every monitor due at ``now`` (default: the clock's time); what
    became of each slot taken (monitor id → ``started`` or ``skipped``)."""
    now = now or utcnow()
    policy = SourcePolicy.from_config(config.policy)
    report: dict[str, str] = {}
    for monitor in monitors.due(db, now):
        due = as_utc(monitor.next_run_at)
        try:
            next_run = Schedule.of(json.loads(monitor.schedule)).next_after(due, now)
        except (ScheduleError, ValueError, KeyError) as exc:  # no next time (croniter's own
            monitors.skip(db, monitor.id, due, INVALID_SCHEDULE,  # errors are ValueErrors)
                          f"Its schedule has no next run ({exc}). Paused: give it another "
                          "schedule.", pause=True)
            report[monitor.id] = "skipped"
            continue
        if not monitors.claim(db, monitor, next_run, now):
            continue  # another scheduler took this slot
        try:
            started = _start(db, redis, config, policy, monitor, due)
        except Exception as exc:  # the slot is taken: it must leave a run saying so
            logger.exception("Monitor %s: the run due at %s could not start", monitor.id, due)
            _record_failure(db, monitor.id, due, exc)
            started = False
        report[monitor.id] = "started" if started else "skipped"
    return report


def _record_failure(db: Database, monitor_id: str, due: datetime, exc: Exception) -> None:
    """A slot that failed to start for an unexpected reason, recorded (best effort: the
    database may be what failed)."""
    try:
        monitors.skip(db, monitor_id, due, ERROR, f"The run could not start: "
                      f"{type(exc).__name__}; it is tried again at the next slot.")
    except Exception:
        logger.exception("Monitor %s: could not record the failed slot", monitor_id)


def _start(db: Database, redis: Redis, config: Config, policy: SourcePolicy, monitor: Monitor,
           due: datetime) -> bool:
    """Start the run of ``monitor`` due at ``due``, or record why not; whether it started."""
    previous = monitors.live_run(db, monitor.id)
    if previous is not None:
        monitors.skip(db, monitor.id, due, OVERLAP,
                      f"The run before ({previous}) was still going.")
        return False
    body: dict[str, Any] = json.loads(monitor.collection)
    arguments = {**starting.arguments(body), "change_tracking": {"tag": monitor.id},
                 "webhook_url": None}
    try:
        row = starting.create(db, policy, account_id=monitor.account_id,
                              run=(monitor.id, due), **arguments)
    except InsufficientCredits as exc:
        monitors.skip(db, monitor.id, due, monitors.INSUFFICIENT_CREDITS,
                      f"A run needs at least 1 credit; the balance is {exc.balance}. Paused: "
                      "resume it once the account has credits.", pause=True)
        return False
    except collections.CollectionLimit as exc:
        monitors.skip(db, monitor.id, due, "collection_limit", str(exc))
        return False
    except (starting.TooManyUrls, starting.TooManyPages) as exc:
        monitors.skip(db, monitor.id, due, "plan_limit", str(exc))
        return False
    except PolicyRefusal as exc:
        monitors.skip(db, monitor.id, due, exc.code, exc.message)
        return False
    try:
        starting.enqueue(db, redis, row.id, config)
    except RedisError:  # the collection failed "unavailable", and its run with it
        return False
    logger.info("Monitor %s: run %s started", monitor.id, row.id)
    return True
