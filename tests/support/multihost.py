"""A deployment on separate hosts (network namespaces, :mod:`tests.support.netns`), started the
way an operator starts one: for tests/test_multihost.py and bench/multihost.py.

- ``db`` (10.213.0.2): a PostgreSQL cluster of its own (``initdb`` of the machine's
  PostgreSQL, run as ``postgres``) and a redis-server keeping an append-only file;
- ``api`` (10.213.0.3): gunicorn, by the ``ExecStart`` of deploy/systemd/webdata-api.service;
- ``w1``, ``w2``, ``w3`` (10.213.0.11…): one worker each, by webdata-worker@.service's, and the
  cron scheduler on ``w1`` by webdata-cron.service's;
- ``site`` (10.213.9.2, a subnet of its own): :mod:`tests.support.site.many` on two ports.

The unit files are read here (``ExecStart``, ``/opt/webdata`` as this checkout) and every
process gets the environment of one env file written like deploy/webdata.env, with the
``db`` host's addresses: so the documented commands are the tested ones. Nothing talks over
loopback; the crawler may fetch the site's subnet only.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

from tests.support.netns import LAN, SITE_NET, Network

ROOT = Path(__file__).resolve().parents[2]
UNITS = ROOT / "deploy" / "systemd"
PG_BIN = Path(os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"))
DB, API = f"{LAN}.2", f"{LAN}.3"
SITE = f"{SITE_NET}.2"
WORKER_HOSTS = {"w1": 11, "w2": 12, "w3": 13}
API_PORT, METRICS_PORT, SITE_PORTS = 8000, 9101, (8080, 8081)
BASE = f"http://{API}:{API_PORT}/api/service/v1"


def unit_command(unit: str, host: str = "", instance: str = "") -> list[str]:
    """The ``ExecStart`` of deploy/systemd/``unit``, run from this checkout: ``/opt/webdata``
    is the checkout, ``%H`` the host's name, ``%i`` the instance."""
    lines = (UNITS / unit).read_text().splitlines()
    start = next(line.split("=", 1)[1] for line in lines if line.startswith("ExecStart="))
    start = start.replace("/opt/webdata", str(ROOT)).replace("%H", host).replace("%i", instance)
    assert "EnvironmentFile=/etc/webdata/webdata.env" in lines, unit
    return shlex.split(start)


