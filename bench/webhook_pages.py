"""Page events against none: what ``collection.page`` costs a batch, side by side in one run.

    .venv/bin/python bench/webhook_pages.py [--pages 10000] [--workers 2] [--pairs 1] [--json]

Why: issue 31 asks that a 10,000-page batch with ``webhook_events: ["collection.page"]``
delivers every event exactly once to a receiver on loopback (by ``webhook-id``) while the
crawl's own speed drops by at most 10 % against the same batch without page events.

What runs, all private and on 127.0.0.1 (bench/crawl.py's parts): ``--pages`` pages from
``../shared/tools/make_site.py`` served by nginx (or its Python stand-in) on 20 ports, a
redis-server, a SQLite database with an ``enterprise`` account, the API under gunicorn and
``--workers`` warm ``python -m worker`` (maintenance, interactive, collections: the page
events are sent by the same workers that crawl), and a receiver in this process (a threaded
HTTP server answering 204, deduplicating on ``webhook-id``).

Measured, ``--pairs`` times: the batch without page events, then the same batch (fresh URLs
of the same pages: ``?run=N``) with them; pages/s = done / (POST → seen final, polled every
0.1 s), the slowdown in %, the events received, the duplicates (the same ``webhook-id``
again) and the seconds from the collection's end to the last event's arrival.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from crawl_steps import Api, collection
from nginx_site import generate, serve
from stack import (
    funded_key,
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

HOSTS = 20


class Receiver:
    """A loopback webhook receiver: every ``webhook-id`` once, the duplicates counted, the
    time of the last new one."""

    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.duplicates = 0
        self.last = 0.0
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                event = self.headers.get("webhook-id", "")
                with receiver.lock:
                    if event in receiver.ids:
                        receiver.duplicates += 1
                    else:
                        receiver.ids.add(event)
                        receiver.last = time.perf_counter()
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"

    def count(self) -> int:
        with self.lock:
            return len(self.ids)


def note(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace, tmp: Path, procs: list[subprocess.Popen]) -> dict:
    ports = [free_port() for _ in range(HOSTS)]
    root = tmp / "site"
    generate(root, args.pages, f"http://127.0.0.1:{ports[0]}")
    site = serve(root, ports, tmp, dict(os.environ), procs)
    for port in ports:
        wait_for(lambda p=port: urllib.request.urlopen(site.url(p, "/robots.txt"),
                                                       timeout=5).read(), "the site")
    redis_proc, redis_url = start_redis(tmp)
    procs.append(redis_proc)
    database_url = f"sqlite:///{tmp / 'bench.db'}"
    key = funded_key(database_url, 10_000_000)
    env = stack_env(redis_url, database_url)
    api = Api(start_api(env, procs), key)
    wait_for(lambda: api.expect(200, "GET", "/account"), "the API")
    workers = start_workers(args.workers, env, procs, name="hooks")
    pids = {f"worker-{i}": proc.pid for i, proc in enumerate(workers)}
    wait_workers(redis_url, args.workers, "hooks")
    receiver = Receiver()

    def urls(run: str) -> list[str]:
        return [site.url(ports[i % HOSTS], f"/p/{i}.html?run={run}") for i in range(args.pages)]

    note("warm-up")
    collection(api, {"mode": "batch", "urls": urls("warm")[:200], "extract": "page"})
    pairs = []
    for pair in range(args.pairs):
        note(f"pair {pair + 1}: without page events")
        plain = collection(api, {"mode": "batch", "urls": urls(f"a{pair}"), "extract": "page"},
                           pids=pids)
        note(f"pair {pair + 1}: with page events")
        before = receiver.count()
        hooked = collection(api, {"mode": "batch", "urls": urls(f"b{pair}"), "extract": "page",
                                  "webhook_url": receiver.url,
                                  "webhook_events": ["collection.page"]}, pids=pids)
        ended = time.perf_counter()
        deadline = ended + args.wait
        while receiver.count() - before < hooked["done"] and time.perf_counter() < deadline:
            time.sleep(0.1)
        received = receiver.count() - before
        pairs.append({
            "without": {**{k: plain[k] for k in ("done", "seconds", "pages_per_s")},
                        "worker_cpu_s": sum(plain["cpu_s"].values())},
            "with": {**{k: hooked[k] for k in ("done", "seconds", "pages_per_s")},
                     "worker_cpu_s": sum(hooked["cpu_s"].values())},
            "slowdown_pct": 100 * (1 - hooked["pages_per_s"] / plain["pages_per_s"]),
            "events": received, "duplicates": receiver.duplicates,
            "last_event_after_end_s": max(0.0, receiver.last - ended)})
    return {"pages": args.pages, "workers": args.workers, "server": site.server,
            "cores": os.cpu_count(), "load_before": os.getloadavg()[0], "pairs": pairs,
            "row_bytes": row_bytes(database_url)}


def row_bytes(database_url: str) -> dict[str, float]:
    """The page events' payloads in the outbox: mean and largest, in bytes (UTF-8)."""
    from sqlalchemy import func, select

    from storage.db import Database
    from storage.models import WebhookEvent

    db = Database(database_url)
    try:
        with db.session() as session:
            mean, largest = session.execute(
                select(func.avg(func.length(WebhookEvent.payload)),
                       func.max(func.length(WebhookEvent.payload)))
                .where(WebhookEvent.event == "collection.page")).one()
    finally:
        db.dispose()
    return {"mean": float(mean or 0), "max": float(largest or 0)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=1)
    parser.add_argument("--wait", type=float, default=600.0,
                        help="seconds to wait for the events after the batch ended")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    procs: list[subprocess.Popen] = []
    with tempfile.TemporaryDirectory(prefix="bench-hooks-") as directory:
        try:
            result = run(args, Path(directory), procs)
        finally:
            stop(procs)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"\n{result['pages']} pages, {result['workers']} worker(s), site by "
          f"{result['server']}, {result['cores']} cores, load before "
          f"{result['load_before']:.2f}")
    print(f"page events' payloads in the outbox: mean {result['row_bytes']['mean']:.0f} "
          f"characters, largest {result['row_bytes']['max']:.0f}")
    for number, pair in enumerate(result["pairs"], start=1):
        print(f"pair {number}: without {pair['without']['pages_per_s']:.1f} pages/s "
              f"({pair['without']['done']} in {pair['without']['seconds']:.1f} s), with "
              f"{pair['with']['pages_per_s']:.1f} pages/s ({pair['with']['done']} in "
              f"{pair['with']['seconds']:.1f} s): slowdown {pair['slowdown_pct']:.1f} %; "
              f"events {pair['events']}, duplicates {pair['duplicates']}, last event "
              f"{pair['last_event_after_end_s']:.1f} s after the end; workers' CPU "
              f"{pair['without']['worker_cpu_s']:.1f} s → {pair['with']['worker_cpu_s']:.1f} s")


if __name__ == "__main__":
    main()
