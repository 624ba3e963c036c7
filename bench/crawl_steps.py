"""The measuring steps of bench/crawl.py: one collection timed, /scrape beside a crawl, cancels,
and the bare Scrapy process (bench/bare_scrapy.py)."""

from __future__ import annotations

import http.client
import json
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from nginx_site import Site
from stack import cpu_seconds

BASE = "/api/service/v1"
FINAL = {"completed", "cancelled", "failed", "expired"}
#: Seconds between two looks at a running collection (the resolution of its timing).
POLL = 0.1
BARE = Path(__file__).resolve().parent / "bare_scrapy.py"


class Api:
    """JSON calls to the API as the bench's account, one keep-alive connection per thread."""

    def __init__(self, port: int, key: str):
        self.port, self.key = port, key
        self._local = threading.local()

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        conn = getattr(self._local, "conn", None)
        fresh = conn is None
        if fresh:
            conn = self._local.conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                                                 timeout=120)
        try:
            headers = {"Authorization": f"Bearer {self.key}"}
            if body is not None:
                headers["Content-Type"] = "application/json"
            conn.request(method, BASE + path, body=None if body is None else json.dumps(body),
                         headers=headers)
            response = conn.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            self._local.conn = None
            # gunicorn closes a keep-alive connection idle for 2 s: that request was never
            # read, so it is sent again once on a new connection.
            stale = isinstance(exc, (BrokenPipeError, ConnectionResetError,
                                     http.client.RemoteDisconnected))
            if stale and not fresh:
                return self.call(method, path, body)
            raise
        return response.status, json.loads(data) if data else None

    def expect(self, status: int, method: str, path: str, body: Any = None) -> Any:
        got, data = self.call(method, path, body)
        if got != status:
            raise SystemExit(f"{method} {path} answered {got}, not {status}: {data}")
        return data


def quantiles(values: list[float]) -> dict[str, float]:
    """n, p50, p95 and max of ``values`` (p95 interpolated between the two nearest)."""
    if len(values) < 2:
        value = values[0] if values else float("nan")
        return {"n": len(values), "p50": value, "p95": value, "max": value}
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {"n": len(values), "p50": cuts[49], "p95": cuts[94], "max": max(values)}


def collection(api: Api, body: dict[str, Any], timeout: float = 1800,
               pids: dict[str, int] | None = None) -> dict[str, Any]:
    """Create a collection and wait for its end; its progress, seconds from the POST to the
    first look that saw it final, pages/s (done / seconds) and the CPU seconds each process
    of ``pids`` used meanwhile."""
    cpu = cpu_seconds(pids or {})
    began = time.perf_counter()
    row = api.expect(202, "POST", "/collections", body)
    while row["status"] not in FINAL:
        if time.perf_counter() - began > timeout:
            raise SystemExit(f"Collection {row['id']} still {row['status']} after {timeout} s.")
        time.sleep(POLL)
        row = api.expect(200, "GET", f"/collections/{row['id']}")
    seconds = time.perf_counter() - began
    used = {name: spent - cpu.get(name, 0.0) for name, spent in cpu_seconds(pids or {}).items()}
    progress = row["progress"]
    return {"id": row["id"], "status": row["status"], "stop_reason": row["stop_reason"],
            **progress, "credits_used": row["credits_used"], "seconds": seconds,
            "pages_per_s": progress["done"] / seconds, "cpu_s": used}


def scrape_beside(api: Api, page_url: str, body: dict[str, Any],
                  pids: dict[str, int] | None = None) -> dict[str, Any]:
    """``/scrape`` of ``page_url`` in a loop from one client while collection ``body`` runs;
    latency quantiles in ms and the collection's own figures."""
    latencies: list[float] = []
    errors: list[str] = []
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            began = time.perf_counter()
            try:
                status, data = api.call("POST", "/scrape", {"url": page_url})
            except (OSError, http.client.HTTPException) as exc:
                errors.append(repr(exc))
                continue
            if status != 200:
                errors.append(f"{status}: {str(data)[:200]}")
                time.sleep(0.1)
                continue
            latencies.append((time.perf_counter() - began) * 1000)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        crawl = collection(api, body, pids=pids)
    finally:
        stop.set()
        thread.join()
    return {"crawl": crawl, "scrape_ms": quantiles(latencies), "errors": len(errors),
            "error_example": errors[0] if errors else None}


def cancels(api: Api, site: Site, port: int, body: dict[str, Any], runs: int,
            after: float, quiet: float = 3.0) -> dict[str, Any]:
    """``runs`` times: start crawl ``body`` on ``port``, cancel it ``after`` s later; the time
    from sending the cancel to the last request nginx answered on that port (0 when none came
    after it), and how long the cancel call itself took."""
    lags: list[float] = []
    calls: list[float] = []
    fetched: list[int] = []
    after_cancel: list[int] = []
    idle_before: list[float] = []
    for _ in range(runs):
        mark = site.log_size()
        row = api.expect(202, "POST", "/collections", body)
        time.sleep(after)
        sent = time.time()
        api.expect(200, "POST", f"/collections/{row['id']}/cancel", {})
        calls.append(time.time() - sent)
        time.sleep(quiet)  # anything still fetched would be logged by now
        requests = site.requests(port, mark)
        fetched.append(len(requests))
        after_cancel.append(sum(at > sent for at, _ in requests))
        last = max((at for at, _ in requests), default=sent)
        lags.append(max(0.0, last - sent))
        idle_before.append(sent - max((at for at, _ in requests if at <= sent), default=sent))
        final = api.expect(200, "GET", f"/collections/{row['id']}")
        if final["status"] != "cancelled":
            raise SystemExit(f"Collection {row['id']} is {final['status']} after its cancel.")
    return {"lag_s": quantiles(lags), "lags": lags, "cancel_call_s": quantiles(calls),
            "requests_per_run": fetched, "requests_after_cancel": after_cancel,
            "idle_before_cancel_s": idle_before}


def bare(*args: str) -> dict[str, Any]:
    """bench/bare_scrapy.py in its own process; what it printed."""
    done = subprocess.run([sys.executable, str(BARE), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bare Scrapy failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])
