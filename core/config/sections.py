"""The sections of the configuration, one frozen dataclass per concern: each field one
environment variable, with its one type, one default and its docstring (with its unit).

Every variable belongs to exactly one section, and field names are unique across sections
(:meth:`core.config.Config.of` routes a flat name to its section). A section is read by the
components of its concern; the processes that run them get it from the whole
:class:`core.config.Config` their entry point loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from core.config.kinds import (
    DATABASE,
    DOMAINS,
    HTTP_URL,
    LEVEL,
    LOG_FORMAT,
    NETWORKS,
    PATH,
    PORTS,
    PROVIDER,
    REDIS,
    SECRET,
    TEXT,
    integer,
    seconds,
)
from core.config.section import Section, var

ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_VAR_DIR = ROOT / "var"
DEFAULT_DATABASE_URL = f"sqlite:///{DEFAULT_VAR_DIR / 'webdata.db'}"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
#: Where ``make run`` leaves its embedded Redis's URL, under ``VAR_DIR``.
REDIS_URL_FILE = "redis-url"


@dataclass(frozen=True)
class StorageConfig(Section):
    """The database and Redis (API, workers, ``make run``, migrations, batch code)."""

    title = "Storage and queues"

    database_url: str = var("DATABASE_URL", DATABASE, DEFAULT_DATABASE_URL)
    """Accounts, keys, ledger, history. Unset: a SQLite file ``webdata.db`` in ``VAR_DIR``."""
    redis_url: str = var("REDIS_URL", REDIS, DEFAULT_REDIS_URL)
    """The job queues and rate limits. Unset: the URL ``make run`` left in
    ``VAR_DIR/redis-url`` while it runs, else ``redis://127.0.0.1:6379/0``."""
    redis_url_origin: str = "default"
    """Not a variable: where ``redis_url`` came from (``environment``, ``file``, ``default``);
    ``make run`` embeds a Redis unless it came from the environment."""
    database_timeout: float = var("DATABASE_TIMEOUT", seconds(), 10.0)
    """Seconds a request waits for SQLite's write lock or a PostgreSQL connection before it is
    answered 503 ``unavailable``."""
    redis_timeout: float = var("REDIS_TIMEOUT", seconds(), 2.0)
    """Seconds every Redis client waits to connect and for each answer: a frozen Redis makes
    the API answer 503 ``unavailable`` after this long, instead of hanging."""
    var_dir: Path = var("VAR_DIR", PATH, DEFAULT_VAR_DIR)  # noqa: RUF009 (a field(); Path is immutable)
    """Directory of the local state ``make run`` keeps: the SQLite database, ``demo-key``,
    ``redis-url``."""

    @classmethod
    def _completed(cls, values: dict[str, Any]) -> dict[str, Any]:
        """An unset ``DATABASE_URL`` is the SQLite file in ``VAR_DIR``; an unset ``REDIS_URL``
        is the one a running ``make run`` left in ``VAR_DIR/redis-url``, if any."""
        var_dir = values.get("var_dir", DEFAULT_VAR_DIR)
        values.setdefault("database_url", f"sqlite:///{var_dir / 'webdata.db'}")
        if "redis_url" in values:
            values["redis_url_origin"] = "environment"
        else:
            saved = _saved_redis_url(var_dir)
            if saved:
                values.update(redis_url=saved, redis_url_origin="file")
        return values

    @property
    def redis_url_file(self) -> Path:
        """Where ``make run`` writes its embedded Redis's URL for others to find."""
        return self.var_dir / REDIS_URL_FILE


def _saved_redis_url(var_dir: Path) -> str:
    try:
        return (var_dir / REDIS_URL_FILE).read_text().strip()
    except OSError:
        return ""


@dataclass(frozen=True)
class LaunchConfig(Section):
    """What ``make run`` starts (``launcher/``): where the API listens, how many processes."""

    title = "Launch (make run)"

    host: str = var("HOST", TEXT, "127.0.0.1")
    """Address ``make run`` serves the API on."""
    port: int = var("PORT", integer("a TCP port, 1-65535", 1, 65535), 8000)
    """TCP port ``make run`` serves the API on."""
    workers: int = var("WORKERS", integer("a whole number of worker processes, 0 or more", 0),
                       2)
    """Warm crawler worker processes ``make run`` starts (and restarts if one dies)."""
    api_processes: int = var("API_PROCESSES", integer(
        "a whole number of processes, at least 1", 1), 1)
    """Gunicorn worker processes of the API under ``make run``: one serves the default
    workers' throughput (the API's part of a request is small; docs/benchmarks.md, Memory of
    the default stack); add some for more workers or cores."""
    api_threads: int = var("API_THREADS", integer("a whole number of threads, at least 1", 1),
                           64)
    """Threads per gunicorn process; each request waits on its job in one. gunicorn hands a
    connection to a process before a thread is free, and one account may hold up to its
    plan's cap in flight (48 at most), so each process has as many threads as the default
    2 workers x ``WORKER_CONCURRENCY`` 32 have slots: an account filling its cap on one
    process still leaves threads for everyone else's requests."""


