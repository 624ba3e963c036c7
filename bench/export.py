"""Export of a large collection through the API: rows a second, first byte, API memory.

    .venv/bin/python bench/export.py [--rows 100000] [--postgres] [--json]

Why: ``GET /collections/{id}/export`` must stream any size in constant memory.
Bars, for CSV and JSON Lines each: >= 20,000 rows/s, first byte < 500 ms, and the API process
grows by < 100 MB while it streams.

Everything is private and set up here: a redis-server, a database (SQLite in the bench's temp
dir; with ``--postgres``, a database of its own on 127.0.0.1:5432, created and dropped here),
a funded account, and the API under gunicorn with ``make run``'s flags. The collection's
results are stored through ``storage.collection_store.store``, as a worker stores them, 1,000 at a
time: 9 in 10 successful pages whose ``data`` is ``extract_page`` of the test site's article
with a longer text (about 4.5 KB of JSON each; the words of each paragraph shuffled per page,
so that gzip meets text that differs from page to page), 1 in 10 failed. Then each export is
downloaded over one HTTP connection, the body written to a file (read back afterwards,
untimed, to count its rows). The API workers' RSS (``/proc/<pid>/status`` VmRSS) is sampled
every 20 ms; the growth is the largest worker's peak during an export minus its RSS before
(after warm-up exports of a small collection, so imports and first-request allocations are
not counted).
Exit status 0 when every bar is met, 1 when not.
"""

from __future__ import annotations

import argparse
import csv
import http.client
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from random import Random

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from stack import (  # noqa: E402
    PeakRss,
    funded_key,
    report_checks,
    rss_mb,
    run_and_report,
    stack_env,
    start_api,
    stop,
    wait_for,
)

from launcher.embedded import start_redis  # noqa: E402

PAGE = ROOT / "tests" / "support" / "site" / "pages" / "article.html"
BASE = "/api/service/v1"
#: Bars (plain, uncompressed exports).
BAR_ROWS_PER_S = 20_000
BAR_FIRST_BYTE_MS = 500
BAR_RSS_GROWTH_MB = 100
#: What is timed: (format, gzip?); the bars apply to the plain ones.
RUNS = [("csv", False), ("jsonl", False), ("json", False), ("csv", True), ("jsonl", True)]
POSTGRES_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"


def page_data() -> dict:
    """``extract_page`` of the test site's article, its text made four times as long: a
    /scrape body of about 4 KB as JSON."""
    from core.items.result import plain
    from crawler.extract.fetched import FetchedPage
    from crawler.extract.page import extract_page

    data = plain(extract_page(FetchedPage.from_html("https://news.example/tides",
                                                    PAGE.read_text())))
    data["text"] = "\n\n".join([data["text"]] * 4)
    return data


def shuffled(text: str, random: Random) -> str:
    """``text`` with the words of each paragraph in another order: every page's text differs,
    so gzip finds no more repetition across pages than real pages have."""
    paragraphs = []
    for paragraph in text.split("\n\n"):
        words = paragraph.split(" ")
        random.shuffle(words)
        paragraphs.append(" ".join(words))
    return "\n\n".join(paragraphs)


