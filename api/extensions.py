"""The app's long-lived clients (database, Redis), reached through ``current_app``."""

from __future__ import annotations

from flask import current_app
from redis import Redis

from crawler.policy import SourcePolicy
from storage.db import Database


def db() -> Database:
    return current_app.extensions["webdata.db"]


def redis() -> Redis:
    return current_app.extensions["webdata.redis"]


def source_policy() -> SourcePolicy:
    return current_app.extensions["webdata.policy"]