@dataclass(frozen=True)
class LogConfig(Section):
    """Log levels (every process)."""

    title = "Logging"

    log_level: str = var("LOG_LEVEL", LEVEL, "INFO")
    """Log level of the workers: our own code and RQ."""
    log_format: str = var("LOG_FORMAT", LOG_FORMAT, "text")
    """``text`` (lines for people) or ``json`` (one JSON object a line, with the request,
    account, job and collection ids where they apply), in every process."""
    crawler_log_level: str = var("CRAWLER_LOG_LEVEL", LEVEL, "WARNING")
    """Log level of Scrapy and the extraction libraries (trafilatura…), in workers and
    ``scrapy crawl`` alike: at INFO they report every crawl and every odd page."""


@dataclass(frozen=True)
class ApiConfig(Section):
    """The HTTP API: its waits, its limits on clients, the console, the reservations' sweep."""

    title = "The API"

    job_wait_seconds: int = var("JOB_WAIT_SECONDS", integer(
        "a whole number of seconds, at least 1", 1), 60)
    """Seconds a single-page request waits for its job before answering 504 ``timeout``."""
    reservation_grace: float = var("RESERVATION_GRACE", seconds(zero_ok=True), 30.0)
    """Seconds past a request's own deadline (its wait) before the sweeper releases the credits
    it still holds: its process was killed, or every settling write failed."""
    sweep_interval: int = var("SWEEP_INTERVAL", integer(
        "a whole number of seconds, at least 1", 1), 60)
    """Seconds between two sweeps of abandoned reservations (the cron scheduler's)."""
    max_body_bytes: int = var("MAX_BODY_BYTES", integer(
        "a whole number of bytes, at least 1024", 1024), 1024 * 1024)
    """Largest request body the API accepts, in bytes; a larger one is answered 413
    ``body_too_large`` before it is read."""
    mcp_max_result_chars: int = var("MCP_MAX_RESULT_CHARS", integer(
        "a whole number of characters, at least 1000", 1000), 100_000)
    """Characters of an MCP tool's answer at most: a longer one is cut, saying how to get the
    rest (``/api/service/v1/mcp``, ``webdata mcp``)."""
    client_header_timeout: float = var("CLIENT_HEADER_TIMEOUT", seconds(), 10.0)
    """Seconds a request's head (request line and header fields) may take to arrive, else it
    is answered 408. A request holds no API thread while it arrives."""
    client_body_timeout: float = var("CLIENT_BODY_TIMEOUT", seconds(), 60.0)
    """Seconds a request's body may take to arrive once its head has, else 408."""
    client_write_timeout: float = var("CLIENT_WRITE_TIMEOUT", seconds(), 60.0)
    """Seconds a client may take to accept each piece of an answer (a results page, a chunk
    of an export) before its connection is closed and the API thread freed."""
    console_session_seconds: int = var("CONSOLE_SESSION_SECONDS", integer(
        "a whole number of seconds, at least 60", 60), 8 * 3600)
    """Seconds a web console sign-in lasts (from signing in, not from the last click); signing
    out or revoking the key it signed in with ends it sooner."""
    metrics_token: str = var("METRICS_TOKEN", SECRET, "")
    """The operator's token for ``GET /metrics`` (Prometheus' text format), sent as
    ``Authorization: Bearer <token>``; empty: ``/metrics`` is not served (404)."""
    console_secret_key: str = var("CONSOLE_SECRET_KEY", SECRET, "")
    """Signs the console's CSRF tokens. Unset: a random one made once and kept in Redis, which
    every API process of the deployment shares."""


@dataclass(frozen=True)
class WorkerConfig(Section):
    """The warm workers: how many jobs each runs, how long RQ gives a page job."""

    title = "Workers"

    interactive_job_timeout: int = var("INTERACTIVE_JOB_TIMEOUT", integer(
        "a whole number of seconds, at least 1", 1), 60)
    """Seconds RQ gives a single-page job before stopping it (the crawl has its own budget)."""
    worker_concurrency: int = var("WORKER_CONCURRENCY", integer(
        "a whole number of jobs, at least 1", 1), 32)
    """Jobs one worker process runs at once, all on its one reactor: a page job mostly waits
    on the network, so one process keeps many in flight (docs/benchmarks.md, Scrape latency)."""
    worker_interactive_reserve: int = var("WORKER_INTERACTIVE_RESERVE", integer(
        "a whole number of jobs, 0 or more", 0), 8)
    """Slots of each worker process that background jobs (collections) may not take, so a
    single-page request never waits behind a long crawl. Background jobs always get at least
    one slot, and all of them on a worker that takes only background queues."""
    worker_metrics_port: int = var("WORKER_METRICS_PORT", integer(
        "a port number, 0 (off) to 65535", 0, 65535), 0)
    """A worker's Prometheus metrics on this port (``/metrics``), bound to
    ``WORKER_METRICS_HOST``; 0: none. Several workers on one machine need a port each."""
    worker_metrics_host: str = var("WORKER_METRICS_HOST", TEXT, "127.0.0.1")
    """Where a worker's metrics listen: loopback by default (a scraper on the machine)."""


