"""The API's answers, recorded and compared: proof that a refactor changed no behaviour.

    .venv/bin/python bench/answers.py record FILE.json [--tree PATH]
    .venv/bin/python bench/answers.py compare FILE.json [--tree PATH]

Why: a refactor whose rule is "the API answers byte for byte the same" needs a witness. This
starts a private stack (bench/answers_stack.py) from this checkout, or from the checkout at
``--tree`` (a ``git worktree`` of an older commit), sends a fixed list of requests, one at a
time, with fresh accounts, and keeps each answer's status, contract headers, body (parsed when
JSON, key order kept) and a hash of its bytes, all normalised (bench/answers_normal.py).
``record`` writes them to FILE; ``compare`` sends the same requests and prints every answer
that differs from FILE (exit 1), or "N answers identical" (exit 0).

Answers whose records come in completion order (a collection's results, its exports) have
them sorted by their text, URL first, over all the pages of one listing: the case name says
"sorted". Each account's requests fit in the first minute of its rate window, so
``RateLimit-Remaining`` is exact; a run that took longer says so.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from answers_normal import (
    Normaliser,
    Spans,
    csv_spans,
    decoded,
    differences,
    json_spans,
    lines_spans,
    results_spans,
    sorted_records,
)
from answers_stack import Answer, Stack, start_stack, tree_commit
from stack import ROOT, stop

from core.config import CollectionsConfig

BASE = "/api/service/v1"
MAIN, BROKE, COLLECTIONS = "answers-main", "answers-broke", "answers-collections"
VIDEO = "https://www.youtube.com/watch?v=pUbLiC_vid1"  # the test site's fake platform's
#: Past this many seconds since an account's first request its rate window slides.
WINDOW = 55.0


class Run:
    """The requests of one run, sent in order, and their normalised answers."""

    def __init__(self, stack: Stack, normaliser: Normaliser):
        self.stack, self.norm = stack, normaliser
        self.answers: dict[str, dict[str, Any]] = {}
        self.first_use: dict[str, float] = {}
        self.late: set[str] = set()

    def send(self, method: str, path: str, body: Any = None, *, who: str | None = MAIN,
             raw: bytes | None = None, headers: dict[str, str] | None = None) -> Answer:
        sent = dict(headers or {})
        if who is not None:
            sent.setdefault("Authorization", f"Bearer {self.stack.keys.get(who, who)}")
            began = self.first_use.setdefault(who, time.monotonic())
            if time.monotonic() - began > WINDOW:
                self.late.add(who)
        if body is not None:
            raw = json.dumps(body).encode()
            sent.setdefault("Content-Type", "application/json")
        full = path if path == "/healthz" else BASE + path
        return self.stack.request(method, full, raw, sent)

    def keep(self, name: str, method: str, path: str, answer: Answer, *, who: str | None,
             sent: Any = None, canonical: str = "", body: str | None = None) -> None:
        request = {"method": method, "path": self.norm.text(path), "as": who,
                   "body": self.norm.text(sent if isinstance(sent, str) else json.dumps(sent))
                   if sent is not None else None}
        self.answers[name] = self.norm.answer(request, answer.status, answer.headers,
                                              decoded(answer.body, answer.headers)
                                              if body is None else body, canonical)

    def call(self, name: str, method: str, path: str, body: Any = None, *,
             who: str | None = MAIN, raw: bytes | None = None,
             headers: dict[str, str] | None = None) -> dict[str, Any]:
        """Send one request and keep its answer as ``name``; the answer's JSON body (raw)."""
        answer = self.send(method, path, body, who=who, raw=raw, headers=headers)
        sent = body if raw is None else raw.decode("utf-8", "replace")
        self.keep(name, method, path, answer, who=who, sent=sent)
        return _json(answer)

    def sorted_listing(self, name: str, path: str, spans_of: Callable[[str], Spans], *,
                       pages: bool = False, headers: dict[str, str] | None = None) -> None:
        """GET ``path`` (and, with ``pages``, every page after it by ``next_cursor``), then
        keep each answer with its records sorted over all of them."""
        answers, paths = [self.send("GET", path, who=COLLECTIONS, headers=headers)], [path]
        while pages and (cursor := _json(answers[-1]).get("next_cursor")):
            paths.append(f"{path}&cursor={cursor}")
            answers.append(self.send("GET", paths[-1], who=COLLECTIONS))
        texts = sorted_records([decoded(a.body, a.headers) for a in answers], spans_of)
        for number, (answer, text) in enumerate(zip(answers, texts, strict=True), 1):
            label = f"{name}, page {number}" if pages else name
            self.keep(label, "GET", paths[number - 1], answer, who=COLLECTIONS,
                      canonical="records sorted by their text (URL first) over every page",
                      body=text)


