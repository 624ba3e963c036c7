"""Where ``POST /map``'s worker memory goes: ``bench/map.py`` with its worker instrumented.

    .venv/bin/python bench/map_memory.py [--runs 5] [bench/map.py's flags]

Why: the map's worker RSS bar (docs/benchmarks.md, Map speed). ``bench/map.py`` tells how
much the worker grows, not in which stage; tracemalloc sees neither C buffers (hiredis's,
libxml2's) nor what the allocators keep, and slows the worker enough to change the overlap
of jobs. So here the stack of ``bench/map.py`` runs with its worker started through this
file (``--worker LOG QUEUE…``), which wraps a few of the job's steps and writes at each of
them the worker's RSS, its exact peak since the previous step (``VmHWM``, started again at
every step with Linux ``clear_refs``), pymalloc's arenas and the bytes in use in them
(``sys._debugmallocstats``) and glibc's heap (``mallinfo2``); so ``bench/map.py``'s own
exact peak is not read here, only its sampled one. The steps: the job's start,
the crawl returned, ``plain()`` done, the early reply sent (``worker.replies.send``), RQ's
result made (``Result.create``: JSON, base64) and written (the end of ``perform_job``). Then
the table: for the stretch of each map that ends at each step, in the maps after the first
(the steady state), the highest peak over the RSS before the maps, and the medians of the
RSS, pymalloc's arenas and bytes in use, and glibc's heap and its free part at its end.
"""

from __future__ import annotations

import ctypes
import os
import re
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

#: The steps logged, and what ends at each (its peak is that stretch's).
STEPS = {"job start": "between two jobs", "crawl returned": "the crawl (sitemaps, answer)",
         "plain done": "plain() of the result", "reply sent": "the early reply (JSON, sent)",
         "rq result made": "RQ's result (JSON, base64)",
         "rq result written": "RQ's result written"}


# -- in the worker --------------------------------------------------------------------------

def _status(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _pymalloc() -> tuple[float, float]:
    """pymalloc's arenas and the bytes in use in them, MB (``sys._debugmallocstats`` writes
    them to the C stderr, read back through a pipe)."""
    read, write = os.pipe()
    saved = os.dup(2)
    os.dup2(write, 2)
    try:
        sys._debugmallocstats()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(write)
    with os.fdopen(read, "rb") as pipe:
        text = pipe.read().decode()
    arenas = re.search(r"# arenas allocated current\s*=\s*([\d,]+)", text)
    used = re.search(r"# bytes in allocated blocks\s*=\s*([\d,]+)", text)
    size = 1 << 20 if sys.version_info >= (3, 10) else 1 << 18
    return (int(arenas[1].replace(",", "")) * size / 2**20 if arenas else 0.0,
            int(used[1].replace(",", "")) / 2**20 if used else 0.0)


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def instrumented_worker(log_path: str, argv: list[str]) -> None:
    """``python -m worker ARGV…`` writing a line to ``log_path`` at each step (see module)."""
    from rq.results import Result

    import worker.jobs as jobs
    import worker.replies as replies
    import worker.worker as warm
    from crawler.runner import WarmCrawler
    from worker.__main__ import main

    log = open(log_path, "w", buffering=1)  # noqa: SIM115 (the process's life)
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = _MallInfo2
    began = time.monotonic()
    lock = threading.Lock()

    def step(name: str) -> None:
        with lock:
            heap = libc.mallinfo2()
            arenas, used = _pymalloc()
            log.write(f"{time.monotonic() - began:.3f}\t{name}\t{_status('VmRSS'):.1f}\t"
                      f"{_status('VmHWM'):.1f}\t{arenas:.1f}\t{used:.1f}\t"
                      f"{heap.arena / 2**20:.1f}\t{heap.fordblks / 2**20:.1f}\n")
            Path("/proc/self/clear_refs").write_text("5")

    def wrap(owner: Any, name: str, before: str | None, after: str | None) -> None:
        original = getattr(owner, name)

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            if before:
                step(before)
            try:
                return original(*args, **kwargs)
            finally:
                if after:
                    step(after)
        setattr(owner, name, wrapped)

    wrap(WarmCrawler, "crawl", "job start", "crawl returned")
    wrap(jobs, "plain", None, "plain done")
    wrap(replies, "send", None, "reply sent")
    wrap(warm.WarmWorker, "perform_job", None, "rq result written")
    create = Result.create.__func__  # type: ignore[attr-defined]

    def created(cls: type, *args: Any, **kwargs: Any) -> Any:
        result = create(cls, *args, **kwargs)
        step("rq result made")
        return result

    Result.create = classmethod(created)  # type: ignore[method-assign,assignment]
    sys.argv = ["worker", *argv]
    main()


# -- the report -----------------------------------------------------------------------------

def maps_of(log_path: Path) -> list[list[tuple[str, list[float]]]]:
    """The log's jobs, each a list of (step, [t, rss, peak, arenas, in use, heap, heap free])."""
    jobs: list[list[tuple[str, list[float]]]] = []
    for line in log_path.read_text().splitlines():
        t, name, *values = line.split("\t")
        if name == "job start":
            jobs.append([])
        if jobs:
            jobs[-1].append((name, [float(t), *map(float, values)]))
    # the maps: the jobs whose crawl took more than a second (the warm-up map of 10 URLs too:
    # it reads every sitemap), not the warm-up scrapes
    return [job for job in jobs if len(job) > 2 and job[1][1][0] - job[0][1][0] > 1.0]


def report(log_path: Path, before_mb: float) -> None:
    maps = maps_of(log_path)[1:]  # the timed ones
    steady = maps[1:] or maps
    print(f"\nworker, the {len(steady)} maps after the first (MB; RSS before the maps "
          f"{before_mb:.0f}): the stretch ending at each step")
    print(f"  {'stretch':32}{'peak':>7}{'RSS at end':>11}{'pymalloc':>10}{'in use':>8}"
          f"{'heap':>7}{'free':>7}")
    for name, stretch in STEPS.items():
        rows = [values for job in steady for step, values in job if step == name]
        if rows:
            peak = max(values[2] for values in rows)
            ends = [statistics.median(values[i] for values in rows) for i in (1, 3, 4, 5, 6)]
            print(f"  {stretch:32}{f'+{peak - before_mb:.0f}':>7}"
                  + "".join(f"{value:>{width}.0f}"
                            for value, width in zip(ends, (11, 10, 8, 7, 7), strict=True)))
    if maps:
        first = max(values[2] for _, values in maps[0])
        print(f"  the first map's peak: +{first - before_mb:.0f}")


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        instrumented_worker(sys.argv[2], sys.argv[3:])
        return
    import map as bench
    import stack

    log_path = Path(os.environ.get("MAP_MEMORY_LOG", "/tmp/webdata-map-memory.log"))

    def start_workers(count: int, env: dict[str, str], procs: list, queues: tuple = (),
                      **_: Any) -> list:
        return [stack.start([sys.executable, __file__, "--worker", str(log_path), *queues],
                            env, procs)]

    bench.start_workers = start_workers  # bench/map.py's stack, this worker
    bench.reset_peak_rss = lambda pid: False  # its VmHWM is started again at every step here
    shown = bench.report

    def report_both(results: dict) -> bool:
        passed = shown(results)
        report(log_path, results["worker_rss_before_mb"])
        return passed

    bench.report = report_both
    if "--runs" not in sys.argv:
        sys.argv += ["--runs", "5"]
    bench.main()


if __name__ == "__main__":
    main()
