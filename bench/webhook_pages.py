"""Page events against none: what ``collection.page`` costs a batch, side by side in one run;
and a receiver that is down while a batch runs.

    .venv/bin/python bench/webhook_pages.py [--pages 10000] [--workers 2] [--pairs 3] [--json]
    .venv/bin/python bench/webhook_pages.py --outage 600 [--pages 2000] [--down refused|503]

Why: issue 31 asks that a 10,000-page batch with ``webhook_events: ["collection.page"]``
delivers every event exactly once to a receiver on loopback (by ``webhook-id``) while the
crawl's own speed drops by at most 10 % against the same batch without page events; and that
a receiver down for 10 minutes gets everything afterwards, with the outbox bounded.

What runs, all private and on 127.0.0.1 (bench/crawl.py's parts): ``--pages`` pages from
``../shared/tools/make_site.py`` served by nginx (or its Python stand-in) on 20 ports, a
redis-server, a SQLite database with an ``enterprise`` account, the API under gunicorn,
``--workers`` warm ``python -m worker`` (maintenance, interactive, collections: the page
events are sent by the same workers that crawl), ``python -m worker.cron`` (the sweep that
sends retries, every ``--sweep`` s) and a receiver in this process (a threaded HTTP/1.1
server answering 204, deduplicating on ``webhook-id``).

Measured, ``--pairs`` times, the order alternating (without then with, with then without…)
so a machine whose speed drifts favours neither: the batch without page events and the same
batch (fresh URLs of the same pages: ``?run=N``) with them; pages/s = done / (POST → seen
final, polled every 0.1 s); the slowdown of each pair and their median; the workers' CPU
seconds (the machine's load moves them less than pages/s) and this process's (the
receiver's); the events received, the duplicates (the same ``webhook-id`` again), the
seconds from the collection's end to the last event; the load average before each run.

``--outage S``: one batch with page events while the receiver is down (``refused``: nothing
listens and kept connections are cut; ``503``: it answers 503) from the POST until S seconds
later; then it is back. Measured: every event received once, the seconds from its return to
the last event's arrival, and the outbox's largest row count and bytes, sampled every second.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import sqlite3
import statistics
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
    start,
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
PAGE = "collection.page"


class Receiver:
    """A loopback webhook receiver: every ``webhook-id`` once, the duplicates counted, the
    time of the last new one; it can be taken down (:meth:`down`) and brought back."""

    def __init__(self, refuse: bool = True) -> None:
        self.ids: set[str] = set()
        self.duplicates = 0
        self.turned_away = 0
        self.last = 0.0
        self.lock = threading.Lock()
        self.refuse = refuse
        self.is_down = False
        self.open: set[object] = set()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/hooks"
        self._listen()

    def _listen(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                with receiver.lock:
                    receiver.open.add(self.connection)

            def finish(self) -> None:
                with receiver.lock:
                    receiver.open.discard(self.connection)
                super().finish()

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                event = self.headers.get("webhook-id", "")
                with receiver.lock:
                    if receiver.is_down:
                        receiver.turned_away += 1
                        status = 503
                    elif event in receiver.ids:
                        receiver.duplicates += 1
                        status = 204
                    else:
                        receiver.ids.add(event)
                        receiver.last = time.perf_counter()
                        status = 204
                self.send_response(status)
                if status != 204:
                    self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def down(self) -> None:
        """Turn every request away: refused (nothing listens, kept connections cut) or 503."""
        with self.lock:
            self.is_down = True
        if self.refuse:
            self.server.shutdown()
            self.server.server_close()
            with self.lock:
                for connection in list(self.open):
                    with contextlib.suppress(OSError):
                        connection.shutdown(socket.SHUT_RDWR)  # type: ignore[attr-defined]

    def up(self) -> None:
        if self.refuse:
            self._listen()
        with self.lock:
            self.is_down = False

    def count(self) -> int:
        with self.lock:
            return len(self.ids)


def note(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def own_cpu() -> float:
    """CPU seconds of this process alone (the receiver and the polling), not its children."""
    times = os.times()
    return times.user + times.system


class Stack:
    """The site, Redis, the database, the API, the workers and the cron scheduler."""

    def __init__(self, args: argparse.Namespace, tmp: Path, procs: list[subprocess.Popen]):
        self.ports = [free_port() for _ in range(HOSTS)]
        generate(tmp / "site", args.pages, f"http://127.0.0.1:{self.ports[0]}")
        self.site = serve(tmp / "site", self.ports, tmp, dict(os.environ), procs)
        for port in self.ports:
            wait_for(lambda p=port: urllib.request.urlopen(self.site.url(p, "/robots.txt"),
                                                           timeout=5).read(), "the site")
        redis_proc, redis_url = start_redis(tmp)
        procs.append(redis_proc)
        self.database = tmp / "bench.db"
        database_url = f"sqlite:///{self.database}"
        key = funded_key(database_url, 10_000_000)
        env = stack_env(redis_url, database_url, SWEEP_INTERVAL=str(args.sweep))
        self.api = Api(start_api(env, procs), key)
        wait_for(lambda: self.api.expect(200, "GET", "/account"), "the API")
        workers = start_workers(args.workers, env, procs, name="hooks")
        self.pids = {f"worker-{i}": proc.pid for i, proc in enumerate(workers)}
        start([sys.executable, "-m", "worker.cron"], env, procs)
        wait_workers(redis_url, args.workers, "hooks")
        self.pages = args.pages

    def urls(self, run: str) -> list[str]:
        return [self.site.url(self.ports[i % HOSTS], f"/p/{i}.html?run={run}")
                for i in range(self.pages)]

    def batch(self, run: str, receiver: Receiver | None) -> dict:
        """One batch (with page events to ``receiver`` when given), measured."""
        body: dict = {"mode": "batch", "urls": self.urls(run), "extract": "page"}
        if receiver is not None:
            body |= {"webhook_url": receiver.url, "webhook_events": [PAGE]}
        load, cpu = os.getloadavg()[0], own_cpu()
        done = collection(self.api, body, pids=self.pids)
        return {"done": done["done"], "seconds": done["seconds"],
                "pages_per_s": done["pages_per_s"], "load_before": load,
                "worker_cpu_s": sum(done["cpu_s"].values()), "bench_cpu_s": own_cpu() - cpu}

    def outbox(self) -> tuple[int, int, int]:
        """The page events' rows: all, still pending, and their bytes (payloads, UTF-8)."""
        db = sqlite3.connect(f"file:{self.database}?mode=ro", uri=True, timeout=30)
        try:
            rows, pending, size = db.execute(
                "SELECT count(*), coalesce(sum(status = 'pending'), 0),"
                " coalesce(sum(length(CAST(payload AS BLOB))), 0)"
                " FROM webhook_events WHERE event = ?", (PAGE,)).fetchone()
        finally:
            db.close()
        return rows, pending, size


