"""A stack of its own for collection tests: a private Redis, warm workers on the
``collections`` queue writing to the session's SQLite database, and an API in front of them.

Its own Redis, because a collection's slices must only ever be taken by workers that write to
the database its API reads (a worker of another pool would not find the collection).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from redis import Redis
from rq import Worker
from werkzeug.serving import make_server

from api import create_app
from launcher.embedded import start_redis
from tests.conftest import ROOT, WORKER_ENV, _stop, make_config
from tests.support.waits import wait_until

#: Pages of collections in flight to one host at once, all workers together (below what the
#: two workers' slices would open without it: 2 x 8).
HOST_CAP = 3
#: Short slices and leases, so that hand-overs and lost leases happen within a test.
ENV = {"COLLECTION_SLICE_SECONDS": "2", "COLLECTION_LEASE_SECONDS": "3",
       "COLLECTION_CONCURRENCY": "8", "COLLECTION_HOST_CONCURRENCY": str(HOST_CAP)}
FINAL = {"completed", "cancelled", "failed"}


class Stack:
    """Redis, ``workers`` worker processes and an app; :meth:`close` stops them.
    ``overrides``: more fields of the app's configuration (a search provider's URL…)."""

    def __init__(self, directory: Path, database_url: str, site: str, workers: int = 2,
                 **overrides: Any):
        self.redis_proc, self.redis_url = start_redis(directory)
        self.database_url, self.site, self.log = database_url, site, directory / "workers.log"
        self.env = {**WORKER_ENV, **ENV, "DATABASE_URL": database_url,
                    "YOUTUBE_BASE_URL": site, "CACHE_MAX_BYTES": str(512 * 1024 * 1024)}
        self.procs: list[subprocess.Popen] = []
        self.start_workers(workers)
        self.config = make_config(database_url, self.redis_url, collection_slice_seconds=2.0,
                                  collection_lease_seconds=3.0, collection_concurrency=8,
                                  **overrides)
        self.app = create_app(self.config)

    def start_workers(self, count: int) -> None:
        """``count`` more workers on the interactive and collections queues."""
        self.procs += _spawn(self.redis_url, count, self.env, self.log)

    def close(self) -> None:
        _stop(self.procs)
        self.redis_proc.terminate()
        self.redis_proc.wait(timeout=10)


def _spawn(redis_url: str, count: int, env: dict[str, str], log: Path
           ) -> list[subprocess.Popen]:
    """``count`` more workers on maintenance (webhooks), interactive and collections, once
    registered."""
    full_env = {**os.environ, **env, "REDIS_URL": redis_url}
    connection = Redis.from_url(redis_url)
    running = len(Worker.all(connection=connection))
    with log.open("ab") as out:  # the children write to their own copies of it
        procs = [subprocess.Popen([sys.executable, "-m", "worker", "maintenance", "interactive",
                                   "collections"],
                                  cwd=ROOT, env=full_env, stdout=out,
                                  stderr=subprocess.STDOUT) for _ in range(count)]
    wait_until(lambda: len(Worker.all(connection=connection)) >= running + count,
               f"{count} worker(s) to start (see {log})", timeout=60)
    return procs


def wait_final(customer: Any, collection_id: str, timeout: float = 60) -> dict[str, Any]:
    """The collection once it is final."""
    found: dict[str, Any] = {}

    def final() -> bool:
        found.update(customer.get(f"/collections/{collection_id}").get_json())
        return found.get("status") in FINAL

    wait_until(final, f"collection {collection_id} to finish", timeout=timeout, pause=0.2)
    return found


def all_results(customer: Any, collection_id: str, limit: int = 3, **query: str
                ) -> list[dict[str, Any]]:
    """Every result, page by page, following ``next_cursor`` until it is null."""
    results: list[dict[str, Any]] = []
    cursor = None
    for _ in range(1000):
        params = {"limit": str(limit), **query, **({"cursor": cursor} if cursor else {})}
        answer = customer.get(f"/collections/{collection_id}/results", query_string=params)
        assert answer.status_code == 200, answer.get_json()
        body = answer.get_json()
        results += body["results"]
        cursor = body["next_cursor"]
        if cursor is None:
            return results
        if not body["results"]:
            time.sleep(0.1)
    raise AssertionError("the results never ended")


@contextmanager
def served(app: Any) -> Iterator[str]:
    """``app`` on a loopback port, served in a thread as ``make run`` serves it (for tests
    that need real HTTP: a command, a browser; the others use Flask's test client); its
    base URL."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)
        server.server_close()
