"""A worker's Prometheus metrics, served on its own port (``WORKER_METRICS_PORT``, or
``python -m worker --metrics-port``): collections' pages stored and skipped and the credits
they booked, webhook attempts by outcome, and the job slots busy."""

from __future__ import annotations

import errno
import logging
from collections.abc import Callable, Iterable

from prometheus_client import Counter, Gauge, start_http_server

logger = logging.getLogger(__name__)

#: Ports a worker tries for its metrics, from ``WORKER_METRICS_PORT`` up.
PORTS_TRIED = 64

PAGES = Counter("webdata_collection_pages_total", "Pages collections stored, by status.",
                ["status"])
SKIPPED = Counter("webdata_collection_skipped_total", "URLs collections skipped.")
CREDITS = Counter("webdata_collection_credits_total", "Credits collections' pages booked.")
DELIVERIES = Counter("webdata_webhook_attempts_total", "Webhook attempts, by outcome: "
                     "delivered, or failed (retried later or given up).", ["outcome"])
SLOTS = Gauge("webdata_worker_slots_busy", "Job slots of this worker running a job.")
SLOTS_TOTAL = Gauge("webdata_worker_slots", "Job slots of this worker.")


def stored(statuses: Iterable[str], skipped: int, credits: int) -> None:
    """A batch a slice stored: its pages' statuses, the URLs skipped, the credits booked."""
    for status in statuses:
        PAGES.labels(status).inc()
    SKIPPED.inc(skipped)
    CREDITS.inc(credits)


def attempted(delivered: bool) -> None:
    DELIVERIES.labels("delivered" if delivered else "failed").inc()


def serve(port: int, host: str, slots: int, busy: Callable[[], int]) -> int:
    """Serve this process's metrics on ``host:port``, or the next free port of the
    :data:`PORTS_TRIED` from there: two workers started alike on one host (two
    ``webdata-worker@`` units, one environment file) must not stop each other. The port
    taken, logged (a thread of prometheus_client's serves it)."""
    SLOTS_TOTAL.set(slots)
    SLOTS.set_function(busy)
    for candidate in range(port, port + PORTS_TRIED):
        try:
            start_http_server(candidate, addr=host)
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
            continue
        logger.info("Metrics on http://%s:%d/metrics", host, candidate)
        return candidate
    raise OSError(errno.EADDRINUSE, f"ports {port} to {port + PORTS_TRIED - 1} are all taken")
