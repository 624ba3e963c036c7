"""Usage per day: the console's chart, summed from the activity history by the database.

The history is the account's bill (the balance is minus the sum of its credits), so the chart
is read from it rather than counted anywhere else: what the chart shows per day is exactly what
the history lists for that day. Grants are not usage and are left out.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta

from sqlalchemy import ColumnElement, Date, case, cast, func, select

from core.operations import USAGE
from storage.db import Database
from storage.ledger import GRANT_OPERATION
from storage.models import Activity, Outcome

#: The chart's series: each history operation is shown as one of these.
GROUPS = USAGE
SERIES = tuple(dict.fromkeys(GROUPS.values()))
#: History lines that are not requests for data: an operator's grant.
NOT_USAGE = (GRANT_OPERATION,)


@dataclass
class Usage:
    """``days`` consecutive UTC days, oldest first, with the credits each series used on each,
    and the requests (and failed ones) over the whole span."""

    days: list[date]
    credits: dict[str, list[int]] = field(default_factory=dict)
    requests: int = 0
    failed: int = 0

    @property
    def failure_rate(self) -> float:
        return self.failed / self.requests if self.requests else 0.0

    @property
    def total(self) -> int:
        return sum(sum(values) for values in self.credits.values())


def daily(db: Database, account_id: str, days: int = 30, today: date | None = None) -> Usage:
    """The account's usage over the ``days`` UTC days that end with ``today`` (default: now)."""
    today = today or datetime.now(UTC).date()
    first = today - timedelta(days=days - 1)
    since = datetime.combine(first, time(), tzinfo=UTC)
    until = datetime.combine(today + timedelta(days=1), time(), tzinfo=UTC)
    with db.session() as session:
        day = _day(session.get_bind().dialect.name)
        rows = session.execute(
            select(day, Activity.operation, func.sum(Activity.credits), func.count(),
                   func.sum(case((Activity.status == Outcome.FAILED.value, 1), else_=0)))
            .where(Activity.account_id == account_id, Activity.at >= since,
                   Activity.at < until, Activity.operation.not_in(NOT_USAGE))
            .group_by(day, Activity.operation)
        ).all()
    usage = Usage(days=[first + timedelta(days=n) for n in range(days)])
    index = {moment: n for n, moment in enumerate(usage.days)}
    credits: dict[str, list[int]] = defaultdict(lambda: [0] * days)
    for raw_day, operation, spent, count, failed in rows:  # sums: Decimal on PostgreSQL
        usage.requests += int(count)
        usage.failed += int(failed or 0)
        position = index.get(_as_date(raw_day))
        if position is not None and spent:
            credits[GROUPS.get(operation, operation)][position] += int(spent)
    # every series, then any operation outside them that cost credits (only those are in)
    usage.credits = {name: credits[name] for name in (*SERIES, *sorted(set(credits) - set(SERIES)))}
    return usage


def _day(dialect: str) -> ColumnElement:
    """The UTC day of a history line: SQLite stores UTC text, PostgreSQL a timestamptz that
    ``date()`` would read in the session's time zone."""
    if dialect == "postgresql":
        return cast(func.timezone("UTC", Activity.at), Date)
    return func.date(Activity.at)


def _as_date(value: object) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        return date.fromisoformat(value[:10])
    return None
