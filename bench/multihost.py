"""Crawl throughput with 1, 2 and 3 worker hosts (issue 32): does adding machines add pages/s?

    sudo .venv/bin/python bench/multihost.py [--hosts 1,2,3] [--pages 3000] [--delay-ms 200]

What runs, for each host count in turn, set up and torn down here (root: network namespaces):
the deployment of tests/test_multihost.py (tests/support/multihost.py: PostgreSQL and Redis
on ``db``, the API on ``api``, one ``python -m worker`` on each worker host, started by the
commands of deploy/systemd/), and the site of ``--pages`` small pages
(tests/support/site/many.py) that answers each page after ``--delay-ms`` (200 ms), so that a
worker mostly waits, as on real sites, and the CPU is not what bounds the crawl.

Measured: after a warm-up batch, ``POST /collections {"mode": "crawl", "max_pages":
--pages}`` from ``/p/0`` (every page reachable within 8 hops); pages/s = pages stored / (POST
→ seen completed, polled every 0.2 s); and each worker host's share (its metrics).

Settings, the same for every host count, and why:
- ``COLLECTION_SLICES=3``: a collection runs a slice per worker host (up to this);
- ``COLLECTION_CONCURRENCY=8`` pages in flight per slice: 1 host keeps 8 in flight (≈ 40
  pages/s at 200 ms), 3 hosts 24 (≈ 120/s), which this 2-core machine, running all the
  hosts, extracts without becoming the bound;
- ``COLLECTION_HOST_CONCURRENCY=64``: the site is one ``host:port``, and the politeness cap
  across all workers (8 by default) would hold any number of hosts at 8 pages in flight, i.e.
  40 pages/s: the figure would then measure the cap, not the hosts. (Serving the site on
  several ports, each a host of its own to the gate, is the same thing.)

Bar (issue 32): pages/s with 3 hosts ≥ 2.5 times that with 1. Exit status 0 when met.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support import netns  # noqa: E402
from tests.support.multihost import SITE, SITE_PORTS, WORKER_HOSTS, Cluster  # noqa: E402

BAR = 2.5
SETTINGS = {"COLLECTION_SLICES": "3", "COLLECTION_CONCURRENCY": "8",
            "COLLECTION_HOST_CONCURRENCY": "64", "LOG_LEVEL": "WARNING"}


def note(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def wait_final(cluster: Cluster, collection_id: str, timeout: float = 600) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = cluster.call("GET", f"/collections/{collection_id}").json()
        if body["status"] not in ("queued", "running"):
            return body
        time.sleep(0.2)
    raise SystemExit(f"collection {collection_id} did not finish within {timeout} s")


def measure(hosts: int, pages: int, delay_ms: int) -> dict:
    """One deployment with ``hosts`` worker hosts: a warm-up batch, then the timed crawl."""
    with tempfile.TemporaryDirectory(prefix="wdmh-bench-") as tmp:
        cluster = Cluster(Path(tmp), settings=SETTINGS, site_pages=pages,
                          site_delays=(delay_ms, delay_ms),
                          workers=tuple(WORKER_HOSTS)[:hosts])
        try:
            warm = cluster.call("POST", "/collections", {
                "mode": "batch", "urls": [f"http://{SITE}:{SITE_PORTS[1]}/p/{i}"
                                          for i in range(20 * hosts)]}).json()
            wait_final(cluster, warm["id"])
            before = {host: cluster.worker_pages(host) for host in cluster.workers}
            load = os.getloadavg()[0]
            began = time.monotonic()
            crawl = cluster.call("POST", "/collections", {
                "mode": "crawl", "url": f"http://{SITE}:{SITE_PORTS[0]}/p/0",
                "max_pages": pages, "max_depth": 20, "use_sitemap": False}).json()
            final = wait_final(cluster, crawl["id"])
            seconds = time.monotonic() - began
            shares = {host: cluster.worker_pages(host) - before[host]
                      for host in cluster.workers}
        finally:
            cluster.close()
    stored = final["progress"]["succeeded"]
    return {"hosts": hosts, "status": final["status"], "pages": stored,
            "failed": final["progress"]["failed"], "seconds": seconds,
            "pages_per_s": stored / seconds, "shares": shares, "load_before": load}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", default="1,2,3", help="worker host counts (default 1,2,3)")
    parser.add_argument("--pages", type=int, default=3000)
    parser.add_argument("--delay-ms", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    reason = netns.unavailable()
    if reason:
        raise SystemExit(f"bench/multihost.py: {reason}")
    runs = []
    for hosts in (int(n) for n in args.hosts.split(",")):
        note(f"{hosts} worker host(s): {args.pages}-page crawl, pages after {args.delay_ms} ms")
        runs.append(measure(hosts, args.pages, args.delay_ms))
    print(f"\nsite: {args.pages} pages, each answered after {args.delay_ms} ms; cores "
          f"{os.cpu_count()}; settings {SETTINGS}")
    print(f"{'worker hosts':>12}{'pages':>7}{'seconds':>9}{'pages/s':>9}{'x 1 host':>10}"
          "   pages per host")
    first = runs[0]["pages_per_s"]
    for run in runs:
        print(f"{run['hosts']:>12}{run['pages']:>7}{run['seconds']:>9.1f}"
              f"{run['pages_per_s']:>9.1f}{run['pages_per_s'] / first:>10.2f}   "
              f"{run['shares']} (load before {run['load_before']:.2f}, {run['status']}, "
              f"{run['failed']} failed)")
    by_hosts = {run["hosts"]: run["pages_per_s"] for run in runs}
    passed = True
    if 1 in by_hosts and 3 in by_hosts:
        ratio = by_hosts[3] / by_hosts[1]
        passed = ratio >= BAR
        print(f"\n{'PASS' if passed else 'FAIL'}  3 hosts >= {BAR:g} x 1 host ({ratio:.2f} x)")
    if args.json:
        print(json.dumps(runs, indent=2))
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
