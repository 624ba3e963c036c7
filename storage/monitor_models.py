"""The monitors' tables (docs/api.md, Monitors): a monitor re-runs one collection on a schedule;
each due slot leaves a run, started (a collection) or skipped (why)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import BigInteger, DateTime, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from storage.models import Base, BigId, utcnow


class MonitorStatus(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"


class RunStatus(StrEnum):
    """A run's status: its collection's while it lives, ``skipped`` when none was started."""

    RUNNING = "running"
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    FAILED = "failed"
    SKIPPED = "skipped"


class Monitor(Base):
    """A collection re-run on a schedule, with change tracking under the monitor's id."""

    __tablename__ = "monitors"
    __table_args__ = (Index("ix_monitors_due", "status", "next_run_at"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"), index=True)
    name: Mapped[str | None] = mapped_column(String(200))
    #: The collection body each run starts (JSON, as the API loaded it: defaults filled).
    collection: Mapped[str] = mapped_column(Text)
    #: What a list shows of it, small whatever its size (JSON: ``storage.monitors.summary``).
    summary: Mapped[str | None] = mapped_column(Text)
    #: ``{"every": seconds}`` or ``{"cron": "…"}`` (JSON; ``core.schedules.Schedule``).
    schedule: Mapped[str] = mapped_column(Text)
    webhook_url: Mapped[str | None] = mapped_column(Text)
    notify: Mapped[str] = mapped_column(String(16))  # changes | always
    status: Mapped[str] = mapped_column(String(16))  # a MonitorStatus
    #: Why it is paused: ``paused`` (asked), ``insufficient_credits``.
    paused_reason: Mapped[str | None] = mapped_column(String(40))
    next_run_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_run_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class MonitorRun(Base):
    """One due slot of a monitor: the collection it started, or why it started none; its
    outcome copied from the collection when that ends (results expire, runs stay)."""

    __tablename__ = "monitor_runs"
    __table_args__ = (Index("ix_monitor_runs_monitor", "monitor_id", "id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    monitor_id: Mapped[str] = mapped_column(ForeignKey("monitors.id", ondelete="CASCADE"))
    due_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    collection_id: Mapped[str | None] = mapped_column(String(40), index=True)
    status: Mapped[str] = mapped_column(String(16))  # a RunStatus
    #: Why it was skipped (``overlap``, ``insufficient_credits``, …) or its stop reason.
    reason: Mapped[str | None] = mapped_column(String(40))
    message: Mapped[str | None] = mapped_column(Text)
    #: Its collection's pages by change (JSON), once it ended.
    changes: Mapped[str | None] = mapped_column(Text)
    pages: Mapped[int] = mapped_column(Integer, default=0)
    credits_used: Mapped[int] = mapped_column(BigInteger, default=0)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
