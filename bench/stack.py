"""The private platform every API bench starts: processes, a funded account, the API, workers.

Used by bench/latency.py, bench/search_latency.py, bench/stages.py and bench/crawl.py, so they
all measure the same thing: ``make run``'s API (gunicorn, gthread, its default processes and
threads) and warm ``python -m worker`` processes, against a private redis-server and a SQLite
database in the bench's temp dir, everything on 127.0.0.1.
"""

from __future__ import annotations

import http.client
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.config import LaunchConfig  # noqa: E402
from launcher.embedded import free_port  # noqa: E402

#: The top plan: its rate limit (6000/min), batch size and crawl pages (10,000 each) stay above
#: what any bench sends; the free plan's 60/min would answer 429.
PLAN = "enterprise"


def wait_for(check: Callable[[], object], what: str, timeout: float = 60.0) -> None:
    """Until ``check()`` neither raises nor returns False (bounded by ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check() is not False:
                return
        except (OSError, RuntimeError):
            pass
        time.sleep(0.1)
    raise SystemExit(f"Timed out waiting for {what}.")


def funded_key(database_url: str, credits: int, plan: str = PLAN) -> str:
    """Migrate the database and create an account on ``plan`` holding ``credits``; its key."""
    from storage import accounts, ledger
    from storage.db import Database, migrate

    migrate(database_url)
    db = Database(database_url)
    with db.session() as session:
        account = accounts.create_account(session, "bench", plan=plan)
        key = accounts.create_key(session, account)
        account_id = account.id
    ledger.grant(db, account_id, credits, "grant:bench")
    db.dispose()
    return key


def stack_env(redis_url: str, database_url: str, **extra: str) -> dict[str, str]:
    """The environment of the API and the workers: loopback targets allowed."""
    return {**os.environ, "REDIS_URL": redis_url, "DATABASE_URL": database_url,
            "LOG_LEVEL": "WARNING", "CRAWLER_ALLOWED_NETWORKS": "127.0.0.0/8",
            "PYTHONUNBUFFERED": "1", **extra}


def start(command: list[str], env: dict[str, str], procs: list[subprocess.Popen],
          **popen: object) -> subprocess.Popen:
    """``command`` in the checkout (or ``cwd=``), output discarded unless told otherwise;
    kept in ``procs``."""
    popen = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "cwd": ROOT, **popen}
    proc = subprocess.Popen(command, env=env, **popen)  # type: ignore[call-overload]
    procs.append(proc)
    return proc


def start_api(env: dict[str, str], procs: list[subprocess.Popen], cwd: Path = ROOT) -> int:
    """The API under gunicorn with ``make run``'s processes and threads, from the checkout at
    ``cwd``; its port (not yet answering: wait for ``/healthz``)."""
    port = free_port()
    defaults = LaunchConfig()  # make run's processes and threads, so the figures are make run's
    start([sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}",
           "--worker-class", "gthread", "--workers", str(defaults.api_processes),
           "--threads", str(defaults.api_threads), "--timeout", "120",
           "--access-logfile", "-", "api:create_app()"], env, procs, cwd=cwd)
    return port


def api_answers(port: int) -> bool:
    """Whether the API on ``port`` answers ``/healthz`` at all: a stack without workers (the
    search benchmarks) is 503 ``starting`` for ever, and serves searches all the same."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", "/healthz")
        return connection.getresponse().status in (200, 503)
    finally:
        connection.close()


def start_workers(count: int, env: dict[str, str], procs: list[subprocess.Popen],
                  queues: tuple[str, ...] = (), name: str = "", cwd: Path = ROOT,
                  ) -> list[subprocess.Popen]:
    """``count`` warm ``python -m worker`` processes on ``queues`` (default: the worker's
    own default, maintenance, interactive and collections), from the checkout at ``cwd``;
    with ``name``, they are called ``name-0``, ``name-1``… (see :func:`wait_workers`)."""
    named = [["--name", f"{name}-{i}"] if name else [] for i in range(count)]
    return [start([sys.executable, "-m", "worker", *queues, *named[i]], env, procs, cwd=cwd)
            for i in range(count)]


def wait_workers(redis_url: str, count: int, name: str) -> None:
    """Until the ``count`` workers called ``name-0``… (:func:`start_workers`) listen."""
    from rq import Worker

    from worker.queues import redis_connection

    connection = redis_connection(redis_url)
    wanted = {f"{name}-{i}" for i in range(count)}
    wait_for(lambda: wanted <= {w.name for w in Worker.all(connection=connection)},
             f"{count} workers", 120)


def cpu_seconds(pids: dict[str, int]) -> dict[str, float]:
    """CPU time (user + system, s) used so far by each named process and its children."""
    import psutil

    used: dict[str, float] = {}
    for name, pid in pids.items():
        try:
            root = psutil.Process(pid)
            family = [root, *root.children(recursive=True)]
        except psutil.Error:
            continue
        total = 0.0
        for proc in family:
            try:
                times = proc.cpu_times()
                total += times.user + times.system
            except psutil.Error:
                pass
        used[name] = total
    return used


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """Resident memory of process ``pid`` in MB (Linux), 0 when it cannot be read; with
    ``field="VmHWM"``, its highest since it started or since :func:`reset_peak_rss`."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def reset_peak_rss(pid: int) -> bool:
    """Start process ``pid``'s ``VmHWM`` again from its RSS now (Linux ``clear_refs``), so
    that it tells the exact peak of what follows, which sampling misses between two looks
    (a large copy made and freed within a C call); whether that could be done."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True


class PeakRss:
    """While in use, samples each pid's RSS (``measure``, default :func:`rss_mb`) every
    ``every`` seconds and keeps each one's highest in ``peak``, the end included."""

    def __init__(self, pids: list[int], measure: Callable[[int], float] = rss_mb,
                 every: float = 0.02):
        self.pids, self.measure, self.every = pids, measure, every
        self.peak = {pid: measure(pid) for pid in pids}
        self._stop = threading.Event()

    def _take(self) -> None:
        for pid in self.pids:
            self.peak[pid] = max(self.peak[pid], self.measure(pid))

    def _sample(self) -> None:
        while not self._stop.wait(self.every):
            self._take()

    def __enter__(self) -> PeakRss:
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self._take()


def report_checks(results: dict, checks: dict[str, bool]) -> bool:
    """Print each bar as PASS or FAIL; ``results["bar_passed"]``, returned: all passed."""
    print()
    for text, ok in checks.items():
        print(f"{'PASS' if ok else 'FAIL'}  {text}")
    results["bar_passed"] = all(checks.values())
    return results["bar_passed"]


def stop(procs: list[subprocess.Popen]) -> None:
    """SIGTERM every process still running, then SIGKILL what is left after 10 s."""
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    deadline = time.monotonic() + 10
    for proc in procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run_and_report(prefix: str, run: Callable[[Path, list[subprocess.Popen]], dict],
                   report: Callable[[dict], bool], as_json: bool) -> None:
    """A bench's main: ``run(tmp, procs)`` in a private temporary directory, every process it
    started stopped whatever happens, then ``report(results)`` (and the results as JSON when
    asked); exits 0 when the bars are met, 1 when not."""
    import json
    import tempfile

    procs: list[subprocess.Popen] = []
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        try:
            results = run(Path(tmp), procs)
        except KeyboardInterrupt:
            raise SystemExit("Interrupted.") from None
        finally:
            stop(procs)
    results["bench_seconds"] = time.monotonic() - began
    passed = report(results)
    if as_json:
        print(json.dumps(results, indent=2))
    sys.exit(0 if passed else 1)