def wait_events(receiver: Receiver, before: int, wanted: int, wait: float) -> int:
    """Until ``wanted`` new events arrived (at most ``wait`` s); how many did."""
    deadline = time.perf_counter() + wait
    while receiver.count() - before < wanted and time.perf_counter() < deadline:
        time.sleep(0.1)
    return receiver.count() - before


def pairs(args: argparse.Namespace, stack: Stack) -> dict:
    receiver = Receiver()
    note("warm-up")
    collection(stack.api, {"mode": "batch", "urls": stack.urls("warm")[:200],
                           "extract": "page"})
    measured = []
    for pair in range(args.pairs):
        runs: dict[str, dict] = {}
        for kind in (("without", "with") if pair % 2 == 0 else ("with", "without")):
            note(f"pair {pair + 1}: {kind} page events")
            if kind == "without":
                runs[kind] = stack.batch(f"a{pair}", None)
                continue
            before, duplicates = receiver.count(), receiver.duplicates
            runs[kind] = stack.batch(f"b{pair}", receiver)
            ended = time.perf_counter()
            runs[kind]["events"] = wait_events(receiver, before, runs[kind]["done"],
                                               args.wait)
            runs[kind]["duplicates"] = receiver.duplicates - duplicates
            runs[kind]["last_event_after_end_s"] = max(0.0, receiver.last - ended)
        measured.append({**runs, "first": "without" if pair % 2 == 0 else "with",
                         "slowdown_pct": 100 * (1 - runs["with"]["pages_per_s"]
                                                / runs["without"]["pages_per_s"]),
                         "worker_cpu_pct": 100 * (runs["with"]["worker_cpu_s"]
                                                  / runs["without"]["worker_cpu_s"] - 1)})
    return {"pairs": measured,
            "median_slowdown_pct": statistics.median(p["slowdown_pct"] for p in measured),
            "median_worker_cpu_pct": statistics.median(p["worker_cpu_pct"] for p in measured)}


