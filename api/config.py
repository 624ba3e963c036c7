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
    #: Search provider of every operation it supports: searxng, brave, google or youtube
    #: (empty: the first configured provider that supports the operation; see api/search).
    search_provider: str = ""
    #: Per-operation overrides of ``search_provider`` for /search/news and /search/videos.
    news_search_provider: str = ""
    video_search_provider: str = ""
    #: Base URL of a self-hosted SearXNG with the JSON format enabled.
    searxng_url: str = ""
    brave_api_key: str = ""
    brave_api_url: str = "https://api.search.brave.com/res/v1"
    #: Google Programmable Search: an API key and a search engine id (``cx``), both needed.
    google_cse_key: str = ""
    google_cse_cx: str = ""
    google_cse_url: str = "https://www.googleapis.com/customsearch/v1"
    #: YouTube Data API v3: video search, and engagement of YouTube results of any provider.
    youtube_api_key: str = ""
    youtube_api_url: str = "https://www.googleapis.com/youtube/v3"
    #: Seconds a search provider may take (connect + answer) before the request fails (502).
    search_timeout: float = 10.0

    @classmethod
    def from_env(cls) -> Config:
        return cls(
            database_url=_env("DATABASE_URL", DEFAULT_DATABASE_URL),
            redis_url=_env("REDIS_URL", "redis://127.0.0.1:6379/0"),
            job_wait_seconds=int(_env("JOB_WAIT_SECONDS", "60")),
            allowed_networks=_env("CRAWLER_ALLOWED_NETWORKS", ""),
            allowed_ports=_env("CRAWLER_ALLOWED_PORTS", ""),
            blocked_domains=_env("CRAWLER_BLOCKED_DOMAINS", ""),
            search_provider=_env("SEARCH_PROVIDER", ""),
            news_search_provider=_env("NEWS_SEARCH_PROVIDER", ""),
            video_search_provider=_env("VIDEO_SEARCH_PROVIDER", ""),
            searxng_url=_env("SEARXNG_URL", ""),
            brave_api_key=_env("BRAVE_API_KEY", ""),
            brave_api_url=_env("BRAVE_API_URL", cls.brave_api_url),
            google_cse_key=_env("GOOGLE_CSE_KEY", ""),
            google_cse_cx=_env("GOOGLE_CSE_CX", ""),
            google_cse_url=_env("GOOGLE_CSE_URL", cls.google_cse_url),
            youtube_api_key=_env("YOUTUBE_API_KEY", ""),
            youtube_api_url=_env("YOUTUBE_API_URL", cls.youtube_api_url),
            search_timeout=float(_env("SEARCH_TIMEOUT", "10")),
        )