def _json(answer: Answer) -> dict[str, Any]:
    try:
        body = json.loads(decoded(answer.body, answer.headers))
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def public(run: Run, site: str) -> None:
    run.call("GET /healthz", "GET", "/healthz", who=None)
    run.call("GET /openapi.json (stored whole)", "GET", "/openapi.json", who=None)
    run.call("401 no key", "POST", "/scrape", {"url": f"{site}/article"}, who=None)
    run.call("401 bad key", "GET", "/account", who="wdp_not-a-real-key")
    run.call("401 Basic authorization", "GET", "/account", who=None,
             headers={"Authorization": "Basic abc"})
    run.call("404 unknown route", "GET", "/nothing-here", who=None)


def operations(run: Run, site: str) -> None:
    article = f"{site}/article"
    run.call("scrape article", "POST", "/scrape", {"url": article})
    run.call("scrape article, include_links and include_metadata false", "POST", "/scrape",
             {"url": article, "include_links": False, "include_metadata": False})
    run.call("scrape article, include_links and include_metadata true", "POST", "/scrape",
             {"url": article, "include_links": True, "include_metadata": True})
    run.call("scrape redirect to article", "POST", "/scrape",
             {"url": f"{site}/redirect-to-article"})
    run.call("contacts contact page", "POST", "/contacts", {"url": f"{site}/contact"})
    run.call("contacts page without contacts", "POST", "/contacts", {"url": f"{site}/nothing"})
    run.call("products product page", "POST", "/products", {"url": f"{site}/product"})
    run.call("video-platform public video", "POST", "/video-platform", {"url": VIDEO})
    run.call("422 video-platform not a video", "POST", "/video-platform",
             {"url": "https://vimeo.com/76979871"})
    run.call("422 video-platform private video", "POST", "/video-platform",
             {"url": "https://youtu.be/privateVid1"})
    run.call("search web", "POST", "/search",
             {"query": '  "async traits" site:github.com ', "limit": 3})
    run.call("search web, default limit", "POST", "/search", {"query": "tides"})
    run.call("search news", "POST", "/search/news", {"query": "tides", "limit": 5})
    run.call("search videos", "POST", "/search/videos", {"query": "tides", "limit": 5})
    run.call("search web, no results", "POST", "/search", {"query": "fake:empty"})
    run.call("502 search provider error", "POST", "/search", {"query": "fake:error"})
    run.call("422 search limit 11", "POST", "/search", {"query": "tides", "limit": 11})


def errors(run: Run, site: str) -> None:
    form, article = {"Content-Type": "application/x-www-form-urlencoded"}, f"{site}/article"
    run.call("400 form body", "POST", "/scrape", raw=b"url=x", headers=form)
    run.call("400 broken JSON", "POST", "/scrape", raw=b"{not json",
             headers={"Content-Type": "application/json"})
    run.call("400 JSON array", "POST", "/scrape", [article])
    run.call("405 GET /scrape", "GET", "/scrape")
    run.call("422 missing url", "POST", "/scrape", {})
    run.call("422 url not a string", "POST", "/scrape", {"url": 42})
    run.call("422 include_links not a boolean", "POST", "/scrape",
             {"url": article, "include_links": "maybe"})
    run.call("422 unknown field", "POST", "/scrape", {"url": article, "surprise": 1})
    run.call("403 source policy 169.254.169.254", "POST", "/scrape",
             {"url": "http://169.254.169.254/latest/meta-data/"})
    run.call("403 robots.txt disallows /private", "POST", "/scrape", {"url": f"{site}/private"})
    run.call("502 target 404", "POST", "/scrape", {"url": f"{site}/missing"})
    run.call("502 target 500", "POST", "/scrape", {"url": f"{site}/broken"})
    run.call("415 PDF", "POST", "/scrape", {"url": f"{site}/doc.pdf"})
    run.call("415 JSON page", "POST", "/contacts", {"url": f"{site}/data.json"})
    run.call("402 no credits", "POST", "/scrape", {"url": article}, who=BROKE)
    run.call("GET /account of the account without credits", "GET", "/account", who=BROKE)


def idempotency(run: Run, site: str) -> None:
    key = {"Idempotency-Key": "answers-key-1"}
    body = {"url": f"{site}/article", "include_links": False}
    run.call("idempotency: first", "POST", "/scrape", body, headers=key)
    spaced = '{ "include_links" : false,\n  "url": ' + json.dumps(f"{site}/article") + " }"
    run.call("idempotency: replay (other spacing and key order)", "POST", "/scrape",
             raw=spaced.encode(), headers={**key, "Content-Type": "application/json"})
    run.call("422 idempotency: key reused with another body", "POST", "/scrape",
             {"url": f"{site}/contact"}, headers=key)
    run.call("422 idempotency: key reused on another operation", "POST", "/contacts",
             {"url": f"{site}/article"}, headers=key)
    slow, key = {"url": f"{site}/slow/answers?ms=2500"}, {"Idempotency-Key": "answers-key-2"}
    first: list[Answer] = []
    runner = threading.Thread(target=lambda: first.append(
        run.send("POST", "/scrape", slow, headers=key)))
    runner.start()
    time.sleep(1.0)  # the first holds its key while its slow page is fetched
    duplicate = run.send("POST", "/scrape", slow, headers=key)
    runner.join(timeout=120)
    run.keep("idempotency: slow first (200 once its page came)", "POST", "/scrape", first[0],
             who=MAIN, sent=slow)
    run.keep("409 idempotency: same key while the first runs", "POST", "/scrape", duplicate,
             who=MAIN, sent=slow)