@dataclass(frozen=True)
class CollectionsConfig(Section):
    """Collections: the workers' slice jobs, the watchdog, retention and webhooks."""

    title = "Collections"

    collection_slices: int = var("COLLECTION_SLICES", integer(
        "a whole number of jobs, at least 1", 1), 2)
    """Most slice jobs one collection keeps on the ``collections`` queue at once, so that one
    crawl uses several worker processes (``make run`` starts 2): it runs as many as there are
    workers on that queue when it starts, up to this; each re-enqueues itself while work
    remains."""
    collection_concurrency: int = var("COLLECTION_CONCURRENCY", integer(
        "a whole number of pages, at least 1", 1), 16)
    """Pages one slice job keeps in flight."""
    collection_host_concurrency: int = var("COLLECTION_HOST_CONCURRENCY", integer(
        "a whole number of requests, at least 1", 1), 8)
    """Pages of collections in flight to one host:port at once, across every worker process
    and machine together (kept in Redis, :mod:`collecting.host_gate`); robots.txt
    ``Crawl-delay`` is obeyed on top of it."""
    collection_slice_seconds: float = var("COLLECTION_SLICE_SECONDS", seconds(), 10.0)
    """Seconds a slice job leases new pages before it hands over to the next slice: a long
    crawl never holds a worker slot for long, and a cancel or a deploy takes effect soon."""
    collection_lease_seconds: float = var("COLLECTION_LEASE_SECONDS", seconds(), 30.0)
    """Seconds a page taken from the frontier stays leased without a renewal (renewed while
    its worker lives): after it, the page goes back to the frontier for another worker."""
    collection_retention_seconds: int = var("COLLECTION_RETENTION_SECONDS", integer(
        "a whole number of seconds, at least 1", 1), 7 * 86400)
    """Seconds a finished collection's results are kept (``expires_at``); after it they
    answer 410 ``expired`` and the cron purge deletes them."""
    collection_purge_batch: int = var("COLLECTION_PURGE_BATCH", integer(
        "a whole number of rows, at least 1", 1), 1000)
    """Results the retention purge deletes per transaction: small enough that the purge of a
    huge collection never holds the database for long."""
    change_tracking_retention_days: int = var("CHANGE_TRACKING_RETENTION_DAYS", integer(
        "a whole number of days, at least 1", 1), 90)
    """Days a page's version under a change tracking tag is kept after its last write (the
    last collection of the tag that stored the page): an older one is deleted by the
    retention purge, and the page is ``new`` to the tag's next collection."""
    webhook_timeout: float = var("WEBHOOK_TIMEOUT", seconds(), 5.0)
    """Seconds one webhook attempt may take in all: resolving the receiver's name, connecting and
    getting an answer's status."""
    collection_stall_seconds: int = var("COLLECTION_STALL_SECONDS", integer(
        "a whole number of seconds, at least 1", 1), 3600)
    """Seconds a live collection may go without progress while no worker listens to the
    ``collections`` queue before the watchdog fails it (``stop_reason: "stalled"``); a
    collection whose slices were lost is resumed at once when workers are there."""

    @property
    def retention(self) -> timedelta:
        """``collection_retention_seconds``, as the time a finished collection is kept."""
        return timedelta(seconds=self.collection_retention_seconds)


@dataclass(frozen=True)
class CacheConfig(Section):
    """The page cache (storage/page_cache.py): answers of page operations a request may take
    instead of a fetch (``max_age``); the workers fill it, the API reads it."""

    title = "Page cache"

    cache_max_bytes: int = var("CACHE_MAX_BYTES", integer(
        "a whole number of bytes, 0 or more", 0), 512 * 1024 * 1024)
    """Bytes of compressed answers the cache holds at most, in the database; the least
    recently used go first. 0: no cache (``max_age`` then always fetches)."""


@dataclass(frozen=True)
class PolicyConfig(Section):
    """The source policy: the API's pre-check, the crawler's resolver, webhook deliveries."""

    title = "Source policy"

    allowed_networks: str = var("CRAWLER_ALLOWED_NETWORKS", NETWORKS, "")
    """Comma-separated CIDRs of private networks the crawler may reach, any port (empty:
    public addresses only)."""
    allowed_ports: str = var("CRAWLER_ALLOWED_PORTS", PORTS, "")
    """Comma-separated ports fetched on public addresses (empty: 80, 443, 8080, 8443)."""
    blocked_domains: str = var("CRAWLER_BLOCKED_DOMAINS", DOMAINS, "")
    """Comma-separated domains never fetched, subdomains included."""


