"""Real parts for every test: a Redis, SQLite (and PostgreSQL when TEST_DATABASE_URL is set),
warm worker processes, and the loopback test website.

Two worker pools run for the whole session, on two Redis databases:
- the *normal* pool may reach the test site's address (``CRAWLER_ALLOWED_NETWORKS=127.0.0.2/32``);
- the *strict* pool runs with the allowed networks empty, as in production, for the SSRF tests.
"""

from __future__ import annotations

import ipaddress
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from redis import Redis
from rq import Worker
from sqlalchemy import text

from api import create_app
from core.config import Config
from launcher.embedded import start_redis
from storage import accounts, ledger
from storage.db import Database, migrate
from tests.support.site import youtube
from tests.support.site.server import HitCounter, serve

ROOT = Path(__file__).resolve().parent.parent
SITE_HOST = "127.0.0.2"
ALLOWED = f"{SITE_HOST}/32"
WORKER_ENV = {
    "CRAWLER_ALLOWED_NETWORKS": ALLOWED,
    "CRAWLER_DOWNLOAD_TIMEOUT": "3",
    "CRAWLER_CRAWL_TIMEOUT": "10",
    "LOG_LEVEL": "WARNING",
    # a pool not told its database keeps no page cache (it would write to VAR_DIR's)
    "CACHE_MAX_BYTES": "0",
}
#: The key the test site's fake Data API accepts.
DATA_API_KEY = youtube.API_KEY


#: Fixtures that start real parts (a Redis, worker processes, the test website, a database):
#: a test that uses one, itself or through another fixture, or is marked ``stack``, is a stack
#: test; every other test is a unit test (``pytest -m unit``: pure extraction, policy,
#: configuration, the table of operations, in well under a minute).
STACK_FIXTURES = frozenset({"redis_url", "site_server", "sqlite_url", "postgres_url",
                            "own_redis", "stack"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        stack = item.get_closest_marker("stack") or STACK_FIXTURES & set(
            getattr(item, "fixturenames", ()))
        item.add_marker(pytest.mark.stack if stack else pytest.mark.unit)
    # The multi-host test runs alone (make test-multihost: -m multihost), never in make test.
    if "multihost" not in (config.option.markexpr or ""):
        left = [item for item in items if item.get_closest_marker("multihost")]
        if left:
            config.hook.pytest_deselected(items=left)
            items[:] = [item for item in items if not item.get_closest_marker("multihost")]


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory) -> Iterator[str]:
    if os.environ.get("REDIS_URL"):
        yield os.environ["REDIS_URL"]
        return
    proc, url = start_redis(tmp_path_factory.mktemp("redis"))
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="session")
def strict_redis_url(redis_url) -> str:
    """The same server, the next database: the strict worker pool's queues."""
    return _redis_db(redis_url, 1)


@pytest.fixture(scope="session")
def hit_counter() -> HitCounter:
    return HitCounter()


@pytest.fixture(scope="session")
def site_server(hit_counter) -> Iterator:
    server = serve(SITE_HOST, 0, loopback_target=f"http://127.0.0.1:{hit_counter.port}/")
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def site(site_server) -> str:
    """Base URL of the test website (no trailing slash)."""
    return f"http://{SITE_HOST}:{site_server.server_address[1]}"


def _start_workers(redis: str, count: int, env: dict[str, str], log: Path,
                   module: str = "worker", queues: tuple[str, ...] = ("interactive",)) -> list:
    """``count`` processes of ``python -m <module> QUEUE…``, once registered in Redis."""
    full_env = {**os.environ, **env, "REDIS_URL": redis}
    with log.open("ab") as out:  # the children write to their own copies of it
        procs = [
            subprocess.Popen([sys.executable, "-m", module, *queues], cwd=ROOT, env=full_env,
                             stdout=out, stderr=subprocess.STDOUT)
            for _ in range(count)
        ]
    connection = Redis.from_url(redis)
    deadline = time.monotonic() + 60
    while len(Worker.all(connection=connection)) < count:
        if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
            raise RuntimeError(f"Workers did not start; see {log}")
        time.sleep(0.1)
    return procs


