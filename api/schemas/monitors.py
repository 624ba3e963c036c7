"""Schemas of the monitors resource: a collection re-run on a schedule, and its runs."""

from __future__ import annotations

from typing import Any

from marshmallow import ValidationError, fields, validate, validates_schema

from api.schemas.collections import ChangeCountsSchema, CollectionRequestSchema
from api.schemas.fields import RequestSchema, Response, Url, WholeNumber, printable
from core.schedules import MAX_CRON_LENGTH, MAX_INTERVAL, MIN_INTERVAL, Schedule, ScheduleError

#: What a monitor's ``notify`` may say: when its webhook is called for a completed run.
NOTIFY = ("changes", "always")
#: Fields of a monitor's collection that the monitor sets itself.
MONITOR_SET = {"webhook_url": "A monitor's runs call the monitor's own `webhook_url`.",
               "webhook_events": "A monitor's runs send the monitor's `monitor.run.*` events.",
               "change_tracking": "A monitor's runs are compared under the monitor's id."}


class ScheduleSchema(RequestSchema):
    """``schedule``: ``every`` seconds, or a ``cron`` expression (UTC)."""

    every = WholeNumber(validate=validate.Range(min=MIN_INTERVAL, max=MAX_INTERVAL), metadata={
        "description": f"Seconds between runs, at least {MIN_INTERVAL}; the first run starts "
                       "when the monitor is created, the next ones keep its phase."})
    cron = fields.String(validate=validate.Length(min=1, max=MAX_CRON_LENGTH), metadata={
        "description": "A cron expression in UTC: five fields (minute hour day month "
                       "weekday, as crontab) or @hourly, @daily, @weekly, @monthly, @yearly; "
                       f"its runs at least {MIN_INTERVAL} s apart."})

    @validates_schema
    def _one(self, data: dict[str, Any], **_: Any) -> None:
        try:
            Schedule.of(data)
        except ScheduleError as exc:
            raise ValidationError(str(exc)) from None


class _MonitorFields(RequestSchema):
    """What a monitor's creation and change share."""

    name = fields.String(validate=[validate.Length(min=1, max=200), printable], metadata={
        "description": "A name of your own for it."})
    schedule = fields.Nested(ScheduleSchema)
    webhook_url = Url(required=False, allow_none=True, metadata={
        "description": "Called when a run ends: `monitor.run.completed` (see `notify`), "
                       "`monitor.run.failed`, `monitor.run.cancelled`; signed as collections' "
                       "webhooks are."})
    notify = fields.String(validate=validate.OneOf(NOTIFY), metadata={
        "description": "Default `changes`: the webhook is called for a completed run only when it "
                       "found a page new, changed or removed; `always`: for every run."})


class MonitorRequestSchema(_MonitorFields):
    """``POST /monitors``."""

    collection = fields.Nested(CollectionRequestSchema, required=True, metadata={
        "description": "The collection each run starts, as `POST /collections` takes it, "
                       "without `webhook_url` and `change_tracking` (the monitor's own)."})
    schedule = fields.Nested(ScheduleSchema, required=True)

    @validates_schema
    def _monitor_sets(self, data: dict[str, Any], **_: Any) -> None:
        collection = data.get("collection") or {}
        errors = {name: [text] for name, text in MONITOR_SET.items()
                  if collection.get(name) is not None}
        if errors:
            raise ValidationError({"collection": errors})


class MonitorUpdateSchema(_MonitorFields):
    """``PATCH /monitors/{id}``: the fields given change; the others stay."""

    status = fields.String(validate=validate.OneOf(("active", "paused")), metadata={
        "description": "`paused` stops its runs (one under way goes on); `active` resumes it "
                       "(402 when the balance cannot pay for a page): a slot missed while "
                       "paused runs once, at once."})

    @validates_schema
    def _something(self, data: dict[str, Any], **_: Any) -> None:
        if not data:
            raise ValidationError("Give at least one field to change.")


class MonitorRunSchema(Response):
    collection_id = fields.String(allow_none=True, metadata={
        "description": "The run's collection (its results are kept as a collection's); null "
                       "when the slot was skipped."})
    status = fields.String(metadata={
        "description": "running, completed, cancelled, failed (its collection's), or "
                       "skipped (no collection started: `reason` says why)."})
    reason = fields.String(allow_none=True, metadata={
        "description": "skipped: `overlap` (the run before was still going), "
                       "`insufficient_credits` (the monitor was paused), `collection_limit`, "
                       "`plan_limit`, `source_policy`; else its collection's `stop_reason`."})
    message = fields.String(allow_none=True)
    due_at = fields.String()
    started_at = fields.String(allow_none=True)
    finished_at = fields.String(allow_none=True)
    pages = fields.Integer(metadata={"description": "Pages stored."})
    credits_used = fields.Integer()
    changes = fields.Nested(ChangeCountsSchema, allow_none=True, metadata={
        "description": "Its pages by change, once it ended."})


class MonitorSchema(Response):
    id = fields.String()
    name = fields.String(allow_none=True)
    status = fields.String(metadata={"description": "active or paused."})
    paused_reason = fields.String(allow_none=True, metadata={
        "description": "`paused` (asked), or `insufficient_credits` (a run could not start: "
                       "`PATCH` it `active` once the account has credits)."})
    schedule = fields.Dict(metadata={"description": "`{\"every\": s}` or `{\"cron\": \"…\"}`."})
    notify = fields.String()
    webhook_url = fields.String(allow_none=True)
    collection = fields.Dict(metadata={
        "description": "The collection each run starts, with its defaults filled."})
    next_run_at = fields.String(allow_none=True, metadata={
        "description": "When the next run is due (it starts within `SWEEP_INTERVAL`, a minute "
                       "by default); null while paused."})
    last_run_at = fields.String(allow_none=True)
    created_at = fields.String()
    updated_at = fields.String()
    runs = fields.List(fields.Nested(MonitorRunSchema), metadata={
        "description": "Its latest runs, newest first: the last one in a list of monitors, "
                       "the last 20 for one monitor."})


class MonitorListSchema(Response):
    monitors = fields.List(fields.Nested(MonitorSchema))


class MonitorDeletedSchema(Response):
    id = fields.String()
    deleted = fields.Boolean()
