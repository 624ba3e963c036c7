"""``GET /healthz``: is this instance able to serve (no auth)?"""

from __future__ import annotations

import logging

from flask_smorest import Blueprint

from api.extensions import db, redis
from api.openapi import documented
from api.schemas import HealthSchema

logger = logging.getLogger(__name__)

blp = Blueprint("health", __name__, description="Liveness and dependencies.")


@blp.route("/healthz", methods=["GET"])
@documented(blp, "getHealth", HealthSchema, (503,), authenticated=False, error_schema=HealthSchema,
            descriptions={503: "Redis or the database is down: `status` is `degraded` and "
                               "the one down says `down`."})
def healthz():
    """`ok` when Redis answers and the database can take a write; 503 naming the one that
    cannot (a locked or read-only database still answers reads)."""
    checks = {"redis": redis().ping, "database": db().check_writable}
    body = {"status": "ok"}
    for name, ping in checks.items():
        try:
            ping()
            body[name] = "ok"
        except Exception as exc:
            logger.warning("Health check: %s is down: %s", name, exc)
            body[name] = "down"
            body["status"] = "degraded"
    return body, 200 if body["status"] == "ok" else 503
