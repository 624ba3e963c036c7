"""``python -m worker [QUEUE…]``: one warm worker on the given queues (default: interactive)."""

from __future__ import annotations

import argparse
import logging
import os

from worker.queues import COLLECTIONS, INTERACTIVE, queue, redis_connection
from worker.worker import WarmWorker


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("queues", nargs="*", default=[INTERACTIVE, COLLECTIONS])
    parser.add_argument("--burst", action="store_true", help="stop when the queues are empty")
    parser.add_argument("--name", help="worker name (unique per Redis)")
    args = parser.parse_args()
    level = os.environ.get("LOG_LEVEL", "INFO").upper()
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    crawler_level = os.environ.get("CRAWLER_LOG_LEVEL", "WARNING").upper()
    # trafilatura reports every odd page it meets; that is crawl noise, not worker news.
    for name in ("scrapy", "trafilatura", "htmldate", "courlan"):
        logging.getLogger(name).setLevel(crawler_level)
    connection = redis_connection()
    queues = [queue(name, connection) for name in args.queues]
    worker = WarmWorker(queues, connection=connection, name=args.name)
    worker.work(burst=args.burst, logging_level=level, with_scheduler=False)


if __name__ == "__main__":
    main()
