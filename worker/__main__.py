"""``python -m worker [QUEUE…]``: one warm worker on the given queues (default: maintenance,
interactive, collections — in that order of priority)."""

from __future__ import annotations

import argparse
import logging

from core.config import load_or_exit
from worker import logs, metrics
from worker.queues import QUEUES, queue, redis_connection
from worker.worker import WarmWorker


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    # maintenance first: the sweep (worker.cron) is enqueued with ttl=SWEEP_INTERVAL, so behind
    # an interactive queue that stays busy for an interval every sweep would expire unrun, and
    # abandoned reservations would hold credits forever. A sweep is a few SQL statements once
    # per interval: it never delays interactive work noticeably.
    parser.add_argument("queues", nargs="*", default=list(QUEUES))
    parser.add_argument("--burst", action="store_true", help="stop when the queues are empty")
    parser.add_argument("--name", help="worker name (unique per Redis)")
    parser.add_argument("--metrics-port", type=int, help="serve Prometheus metrics on this "
                        "port (default: WORKER_METRICS_PORT; 0: none)")
    args = parser.parse_args()
    config = load_or_exit()
    level = config.log.log_level
    logs.configure(level, config.log.log_format)
    # trafilatura reports every odd page it meets; that is crawl noise, not worker news.
    for name in ("scrapy", "trafilatura", "htmldate", "courlan"):
        logging.getLogger(name).setLevel(config.log.crawler_log_level)
    connection = redis_connection(config.storage.redis_url, config.storage.redis_timeout)
    queues = [queue(name, connection) for name in args.queues]
    worker = WarmWorker(queues, connection=connection, name=args.name,
                        concurrency=config.worker.worker_concurrency,
                        interactive_reserve=config.worker.worker_interactive_reserve)
    port = config.worker.worker_metrics_port if args.metrics_port is None else args.metrics_port
    if port:
        metrics.serve(port, config.worker.worker_metrics_host, worker.concurrency,
                      lambda: worker.running)
    worker.work(burst=args.burst, logging_level=level, with_scheduler=False)


if __name__ == "__main__":
    main()
