"""``python -m tests.support.crawl_many``: run many single-page crawls at once in one warm crawler.

Each line read from stdin is a URL, optionally followed by a time budget in seconds
(``URL 1.5``); its crawl (the ``page`` spider, as ``worker.jobs.scrape`` runs it) starts at
once in a thread of its own, and when it ends one JSON line says so:
``{"url": ..., "status": ..., "error": ...}``, in the order the crawls end. At the end of stdin
it waits for every crawl, then exits. The tests of the per-host cap (test_host_concurrency)
drive it, so that they control when each crawl starts and see the order they end in.
"""

from __future__ import annotations

import json
import sys
import threading

from itemadapter import ItemAdapter

from crawler.runner import WarmCrawler

_print_lock = threading.Lock()


def _crawl(crawler: WarmCrawler, url: str, timeout: float | None) -> None:
    try:
        items = crawler.crawl("page", url=url, timeout=timeout)
        item = ItemAdapter(items[0]).asdict() if items else {"status": "no result"}
        line = {"url": url, "status": item.get("status"), "error": item.get("error")}
    except Exception as exc:  # report it: the test asserts on every crawl
        line = {"url": url, "status": "raised", "error": repr(exc)}
    with _print_lock:
        print(json.dumps(line), flush=True)


def main() -> None:
    crawler = WarmCrawler()
    crawler.start()
    threads = []
    for raw in sys.stdin:
        url, _, budget = raw.strip().partition(" ")
        if url:
            timeout = float(budget) if budget else None
            thread = threading.Thread(target=_crawl, args=(crawler, url, timeout))
            thread.start()
            threads.append(thread)
    for thread in threads:
        thread.join()
    crawler.stop()


if __name__ == "__main__":
    main()
