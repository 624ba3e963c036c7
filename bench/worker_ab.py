"""What the API's gunicorn worker costs a request: ``api.gunicorn_worker.ApiWorker`` (requests
read in its main loop, docs/operators.md "Slow clients") against gunicorn's plain ``gthread``.

    .venv/bin/python bench/worker_ab.py [--rounds 10] [--requests 200]

Both serve the same app, database and Redis, one process and 8 threads each; the client sends
``GET /api/service/v1/account`` (a key check, no worker) in turns to one and the other: on a
kept-alive connection, and on a new connection each time. Prints p50/p90 per side.
"""

from __future__ import annotations

import argparse
import http.client
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from stack import funded_key, stack_env, start, stop, wait_for

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from launcher.embedded import free_port, start_redis  # noqa: E402

WORKERS = {"ApiWorker": "api.gunicorn_worker.ApiWorker", "gthread": "gthread"}
PATH = "/api/service/v1/account"


def timed(port: int, key: str, count: int, *, keep_alive: bool) -> list[float]:
    """Milliseconds of ``count`` requests, on one kept-alive connection or each on its own."""
    headers = {"Authorization": f"Bearer {key}"}
    if not keep_alive:
        headers["Connection"] = "close"
    spent, connection = [], http.client.HTTPConnection("127.0.0.1", port)
    for _ in range(count):
        if not keep_alive:
            connection = http.client.HTTPConnection("127.0.0.1", port)
        started = time.perf_counter()
        connection.request("GET", PATH, headers=headers)
        answer = connection.getresponse()
        answer.read()
        spent.append((time.perf_counter() - started) * 1000)
        if answer.status != 200:
            raise RuntimeError(f"{PATH} answered {answer.status}")
        if not keep_alive:
            connection.close()
    connection.close()
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    procs: list = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            redis, redis_url = start_redis(Path(tmp))
            procs.append(redis)
            database = f"sqlite:///{tmp}/bench.db"
            key = funded_key(database, 1000)
            ports = {name: free_port() for name in WORKERS}
            for name, worker in WORKERS.items():
                start([sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{ports[name]}",
                       "--worker-class", worker, "--workers", "1", "--threads", "8",
                       "api:create_app()"], stack_env(redis_url, database), procs)
            for port in ports.values():
                wait_for(lambda port=port: timed(port, key, 1, keep_alive=True), "the API")
            kinds: dict[str, Callable[[int], list[float]]] = {
                "kept alive": lambda port: timed(port, key, args.requests, keep_alive=True),
                "new connection": lambda port: timed(port, key, args.requests // 4,
                                                     keep_alive=False)}
            spent = {(name, kind): [] for name in WORKERS for kind in kinds}
            for _ in range(args.rounds):
                for name, port in ports.items():
                    for kind, run in kinds.items():
                        spent[name, kind] += run(port)
            for (name, kind), values in spent.items():
                print(f"{name:10s} {kind:15s} n={len(values):5d}  p50 "
                      f"{statistics.median(values):6.3f} ms  p90 "
                      f"{statistics.quantiles(values, n=10)[8]:6.3f} ms")
        finally:
            stop(procs)


if __name__ == "__main__":
    main()
