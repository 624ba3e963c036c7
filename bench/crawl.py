"""Collections throughput against bare Scrapy, side by side in one run.

    .venv/bin/python bench/crawl.py [--pages 2000] [--batch 1000] [--workers 1,2] [--json]
    make bench-crawl                  # the same, after `make bench-deps` (installs nginx-light)

Why: a collection adds a Redis frontier, RQ slice jobs, per-page storage and charging and a
politeness gate around the fetch + ``extract_page`` that plain Scrapy does alone; the bars are
that, with ``make run``'s 2 worker processes, the platform crawls at least 1.3x as many pages
a second as one bare Scrapy process (0.9x with 1 worker), that ``/scrape`` stays fast while a
crawl runs (p95 <= 250 ms) and that a cancel stops the fetching quickly (p95 <= 2 s).

What runs, all private and on 127.0.0.1, set up and torn down here: a site of ``--pages``
pages from ``../shared/tools/make_site.py`` served by nginx (one process, one access log with
``$msec``) on 23 ports — the crawl's, the cancels', /scrape's and 20 for the batch, each a
host of its own to the politeness gates — a redis-server, a SQLite database with an account
on the ``enterprise`` plan, the API under gunicorn with ``make run``'s flags and, for each
``--workers`` count in turn, that many warm ``python -m worker`` (maintenance, interactive,
collections) with ``CRAWLER_ALLOWED_NETWORKS=127.0.0.0/8``.

Measured, one after the other (never two at once), each platform crawl and batch right after
the same run of bare Scrapy, ``--pairs`` times (3), judged on the median of the pairs' ratios:
this machine's speed wanders by ±10 % from one minute to the next, and one bare run against
one platform run a minute later swung the 1-worker batch between 0.8x and 1.1x:

* **bare crawl**: bench/bare_scrapy.py, a ``CrawlSpider`` in one process from the start page,
  same extraction, robots.txt obeyed, at most ``--pages`` pages, depth 20; pages/s =
  pages extracted / its crawl's wall time. **bare batch**: the same process fetching the
  batch's URLs.
* **crawl**: ``POST /collections {"mode": "crawl", "max_pages": --pages, "max_depth": 20,
  "use_sitemap": false, "extract": "page"}``; pages/s = ``done`` / (POST → seen completed,
  polled every 0.1 s). **batch**: ``--batch`` URLs spread over the 20 batch hosts.
* with the most workers: **scrape**, ``/scrape`` of one page (its own host) from one client
  in a loop while another crawl of the site runs (that crawl's pages/s is printed too), and
  **cancel**, ``--cancels`` crawls cancelled ``--cancel-after`` s after their start: the time
  from sending the cancel to the last request nginx answered for it.

Exit status 0 when every bar is met, 1 when one is not (the figures are printed either way).
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from crawl_steps import Api, bare, cancels, collection, scrape_beside
from nginx_site import generate, serve
from stack import (
    funded_key,
    report_checks,
    run_and_report,
    stack_env,
    start_api,
    start_workers,
    stop,
    wait_for,
    wait_workers,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from launcher.embedded import free_port, start_redis  # noqa: E402

#: Issue 11's bars: platform pages/s over the bare figure, by worker processes.
BAR_RATIO = {1: 0.9, 2: 1.3}
BAR_SCRAPE_P95_MS, BAR_CANCEL_P95_S = 250.0, 2.0
BATCH_HOSTS, MAX_DEPTH = 20, 20


def note(text: str) -> None:
    """Progress on stderr (the report and the JSON go to stdout)."""
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def crawl_body(url: str, pages: int) -> dict:
    return {"mode": "crawl", "url": url, "max_pages": pages, "max_depth": MAX_DEPTH,
            "use_sitemap": False, "extract": "page"}


def warm(api: Api, page_url: str, urls: list[str], redis_url: str, names: set[str]) -> None:
    """Every worker's crawler, extractor and collection code warm (a slice's first run
    imports the storage layer and builds the HTTPS context: a second or so), with small
    batches until each worker of ``names`` ran a slice. The crawl hosts' robots.txt are not
    fetched: inside the timed runs, as by the bare side."""
    from rq.job import Job
    from rq.registry import FinishedJobRegistry

    from worker.queues import COLLECTIONS, queue, redis_connection

    for _ in range(16):
        api.expect(200, "POST", "/scrape", {"url": page_url})
    connection = redis_connection(redis_url)
    finished = FinishedJobRegistry(COLLECTIONS, connection=connection)
    serializer = queue(COLLECTIONS, connection).serializer
    for _ in range(10):
        collection(api, {"mode": "batch", "urls": urls, "extract": "page"})
        jobs = Job.fetch_many(finished.get_job_ids(), connection=connection,
                              serializer=serializer)
        if names <= {job.worker_name for job in jobs if job is not None}:
            return
    note("warm-up: not every worker ran a collection slice")


def platform_runs(args: argparse.Namespace, workers: int, api: Api, env: dict[str, str],
                  redis_url: str, procs: list[subprocess.Popen], ports: dict, site) -> dict:
    """Every platform measurement with ``workers`` worker processes; the crawl and the batch
    ``--pairs`` times each, every time right after the same run of bare Scrapy."""
    name = f"bench-{workers}"
    own = start_workers(workers, env, procs, name=name)
    try:
        wait_workers(redis_url, workers, name)
        scrape_page = site.url(ports["scrape"], "/p/1.html")
        warm(api, scrape_page, [site.url(ports["scrape"], f"/p/{i}.html") for i in range(2, 22)],
             redis_url, {f"{name}-{i}" for i in range(workers)})
        pids = {**args.pids, **{f"worker-{i}": proc.pid for i, proc in enumerate(own)}}
        bodies = {"crawl": crawl_body(site.url(ports["crawl"]), args.pages),
                  "batch": {"mode": "batch", "urls": args.urls, "extract": "page"}}
        runs: dict = {"crawl": [], "batch": []}
        for kind, body in bodies.items():
            for pair in range(1, args.pairs + 1):
                note(f"{workers} worker(s): {kind}, pair {pair} of {args.pairs}")
                bare_run = bare(*args.bare_args[kind])
                measured = collection(api, body, pids=pids)
                measured["bare"] = bare_run
                measured["ratio"] = measured["pages_per_s"] / bare_run["pages_per_s"]
                runs[kind].append(measured)
        if workers == max(args.workers):
            note(f"{workers} worker(s): /scrape beside a crawl")
            runs["scrape"] = scrape_beside(api, scrape_page, bodies["crawl"], pids)
            note(f"{workers} worker(s): {args.cancels} cancels")
            runs["cancel"] = cancels(api, site, ports["cancel"],
                                     crawl_body(site.url(ports["cancel"]), args.pages),
                                     args.cancels, args.cancel_after)
        return runs
    finally:
        stop(own)
        for proc in own:
            procs.remove(proc)


def run(args: argparse.Namespace, tmp: Path, procs: list[subprocess.Popen]) -> dict:
    ports = {"crawl": free_port(), "cancel": free_port(), "scrape": free_port(),
             "batch": [free_port() for _ in range(BATCH_HOSTS)]}
    root = tmp / "site"
    generate(root, args.pages, f"http://127.0.0.1:{ports['crawl']}")
    all_ports = [ports["crawl"], ports["cancel"], ports["scrape"], *ports["batch"]]
    site = serve(root, all_ports, tmp, dict(os.environ), procs)
    args.pids = {"site": procs[-1].pid}
    for port in all_ports:
        wait_for(lambda p=port: urllib.request.urlopen(site.url(p, "/robots.txt"),
                                                       timeout=5).read(), "the site")
    args.urls = [site.url(ports["batch"][i % BATCH_HOSTS], f"/p/{i % args.pages}.html")
                 for i in range(args.batch)]
    (tmp / "batch.txt").write_text("\n".join(args.urls) + "\n")
    args.bare_args = {"crawl": ("crawl", site.url(ports["crawl"]), str(args.pages),
                                str(MAX_DEPTH)),
                      "batch": ("batch", str(tmp / "batch.txt"))}

    redis_proc, redis_url = start_redis(tmp)
    procs.append(redis_proc)
    args.pids["redis"] = redis_proc.pid
    database_url = f"sqlite:///{tmp / 'bench.db'}"
    key = funded_key(database_url, 10_000_000)
    env = stack_env(redis_url, database_url)
    api_port = start_api(env, procs)
    args.pids["api"] = procs[-1].pid
    api = Api(api_port, key)
    wait_for(lambda: api.expect(200, "GET", "/account"), "the API")

    results: dict = {
        "server": site.server, "pages": args.pages, "batch": args.batch,
        "batch_hosts": BATCH_HOSTS, "cores": os.cpu_count(), "python": platform.python_version(),
        "load_before": os.getloadavg(), "pairs": args.pairs, "platform": {}}
    for workers in args.workers:
        results["platform"][str(workers)] = platform_runs(args, workers, api, env, redis_url,
                                                          procs, ports, site)
    return results


def cpu_line(run: dict) -> str:
    """CPU seconds per process during a run, and in all per page."""
    used = run["cpu_s"]
    pages = run.get("pages", run.get("done")) or 1
    return (f"CPU ms/page {1000 * sum(used.values()) / pages:.1f} (s: "
            + ", ".join(f"{name} {spent:.1f}" for name, spent in used.items()) + ")")


def report(r: dict) -> bool:
    first = next(iter(r["platform"].values()))["crawl"][0]["bare"]
    print(f"\nsite: {r['pages']} pages from make_site.py, served by {r['server']}; "
          f"batch: {r['batch']} URLs on {r['batch_hosts']} hosts; cores={r['cores']}, "
          f"Python {r['python']}, load before {r['load_before'][0]:.2f}")
    print(f"bare Scrapy: one process, CONCURRENT_REQUESTS={first['concurrent_requests']}"
          f", per domain {first['per_domain']}; each platform run right after a bare one "
          f"({r['pairs']} pairs), judged on the median of the pairs' ratios")
    print(f"\n{'':26}{'pages':>7}{'seconds':>9}{'pages/s':>9}{'x bare':>8}")
    checks: dict[str, bool] = {}
    for kind in ("crawl", "batch"):
        for workers, runs in r["platform"].items():
            for p in runs[kind]:
                b = p["bare"]
                print(f"{'bare ' + kind:26}{b['pages']:>7}{b['seconds']:>9.1f}"
                      f"{b['pages_per_s']:>9.1f}{'':8}   {cpu_line(b)}")
                print(f"{f'platform {kind}, {workers} worker(s)':26}{p['done']:>7}"
                      f"{p['seconds']:>9.1f}{p['pages_per_s']:>9.1f}{p['ratio']:>8.2f}"
                      f"   ({p['status']}, {p['succeeded']} ok, {p['failed']} failed)")
                print(f"{'':26}{'':33}   {cpu_line(p)}")
            ratios = [p["ratio"] for p in runs[kind]]
            median = statistics.median(ratios)
            print(f"{f'{kind}, {workers} worker(s)':26} median x bare {median:.2f} "
                  f"(pairs: {', '.join(f'{x:.2f}' for x in ratios)})\n")
            bar = BAR_RATIO.get(int(workers))
            if bar is not None:
                checks[f"{kind} with {workers} worker(s) >= {bar:g} x bare (median "
                       f"{median:.3f} x)"] = median >= bar
    for workers, runs in r["platform"].items():
        if "scrape" in runs:
            s, c = runs["scrape"], runs["scrape"]["crawl"]
            ms = s["scrape_ms"]
            print(f"\n/scrape beside a crawl, {workers} worker(s): n={ms['n']} p50={ms['p50']:.1f}"
                  f" ms p95={ms['p95']:.1f} ms max={ms['max']:.1f} ms, {s['errors']} errors"
                  f" (the crawl meanwhile: {c['done']} pages, {c['pages_per_s']:.1f} pages/s)")
            checks[f"/scrape p95 beside a crawl <= {BAR_SCRAPE_P95_MS:g} ms "
                   f"({ms['p95']:.1f} ms)"] = ms["p95"] <= BAR_SCRAPE_P95_MS and not s["errors"]
            lag = runs["cancel"]["lag_s"]
            print(f"cancel → last fetch, {workers} worker(s): n={lag['n']} p50={lag['p50']:.2f} s"
                  f" p95={lag['p95']:.2f} s max={lag['max']:.2f} s; the cancel call "
                  f"p95={runs['cancel']['cancel_call_s']['p95']:.2f} s; requests per run "
                  f"{runs['cancel']['requests_per_run']}")
            checks[f"cancel to last fetch p95 <= {BAR_CANCEL_P95_S:g} s "
                   f"({lag['p95']:.2f} s)"] = lag["p95"] <= BAR_CANCEL_P95_S
    return report_checks(r, checks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=2000, help="site size and max_pages")
    parser.add_argument("--batch", type=int, default=1000, help="batch URLs (20 hosts)")
    parser.add_argument("--workers", default="1,2",
                        help="worker counts, measured in turn (default 1,2)")
    parser.add_argument("--cancels", type=int, default=5, help="crawls cancelled (default 5)")
    parser.add_argument("--cancel-after", type=float, default=2.0,
                        help="seconds between a crawl's start and its cancel (default 2)")
    parser.add_argument("--pairs", type=int, default=3,
                        help="bare + platform runs of the crawl and the batch (default 3)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = parser.parse_args()
    args.workers = [int(n) for n in args.workers.split(",")]
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")
    run_and_report("webdata-bench-crawl-", lambda tmp, procs: run(args, tmp, procs), report,
                   args.json)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # tear down on kill too
    main()