def read_env_file(path: Path) -> dict[str, str]:
    """``KEY=value`` lines as systemd's ``EnvironmentFile=`` reads them (# comments)."""
    pairs = (line.split("=", 1) for line in path.read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#"))
    return {key.strip(): value.strip() for key, value in pairs}


@dataclass
class Cluster:
    """The hosts and their processes; :meth:`close` stops and removes everything."""

    tmp: Path
    settings: dict[str, str] = field(default_factory=dict)
    #: Each site port's delay before it answers a page (ms).
    site_delays: tuple[int, ...] = (0, 0)
    site_pages: int = 3000
    workers: tuple[str, ...] = tuple(WORKER_HOSTS)
    net: Network = field(init=False)
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)
    key: str = ""
    account_id: str = ""

    def __post_init__(self) -> None:
        self.net = Network()
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    # --- start ----------------------------------------------------------------------------

    def _start(self) -> None:
        self.net.add("db", 2)
        self.net.add("api", 3)
        for host in self.workers:
            self.net.add(host, WORKER_HOSTS[host])
        self.net.add("site", 2, site_net=True)
        self.env = self._environment()
        self._postgres()
        self.start_redis()
        ports = [f"{port}@{delay}"
                 for port, delay in zip(SITE_PORTS, self.site_delays, strict=True)]
        self._spawn("site", "site", [sys.executable, "-m", "tests.support.site.many", SITE,
                                     *ports, "--pages", str(self.site_pages)])
        flask = [str(ROOT / ".venv" / "bin" / "flask"), "--app", "api"]
        self.net.run("api", [*flask, "db", "upgrade"], env=self.env, cwd=ROOT)
        made = self.net.run("api", [*flask, "accounts", "create", "multihost", "--credits",
                                    "1000000", "--plan", "enterprise"], env=self.env, cwd=ROOT)
        self.key = made.stdout.strip().splitlines()[-1]
        import psycopg2

        with psycopg2.connect(self.env["DATABASE_URL"]) as conn, conn.cursor() as cur:
            cur.execute("SELECT id FROM accounts WHERE name = 'multihost'")
            self.account_id = cur.fetchone()[0]
        self.start_api()
        for host in self.workers:
            self.start_worker(host)
        self._spawn("cron", self.workers[0], unit_command("webdata-cron.service"))
        self.wait_ready(len(self.workers))

    def _environment(self) -> dict[str, str]:
        """The deployment's env file (as deploy/webdata.env), written and read back."""
        values = {
            "REDIS_URL": f"redis://{DB}:6379/0",
            "DATABASE_URL": f"postgresql://postgres@{DB}:5432/webdata",
            "HOST": API, "PORT": str(API_PORT),
            "WORKER_METRICS_PORT": str(METRICS_PORT), "WORKER_METRICS_HOST": "0.0.0.0",
            "CRAWLER_ALLOWED_NETWORKS": f"{SITE_NET}.0/24",
            "LOG_LEVEL": "INFO", "CACHE_MAX_BYTES": "0",
            **self.settings,
        }
        env_file = self.tmp / "webdata.env"
        env_file.write_text("".join(f"{key}={value}\n" for key, value in values.items()))
        base = {key: os.environ[key] for key in ("PATH", "LANG", "HOME") if key in os.environ}
        # PYTHONPATH: this checkout's code, whichever checkout .venv's editable install names
        return {**base, "PYTHONUNBUFFERED": "1", "VAR_DIR": str(self.tmp / "var"),
                "PYTHONPATH": str(ROOT),
                **read_env_file(env_file)}

    def _spawn(self, name: str, host: str, argv: list[str],
               extra: dict[str, str] | None = None) -> subprocess.Popen:
        """``argv`` on ``host``, its output in ``tmp/<name>.log`` (appended)."""
        with (self.tmp / f"{name}.log").open("ab") as log:
            proc = self.net.run_in(host, argv, env={**self.env, **(extra or {})}, cwd=ROOT,
                                   stdout=log, stderr=subprocess.STDOUT)
        self.procs[name] = proc
        return proc

    def _postgres(self) -> None:
        """A cluster of its own, owned by ``postgres`` (initdb refuses root), on ``db``."""
        data = Path(tempfile.mkdtemp(prefix="wdmh-pg-"))
        self.pg_dir = data
        shutil.chown(data, "postgres", "postgres")
        as_postgres = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"]
        subprocess.run([*as_postgres, str(PG_BIN / "initdb"), "-D", str(data / "data"),
                        "-U", "postgres", "--auth=trust", "-N"], check=True,
                       capture_output=True, cwd=data)
        with (data / "data" / "pg_hba.conf").open("a") as hba:
            hba.write(f"host all all {LAN}.0/24 trust\n")
        self._spawn("postgres", "db", [*as_postgres, str(PG_BIN / "postgres"), "-D",
                                       str(data / "data"), "-c", f"listen_addresses={DB}",
                                       "-c", "port=5432", "-c", f"unix_socket_directories={data}",
                                       "-c", "max_connections=300", "-c", "fsync=off"])
        import psycopg2

        admin = f"postgresql://postgres@{DB}:5432/postgres"
        _wait(lambda: psycopg2.connect(admin, connect_timeout=2).close() or True,
              "PostgreSQL on db", 60)
        conn = psycopg2.connect(admin)
        conn.autocommit = True
        conn.cursor().execute("CREATE DATABASE webdata")
        conn.close()

    def start_redis(self) -> None:
        """redis-server on ``db``, its append-only file in ``tmp/redis`` (kept across
        restarts: the same data)."""
        (self.tmp / "redis").mkdir(exist_ok=True)
        self._spawn("redis", "db", ["redis-server", "--bind", DB, "--port", "6379",
                                    "--dir", str(self.tmp / "redis"), "--appendonly", "yes",
                                    "--save", "", "--protected-mode", "no"])
        from redis import Redis

        _wait(lambda: Redis(host=DB, port=6379, socket_timeout=1).ping(), "Redis on db", 30)

    def stop(self, name: str, timeout: float = 90) -> None:
        """SIGTERM process ``name`` and wait for it (SIGKILL after ``timeout``)."""
        proc = self.procs[name]
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def start_api(self) -> None:
        metrics = self.tmp / "api-metrics"
        shutil.rmtree(metrics, ignore_errors=True)
        metrics.mkdir()
        self._spawn("api", "api", unit_command("webdata-api.service"),
                    {"PROMETHEUS_MULTIPROC_DIR": str(metrics)})

    def start_worker(self, host: str) -> subprocess.Popen:
        return self._spawn(f"worker-{host}", host,
                           unit_command("webdata-worker@.service", host, "1"))

    def wait_ready(self, workers: int, timeout: float = 120) -> None:
        """Until ``/healthz`` is 200 with ``workers`` live workers on ``collections``."""
        def ready() -> bool:
            answer = requests.get(f"http://{API}:{API_PORT}/healthz", timeout=5)
            return (answer.status_code == 200
                    and answer.json()["workers"].get("collections", 0) >= workers)
        _wait(ready, f"the API and {workers} workers (logs in {self.tmp})", timeout)

    # --- use ------------------------------------------------------------------------------

    def call(self, method: str, path: str, body: object = None,
             timeout: float = 30) -> requests.Response:
        return requests.request(method, BASE + path, json=body, timeout=timeout,
                                headers={"Authorization": f"Bearer {self.key}"})

    def worker_pages(self, host: str) -> int:
        """Pages the worker of ``host`` stored (its metrics: first stores only)."""
        text = requests.get(f"http://{LAN}.{WORKER_HOSTS[host]}:{METRICS_PORT}/metrics",
                            timeout=5).text
        return int(sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                       if line.startswith("webdata_collection_pages_total{")))

    def sql(self, query: str, *args: object) -> list[tuple]:
        import psycopg2

        with psycopg2.connect(self.env["DATABASE_URL"]) as conn, conn.cursor() as cur:
            cur.execute(query, args)
            rows = cur.fetchall()
        conn.close()
        return rows

    def logs(self, lines: int = 15) -> str:
        """The last ``lines`` of every process's log but its INFO lines, for a failure's
        message (the whole logs stay in ``tmp``)."""
        parts = [f"(whole logs in {self.tmp})"]
        for log in sorted(self.tmp.glob("*.log")):
            tail = [line for line in log.read_text(errors="replace").splitlines()
                    if " INFO " not in line and "[INFO]" not in line][-lines:]
            parts.append(f"--- {log.name}\n" + "\n".join(tail))
        return "\n".join(parts)

    def close(self) -> None:
        self.net.close()
        if getattr(self, "pg_dir", None):
            shutil.rmtree(self.pg_dir, ignore_errors=True)


def _wait(check, what: str, timeout: float) -> None:
    """Until ``check()`` is true without raising; AssertionError after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except Exception as exc:  # not up yet
            error = exc
        time.sleep(0.2)
    raise AssertionError(f"gave up waiting for {what} (last error: {error!r})")