def fill(database_url: str, key: str, rows: int) -> tuple[str, str, float, int]:
    """A finished collection of ``rows`` stored results, and one of 1,000 (the warm-up's);
    their ids, the seconds it took, the mean size of a result's stored data."""
    from storage import accounts, collection_results, collection_store, collections
    from storage.collection_store import PageOutcome
    from storage.db import Database
    from storage.models import CollectionStatus

    db = Database(database_url)
    with db.session() as session:
        account_id = accounts.authenticate(session, key).account_id
    data = page_data()
    random = Random(12)
    began = time.monotonic()
    ids = []
    for count in (rows, 1000):
        collection_id = collections.create(db, account_id=account_id, mode="batch",
                                           extract="page", spec={"urls": []},
                                           max_running=100).id
        for start in range(0, count, 1000):
            outcomes = []
            for n in range(start, min(start + 1000, count)):
                url = f"https://news.example/articles/{n}"
                if n % 10 == 9:
                    outcomes.append(PageOutcome(
                        key=collection_results.page_key(url), url=url, status="failed",
                        final_url=url, status_code=404, fetched_at="2026-11-23T04:30:00Z",
                        error={"error": "target_http_error", "message": "The target answered "
                               "404.", "details": {"url": url, "target_status": 404}}))
                else:
                    outcomes.append(PageOutcome(
                        key=collection_results.page_key(url), url=url, status="succeeded",
                        final_url=url, status_code=200, fetched_at="2026-11-23T04:30:00Z",
                        data={**data, "title": f"{data['title']} ({n})",
                              "text": shuffled(data["text"], random)}))
            collection_store.store(db, collection_id, outcomes)
        collections.finish(db, collection_id, CollectionStatus.COMPLETED,
                           retention=timedelta(days=7))
        ids.append(collection_id)
    seconds = time.monotonic() - began
    db.dispose()
    return ids[0], ids[1], seconds, len(json.dumps(data))


