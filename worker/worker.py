"""The warm worker: an RQ worker that runs every job in one long-lived Scrapy reactor.

``rq worker`` forks a work horse per job, and a fresh Scrapy process per page costs ~700 ms
(DESIGN.md). :class:`WarmWorker` is a :class:`rq.SimpleWorker` (no fork): the reactor starts
once, in a background thread, before the first job, and each job's spider runs in it. A job
that overruns its RQ timeout is interrupted in the main thread; :meth:`WarmCrawler.crawl`
stops that job's crawl and the worker goes on. Scale with several processes:

    rq worker-pool -w worker.worker.WarmWorker -S rq.serializers.JSONSerializer -n 4 interactive
"""

from __future__ import annotations

import logging
from typing import Any

from rq import SimpleWorker

from crawler.runner import shared_crawler
from worker import liveness
from worker.queues import SERIALIZER

logger = logging.getLogger(__name__)


class WarmWorker(SimpleWorker):
    """A non-forking RQ worker whose jobs share one running Twisted reactor."""

    def __init__(self, *args: Any, **kwargs: Any):
        kwargs.setdefault("serializer", SERIALIZER)
        super().__init__(*args, **kwargs)

    def register_birth(self) -> None:
        super().register_birth()
        liveness.record(self.connection, self.key)  # lets the API see at once if we die

    def work(self, *args: Any, **kwargs: Any) -> bool:
        shared_crawler()  # reactor up before the first job, not during it
        logger.info("Warm crawler ready in worker %s", self.name)
        return super().work(*args, **kwargs)
