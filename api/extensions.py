"""The app's long-lived clients (database, Redis, the rate limiter), reached through
``current_app``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import current_app
from redis import Redis

from core.policy import SourcePolicy
from storage.db import Database

if TYPE_CHECKING:
    from api.limits import AccountRateLimiter


def db() -> Database:
    return current_app.extensions["webdata.db"]


def redis() -> Redis:
    return current_app.extensions["webdata.redis"]


def source_policy() -> SourcePolicy:
    return current_app.extensions["webdata.policy"]


def limiter() -> AccountRateLimiter:
    """The plan's requests per minute, one count per account for the API and the console."""
    return current_app.extensions["webdata.limiter"]