@dataclass(frozen=True)
class CrawlerConfig(Section):
    """The crawler (workers and ``scrapy crawl``): who it says it is, its limits per fetch."""

    title = "The crawler"

    contact_url: str = var("CRAWLER_CONTACT_URL", HTTP_URL, "https://github.com/webdata-platform")
    """Put in the User-Agent so that site owners can reach the operator."""
    user_agent: str = var("CRAWLER_USER_AGENT", TEXT, "")
    """The whole User-Agent (empty: ``WebdataBot/0.1 (+CRAWLER_CONTACT_URL)``)."""
    max_bytes: int = var("CRAWLER_MAX_BYTES", integer(
        "a whole number of bytes, at least 1", 1), 10 * 1024 * 1024)
    """Largest response body in bytes, after decompression too (gzip bombs)."""
    download_timeout: float = var("CRAWLER_DOWNLOAD_TIMEOUT", seconds(), 20.0)
    """Seconds for one download (connect + headers + body)."""
    crawl_timeout: float = var("CRAWLER_CRAWL_TIMEOUT", seconds(), 45.0)
    """Seconds one single-page crawl may take in all (robots.txt, redirects)."""
    robotstxt_ttl: float = var("CRAWLER_ROBOTSTXT_TTL", seconds(zero_ok=True), 600.0)
    """Seconds a worker reuses a site's parsed robots.txt (0: fetch it for every crawl)."""
    host_concurrency: int = var("CRAWLER_HOST_CONCURRENCY", integer(
        "a whole number of requests, at least 1", 1), 16)
    """Requests (hence connections) one worker process has open at once to one host:port,
    across all the jobs it runs; more wait for a free one (Scrapy's own per-domain limit is
    per crawler, and the worker's one crawler holds every job). robots.txt does not wait."""


@dataclass(frozen=True)
class VideoConfig(Section):
    """The video platform: read by the video spider (watch pages, the Data API) and by the
    video search (the YouTube provider, engagement of video results)."""

    title = "The video platform"

    youtube_api_key: str = var("YOUTUBE_API_KEY", SECRET, "")
    """YouTube Data API v3 key: counts, caption status and embeddability of videos, video
    search, engagement of video results (empty: not used)."""
    youtube_api_url: str = var("YOUTUBE_API_URL", HTTP_URL,
                               "https://www.googleapis.com/youtube/v3")
    """The Data API's base URL (tests point it at a local fake)."""
    youtube_base_url: str = var("YOUTUBE_BASE_URL", HTTP_URL, "https://www.youtube.com")
    """The platform's site, where watch pages are fetched (tests point it at a local fake)."""


@dataclass(frozen=True)
class SearchConfig(Section):
    """The search proxy (the API): which provider answers each kind, their keys and URLs."""

    title = "Search"

    search_provider: str = var("SEARCH_PROVIDER", PROVIDER, "")
    """Provider of every kind of search it supports (empty: the first configured provider
    that supports the kind; see api/search/registry.py)."""
    news_search_provider: str = var("NEWS_SEARCH_PROVIDER", PROVIDER, "")
    """Overrides ``SEARCH_PROVIDER`` for /search/news."""
    video_search_provider: str = var("VIDEO_SEARCH_PROVIDER", PROVIDER, "")
    """Overrides ``SEARCH_PROVIDER`` for /search/videos."""
    searxng_url: str = var("SEARXNG_URL", HTTP_URL, "")
    """Base URL of a self-hosted SearXNG with the JSON format enabled (empty: not used)."""
    brave_api_key: str = var("BRAVE_API_KEY", SECRET, "")
    """Brave Search API key (empty: not used)."""
    brave_api_url: str = var("BRAVE_API_URL", HTTP_URL, "https://api.search.brave.com/res/v1")
    """Brave Search API endpoint (tests point it at a local fake)."""
    google_cse_key: str = var("GOOGLE_CSE_KEY", SECRET, "")
    """Google Programmable Search API key; needs ``GOOGLE_CSE_CX`` too."""
    google_cse_cx: str = var("GOOGLE_CSE_CX", TEXT, "")
    """Google Programmable Search engine id (``cx``)."""
    google_cse_url: str = var("GOOGLE_CSE_URL", HTTP_URL,
                              "https://www.googleapis.com/customsearch/v1")
    """Google Programmable Search endpoint (tests point it at a local fake)."""
    search_timeout: float = var("SEARCH_TIMEOUT", seconds(), 10.0)
    """Seconds a search provider may take (connect + answer) before the request fails (502)."""