def account(run: Run) -> None:
    run.call("GET /account", "GET", "/account")
    run.call("GET /account/activity", "GET", "/account/activity?limit=100")
    run.call("GET /account/activity, limit=2", "GET", "/account/activity?limit=2")
    run.call("422 activity cursor garbage", "GET", "/account/activity?cursor=garbage")


def collections(run: Run, site: str) -> None:
    who = COLLECTIONS
    run.call("404 unknown collection", "GET", "/collections/col_000000000000000000000000",
             who=who)
    urls = [f"{site}/article", f"{site}/contact", f"{site}/product", f"{site}/missing",
            f"{site}/private/batch"]
    made = run.call("batch: create", "POST", "/collections",
                    {"mode": "batch", "urls": urls, "extract": "page"}, who=who)
    batch = made.get("id", "col_missing")
    run.stack.wait_final(batch)
    run.call("batch: GET once final", "GET", f"/collections/{batch}", who=who)
    run.sorted_listing("batch: results limit=2, sorted", f"/collections/{batch}/results?limit=2",
                       results_spans, pages=True)
    spans: dict[str, Callable[[str], Spans]] = {"json": json_spans, "jsonl": lines_spans,
                                                 "csv": csv_spans}
    for fmt, spans_of in spans.items():
        for packed in (False, True):
            headers = {"Accept-Encoding": "gzip"} if packed else None
            run.sorted_listing(f"batch: export {fmt}{', gzip' if packed else ''}, sorted",
                               f"/collections/{batch}/export?format={fmt}", spans_of,
                               headers=headers)
    made = run.call("crawl: create, max_pages 5", "POST", "/collections",
                    {"mode": "crawl", "url": f"{site}/site/", "max_pages": 5,
                     "use_sitemap": False}, who=who)
    crawl = made.get("id", "col_missing")
    run.stack.wait_final(crawl)
    run.call("crawl: GET once final", "GET", f"/collections/{crawl}", who=who)
    run.sorted_listing("crawl: results, sorted", f"/collections/{crawl}/results?limit=10",
                       results_spans)
    run.call("409 cancel a completed collection", "POST", f"/collections/{crawl}/cancel",
             who=who)
    run.call("GET /collections", "GET", "/collections", who=who)
    run.call("GET /collections, limit=1", "GET", "/collections?limit=1", who=who)
    run.call("GET /account after the collections", "GET", "/account", who=who)


def answers_of(tree: Path) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Every answer of the checkout at ``tree``; warnings about the run."""
    procs: list[subprocess.Popen] = []
    began = datetime.now(UTC) - timedelta(minutes=1)
    retention = timedelta(seconds=CollectionsConfig.collection_retention_seconds, days=1)
    with tempfile.TemporaryDirectory(prefix="webdata-answers-") as tmp:
        try:
            stack = start_stack(tree, Path(tmp), procs)
            ports = {stack.api_port: "api", stack.site_port: "site",
                     stack.search_port: "search"}
            run = Run(stack, Normaliser(ports, began, retention))
            site = stack.site
            public(run, site)
            operations(run, site)
            errors(run, site)
            idempotency(run, site)
            account(run)
            collections(run, site)
        finally:
            stop(procs)
    warnings = [f"{who}'s requests took over {WINDOW:.0f} s: its RateLimit-Remaining may "
                "differ from run to run" for who in sorted(run.late)]
    return run.answers, warnings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("record", "compare"))
    parser.add_argument("file", type=Path, help="the recording (JSON)")
    parser.add_argument("--tree", type=Path, default=ROOT,
                        help="the checkout whose API answers (default: this one)")
    args = parser.parse_args()
    tree = args.tree.resolve()
    recorded = (json.loads(args.file.read_text(encoding="utf-8", errors="surrogateescape"))
                if args.command == "compare" else None)
    answers, warnings = answers_of(tree)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.command == "record":
        args.file.write_text(json.dumps({"tree": str(tree), "commit": tree_commit(tree),
                                         "answers": answers}, indent=1, ensure_ascii=False)
                             + "\n", encoding="utf-8", errors="surrogateescape")
        print(f"{len(answers)} answers recorded in {args.file} ({tree_commit(tree)})")
        return
    assert recorded is not None
    old = recorded["answers"]
    report = [line for name in dict.fromkeys([*old, *answers])
              for line in differences(name, old.get(name), answers.get(name))]
    if list(old) != list(answers) and set(old) == set(answers):
        report.append("=== the cases came in another order")
    print(f"recorded: {recorded.get('commit')}\nnow:      {tree_commit(tree)}")
    if report:
        print("\n".join(report))
        changed = sum(line.startswith("=== ") for line in report)
        print(f"\n{changed} of {len(old)} answers differ")
        sys.exit(1)
    print(f"{len(answers)} answers identical")


if __name__ == "__main__":
    main()
