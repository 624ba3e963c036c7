"""A monitor's schedule (docs/api.md, Monitors): every N seconds, or a cron expression in UTC.

The cron expressions are croniter's (the library RQ's own cron scheduler uses), five fields or
an ``@hourly``-style alias; nothing here parses them. Two runs of one monitor are never closer
than :data:`MIN_INTERVAL`: ``every`` is at least that, a cron expression whose next runs come
closer is refused, and the next slot is always sought that far past the last one.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from croniter import croniter
from croniter.croniter import CroniterError

#: Seconds two runs of a monitor are apart at least.
MIN_INTERVAL = 300
#: The most seconds ``every`` may be (a year).
MAX_INTERVAL = 366 * 86400
#: Characters a cron expression may have.
MAX_CRON_LENGTH = 100
#: The runs of a cron expression checked for :data:`MIN_INTERVAL` (a week of them at most).
_CHECKED_RUNS = 300
_CHECKED_SPAN = timedelta(days=8)
#: How far croniter may look for a next run (an expression of February 30 has none).
_MAX_YEARS = 10
_ALIASES = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
#: Plain crontab: numbers, month and weekday names, ``*``, ranges, lists, steps — not
#: croniter's extensions (``R`` random, ``L``, ``W``, ``#``, ``?``), which crontab lacks.
_ITEM = r"(?:\*|\d+|[a-z]{3})(?:-(?:\d+|[a-z]{3}))?(?:/\d+)?"
_CRONTAB = re.compile(rf"(?i){_ITEM}(?:,{_ITEM})*(?:\s+{_ITEM}(?:,{_ITEM})*){{4}}")


class ScheduleError(ValueError):
    """A schedule refused: the message says why, for a 422."""


@dataclass(frozen=True)
class Schedule:
    """Every ``every`` seconds from the first run, or on the times of ``cron`` (UTC)."""

    every: int | None = None
    cron: str | None = None

    @classmethod
    def of(cls, body: Mapping[str, Any]) -> Schedule:
        """The schedule ``{"every": seconds}`` or ``{"cron": "…"}``; ScheduleError if neither,
        both, or a value out of bounds."""
        every, cron = body.get("every"), body.get("cron")
        if (every is None) == (cron is None):
            raise ScheduleError("Give either every (seconds) or cron (an expression).")
        if every is not None:
            if isinstance(every, bool) or not isinstance(every, int) or not (
                    MIN_INTERVAL <= every <= MAX_INTERVAL):
                raise ScheduleError(f"every: whole seconds from {MIN_INTERVAL} to "
                                    f"{MAX_INTERVAL}.")
            return cls(every=every)
        if not isinstance(cron, str):
            raise ScheduleError("cron: an expression of five fields, as text.")
        schedule = cls(cron=" ".join(cron.split()))
        schedule.check_cron()
        return schedule

    def check_cron(self) -> None:
        """Refuse a cron expression croniter cannot read, with seconds (six fields), with no
        run within :data:`_MAX_YEARS`, or whose next runs come closer than MIN_INTERVAL."""
        text = self.cron or ""
        fields = text.split()
        if len(text) > MAX_CRON_LENGTH or not (
                (len(fields) == 5 and _CRONTAB.fullmatch(text))
                or (len(fields) == 1 and text.lower() in _ALIASES)):
            raise ScheduleError("cron: five fields of crontab (minute hour day month weekday: "
                                "numbers, names, *, ranges, lists and steps) or one of "
                                f"{', '.join(_ALIASES)}, at most {MAX_CRON_LENGTH} "
                                "characters.")
        # a fixed time, a second before a year starts (its first slot is checked too)
        start = datetime(2026, 1, 1) - timedelta(seconds=1)
        try:
            times = croniter(text, start, max_years_between_matches=_MAX_YEARS)
            runs = [times.get_next(datetime)]
            while len(runs) < _CHECKED_RUNS and runs[-1] - runs[0] <= _CHECKED_SPAN:
                runs.append(times.get_next(datetime))
        except (CroniterError, ValueError, KeyError) as exc:
            raise ScheduleError(f"cron: not an expression that ever runs ({exc}).") from None
        for previous, run in itertools.pairwise(runs):
            if (run - previous).total_seconds() < MIN_INTERVAL:
                raise ScheduleError(f"cron: runs {previous:%H:%M} and {run:%H:%M} are closer "
                                    f"than {MIN_INTERVAL} seconds.")

    def next_after(self, due: datetime, now: datetime) -> datetime:
        """The run after the one due at ``due`` (run at ``now``): the first slot later than
        ``now`` and at least MIN_INTERVAL past ``due`` — one run after a downtime, never one
        per missed slot. ``every`` keeps the phase of the first run."""
        if self.every is not None:
            behind = max((now - due).total_seconds(), 0)
            return due + timedelta(seconds=self.every * (math.floor(behind / self.every) + 1))
        base = max(now, due + timedelta(seconds=MIN_INTERVAL - 1))
        naive = base.astimezone(UTC).replace(tzinfo=None)  # the expression is in UTC
        run: datetime = croniter(self.cron, naive,
                                 max_years_between_matches=_MAX_YEARS).get_next(datetime)
        return run.replace(tzinfo=UTC)

    def as_dict(self) -> dict[str, Any]:
        return {"every": self.every} if self.every is not None else {"cron": self.cron}
