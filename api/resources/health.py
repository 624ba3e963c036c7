"""``GET /healthz``: is this instance able to serve (no auth)?"""

from __future__ import annotations

import logging

from flask_smorest import Blueprint

from api import workers
from api.extensions import db, redis
from api.openapi import documented
from api.schemas.health import HealthSchema
from worker.queues import INTERACTIVE

logger = logging.getLogger(__name__)

blp = Blueprint("health", __name__, description="Liveness and dependencies.")


@blp.route("/healthz", methods=["GET"])
@documented(blp, "getHealth", HealthSchema, (503,), authenticated=False, error_schema=HealthSchema,
            descriptions={503: "Not able to serve: `starting` while no crawler worker has "
                               "listened on the `interactive` queue since this API process "
                               "started; `degraded` when Redis or the database is down (the "
                               "one down says `down`) or the workers seen before are gone."})
def healthz():
    """`ok` when Redis answers, the database can take a write and a live worker listens on the
    `interactive` queue; 503 otherwise (a locked or read-only database still answers reads),
    with the live workers per queue and the cron schedulers seen."""
    body: dict = {"status": "ok", "redis": "ok", "database": "ok", "workers": None, "cron": None}
    try:
        body.update(workers.census(redis()))  # Redis answers: the count is the ping
    except Exception as exc:
        logger.warning("Health check: redis is down: %s", exc)
        body.update(redis="down", status="degraded")
    try:
        db().check_writable()
    except Exception as exc:
        logger.warning("Health check: database is down: %s", exc)
        body.update(database="down", status="degraded")
    if body["status"] == "ok" and not (body["workers"] or {}).get(INTERACTIVE):
        body["status"] = "degraded" if workers.ever_seen(INTERACTIVE) else "starting"
    return body, 200 if body["status"] == "ok" else 503
