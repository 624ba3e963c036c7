"""Scale on one machine: one crawl of a 100,000-page generated site, watched from start to end.

    .venv/bin/python bench/scale.py [--pages 100000] [--sqlite] [--every 5] [--json]

Why: issue 32 asks that, on one machine, a 100,000-page crawl of a generated site served by
nginx completes with every page stored once, and for its pages/s over time, Redis's memory
per admitted URL, the database's size per stored page and the workers' memory at its start,
middle and end (flat: growth under 100 MB).

What runs, all private and on 127.0.0.1 (bench/crawl.py's parts): ``--pages`` pages from
``../shared/tools/make_site.py`` served by nginx on two ports (the crawl's, and a warm-up
batch's), a redis-server, a PostgreSQL database of its own on 127.0.0.1:5432 (created and
dropped here; ``--sqlite``: a SQLite file) with an account on a plan of the bench's own whose
``max_crawl_pages`` allows the crawl (the ``enterprise`` plan stops at 10,000), the API under
gunicorn with ``make run``'s flags and the workers as ``make run`` starts them: ``python -m
worker --processes 2 --cron`` (two forks of one parent, the parent running the cron).

Measured: ``POST /collections {"mode": "crawl", "max_pages": --pages + 100, "max_depth":
20, "use_sitemap": false, "extract": "page"}`` after a 200-page warm-up batch; every
``--every`` seconds its progress, Redis's ``used_memory`` and the frontier's lengths, each
worker's RSS and PSS (``smaps_rollup``). At the end: result rows against distinct URLs and
page keys and against the pages the site has reachable (read from its files), the database's
size per stored page, Redis's memory by key, nginx's requests. Scripts are not tests: the
figures are printed, and the exit status is 1 when a bar (complete, stored once, workers'
growth < 100 MB) is missed.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from crawl_steps import Api, collection
from export import postgres_database
from nginx_site import generate, serve
from scale_probe import (
    database_bytes,
    fetches,
    frontier_sizes,
    reachable,
    redis_keys,
    stored,
    used_memory,
    workers_memory,
)
from stack import (
    funded_key,
    report_checks,
    run_and_report,
    stack_env,
    start,
    start_api,
    stop,
    wait_for,
    wait_workers,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from launcher.embedded import free_port, start_redis  # noqa: E402

PLAN, MAX_DEPTH, WORKERS, WARM_PAGES = "bench-scale", 20, 2, 200
BAR_GROWTH_MB = 100.0
FINAL = {"completed", "cancelled", "failed", "expired"}


def note(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def scale_plan(database_url: str, pages: int) -> None:
    """Migrate, and add the bench's plan: the ``enterprise`` plan's limits but crawls of
    ``pages`` pages (an operator's own plan is a row of ``plans``: docs/operators.md)."""
    from storage.db import Database, migrate
    from storage.models import Plan

    migrate(database_url)
    db = Database(database_url)
    with db.session() as session:
        session.add(Plan(name=PLAN, requests_per_minute=6000, max_batch_urls=10_000,
                         max_crawl_pages=pages, max_running_collections=20,
                         max_concurrent_requests=48))
    db.dispose()


def watch(api: Api, collection_id: str, redis, pool_pid: int, every: float,
          timeout: float) -> list[dict]:
    """Samples of the running collection until it is final."""
    samples: list[dict] = []
    began = time.monotonic()
    while True:
        row = api.expect(200, "GET", f"/collections/{collection_id}")
        samples.append({"t": time.monotonic() - began, "status": row["status"],
                        **row["progress"], "redis": used_memory(redis),
                        "frontier": frontier_sizes(redis, collection_id),
                        "workers": workers_memory(pool_pid), "load": os.getloadavg()[0]})
        last = samples[-1]
        if len(samples) % max(1, int(60 / every)) == 0:
            note(f"{last['t']:.0f} s: {last['done']} done of {last['total']}, "
                 f"{last['frontier']['queued']} queued, Redis {last['redis'] / 2**20:.1f} MiB")
        if row["status"] in FINAL:
            samples[-1]["row"] = row
            return samples
        if last["t"] > timeout:
            raise SystemExit(f"Collection {collection_id} still {row['status']} after "
                             f"{timeout} s: {row['progress']}")
        time.sleep(every)


def run(args: argparse.Namespace, tmp: Path, procs: list[subprocess.Popen]) -> dict:
    results: dict = {"pages": args.pages, "cores": os.cpu_count(),
                     "load_start": os.getloadavg()}
    crawl_port, warm_port = free_port(), free_port()
    root = tmp / "site"
    began = time.monotonic()
    generate(root, args.pages, f"http://127.0.0.1:{crawl_port}")
    results["generate_s"] = time.monotonic() - began
    results["reachable"] = reachable(root, MAX_DEPTH)
    note(f"site: {args.pages} pages in {results['generate_s']:.0f} s; reachable "
         f"{results['reachable']}")
    site = serve(root, [crawl_port, warm_port], tmp, dict(os.environ), procs)
    results["server"] = site.server
    for port in (crawl_port, warm_port):
        wait_for(lambda p=port: urllib.request.urlopen(site.url(p, "/robots.txt"),
                                                       timeout=5).read(), "the site")

    from redis import Redis

    redis_proc, redis_url = start_redis(tmp)
    procs.append(redis_proc)
    redis = Redis.from_url(redis_url)
    drop = None
    if args.sqlite:
        database_url = f"sqlite:///{tmp / 'bench.db'}"
    else:
        database_url, drop = postgres_database()
    results["database"] = "sqlite" if args.sqlite else "postgresql"
    try:
        scale_plan(database_url, args.pages + 100)
        key = funded_key(database_url, 10_000_000, plan=PLAN)
        env = stack_env(redis_url, database_url)
        api = Api(start_api(env, procs), key)
        wait_for(lambda: api.expect(200, "GET", "/account"), "the API")
        pool = start([sys.executable, "-m", "worker", "--processes", str(WORKERS), "--cron",
                      "--name", "scale"], env, procs)
        wait_workers(redis_url, WORKERS, "scale")
        results["workers_idle"] = workers_memory(pool.pid)
        note("warm-up batch")
        collection(api, {"mode": "batch", "extract": "page", "urls": [
            site.url(warm_port, f"/p/{i}.html") for i in range(WARM_PAGES)]})
        time.sleep(2)
        results["redis_before"] = used_memory(redis)
        results["database_before"] = database_bytes(database_url)
        note("the crawl")
        body = {"mode": "crawl", "url": site.url(crawl_port), "max_pages": args.pages + 100,
                "max_depth": MAX_DEPTH, "use_sitemap": False, "extract": "page"}
        row = api.expect(202, "POST", "/collections", body)
        results["samples"] = watch(api, row["id"], redis, pool.pid, args.every, args.timeout)
        results["final"] = results["samples"][-1].pop("row")
        results["load_end"] = os.getloadavg()
        time.sleep(5)  # the end's bookkeeping (repeated blocks, webhooks) settles
        results["workers_after"] = workers_memory(pool.pid)
        results["redis_after"] = used_memory(redis)
        results["redis_keys_after"] = redis_keys(redis)
        results["stored"] = stored(database_url, row["id"])
        results["nginx"] = fetches(site.log, crawl_port)
    finally:
        if drop is not None:
            stop(procs)  # their connections first: the database is dropped next
            drop()
    return results


def per_minute(samples: list[dict]) -> list[tuple[int, int, float]]:
    """(minute, done at its end, pages/s during it) from the samples."""
    rows, last_done, minute = [], 0, 1
    for i, sample in enumerate(samples):
        end = i == len(samples) - 1
        if sample["t"] >= 60 * minute or end:
            span = sample["t"] - 60 * (minute - 1)
            rows.append((minute, sample["done"], (sample["done"] - last_done) / span))
            last_done, minute = sample["done"], minute + 1
    return rows


def at_fraction(samples: list[dict], fraction: float) -> dict:
    """The first sample at or past ``fraction`` of the pages done."""
    goal = fraction * samples[-1]["done"]
    return next(s for s in samples if s["done"] >= goal)


def workers_line(label: str, found: dict) -> tuple[str, dict[str, float]]:
    forks = {pid: m for pid, m in found.items() if pid != "parent"}
    text = (f"{label:8} parent RSS {found['parent']['rss']:.0f} PSS "
            f"{found['parent']['pss']:.0f}; forks " + ", ".join(
                f"{pid}: RSS {m['rss']:.0f} PSS {m['pss']:.0f} private {m['private']:.0f}"
                for pid, m in sorted(forks.items())) + " (MiB)")
    return text, {pid: m["rss"] for pid, m in forks.items()}


def report(r: dict) -> bool:
    samples, final = r["samples"], r["final"]
    seconds = samples[-1]["t"]
    done = final["progress"]["done"]
    print(f"\n{r['pages']} pages from make_site.py (generated in {r['generate_s']:.0f} s), "
          f"served by {r['server']}; {r['database']}; {r['cores']} cores; load "
          f"{r['load_start'][0]:.2f} at the start, {r['load_end'][0]:.2f} at the end")
    print(f"collection: {final['status']} ({final['stop_reason']}), {done} done "
          f"({final['progress']['succeeded']} ok, {final['progress']['failed']} failed) of "
          f"{final['progress']['total']} in {seconds:.0f} s: {done / seconds:.1f} pages/s; "
          f"skipped {final['progress']['skipped']}")
    print(f"\n{'minute':>6}{'done':>9}{'pages/s':>9}")
    for minute, total, rate in per_minute(samples):
        print(f"{minute:>6}{total:>9}{rate:>9.1f}")
    peak = max(samples, key=lambda s: s["frontier"]["queued"])
    top = max(samples, key=lambda s: s["redis"])
    grown = peak["redis"] - r["redis_before"]
    print(f"\nRedis: {r['redis_before'] / 2**20:.1f} MiB before; at the queue's peak "
          f"({peak['t']:.0f} s: {peak['frontier']}) {peak['redis'] / 2**20:.1f} MiB, "
          f"+{grown / 2**20:.1f} MiB = {grown / max(1, peak['frontier']['admitted']):.0f} "
          f"bytes per admitted URL; highest {top['redis'] / 2**20:.1f} MiB at {top['t']:.0f} s "
          f"({(top['redis'] - r['redis_before']) / max(1, top['frontier']['admitted']):.0f} "
          f"bytes per admitted URL, {top['frontier']})")
    after = r["redis_after"] - r["redis_before"]
    print(f"after the end: {r['redis_after'] / 2**20:.1f} MiB, +{after / 2**20:.1f} MiB = "
          f"{after / max(1, samples[-1]['frontier']['admitted']):.0f} bytes per admitted URL;"
          f" by key: {r['redis_keys_after']}")
    s = r["stored"]
    size = s["bytes"]["database"]
    print(f"\nstored: {s['rows']} rows, {s['distinct_urls']} distinct URLs, "
          f"{s['distinct_page_keys']} distinct page keys, {s['distinct_final_urls']} distinct "
          f"final URLs, by status {s['statuses']}; the site has {r['reachable']['pages']} "
          f"pages reachable ({r['reachable']['urls']} URLs, deepest {r['reachable']['deepest']})")
    print(f"nginx: {r['nginx']}")
    print(f"database: {size / 2**20:.1f} MiB ({r['database_before'] / 2**20:.1f} MiB before) ="
          f" {size / max(1, s['rows']):.0f} bytes per stored page "
          f"({(size - r['database_before']) / max(1, s['rows']):.0f} grown); {s['bytes']}")
    print()
    rss: dict[str, dict[str, float]] = {}
    middle = at_fraction(samples, 0.5)
    for label, found in (("idle", r["workers_idle"]), ("start", samples[0]["workers"]),
                         ("middle", middle["workers"]), ("end", samples[-1]["workers"]),
                         ("after", r["workers_after"])):
        text, rss[label] = workers_line(label, found)
        print(text)
    growth = {pid: rss["end"].get(pid, 0.0) - value for pid, value in rss["start"].items()}
    highest = {pid: max(s["workers"].get(pid, {"rss": 0.0})["rss"] for s in samples)
               for pid in rss["start"]}
    print(f"growth start → end (MiB RSS): {growth}; highest sampled: {highest}")
    checks = {
        f"completed ({final['status']})": final["status"] == "completed",
        f"every page stored once ({s['rows']} rows, {s['distinct_page_keys']} pages, "
        f"{r['reachable']['pages']} reachable)":
            s["rows"] == s["distinct_page_keys"] == s["distinct_urls"]
            == r["reachable"]["pages"],
        f"workers' RSS growth < {BAR_GROWTH_MB:g} MB (largest "
        f"{max(growth.values()) * 1.048576:.0f} MB)":
            max(growth.values()) * 1.048576 < BAR_GROWTH_MB and set(rss["end"]) == set(growth),
    }
    return report_checks(r, checks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=100_000, help="site size (100,000)")
    parser.add_argument("--sqlite", action="store_true", help="SQLite, not PostgreSQL")
    parser.add_argument("--every", type=float, default=5.0, help="seconds between samples")
    parser.add_argument("--timeout", type=float, default=3 * 3600, help="seconds at most")
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = parser.parse_args()
    run_and_report("webdata-bench-scale-", lambda tmp, procs: run(args, tmp, procs), report,
                   args.json)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # tear down on kill too
    main()