def download(port: int, key: str, collection_id: str, fmt: str, gzip: bool,
             into: Path) -> dict:
    """One export over a fresh connection, its body written to ``into``: the times to the
    headers and to the first byte of the body, the total, the bytes."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    headers = {"Authorization": f"Bearer {key}", **({"Accept-Encoding": "gzip"} if gzip else {})}
    began = time.perf_counter()
    connection.request("GET", f"{BASE}/collections/{collection_id}/export?format={fmt}",
                       headers=headers)
    response = connection.getresponse()
    headers_at = time.perf_counter()
    if response.status != 200:
        raise SystemExit(f"export answered {response.status}: {response.read()[:500]!r}")
    size = 0
    first_at = None
    with into.open("wb") as out:
        while True:
            chunk = response.read1(1 << 16)
            if not chunk:
                break
            if first_at is None:
                first_at = time.perf_counter()
            size += len(chunk)
            out.write(chunk)
    ended = time.perf_counter()
    connection.close()
    return {"headers_ms": (headers_at - began) * 1000,
            "first_byte_ms": ((first_at or ended) - began) * 1000,
            "seconds": ended - began, "bytes": size,
            "encoding": response.getheader("Content-Encoding") or "identity"}


def count_rows(path: Path, fmt: str, gzip: bool) -> int:
    """The results in a downloaded export (read back after the timing)."""
    import gzip as gz

    opener = gz.open if gzip else open
    with opener(path, "rt", encoding="utf-8", newline="") as text:
        if fmt == "csv":
            return sum(1 for _ in csv.reader(text)) - 1  # the header row
        if fmt == "jsonl":
            return sum(1 for _ in text)
        return len(json.load(text))


def gunicorn_workers(master: subprocess.Popen) -> list[int]:
    import psutil

    return [child.pid for child in psutil.Process(master.pid).children()]


def postgres_database() -> tuple[str, Callable[[], None]]:
    """A database of our own on the local PostgreSQL, and how to drop it."""
    import psycopg2

    name = f"webdata_bench_export_{uuid.uuid4().hex[:8]}"
    admin = psycopg2.connect(POSTGRES_ADMIN)
    admin.autocommit = True
    admin.cursor().execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        admin.cursor().execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()

    return f"postgresql+psycopg2://postgres@127.0.0.1:5432/{name}", drop


def run(args: argparse.Namespace, tmp: Path, procs: list[subprocess.Popen]) -> dict:
    drop = None
    if args.postgres:
        database_url, drop = postgres_database()
    else:
        database_url = f"sqlite:///{tmp / 'bench.db'}"
    try:
        return measure(args, tmp, procs, database_url)
    finally:
        if drop is not None:
            stop(procs)  # the API's connections first: the database is dropped next
            drop()


def measure(args: argparse.Namespace, tmp: Path, procs: list[subprocess.Popen],
            database_url: str) -> dict:
    redis_proc, redis_url = start_redis(tmp)
    procs.append(redis_proc)
    key = funded_key(database_url, args.rows + 2000)
    big, small, fill_seconds, data_bytes = fill(database_url, key, args.rows)
    print(f"stored {args.rows:,} results in {fill_seconds:.1f} s "
          f"(data {data_bytes:,} bytes of JSON each)", flush=True)
    api = start_api(stack_env(redis_url, database_url), procs)
    master = procs[-1]
    wait_for(lambda: http.client.HTTPConnection("127.0.0.1", api, timeout=5).request(
        "GET", "/healthz"), "the API")
    wait_for(lambda: len(gunicorn_workers(master)) >= 2, "the API's worker processes")
    pids = gunicorn_workers(master)
    for _ in range(3):  # every API process warm: imports, pools, first allocations
        for fmt, gzip in RUNS:
            download(api, key, small, fmt, gzip, tmp / "warm")
    results: dict = {"rows": args.rows, "data_bytes": data_bytes, "fill_seconds": fill_seconds,
                     "database": "postgresql" if args.postgres else "sqlite",
                     "cores": os.cpu_count(), "runs": []}
    for fmt, gzip in RUNS:
        before = {pid: rss_mb(pid) for pid in pids}
        into = tmp / f"export.{fmt}"
        with PeakRss(pids) as peaks:
            timing = download(api, key, big, fmt, gzip, into)
        growth = max(peaks.peak[pid] - before[pid] for pid in pids)
        rows = count_rows(into, fmt, gzip)
        into.unlink()
        results["runs"].append({
            "format": fmt, "gzip": gzip, **timing, "rows": rows,
            "rows_per_s": rows / timing["seconds"], "mb_per_s": timing["bytes"] / 1e6
            / timing["seconds"], "rss_growth_mb": growth,
            "rss_before_mb": max(before.values())})
    return results


def report(results: dict) -> bool:
    print(f"\n{results['rows']:,} results on {results['database']}, data "
          f"{results['data_bytes']:,} B each, {results['cores']} cores")
    print(f"{'format':12}{'rows':>9}{'rows/s':>9}{'MB/s':>7}{'MB':>7}{'1st byte':>10}"
          f"{'headers':>9}{'RSS +MB':>9}")
    checks: dict[str, bool] = {}
    for run in results["runs"]:
        name = run["format"] + (" gzip" if run["gzip"] else "")
        print(f"{name:12}{run['rows']:>9,}{run['rows_per_s']:>9,.0f}{run['mb_per_s']:>7.1f}"
              f"{run['bytes'] / 1e6:>7.0f}{run['first_byte_ms']:>8.1f}ms"
              f"{run['headers_ms']:>7.1f}ms{run['rss_growth_mb']:>9.1f}")
        checks[f"{name}: every row ({run['rows']:,})"] = run["rows"] == results["rows"]
        if run["gzip"] or run["format"] == "json":
            continue
        checks[f"{name}: >= {BAR_ROWS_PER_S:,} rows/s ({run['rows_per_s']:,.0f})"] = \
            run["rows_per_s"] >= BAR_ROWS_PER_S
        checks[f"{name}: first byte < {BAR_FIRST_BYTE_MS} ms ({run['first_byte_ms']:.0f})"] = \
            run["first_byte_ms"] < BAR_FIRST_BYTE_MS
        checks[f"{name}: API RSS growth < {BAR_RSS_GROWTH_MB} MB "
               f"({run['rss_growth_mb']:.1f})"] = run["rss_growth_mb"] < BAR_RSS_GROWTH_MB
    return report_checks(results, checks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000, help="results in the collection")
    parser.add_argument("--postgres", action="store_true",
                        help="on the PostgreSQL of 127.0.0.1:5432 (a database of its own)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = parser.parse_args()
    run_and_report("webdata-bench-export-", lambda tmp, procs: run(args, tmp, procs), report,
                   args.json)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # tear down on kill too
    main()
