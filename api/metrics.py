"""``GET /metrics``: the API's Prometheus metrics, for the operator (``METRICS_TOKEN``).

Counted as requests are served: requests by route and status, their latency, credits booked
and page cache hits by operation. Read at each scrape, from Redis and the database (each
skipped, not failed, when its store cannot answer): jobs queued and started per queue, the
workers, running collections, their frontier's waiting and leased URLs, the webhook outbox.

gunicorn runs several API processes: with ``PROMETHEUS_MULTIPROC_DIR`` set (``make run`` sets
it) each writes its samples there and a scrape, whichever process answers it, adds them up
(prometheus_client's multiprocess mode); without it a scrape sees the process that answers.
"""

from __future__ import annotations

import hmac
import logging
import os
import time
from collections.abc import Iterator

from flask import Blueprint, Flask, Response, current_app, g, request
from prometheus_client import CONTENT_TYPE_LATEST, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import REGISTRY, Collector, CollectorRegistry
from rq import Queue, Worker
from rq.registry import StartedJobRegistry
from sqlalchemy import func, select

from api.errors import ApiError
from api.extensions import db, redis
from collecting.frontier import Frontier
from storage import collections
from storage.models import DeliveryStatus, WebhookEvent
from worker import queues

logger = logging.getLogger(__name__)

REQUESTS = Counter("webdata_requests_total", "Requests answered, by route and HTTP status.",
                   ["route", "status"])
LATENCY = Histogram("webdata_request_seconds", "Time to answer a request, by route.",
                    ["route"], buckets=(.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30,
                                        60))
CREDITS = Counter("webdata_credits_booked_total", "Credits charged for requests, by "
                  "operation (collections' pages: the workers' own counter).", ["operation"])
CACHE_HITS = Counter("webdata_cache_hits_total", "Answers from the page cache, by operation.",
                     ["operation"])
#: Live collections whose frontier a scrape reads at most.
FRONTIERS_READ = 200

blp = Blueprint("metrics", __name__)


def booked(operation: str, credits: int, cached: bool) -> None:
    """A request's charge, as it is answered (``api.operations``)."""
    CREDITS.labels(operation).inc(credits)
    if cached:
        CACHE_HITS.labels(operation).inc()


def _started() -> None:
    g.metrics_started = time.perf_counter()


def _counted(response: Response) -> Response:
    route = request.url_rule.rule if request.url_rule else "unmatched"
    REQUESTS.labels(route, str(response.status_code)).inc()
    started = g.get("metrics_started")
    if started is not None:
        LATENCY.labels(route).observe(time.perf_counter() - started)
    return response


@blp.route("/metrics", methods=["GET"])
def metrics() -> Response:
    """The metrics, for a scraper that sends ``Authorization: Bearer <METRICS_TOKEN>``."""
    token = current_app.config["WEBDATA"].api.metrics_token
    if not token:
        raise ApiError("not_found", "The resource was not found.")
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(),
                                                             token.encode()):
        raise ApiError("unauthorized", "Send METRICS_TOKEN as 'Authorization: Bearer <token>'.",
                       headers={"WWW-Authenticate": 'Bearer realm="metrics"'})
    stores = CollectorRegistry()
    stores.register(_Stores())
    return Response(generate_latest(_counted_registry()) + generate_latest(stores),
                    mimetype=CONTENT_TYPE_LATEST)


def _counted_registry() -> CollectorRegistry:
    """This process's counters, or every API process's in multiprocess mode."""
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return REGISTRY
    from prometheus_client import multiprocess

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return registry


class _Stores(Collector):
    """What is read from Redis and the database at each scrape."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        for read in (self._queues, self._collections, self._outbox):
            try:
                yield from read()
            except Exception as exc:  # a store that cannot answer: its metrics are absent
                logger.warning("Metrics: %s unavailable: %s", read.__name__, exc)

    def _queues(self) -> Iterator[GaugeMetricFamily]:
        connection = redis()
        jobs = GaugeMetricFamily("webdata_jobs", "Jobs per queue and state.",
                                 labels=["queue", "state"])
        for name in queues.QUEUES:
            queue = Queue(name, connection=connection)
            jobs.add_metric([name, "queued"], queue.count)
            jobs.add_metric([name, "started"], StartedJobRegistry(queue=queue).count)
        yield jobs
        yield GaugeMetricFamily("webdata_workers", "Workers registered in Redis.",
                                value=Worker.count(connection=connection))

    def _collections(self) -> Iterator[GaugeMetricFamily]:
        running = collections.running(db(), limit=FRONTIERS_READ)
        yield GaugeMetricFamily("webdata_collections_live", "Collections queued or running "
                                f"(at most {FRONTIERS_READ} counted).", value=len(running))
        urls = GaugeMetricFamily("webdata_frontier_urls", "URLs of the live collections' "
                                 "frontiers, waiting or leased.", labels=["state"])
        waiting = leased = 0
        for collection_id in running:
            state = Frontier(redis(), collection_id).state()
            waiting, leased = waiting + state.queued, leased + state.leased
        urls.add_metric(["waiting"], waiting)
        urls.add_metric(["leased"], leased)
        yield urls

    def _outbox(self) -> Iterator[GaugeMetricFamily]:
        with db().session() as session:
            pending = session.scalar(select(func.count()).select_from(WebhookEvent).where(
                WebhookEvent.status == DeliveryStatus.PENDING)) or 0
        yield GaugeMetricFamily("webdata_webhook_outbox", "Webhook events not yet delivered "
                                "(nor given up).", value=pending)


def register(app: Flask) -> None:
    app.before_request(_started)
    app.after_request(_counted)
    app.register_blueprint(blp)
