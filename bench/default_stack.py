"""``make run``'s stack as it comes: its memory per process and its throughput, before and after.

    .venv/bin/python bench/default_stack.py [--base REV] [--rounds 1] [--soak MIN] [--json]

Why: issue 32 asks that the default stack (``make run`` with nothing set: embedded Redis,
SQLite, the API, the workers, cron, the supervisor) hold at most 400 MiB proportional memory
(PSS, ``/proc/<pid>/smaps`` as psutil reads it: a page shared by N processes counts 1/N in
each, so the sum is what the stack really takes), with the same throughput as before on
``bench/latency.py``'s two load figures: the fast page at 8 clients, and 500 ms pages at 32
clients. Both are measured here on the stack ``make run`` starts, so what is compared is the
defaults themselves.

What runs, per side (``--base REV`` adds the base revision, from a temporary ``git worktree``
run with this checkout's ``.venv``; ``--rounds`` alternates the sides that many times):
``python -m launcher`` exactly as ``make run`` starts it, in a temporary ``VAR_DIR`` on a free
port, loopback targets allowed. Once it prints its key: 40 warm-up requests, then
``POST /scrape`` of tests/support/site/pages/article.html, 300 at 8 clients (the fast page),
and 16 per client at 32 clients from a static server that answers after 500 ms (the two
servers are ``bench/latency.py``'s, in processes of their own). Then every process of the
launcher's tree is read: RSS, PSS, and of the PSS what is private (Private_Clean +
Private_Dirty).

``--soak MINUTES`` then keeps this checkout's stack (its last round) under the same two loads,
one after the other, for that long, and reads the stack's memory and Redis's (its RSS and its
own count, ``used_memory``) every minute: issue 32 saw Redis grow from 23 to 117 MiB in 20
minutes of load, when finished jobs' results were kept 300 s.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import psutil
from redis import Redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from latency import SCRAPE, article_site, client, measure  # noqa: E402
from latency_ab import worktree  # noqa: E402
from stack import run_and_report  # noqa: E402

from launcher.embedded import free_port  # noqa: E402

FAST_REQUESTS, FAST_CLIENTS = 300, 8
SLOW_MS, SLOW_CLIENTS, SLOW_PER_CLIENT = 500, 32, 16
WARMUP = 40
MIB = 1024 * 1024
#: Issue 32's bar for the whole stack, proportional memory after the load.
BAR_PSS_MIB = 400
#: Credits granted for a soak: more than its requests (~100 a second).
SOAK_CREDITS = 1_000_000


def start_stack(tree: Path, var_dir: Path, port: int) -> tuple[subprocess.Popen, str]:
    """``python -m launcher`` of the checkout at ``tree``, as ``make run`` runs it; the
    process and its demo key."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("REDIS_URL", "DATABASE_URL")}
    env.update(VAR_DIR=str(var_dir), PORT=str(port), CRAWLER_ALLOWED_NETWORKS="127.0.0.0/8",
               PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "launcher"], cwd=tree, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("API key:"):
            threading.Thread(target=proc.stdout.read, daemon=True).start()  # drain the rest
            return proc, line.split(":", 1)[1].strip()
    raise RuntimeError(f"{tree}'s launcher exited ({proc.wait()}) before printing its key")


def name_of(proc: psutil.Process, parent: str) -> str:
    """What process ``proc`` is: its ``-m`` module (a fork names itself after its parent's:
    gunicorn's workers, the worker pool's), or its program."""
    words = proc.cmdline()
    if "-m" in words:
        module = words[words.index("-m") + 1]
        if parent.split(" ")[0] == module:
            return f"{module} (fork)"
        return module
    return Path(words[0]).name if words else "?"


def memory(pid: int) -> dict[str, float]:
    """RSS, PSS and private memory (USS) of ``pid`` in MiB."""
    used = psutil.Process(pid).memory_full_info()
    return {"rss": used.rss / MIB, "pss": used.pss / MIB, "private": used.uss / MIB}


def processes(root: int) -> list[dict]:
    """The memory of ``root`` (the supervisor) and of every process under it."""
    names = {root: "supervisor"}

    def name(proc: psutil.Process) -> str:
        if proc.pid not in names:
            names[proc.pid] = name_of(proc, name(proc.parent()))
        return names[proc.pid]

    table = []
    top = psutil.Process(root)
    for proc in [top, *top.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):  # gone meanwhile
            table.append({"pid": proc.pid, "name": name(proc), **memory(proc.pid)})
    return table


def redis_memory(var_dir: Path, root: int) -> dict[str, float]:
    """The embedded Redis's RSS and ``used_memory`` in MiB (its URL is in ``VAR_DIR``)."""
    redis = Redis.from_url((var_dir / "redis-url").read_text().strip())
    try:
        used = redis.info("memory")["used_memory"] / MIB
    finally:
        redis.close()
    rss = next(row["rss"] for row in processes(root) if row["name"].startswith("redis"))
    return {"redis_rss": round(rss, 1), "redis_used": round(used, 1)}


