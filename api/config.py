"""The API's configuration: every environment variable it reads, typed, with its default.

``Config.from_env()`` is what the app factory uses; tests build a ``Config`` directly.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATABASE_URL = f"sqlite:///{ROOT / 'var' / 'webdata.db'}"


def _env(name: str, default: str) -> str:
    return os.environ.get(name) or default


@dataclass(frozen=True)
class Config:
    #: SQLAlchemy URL of the accounts/ledger database (SQLite file under var/ by default).
    database_url: str = DEFAULT_DATABASE_URL
    #: Redis for the job queues.
    redis_url: str = "redis://127.0.0.1:6379/0"
    #: Seconds a single-page request waits for its job before answering 504.
    job_wait_seconds: int = 60
    #: Comma-separated CIDRs the crawler may reach (mirrors the workers' setting for the
    #: API's fast pre-check; the workers' resolver is the real control).
    allowed_networks: str = ""
    #: Ports fetched on public addresses (empty: crawler.policy.DEFAULT_PORTS).
    allowed_ports: str = ""
    #: Domains never fetched.
    blocked_domains: str = ""
    #: Largest request body accepted, in bytes.
    max_body_bytes: int = 1024 * 1024

    @classmethod
    def from_env(cls) -> Config:
        return cls(
            database_url=_env("DATABASE_URL", DEFAULT_DATABASE_URL),
            redis_url=_env("REDIS_URL", "redis://127.0.0.1:6379/0"),
            job_wait_seconds=int(_env("JOB_WAIT_SECONDS", "60")),
            allowed_networks=_env("CRAWLER_ALLOWED_NETWORKS", ""),
            allowed_ports=_env("CRAWLER_ALLOWED_PORTS", ""),
            blocked_domains=_env("CRAWLER_BLOCKED_DOMAINS", ""),
        )
