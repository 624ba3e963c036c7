"""``/healthz``: whether this instance can serve, and why not."""

from __future__ import annotations

from marshmallow import fields

from api.schemas.fields import Response


class HealthSchema(Response):
    status = fields.String(metadata={"enum": ["ok", "starting", "degraded"]})
    redis = fields.String(metadata={"enum": ["ok", "down"]})
    database = fields.String(metadata={"enum": ["ok", "down"]})
    workers = fields.Dict(keys=fields.String(), values=fields.Integer(), allow_none=True,
                          metadata={"description": "Live workers listening on each queue "
                                                   "(`interactive`, `collections`, "
                                                   "`maintenance`); null when Redis is down."})
    cron = fields.Integer(allow_none=True, metadata={
        "description": "RQ cron schedulers (the housekeeping) with a recent heartbeat; null "
                       "when Redis is down."})