def grant(tree: Path, var_dir: Path, credits: int) -> None:
    """``credits`` more to the stack's demo account (its 1,000 last one round)."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("REDIS_URL", "DATABASE_URL")}
    subprocess.run([sys.executable, "-m", "flask", "--app", "api", "accounts", "credit", "demo",
                    str(credits)], cwd=tree, env={**env, "VAR_DIR": str(var_dir)}, check=True,
                   stdout=subprocess.DEVNULL)


def soak(var_dir: Path, root: int, load: Callable[[], None], minutes: float) -> list[dict]:
    """``load()`` over and over for ``minutes``, the stack's PSS and Redis's memory read
    before and after each minute of it."""
    began = time.monotonic()
    samples = []
    while True:
        elapsed = time.monotonic() - began
        table = processes(root)
        samples.append({"minute": round(elapsed / 60, 1), **redis_memory(var_dir, root),
                        "pss": round(sum(row["pss"] for row in table), 1),
                        "processes": {f"{row['name']} {row['pid']}": round(row["pss"], 1)
                                      for row in table}})
        if elapsed >= minutes * 60:
            return samples
        minute_over = time.monotonic() + min(60.0, minutes * 60 - elapsed)
        while time.monotonic() < minute_over:
            load()


def side(tree: Path, tmp: Path, fast_url: str, slow_url: str, soak_minutes: float = 0) -> dict:
    """One stack of ``tree``: started, loaded, its memory read (and soaked for
    ``soak_minutes``), stopped."""
    port = free_port()
    began = time.monotonic()
    var_dir = tmp / f"var-{time.monotonic_ns()}"
    proc, key = start_stack(tree, var_dir, port)
    try:
        ready = time.monotonic() - began
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

        def scrape(url: str):
            return client(port, "POST", SCRAPE, json.dumps({"url": url}), headers)

        measure(scrape(fast_url), WARMUP, FAST_CLIENTS)
        fast = measure(scrape(fast_url), FAST_REQUESTS, FAST_CLIENTS)
        slow = measure(scrape(slow_url), SLOW_CLIENTS * SLOW_PER_CLIENT, SLOW_CLIENTS)
        time.sleep(2)  # the last jobs' bookkeeping settles
        table = processes(proc.pid)

        def both() -> None:
            measure(scrape(fast_url), FAST_REQUESTS, FAST_CLIENTS)
            measure(scrape(slow_url), SLOW_CLIENTS * SLOW_PER_CLIENT, SLOW_CLIENTS)

        soaked = []
        if soak_minutes:
            grant(tree, var_dir, SOAK_CREDITS)
            soaked = soak(var_dir, proc.pid, both, soak_minutes)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            proc.kill()
    return {"ready_seconds": round(ready, 1), "fast_rps": round(fast["throughput_rps"], 1),
            "slow_rps": round(slow["throughput_rps"], 1), "slow_p50_ms": round(slow["p50_ms"]),
            "processes": table, "soak": soaked,
            "total": {field: round(sum(row[field] for row in table), 1)
                      for field in ("rss", "pss", "private")}}


def run(args: argparse.Namespace, tmp: Path, procs: list[subprocess.Popen]) -> dict:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    (tmp / "fast").mkdir()
    (tmp / "slow").mkdir()
    fast = article_site(tmp / "fast", env, procs)
    slow = article_site(tmp / "slow", env, procs, SLOW_MS)
    urls = (f"http://127.0.0.1:{fast}/article.html", f"http://127.0.0.1:{slow}/article.html")
    results: dict[str, list[dict]] = {"this": []}
    with contextlib.ExitStack() as stack:
        trees = {"this": ROOT}
        if args.base:
            trees = {"base": stack.enter_context(worktree(args.base, tmp / "base")), **trees}
            results = {"base": [], **results}
        for round_ in range(1, args.rounds + 1):
            for name, tree in trees.items():
                last = name == "this" and round_ == args.rounds
                results[name].append(side(tree, tmp, *urls, args.soak if last else 0))
    return {"base": args.base, "sides": results}


def print_side(name: str, result: dict) -> None:
    print(f"\n{name}: ready in {result['ready_seconds']} s; fast page at {FAST_CLIENTS} clients "
          f"{result['fast_rps']} req/s; {SLOW_MS} ms pages at {SLOW_CLIENTS} clients "
          f"{result['slow_rps']} req/s, p50 {result['slow_p50_ms']} ms")
    print(f"  {'process':<24}{'RSS MiB':>10}{'PSS MiB':>10}{'private':>10}")
    for row in sorted(result["processes"], key=lambda row: -row["pss"]):
        print(f"  {row['name']:<24}{row['rss']:>10.1f}{row['pss']:>10.1f}{row['private']:>10.1f}")
    total = result["total"]
    print(f"  {'total':<24}{total['rss']:>10.1f}{total['pss']:>10.1f}{total['private']:>10.1f}")
    if result["soak"]:
        print(f"  soaked: {'minute':>8}{'stack PSS':>12}{'Redis RSS':>12}{'Redis used':>12}")
        for sample in result["soak"]:
            print(f"          {sample['minute']:>8}{sample['pss']:>12}{sample['redis_rss']:>12}"
                  f"{sample['redis_used']:>12}")
        first, last = result["soak"][0]["processes"], result["soak"][-1]["processes"]
        print("  PSS per process, MiB, as the soak began and ended:")
        for name, pss in sorted(last.items(), key=lambda item: -item[1]):
            print(f"    {name:<36}{first.get(name, 0):>8}{pss:>8}")


def report(result: dict) -> bool:
    """Each side's figures; whether this checkout's stack met the bar (:data:`BAR_PSS_MIB`)."""
    base = result["base"]
    for name, rounds in result["sides"].items():
        for number, one in enumerate(rounds, 1):
            print_side(f"{name} ({base}), round {number}" if name == "base"
                       else f"this checkout, round {number}", one)
    worst = max(one["total"]["pss"] for one in result["sides"]["this"])
    passed = worst <= BAR_PSS_MIB
    print(f"\n{'PASS' if passed else 'FAIL'}  this checkout's stack <= {BAR_PSS_MIB} MiB "
          f"PSS ({worst:.0f})")
    return passed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", help="also run this revision's stack, alternately")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--soak", type=float, default=0, metavar="MINUTES",
                        help="then keep this checkout's stack under load that long")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    run_and_report("default-stack-", lambda tmp, procs: run(args, tmp, procs), report,
                   args.json)


if __name__ == "__main__":
    main()