def outage(args: argparse.Namespace, stack: Stack) -> dict:
    receiver = Receiver(refuse=args.down == "refused")
    receiver.down()
    largest = {"rows": 0, "pending": 0, "bytes": 0}
    stop_sampling = threading.Event()

    def sample() -> None:
        while not stop_sampling.wait(1.0):
            rows, pending, size = stack.outbox()
            largest.update(rows=max(largest["rows"], rows),
                           pending=max(largest["pending"], pending),
                           bytes=max(largest["bytes"], size))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    note(f"a batch with page events, the receiver down ({args.down}) for {args.outage:g} s")
    began = time.perf_counter()
    run = stack.batch("outage", receiver)
    note(f"batch done in {run['seconds']:.1f} s; the receiver is back at "
         f"{args.outage:g} s")
    time.sleep(max(0.0, began + args.outage - time.perf_counter()))
    receiver.up()
    back = time.perf_counter()
    received = wait_events(receiver, 0, run["done"], args.wait)
    stop_sampling.set()
    sampler.join()
    rows, pending, size = stack.outbox()
    return {"outage_s": args.outage, "down": args.down, "batch": run, "events": received,
            "duplicates": receiver.duplicates, "turned_away": receiver.turned_away,
            "last_event_after_back_s": receiver.last - back if received else None,
            "outbox_largest": largest, "outbox_after": {"rows": rows, "pending": pending,
                                                        "bytes": size}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--outage", type=float, help="seconds the receiver is down")
    parser.add_argument("--down", choices=("refused", "503"), default="refused")
    parser.add_argument("--sweep", type=int, default=60, help="SWEEP_INTERVAL, seconds")
    parser.add_argument("--wait", type=float, default=3600.0,
                        help="seconds to wait for the events after the batch (or outage)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    procs: list[subprocess.Popen] = []
    with tempfile.TemporaryDirectory(prefix="bench-hooks-") as directory:
        try:
            stack = Stack(args, Path(directory), procs)
            result = {"pages": args.pages, "workers": args.workers,
                      "server": stack.site.server, "cores": os.cpu_count(),
                      **(outage(args, stack) if args.outage is not None
                         else pairs(args, stack)),
                      "outbox_now": stack.outbox()}
        finally:
            stop(procs)
    print(json.dumps(result, indent=2) if args.json else report(result))


def report(result: dict) -> str:
    lines = [f"\n{result['pages']} pages, {result['workers']} worker(s), site by "
             f"{result['server']}, {result['cores']} cores"]
    if "outage_s" in result:
        largest, batch = result["outbox_largest"], result["batch"]
        lines += [f"receiver down ({result['down']}) for {result['outage_s']:g} s; the batch "
                  f"took {batch['seconds']:.1f} s ({batch['done']} pages)",
                  f"events received {result['events']}, duplicates {result['duplicates']}, "
                  f"attempts turned away {result['turned_away']}; last event "
                  f"{result['last_event_after_back_s']} s after the receiver was back",
                  f"outbox at most {largest['rows']} page rows ({largest['pending']} pending), "
                  f"{largest['bytes']} bytes of payload; after: {result['outbox_after']}"]
        return "\n".join(lines)
    for number, pair in enumerate(result["pairs"], start=1):
        without, with_ = pair["without"], pair["with"]
        lines.append(
            f"pair {number} ({pair['first']} first): without {without['pages_per_s']:.1f} "
            f"pages/s ({without['seconds']:.1f} s, load {without['load_before']:.1f}), with "
            f"{with_['pages_per_s']:.1f} pages/s ({with_['seconds']:.1f} s, load "
            f"{with_['load_before']:.1f}): slowdown {pair['slowdown_pct']:.1f} %; workers' "
            f"CPU {without['worker_cpu_s']:.1f} → {with_['worker_cpu_s']:.1f} s "
            f"({pair['worker_cpu_pct']:+.1f} %), receiver's {with_['bench_cpu_s']:.1f} s; "
            f"events {with_['events']}, duplicates {with_['duplicates']}, last "
            f"{with_['last_event_after_end_s']:.1f} s after the end")
    lines.append(f"median slowdown {result['median_slowdown_pct']:.1f} %, median workers' CPU "
                 f"{result['median_worker_cpu_pct']:+.1f} %")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
