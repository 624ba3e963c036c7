"""``python -m worker [QUEUE…]``: one warm worker on the given queues (default: maintenance,
interactive, collections — in that order of priority); with ``--processes N``, N of them
forked from one process that imported their code first (:mod:`worker.pool`), looked after by
:mod:`worker.keeper`; with ``--cron``, the (first) worker also runs the housekeeping
schedule."""

from __future__ import annotations

import signal

from worker.keeper import STOP_SIGNALS, member

# Stop signals are held from before the imports below start threads (numpy's OpenBLAS does):
# a pool must not take one between its first fork and its keeper's start (worker.pool.run).
# A worker lets them through once it runs (work()).
signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)

import argparse  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402

from core.config import Config, load_or_exit  # noqa: E402
from worker import cron, logs, metrics, pool  # noqa: E402
from worker.queues import QUEUES, queue, redis_connection  # noqa: E402
from worker.worker import WarmWorker  # noqa: E402


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
                        "port (default: WORKER_METRICS_PORT; 0: none); with --processes, "
                        "each on its own from there: port, port + 1…")
    parser.add_argument("--processes", type=int, default=1, help="this many workers, "
                        "forked from one process that imports their code once (shared memory)")
    parser.add_argument("--cron", action="store_true", help="the (first) worker also runs "
                        "the housekeeping schedule (as python -m worker.cron would; one per "
                        "Redis)")
    parser.add_argument("--member", metavar="N.G", type=member, help="start worker N of a "
                        "pool afresh, its G-th replacement (given by the pool's keeper)")
    args = parser.parse_args()
    config = load_or_exit()
    logs.configure(config.log.log_level, config.log.log_format)
    # trafilatura reports every odd page it meets; that is crawl noise, not worker news.
    for name in ("scrapy", "trafilatura", "htmldate", "courlan"):
        logging.getLogger(name).setLevel(config.log.crawler_log_level)
    port = config.worker.worker_metrics_port if args.metrics_port is None else args.metrics_port
    if args.processes < 1:
        parser.error("--processes must be at least 1")

    def member_of_pool(number: int, generation: int) -> None:
        """Worker ``number`` of the pool; a replacement's name (``NAME-n.g``) is not its
        predecessor's, which Redis may still hold after a kill."""
        name = (f"{args.name}-{number}" + (f".{generation}" if generation else "")
                if args.name else None)
        work(config, args, port + number if port else 0, name, args.cron and number == 0)

    if args.member:
        member_of_pool(*args.member)
    elif args.processes == 1:
        work(config, args, port, args.name, args.cron)
    else:
        pool.run(args.processes, member_of_pool, sys.argv[1:])


def work(config: Config, args: argparse.Namespace, port: int, name: str | None,
         schedule: bool) -> None:
    """One warm worker, in this process, until it stops; running the housekeeping schedule
    too when ``schedule``."""
    connection = redis_connection(config.storage.redis_url, config.storage.redis_timeout)
    queues = [queue(queue_name, connection) for queue_name in args.queues]
    worker = WarmWorker(queues, connection=connection, name=name or args.name,
                        concurrency=config.worker.worker_concurrency,
                        interactive_reserve=config.worker.worker_interactive_reserve,
                        beside=(lambda: cron.in_thread(config)) if schedule else None)
    if port:
        metrics.serve(port, config.worker.worker_metrics_host, worker.concurrency,
                      lambda: worker.running)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)  # held since the start
    worker.work(burst=args.burst, logging_level=config.log.log_level, with_scheduler=False)


if __name__ == "__main__":
    main()