def _stop(procs) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _redis_db(redis_url: str, offset: int) -> str:
    """The same server, database number + ``offset``: another worker pool's queues."""
    parts = urlsplit(redis_url)
    number = int(parts.path.strip("/") or 0) + offset
    return urlunsplit(parts._replace(path=f"/{number}"))


@pytest.fixture(scope="session")
def workers(redis_url, site, sqlite_url, tmp_path_factory) -> Iterator[list]:
    """The normal pool, on the session's database (the page cache it fills is the one the
    ``app`` reads); the video platform is the test site's fake, without a Data API key."""
    log = tmp_path_factory.mktemp("logs") / "workers.log"
    env = {**WORKER_ENV, "YOUTUBE_BASE_URL": site, "DATABASE_URL": sqlite_url,
           "CACHE_MAX_BYTES": str(512 * 1024 * 1024)}
    procs = _start_workers(redis_url, 2, env, log)
    yield procs
    _stop(procs)


@pytest.fixture(scope="session")
def data_api_redis_url(redis_url) -> str:
    return _redis_db(redis_url, 2)


@pytest.fixture(scope="session")
def data_api_workers(data_api_redis_url, site, tmp_path_factory) -> Iterator[list]:
    """One worker with ``YOUTUBE_API_KEY`` set, its Data API being the test site's fake."""
    log = tmp_path_factory.mktemp("logs") / "data-api-workers.log"
    env = {**WORKER_ENV, "YOUTUBE_BASE_URL": site, "YOUTUBE_API_URL": f"{site}/youtube/v3",
           "YOUTUBE_API_KEY": DATA_API_KEY}
    procs = _start_workers(data_api_redis_url, 1, env, log)
    yield procs
    _stop(procs)


@pytest.fixture(scope="session")
def strict_workers(strict_redis_url, tmp_path_factory) -> Iterator[list]:
    log = tmp_path_factory.mktemp("logs") / "strict-workers.log"
    procs = _start_workers(strict_redis_url, 1, {**WORKER_ENV, "CRAWLER_ALLOWED_NETWORKS": ""},
                           log)
    yield procs
    _stop(procs)


@pytest.fixture(scope="session")
def sqlite_url(tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'test.db'}"
    migrate(url)
    return url


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str | None]:
    """A fresh database of our own on the TEST_DATABASE_URL server, dropped at the end."""
    base = os.environ.get("TEST_DATABASE_URL")
    if not base:
        yield None
        return
    import psycopg2

    parts = urlsplit(base)
    name = f"{parts.path.strip('/') or 'webdata_test'}_{uuid.uuid4().hex[:8]}"
    admin = urlunsplit(parts._replace(path="/postgres"))
    conn = psycopg2.connect(admin)
    conn.autocommit = True
    conn.cursor().execute(f'CREATE DATABASE "{name}"')
    url = urlunsplit(parts._replace(path=f"/{name}"))  # postgresql://, as users write it
    migrate(url)
    yield url
    Database(url).dispose()
    conn.cursor().execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    conn.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, sqlite_url, postgres_url) -> str:
    """Both engines, for the tests about money; PostgreSQL skipped without TEST_DATABASE_URL."""
    if request.param == "sqlite":
        return sqlite_url
    if not postgres_url:
        pytest.skip("TEST_DATABASE_URL is not set")
    return postgres_url


def make_config(database_url: str, redis_url: str, **overrides) -> Config:
    """The tests' configuration: ``overrides`` by field name, whatever their section."""
    values = dict(database_url=database_url, redis_url=redis_url, job_wait_seconds=30,
                  allowed_networks=ALLOWED)
    values.update(overrides)
    return Config.of(**values)


@pytest.fixture(scope="session")
def app(sqlite_url, redis_url, workers):
    return create_app(make_config(sqlite_url, redis_url))


@pytest.fixture(scope="session")
def strict_app(sqlite_url, strict_redis_url, strict_workers):
    """An API whose pre-check and workers allow no private network at all."""
    return create_app(make_config(sqlite_url, strict_redis_url, allowed_networks=""))


