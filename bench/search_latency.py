"""Latency the search proxy adds: ``POST /search`` against calling the provider directly.

    .venv/bin/python bench/search_latency.py [--providers searxng,brave,google] [--c1 200]
                                             [--c8 400] [--json]

Why: search is plain HTTP from the API process (no queue, no worker), so it should cost the
provider's time plus a few milliseconds — auth, rate limit, the ledger's reserve and capture,
one pooled request to the provider, normalising ten results. Both sides are measured in one
run against the same fake provider, so the difference is the proxy's overhead alone.

Everything is private and on loopback: a redis-server, a SQLite database with a funded
account, the fake provider (tests/support/fakes/search_providers.py) in its own process, and the API
under gunicorn with ``make run``'s flags, configured for that provider. The direct side sends
the provider the very request the adapter sends. Helpers (timing, clients, processes) are
bench/latency.py's. Prints p50/p90 per side and the difference; exit status 0.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlencode

from latency import client, measure
from stack import api_answers, funded_key, stack_env, start, start_api, stop, wait_for

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from launcher.embedded import free_port, start_redis  # noqa: E402
from tests.support.fakes.search_providers import KEYS  # noqa: E402

SEARCH = "/api/service/v1/search"
QUERY = {"query": '"tide tables" site:example.org', "limit": 10}
CX = "bench-cx"


def provider_setup(name: str, url: str) -> tuple[dict[str, str], str, dict[str, str]]:
    """(API environment, the adapter's request path, its headers) for provider ``name``."""
    q = QUERY["query"]
    if name == "searxng":
        return ({"SEARXNG_URL": url},
                "/search?" + urlencode({"q": q, "format": "json", "categories": "general",
                                        "pageno": 1}), {})
    if name == "brave":
        return ({"BRAVE_API_KEY": KEYS["brave"], "BRAVE_API_URL": url},
                "/web/search?" + urlencode({"q": q, "count": 15}),
                {"X-Subscription-Token": KEYS["brave"]})
    if name == "google":
        return ({"GOOGLE_CSE_KEY": KEYS["google"], "GOOGLE_CSE_CX": CX, "GOOGLE_CSE_URL": url},
                "?" + urlencode({"cx": CX, "q": q, "num": 10}),
                {"X-Goog-Api-Key": KEYS["google"]})
    raise SystemExit(f"Unknown provider {name!r}: searxng, brave or google.")


def run_provider(name: str, args: argparse.Namespace, tmp: Path, redis_url: str,
                 procs: list[subprocess.Popen]) -> dict:
    """Measure one provider: its fake and an API configured for it, both started here."""
    database_url = f"sqlite:///{tmp / f'{name}.db'}"
    key = funded_key(database_url, 5 * (args.warmup + args.c1 + args.c8) + 100)
    fake_port = free_port()
    settings, path, headers = provider_setup(name, f"http://127.0.0.1:{fake_port}")
    env = stack_env(redis_url, database_url, SEARCH_PROVIDER=name, **settings)
    own: list[subprocess.Popen] = []
    start([sys.executable, "-m", "tests.support.fakes.search_providers", name, str(fake_port)],
          env, own)
    api_port = start_api(env, own)
    procs.extend(own)
    direct = client(fake_port, "GET", path, headers=headers)
    api = client(api_port, "POST", SEARCH, json.dumps(QUERY),
                 {"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    try:
        wait_for(lambda: direct()(), f"the fake {name}")
        wait_for(lambda: api_answers(api_port), "the API's /healthz")
        measure(api, args.warmup, 8)  # every gunicorn thread and pooled connection warm
        measure(direct, args.warmup, 8)
        results: dict = {}
        for concurrency, count in ((1, args.c1), (8, args.c8)):
            results[f"c{concurrency}"] = {"api": measure(api, count, concurrency),
                                          "direct": measure(direct, count, concurrency)}
        return results
    finally:
        stop(own)


def report(results: dict[str, dict]) -> None:
    print(f"\ncores={os.cpu_count()}  query={QUERY['query']!r} limit={QUERY['limit']}")
    print(f"{'':22}{'n':>6}{'p50 ms':>9}{'p90 ms':>9}{'mean ms':>9}{'req/s':>9}")
    for name, levels in results.items():
        for level in ("c1", "c8"):
            for side in ("api", "direct"):
                r = levels[level][side]
                print(f"{name + ' ' + side + ' ' + level:22}{r['requests']:>6}"
                      f"{r['p50_ms']:>9.1f}{r['p90_ms']:>9.1f}{r['mean_ms']:>9.1f}"
                      f"{r['throughput_rps']:>9.1f}")
            added = levels[level]["api"]["p50_ms"] - levels[level]["direct"]["p50_ms"]
            levels[level]["added_p50_ms"] = added
            print(f"{name + ' added ' + level:22}{'':>6}{added:>9.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--providers", default="searxng,brave,google",
                        help="comma-separated, measured in turn (default: all web providers)")
    parser.add_argument("--c1", type=int, default=200, help="requests at concurrency 1")
    parser.add_argument("--c8", type=int, default=400, help="requests at concurrency 8")
    parser.add_argument("--warmup", type=int, default=40, help="warm-up requests per side")
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = parser.parse_args()
    procs: list[subprocess.Popen] = []
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="webdata-search-bench-") as tmp:
        try:
            redis_proc, redis_url = start_redis(Path(tmp))
            procs.append(redis_proc)
            for name in args.providers.split(","):
                results[name.strip()] = run_provider(name.strip(), args, Path(tmp), redis_url,
                                                     procs)
        except KeyboardInterrupt:
            raise SystemExit("Interrupted.") from None
        finally:
            stop(procs)
    report(results)
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # tear down on kill too
    main()
