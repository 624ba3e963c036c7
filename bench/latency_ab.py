"""``POST /scrape`` at one request at a time: this checkout against another revision, interleaved.

    .venv/bin/python bench/latency_ab.py --base REV [--requests 1000] [--workers 2]

Why: this machine's speed wanders by 10-25 % from one minute to the next, and a change worth
half a millisecond is lost between two runs of ``bench/latency.py`` made a minute apart. Here
both stacks run at once and the requests take turns, one to the base revision's API, one to
this checkout's, one bare fetch + extraction (as ``bench/latency.py`` makes it), so a slow
minute slows all three alike.

Set up privately on loopback: one redis-server (a database per side), one SQLite database with
a funded account (migrated by this checkout: the base must run on its schema), one static
server for the article page; per side, ``--workers`` warm workers and the API under gunicorn
with ``make run``'s flags, from a temporary ``git worktree`` of ``--base`` for the base side.
Both sides use this checkout's ``.venv``. Prints each side's p50 and its distance above the
bare p50; exit status 0.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from latency import SCRAPE, article_site, bare_extract, client, measure  # noqa: E402
from stack import (  # noqa: E402
    funded_key,
    run_and_report,
    stack_env,
    start_api,
    start_workers,
    wait_for,
)

from launcher.embedded import start_redis  # noqa: E402


@contextlib.contextmanager
def worktree(revision: str, where: Path):
    """A detached checkout of ``revision`` at ``where``, removed afterwards."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--force",
                    str(where), revision], check=True, capture_output=True)
    try:
        yield where
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)],
                       capture_output=True)


def side(tree: Path, database: int, redis_url: str, env: dict[str, str], workers: int,
         procs: list[subprocess.Popen]) -> int:
    """Workers and the API of the checkout at ``tree`` on Redis database ``database``; the
    API's port, once its workers listen and it answers."""
    from rq import Worker

    from worker.queues import INTERACTIVE, queue, redis_connection

    url = f"{redis_url.rsplit('/', 1)[0]}/{database}"
    env = {**env, "REDIS_URL": url}
    start_workers(workers, env, procs, (INTERACTIVE,), cwd=tree)
    port = start_api(env, procs, cwd=tree)
    interactive = queue(INTERACTIVE, redis_connection(url))
    wait_for(lambda: Worker.count(queue=interactive) >= workers, f"the workers of {tree}", 120)
    wait_for(lambda: client(port, "GET", "/healthz")()(), f"the API of {tree}")
    return port


def run(args: argparse.Namespace, tmp: Path, procs: list[subprocess.Popen]) -> dict:
    redis_proc, redis_url = start_redis(tmp)
    procs.append(redis_proc)
    database_url = f"sqlite:///{tmp / 'bench.db'}"
    key = funded_key(database_url, 2 * args.requests + 1000)
    env = stack_env(redis_url, database_url)
    site_port = article_site(tmp, env, procs)
    page_url = f"http://127.0.0.1:{site_port}/article.html"
    body = json.dumps({"url": page_url})
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    with worktree(args.base, tmp / "base") as base:
        ports = {"base": side(base, 1, redis_url, env, args.workers, procs),
                 "this": side(ROOT, 2, redis_url, env, args.workers, procs)}
        factories = {name: client(port, "POST", SCRAPE, body, headers)
                     for name, port in ports.items()}
        factories["bare"] = client(site_port, "GET", "/article.html",
                                   then=bare_extract(page_url))
        for factory in factories.values():
            measure(factory, args.warmup, 8)  # every thread, worker and cache warm
        calls = {name: factory() for name, factory in factories.items()}
        times: dict[str, list[float]] = {name: [] for name in calls}
        for _ in range(args.requests):
            for name, call in calls.items():
                began = time.perf_counter()
                call()
                times[name].append((time.perf_counter() - began) * 1000)
    p50 = {name: statistics.median(values) for name, values in times.items()}
    return {"base": args.base, "requests": args.requests, "workers": args.workers,
            "p50_ms": p50, "over_bare_ms": {name: p50[name] - p50["bare"]
                                            for name in ("base", "this")}}


def report(results: dict) -> bool:
    print(f"\n{results['requests']} requests each, interleaved, workers={results['workers']}")
    for name in ("base", "this", "bare"):
        label = f"{name} ({results['base']})" if name == "base" else name
        over = results["over_bare_ms"].get(name)
        extra = f"   {over:+.2f} ms over bare" if over is not None else ""
        print(f"{label:24}p50 {results['p50_ms'][name]:7.2f} ms{extra}")
    change = results["p50_ms"]["this"] - results["p50_ms"]["base"]
    print(f"{'this - base':24}    {change:+7.2f} ms")
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="the git revision to compare with")
    parser.add_argument("--requests", type=int, default=1000,
                        help="requests to each side (default 1000)")
    parser.add_argument("--workers", type=int, default=2, help="warm workers per side")
    parser.add_argument("--warmup", type=int, default=60, help="warm-up requests per side")
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = parser.parse_args()
    run_and_report("webdata-bench-ab-", lambda tmp, procs: run(args, tmp, procs), report,
                   args.json)


if __name__ == "__main__":
    main()