@pytest.fixture(scope="session")
def data_api_app(sqlite_url, data_api_redis_url, data_api_workers):
    """An API whose workers read counts and caption status from the (fake) Data API."""
    return create_app(make_config(sqlite_url, data_api_redis_url))


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture(scope="module")
def stack(tmp_path_factory, sqlite_url, site) -> Iterator:
    """A collection stack of the test module's own (tests/support/collection_stack.py: a Redis, two
    workers, an app); a module that needs another kind defines its own ``stack``."""
    from tests.support.collection_stack import Stack

    stack = Stack(tmp_path_factory.mktemp("stack"), sqlite_url, site)
    yield stack
    stack.close()


@pytest.fixture(scope="module")
def service(stack) -> Iterator[str]:
    """The module's stack's API over real HTTP (for a command or a browser)."""
    from tests.support.collection_stack import served

    with served(stack.app) as url:
        yield url


def closed(response):
    """``response`` closed as a WSGI server closes an answer once it is sent (the account's
    slot of a results page or an export is given back then), unless it streams: a test reads
    a stream, then closes it."""
    if not response.is_streamed:
        response.close()
    return response


class Customer:
    """An account with a key, and shortcuts to call the API as it."""

    def __init__(self, app, account_id: str, key: str):
        self.app = app
        self.account_id = account_id
        self.key = key
        self.client = app.test_client()

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    def post(self, path: str, body, client=None):
        return closed((client or self.client).post(f"/api/service/v1{path}", json=body,
                                                   headers=self.headers))

    def get(self, path: str, **kwargs):
        return closed(self.client.get(f"/api/service/v1{path}", headers=self.headers,
                                      **kwargs))

    def patch(self, path: str, body):
        return closed(self.client.patch(f"/api/service/v1{path}", json=body,
                                        headers=self.headers))

    def delete(self, path: str):
        return closed(self.client.delete(f"/api/service/v1{path}", headers=self.headers))

    def balance(self) -> int:
        return ledger.balance_of(self.app.extensions["webdata.db"], self.account_id)

    def activity(self) -> list[dict]:
        return self.get("/account/activity?limit=100").get_json()["activity"]


def new_customer(app, credits: int = 100, plan: str = "free") -> Customer:
    db = app.extensions["webdata.db"]
    with db.write() as session:
        account = accounts.create_account(session, f"test-{uuid.uuid4().hex[:10]}", plan)
        key = accounts.create_key(session, account)
        account_id = account.id
    if credits:
        ledger.grant(db, account_id, credits, f"grant:{uuid.uuid4().hex}")
    return Customer(app, account_id, key)


@pytest.fixture
def lenient_ipaddress(monkeypatch) -> None:
    """``ipaddress`` without its "reserved" ``::/8`` and private ``2001::/23``: the entries
    that alone refused IPv4-compatible, NAT64 and Teredo addresses before the source policy
    named them itself (as on a Python whose lists judged them public)."""
    constants = ipaddress.IPv6Address._constants
    dropped = {ipaddress.IPv6Network("::/8"), ipaddress.IPv6Network("2001::/23")}
    for name in ("_reserved_networks", "_private_networks"):
        kept = [net for net in getattr(constants, name) if net not in dropped]
        monkeypatch.setattr(constants, name, kept)
    assert ipaddress.ip_address("::7f00:1").is_global


@pytest.fixture
def customer(app) -> Customer:
    return new_customer(app)


@pytest.fixture
def strict_customer(strict_app) -> Customer:
    return new_customer(strict_app)


def account_at_old_revision(session, name: str, plan: str) -> str:
    """An account inserted with the columns revision 0001 made (the ORM model has more): for
    tests that migrate a database made by older code."""
    account_id = "acct_" + uuid.uuid4().hex[:16]
    session.execute(text(
        "INSERT INTO accounts (id, name, plan_id, balance, webhook_secret, created_at) "
        "SELECT :id, :name, id, 0, 'whsec_old', CURRENT_TIMESTAMP FROM plans "
        "WHERE name = :plan"), {"id": account_id, "name": name, "plan": plan})
    return account_id


@pytest.fixture
def receiver() -> Iterator:
    """A webhook receiver on loopback for one test (tests/support/webhook_receiver.py)."""
    from tests.support.webhook_receiver import start_receiver

    receiver = start_receiver()
    yield receiver
    receiver.close()
