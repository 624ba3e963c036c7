"""Where one ``POST /scrape`` spends its time, stage by stage, at one request at a time.

    .venv/bin/python bench/stages.py [--requests 200] [--warmup 60]

Why: ``bench/latency.py`` says how far the API is above the bare fetch + extraction; this says
which stage holds the difference. It sets up, privately and on loopback, a redis-server, a
SQLite database with a funded account, a static server for the article page and one warm
worker, then:

1. the worker alone: jobs enqueued as batch code does, one at a time; time from enqueue to
   result, the job's own run (RQ's ``started_at`` → ``ended_at``), and the worker process's CPU
   per job (``/proc``);
2. the API in this process (Flask's test client, no gunicorn or HTTP) against that worker,
   with each stage of a request timed by wrapping the function that does it.

Medians are printed. Nothing here asserts a bar.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from latency import article_site  # noqa: E402
from stack import funded_key, start, stop, wait_for  # noqa: E402

from launcher.embedded import start_redis  # noqa: E402


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def median_ms(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ms"


def worker_alone(redis_url: str, page: str, worker_pid: int, args: argparse.Namespace) -> None:
    from redis import Redis

    from worker.queues import INTERACTIVE, queue

    interactive = queue(INTERACTIVE, Redis.from_url(redis_url))
    walls: list[float] = []
    runs: list[float] = []
    cpu_before = 0.0
    for n in range(args.warmup + args.requests):
        if n == args.warmup:
            cpu_before = cpu_seconds(worker_pid)
        began = time.perf_counter()
        job = interactive.enqueue("worker.jobs.scrape", page)
        result = job.latest_result(timeout=30)
        wall = (time.perf_counter() - began) * 1000
        if result is None or result.return_value["status"] != "succeeded":
            raise SystemExit(f"job failed: {result and result.return_value}")
        if n >= args.warmup:
            job.refresh()
            walls.append(wall)
            runs.append((job.ended_at - job.started_at).total_seconds() * 1000)
    cpu = (cpu_seconds(worker_pid) - cpu_before) / args.requests * 1000
    print("worker alone, one job at a time:")
    print(f"  enqueue -> result   {median_ms(walls)}")
    print(f"  the job's own run   {median_ms(runs)}")
    print(f"  worker CPU per job  {cpu:.2f} ms")


def api_stages(database_url: str, page: str, args: argparse.Namespace) -> None:
    import api.auth
    import api.dispatch
    import api.inflight
    import api.limits
    import api.operations
    import storage.accounts
    import storage.ledger
    from api import create_app

    times: dict[str, list[float]] = defaultdict(list)

    def timed(owner: Any, name: str, label: str) -> None:
        original: Callable[..., Any] = getattr(owner, name)

        @functools.wraps(original)
        def wrapper(*a: Any, **k: Any) -> Any:
            began = time.perf_counter()
            try:
                return original(*a, **k)
            finally:
                times[label].append((time.perf_counter() - began) * 1000)
        setattr(owner, name, wrapper)

    timed(storage.accounts, "authenticate", "authentication")
    timed(api.limits.AccountRateLimiter, "check", "rate limit")
    timed(storage.ledger, "reserve", "ledger reserve")
    timed(api.inflight, "try_acquire", "account slot taken")
    timed(api.operations, "run_interactive", "the job (enqueue -> result)")
    timed(api.inflight, "release", "account slot given back")
    timed(storage.ledger, "capture", "ledger capture")
    key = funded_key(database_url, args.warmup + args.requests + 10)
    client = create_app().test_client()
    headers = {"Authorization": f"Bearer {key}"}
    totals: list[float] = []
    for n in range(args.warmup + args.requests):
        if n == args.warmup:
            times.clear()
        began = time.perf_counter()
        response = client.post("/api/service/v1/scrape", json={"url": page}, headers=headers)
        totals.append((time.perf_counter() - began) * 1000)
        if response.status_code != 200:
            raise SystemExit(f"/scrape answered {response.status_code}: {response.get_data()!r}")
    print("the API in-process (no gunicorn, no HTTP), one request at a time:")
    print(f"  whole request       {median_ms(totals[args.warmup:])}")
    for label, values in times.items():
        print(f"  {label:<28}{median_ms(values)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="webdata-stages-") as tmp_dir:
        tmp = Path(tmp_dir)
        redis_proc, redis_url = start_redis(tmp)
        procs: list[subprocess.Popen] = [redis_proc]
        # the static server bench/latency.py measures against
        port = article_site(tmp, dict(os.environ), procs)
        database_url = f"sqlite:///{tmp / 'stages.db'}"
        settings = {"REDIS_URL": redis_url, "DATABASE_URL": database_url,
                    "LOG_LEVEL": "WARNING", "CRAWLER_ALLOWED_NETWORKS": "127.0.0.0/8"}
        os.environ.update(settings)
        start([sys.executable, "-m", "worker", "interactive"], dict(os.environ), procs)
        try:
            from redis import Redis
            from rq import Worker

            page = f"http://127.0.0.1:{port}/article.html"
            wait_for(lambda: Worker.count(connection=Redis.from_url(redis_url)) >= 1,
                     "the worker", 60)
            worker_alone(redis_url, page, procs[-1].pid, args)
            api_stages(database_url, page, args)
        finally:
            stop(procs)


if __name__ == "__main__":
    main()
