"""``POST /map`` on a site of 50,000 sitemap URLs, against a bare ``requests`` + ``lxml`` reader.

    .venv/bin/python bench/map.py [--runs 7] [--urls 50000] [--sitemaps 10] [--stages] [--json]

Why: issue 29's speed bar. A site whose robots.txt names a sitemap index of 10 gzip sitemaps
with 50,000 URLs in all answers ``POST /map`` (``limit`` 50,000, ``discover_links`` 0) in
<= 3 s (p50), and the worker's RSS grows < 100 MB while doing it. In the same run, a bare
reader (``requests`` + ``lxml``: robots.txt, the index and the 10 gzip sitemaps fetched one
after the other, every ``<loc>`` and ``<lastmod>`` collected) reads the same files, so the
ratio says what the platform costs around the reading, whatever the machine's state.

Everything is private and on loopback, set up and torn down here: the site generated into the
temp dir (robots.txt, ``/sitemap_index.xml``, ``/sitemaps/part-NN.xml.gz``, a start page with a
few links), served by a threaded ``http.server`` in its own process (HTTP/1.1, TCP_NODELAY);
a redis-server, a SQLite database with a funded account on the ``enterprise`` plan
(``max_map_urls`` 100,000), one warm ``python -m worker interactive`` and the API under
gunicorn with ``make run``'s flags (bench/stack.py). The worker's RSS (psutil, itself and any
children) is read once the stack is warm (three ``/scrape`` of the start page and a map of 10
URLs) and sampled every 20 ms in a thread during the maps; its exact peak is its ``VmHWM``,
started again at that point (Linux ``clear_refs``): sampling misses a copy made and freed
within one C call. The growth is the higher of the two peaks over the RSS before. Also
printed: each map's time in the worker (RQ's ``started_at`` -> ``ended_at``) and the CPU
seconds the worker and the API used for it; ``--stages`` times the map's CPU work stage by
stage in this process on the same files (the spider's callbacks, the answer's conversions in
the worker and the API). Exit status 0 when both bars are met (and every map lists all the
URLs), 1 when not (the figures are printed either way, and what failed is said).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from latency import STATIC_SERVER, client  # noqa: E402
from stack import (  # noqa: E402
    PeakRss,
    cpu_seconds,
    funded_key,
    report_checks,
    reset_peak_rss,
    rss_mb,
    run_and_report,
    stack_env,
    start,
    start_api,
    start_workers,
    wait_for,
)

from launcher.embedded import free_port, start_redis  # noqa: E402

MAP = "/api/service/v1/map"
SCRAPE = "/api/service/v1/scrape"
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
#: Issue 29's bars.
BAR_P50_S, BAR_RSS_GROWTH_MB = 3.0, 100.0


# -- the site ---------------------------------------------------------------------------------

def page_path(n: int) -> str:
    """The path of page ``n`` (the start page links to pages 1 to 10, which the sitemaps list
    too: the map finds ``urls`` distinct URLs, no more)."""
    return f"/docs/section-{n % 97}/page-{n:06d}"


def make_site(root: Path, base: str, urls: int, sitemaps: int) -> dict[str, int]:
    """robots.txt naming ``/sitemap_index.xml``, which names ``sitemaps`` gzip sitemaps holding
    ``urls`` ``<url><loc/><lastmod/></url>`` entries in all, and a start page; file sizes."""
    (root / "sitemaps").mkdir(parents=True)
    (root / "robots.txt").write_text(
        f"User-agent: *\nDisallow: /private\n\nSitemap: {base}/sitemap_index.xml\n")
    (root / "index.html").write_text(
        "<!doctype html><html lang=en><head><title>A large site</title></head><body>"
        "<h1>A large site</h1><p>Its pages are listed in its sitemaps.</p>"
        + "".join(f'<a href="{page_path(n)}">Page {n}</a> ' for n in range(1, 11))
        + "</body></html>")
    per = -(-urls // sitemaps)
    names, sizes, n = [], {"sitemap_xml": 0, "sitemap_gz": 0}, 0
    for part in range(1, sitemaps + 1):
        entries = []
        for _ in range(min(per, urls - n)):
            n += 1
            day = 1 + n % 28
            entries.append(f"<url><loc>{base}{page_path(n)}</loc>"
                           f"<lastmod>2026-{1 + n % 12:02d}-{day:02d}T10:{n % 60:02d}:00+00:00"
                           "</lastmod></url>")
        xml = (f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP_NS}">\n'
               + "\n".join(entries) + "\n</urlset>\n").encode()
        packed = gzip.compress(xml, 6)
        name = f"sitemaps/part-{part:02d}.xml.gz"
        (root / name).write_bytes(packed)
        sizes["sitemap_xml"] += len(xml)
        sizes["sitemap_gz"] += len(packed)
        names.append(name)
    (root / "sitemap_index.xml").write_text(
        f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{SITEMAP_NS}">\n'
        + "".join(f"<sitemap><loc>{base}/{name}</loc><lastmod>2026-11-01</lastmod></sitemap>\n"
                  for name in names) + "</sitemapindex>\n")
    return sizes


# -- the bare reader --------------------------------------------------------------------------

def bare_read(base: str) -> tuple[float, int]:
    """robots.txt, the index it names and each sitemap, fetched one after the other with
    ``requests`` (one keep-alive session) and parsed with lxml; (seconds, locs collected)."""
    import requests
    from lxml import etree

    ns = {"s": SITEMAP_NS}
    began = time.perf_counter()
    found: dict[str, str | None] = {}
    with requests.Session() as session:
        robots = session.get(f"{base}/robots.txt", timeout=30)
        robots.raise_for_status()
        indexes = [line.split(":", 1)[1].strip() for line in robots.text.splitlines()
                   if line.lower().startswith("sitemap:")]
        for index_url in indexes:
            index = session.get(index_url, timeout=30)
            index.raise_for_status()
            for loc in etree.fromstring(index.content).iterfind("s:sitemap/s:loc", ns):
                response = session.get(loc.text.strip(), timeout=30)
                response.raise_for_status()
                body = response.content
                if body[:2] == b"\x1f\x8b":
                    body = gzip.decompress(body)
                for url in etree.fromstring(body).iterfind("s:url", ns):
                    found.setdefault(url.findtext("s:loc", namespaces=ns).strip(),
                                     url.findtext("s:lastmod", namespaces=ns))
    return time.perf_counter() - began, len(found)


# -- memory -----------------------------------------------------------------------------------

def family_rss_mb(pid: int) -> float:
    """RSS of process ``pid`` and its children, in MB (0 when it is gone)."""
    import psutil

    try:
        root = psutil.Process(pid)
        family = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0
    for proc in family:
        with contextlib.suppress(psutil.Error):
            total += proc.memory_info().rss
    return total / 2**20


# -- the run ----------------------------------------------------------------------------------

def run(args: argparse.Namespace, tmp: Path, procs: list[subprocess.Popen]) -> dict:
    redis_proc, redis_url = start_redis(tmp)
    procs.append(redis_proc)
    database_url = f"sqlite:///{tmp / 'bench.db'}"
    key = funded_key(database_url, args.runs * 2 + 100)
    env = stack_env(redis_url, database_url)

    site_port = free_port()
    base = f"http://127.0.0.1:{site_port}"
    began = time.perf_counter()
    sizes = make_site(tmp / "site", base, args.urls, args.sitemaps)
    generated_s = time.perf_counter() - began
    start([sys.executable, "-c", STATIC_SERVER, str(tmp / "site"), str(site_port), "0"],
          env, procs)
    worker = start_workers(1, env, procs, ("interactive",))[0]
    api_port = start_api(env, procs)
    api_proc = procs[-1]  # gunicorn's arbiter: its workers are its children

    from rq import Worker

    from worker.queues import INTERACTIVE, queue, redis_connection

    interactive = queue(INTERACTIVE, redis_connection(redis_url))
    wait_for(lambda: client(site_port, "GET", "/robots.txt")()(), "the static server")
    wait_for(lambda: client(api_port, "GET", "/healthz")()(), "the API's /healthz", 120)
    wait_for(lambda: Worker.count(queue=interactive) >= 1, "the worker", 120)

    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    answers: list[dict] = []
    start_url = f"{base}/"
    scrape = client(api_port, "POST", SCRAPE, json.dumps({"url": start_url}), headers)
    mapping = client(api_port, "POST", MAP,
                     json.dumps({"url": start_url, "limit": args.limit, "discover_links": 0}),
                     headers, then=lambda data, _: answers.append(json.loads(data)))
    for _ in range(3):  # the crawler, robots.txt's cache and the connections warm
        scrape()()
    # the map's own code warm too (its spider and parsers are loaded on its first job): a map
    # of the same site keeping 10 URLs, so that the growth measured is the 50,000 URLs'
    client(api_port, "POST", MAP, json.dumps({"url": start_url, "limit": 10,
                                              "discover_links": 0}), headers)()()
    rss_before = family_rss_mb(worker.pid)
    exact = reset_peak_rss(worker.pid)

    load_before = os.getloadavg()[0]
    map_s: list[float] = []
    rss_runs: list[float] = []
    worker_cpu: list[float] = []
    api_cpu: list[float] = []
    call = mapping()
    with PeakRss([worker.pid], family_rss_mb) as peak:
        for _ in range(args.runs):
            used = cpu_seconds({"worker": worker.pid, "api": api_proc.pid})
            began = time.perf_counter()
            call()
            map_s.append(time.perf_counter() - began)
            rss_runs.append(family_rss_mb(worker.pid))
            after = cpu_seconds({"worker": worker.pid, "api": api_proc.pid})
            worker_cpu.append(after["worker"] - used["worker"])
            api_cpu.append(after["api"] - used["api"])
    rss_after = family_rss_mb(worker.pid)
    hwm = rss_mb(worker.pid, "VmHWM") if exact else None
    job_s = [job_seconds(one["request_id"], interactive.connection) for one in answers]

    bare = [bare_read(base) for _ in range(args.runs)]
    answer = answers[-1]
    return {
        "site": start_url, "cores": os.cpu_count(),
        "load_average": [load_before, os.getloadavg()[0]], "runs": args.runs, "limit": args.limit,
        "urls": args.urls, "sitemaps": args.sitemaps, "site_bytes": sizes,
        "site_generated_s": generated_s,
        "map_s": map_s, "map_p50_s": statistics.median(map_s), "map_max_s": max(map_s),
        "links": [len(one["links"]) for one in answers],
        "total_found": [one["total_found"] for one in answers],
        "truncated": [one["truncated"] for one in answers],
        "sitemaps_read": len(answer["sitemaps"]),
        "credits_used": answer.get("credits_used"),
        "bare_s": [s for s, _ in bare], "bare_locs": [n for _, n in bare],
        "bare_p50_s": statistics.median(s for s, _ in bare),
        "worker_rss_before_mb": rss_before, "worker_rss_peak_mb": peak.peak[worker.pid],
        "worker_rss_hwm_mb": hwm,
        "worker_rss_after_mb": rss_after, "worker_rss_after_each_mb": rss_runs,
        "worker_cpu_s": worker_cpu, "api_cpu_s": api_cpu,
        "worker_job_s": job_s, "worker_job_p50_s": statistics.median(job_s),
        "stages": stages(tmp / "site", base, args) if args.stages else None,
    }


def job_seconds(job_id: str, connection: object) -> float:
    """How long the worker ran job ``job_id`` (RQ's started_at → ended_at): the map's time
    in the worker, without the API, the queue and the answer's way back."""
    from rq.job import Job

    job = Job.fetch(job_id, connection=connection)  # type: ignore[arg-type]
    if job.started_at is None or job.ended_at is None:
        return float("nan")
    return (job.ended_at - job.started_at).total_seconds()


# -- where the time goes, in this process -----------------------------------------------------

def stages(site: Path, base: str, args: argparse.Namespace) -> dict[str, float]:
    """The map's CPU work on the same files, stage by stage, in this process (median seconds
    of ``args.runs``): the spider's callbacks on robots.txt, the index and the sitemaps (no
    network), the answer, and the conversions the answer goes through on its way to the
    client (the worker's ``plain`` and JSON reply, the API's ``json.loads``, marshmallow dump
    and JSON body)."""
    from api.schemas.pages import page_response_schema
    from core.operations import operation

    schema = page_response_schema(operation("map"))()
    timings: dict[str, list[float]] = {}

    def timed(name: str, work: Callable[[], Any]) -> Any:
        began = time.perf_counter()
        out = work()
        timings.setdefault(name, []).append(time.perf_counter() - began)
        return out

    for _ in range(args.runs):
        stage_pass(site, base, args.limit, schema, timed)
        sitemap_parts(site, base, args.limit, timed)
    return {name: statistics.median(values) for name, values in timings.items()}


def sitemap_parts(site: Path, base: str, limit: int,
                  timed: Callable[[str, Callable[[], Any]], Any]) -> None:
    """The sitemaps stage's parts, each on its own over every entry."""
    from scrapy.utils.gz import gunzip
    from scrapy.utils.sitemap import Sitemap

    from core.canonical import canonical_url, site_key
    from crawler.extract.site_map import MapCollector
    from crawler.spiders.map import SITEMAP_MAX_BYTES

    packed = [path.read_bytes() for path in sorted((site / "sitemaps").iterdir())]
    bodies = timed("  part: gunzip", lambda: [gunzip(one, max_size=SITEMAP_MAX_BYTES)
                                              for one in packed])
    entries = timed("  part: Scrapy's Sitemap, parsed and iterated",
                    lambda: [entry for body in bodies for entry in Sitemap(body)])
    locs = [entry["loc"] for entry in entries]
    timed("  part: canonical_url of each loc", lambda: [canonical_url(loc) for loc in locs])
    timed("  part: site_key of each loc", lambda: [site_key(loc) for loc in locs])

    def collect() -> None:
        collector = MapCollector(f"{base}/", limit=limit)
        for entry in entries:
            collector.add(entry["loc"], "sitemap", None, entry.get("lastmod"))

    timed("  part: MapCollector.add of each entry (all of it)", collect)


def stage_pass(site: Path, base: str, limit: int, schema: Any,
               timed: Callable[[str, Callable[[], Any]], Any]) -> None:
    """One map of ``site``'s files, in this process, each stage ``timed``."""
    from base64 import b64encode

    from scrapy.http import Response, TextResponse, XmlResponse
    from scrapy.utils.test import get_crawler

    from core.items import plain
    from crawler.spiders.map import MapSpider
    from worker.queues import SERIALIZER

    def file(url: str) -> bytes:
        return (site / url.removeprefix(f"{base}/")).read_bytes()

    spider = MapSpider.from_crawler(get_crawler(MapSpider), url=f"{base}/", limit=str(limit),
                                    discover_links="0")
    spider._deadline = time.monotonic() + 600  # start() is not run here
    robots = TextResponse(f"{base}/robots.txt", body=file("robots.txt"), encoding="utf-8")

    def read_index() -> list:
        return [request for named in spider._on_robots(robots)
                for request in spider._on_sitemap(XmlResponse(named.url, request=named,
                                                              body=file(named.url)))]

    def read_sitemaps(requests: list) -> None:
        for request in requests:
            gz = Response(request.url, body=file(request.url), request=request,
                          headers={"Content-Type": "application/gzip"})
            for _ in spider._on_sitemap(gz):
                pass

    named = timed("spider: robots.txt + the index", read_index)
    timed("spider: the 10 sitemaps (gunzip, parse, collect)", lambda: read_sitemaps(named))
    found = timed("collector.answer", lambda: spider.collector.answer(spider.sitemaps_read,
                                                                      spider.feeds_read))
    result = {"url": f"{base}/", "final_url": f"{base}/", "status_code": 200,
              "fetched_at": "2026-01-01T00:00:00Z", "data": found}
    as_plain = timed("worker: plain(result)", lambda: plain(result))
    text = timed("worker: json.dumps (the early reply)", lambda: json.dumps(as_plain))
    timed("worker: RQ's result, after the reply (JSON, base64)",
          lambda: b64encode(SERIALIZER.dumps(as_plain)).decode())
    loaded = timed("API: json.loads", lambda: json.loads(text))
    body = {"request_id": "req_bench", "credits_used": 1,
            **{k: v for k, v in loaded.items() if k != "data"}, **loaded["data"]}
    dumped = timed("API: marshmallow dump (the response schema)", lambda: schema.dump(body))
    timed("API: json.dumps of the body", lambda: json.dumps(dumped))


def report(results: dict) -> bool:
    r = results
    ratio = r["map_p50_s"] / r["bare_p50_s"]
    sampled = r["worker_rss_peak_mb"] - r["worker_rss_before_mb"]
    growth = max(sampled, (r["worker_rss_hwm_mb"] or 0) - r["worker_rss_before_mb"])
    r.update(ratio=ratio, worker_rss_growth_mb=growth, worker_rss_sampled_growth_mb=sampled)
    sizes = r["site_bytes"]
    print(f"\n{r['site']}  cores={r['cores']}  {r['urls']:,} URLs in {r['sitemaps']} gzip "
          f"sitemaps ({sizes['sitemap_gz'] / 2**20:.1f} MB gzip, "
          f"{sizes['sitemap_xml'] / 2**20:.1f} MB XML)  limit={r['limit']:,}  "
          f"discover_links=0  runs={r['runs']}  load average "
          f"{r['load_average'][0]:.1f} -> {r['load_average'][1]:.1f}")
    print(f"POST /map   s: {' '.join(f'{s:.2f}' for s in r['map_s'])}")
    print(f"            p50 {r['map_p50_s']:.2f} s, max {r['map_max_s']:.2f} s; links "
          f"{sorted(set(r['links']))}, total_found {sorted(set(r['total_found']))}, "
          f"truncated {sorted(set(r['truncated']))}, sitemaps read {r['sitemaps_read']}")
    print(f"bare reader s: {' '.join(f'{s:.2f}' for s in r['bare_s'])}")
    print(f"            p50 {r['bare_p50_s']:.2f} s; locs {sorted(set(r['bare_locs']))}")
    print(f"ratio       map p50 / bare p50 = {ratio:.1f} x")
    print(f"in worker   job s: {' '.join(f'{s:.2f}' for s in r['worker_job_s'])}"
          f" (p50 {r['worker_job_p50_s']:.2f} s, RQ's started_at -> ended_at)")
    print(f"CPU s       worker {' '.join(f'{s:.2f}' for s in r['worker_cpu_s'])}; "
          f"API {' '.join(f'{s:.2f}' for s in r['api_cpu_s'])}")
    exact = "" if r["worker_rss_hwm_mb"] is None else f"VmHWM {r['worker_rss_hwm_mb']:.0f} MB, "
    print(f"worker RSS  {r['worker_rss_before_mb']:.0f} MB before, peak +{growth:.0f} MB "
          f"({exact}sampled every 20 ms {r['worker_rss_peak_mb']:.0f} MB, +{sampled:.0f} MB), "
          f"{r['worker_rss_after_mb']:.0f} MB after; after each map: "
          f"{' '.join(f'{mb:.0f}' for mb in r['worker_rss_after_each_mb'])} MB")
    if r["stages"]:
        print("\nin this process, the same files (median s):")
        for name, seconds in r["stages"].items():
            print(f"  {name:52}{seconds:7.3f}")
    complete = (set(r["total_found"]) == {r["urls"]} and set(r["links"]) == {r["urls"]}
                if r["limit"] >= r["urls"] else True)
    checks = {
        f"map p50 <= {BAR_P50_S:g} s ({r['map_p50_s']:.2f} s)": r["map_p50_s"] <= BAR_P50_S,
        f"worker RSS grows < {BAR_RSS_GROWTH_MB:g} MB (+{growth:.0f} MB)":
            growth < BAR_RSS_GROWTH_MB,
        f"every map lists all {r['urls']:,} URLs": complete,
    }
    return report_checks(r, checks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="maps (and bare reads) timed")
    parser.add_argument("--urls", type=int, default=50_000, help="URLs in the sitemaps")
    parser.add_argument("--sitemaps", type=int, default=10, help="gzip sitemaps in the index")
    parser.add_argument("--limit", type=int, default=50_000, help="the map's limit")
    parser.add_argument("--stages", action="store_true",
                        help="also time the map's stages in this process (cProfile-free)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = parser.parse_args()
    run_and_report("webdata-bench-map-", lambda tmp, procs: run(args, tmp, procs), report,
                   args.json)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # tear down on kill too
    main()
