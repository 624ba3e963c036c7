"""One long-lived crawler per worker process, fed the requests of every single-page job.

A Scrapy crawl per job costs its construction (settings deep-copied, ~30 components built), the
engine's open and close: measured under 32 jobs in flight, that was ~30 % of a worker's CPU,
more than the extraction itself (docs/benchmarks.md, Scrape latency). So the warm crawler keeps
one crawler running (:class:`FeedSpider`, kept open when idle) and each job becomes *requests*
in it, not a crawl:

- the job's spider (any :class:`~crawler.spiders.base.SinglePageSpider` without settings of
  its own) is instantiated as for ``scrapy crawl``, bound to the long-lived crawler, and its
  ``start()`` requests are injected into the running engine;
- every request of a job carries the job's id (``meta["feed_job"]``) and its callback and
  errback are wrapped: items they yield complete the job (a single-page spider yields exactly
  one result; a :class:`~core.items.ResponseCaching` yielded before it goes with it),
  requests they yield are tagged and wrapped in turn;
- a job given up on (its time budget or its RQ timeout) is closed here and its downloads
  cancelled (:data:`crawler.signals.crawl_abandoned`); the others go on.

Downloader middlewares, robots.txt, the source policy and the per-host slots apply to fed
requests exactly as to a crawl of their own. This module runs in the reactor thread only;
:class:`crawler.runner.WarmCrawler` is its thread-safe face.
"""

from __future__ import annotations

import concurrent.futures
import logging
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider, signals
from scrapy.exceptions import DontCloseSpider
from scrapy.settings import BaseSettings
from scrapy.utils.defer import deferred_from_coro
from twisted.python.failure import Failure

from core.controls import escaped
from core.items import ResponseCaching
from crawler.signals import JOB_CLOSED, JOB_KEY, crawl_abandoned
from crawler.spiders.base import SinglePageSpider

if TYPE_CHECKING:
    from scrapy.crawler import Crawler, CrawlerRunner

logger = logging.getLogger(__name__)

class FeedSpider(Spider):
    """The long-lived crawler's spider: no requests of its own, never closed for being idle."""

    name = "feed"
    #: The crawler holds every job of the worker at once: Scrapy's own caps would queue them
    #: (16 in all, 8 per domain by default). Politeness per host is kept by the download
    #: handler's per-host slots, shared with any crawl of the process.
    custom_settings = {"CONCURRENT_REQUESTS": 4096, "CONCURRENT_REQUESTS_PER_DOMAIN": 4096}
    #: Components every fed request would pass through for nothing: a fed spider has no
    #: ``allowed_domains`` or credentials (see :func:`takes`), the frontier counts depth (not
    #: Scrapy), and nobody reads the stats of a crawler that never closes. Each is a step of
    #: every page's way through the reactor, where a client waits (docs/benchmarks.md,
    #: Scrape latency).
    UNUSED = {
        "DOWNLOADER_MIDDLEWARES": (
            "scrapy.downloadermiddlewares.offsite.OffsiteMiddleware",
            "scrapy.downloadermiddlewares.httpauth.HttpAuthMiddleware",
            "scrapy.downloadermiddlewares.stats.DownloaderStats"),
        "SPIDER_MIDDLEWARES": ("scrapy.spidermiddlewares.depth.DepthMiddleware",),
        "EXTENSIONS": ("scrapy.extensions.corestats.CoreStats",),
    }

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        super().update_settings(settings)
        for name, paths in cls.UNUSED.items():  # the project's own, with these turned off
            settings.set(name, {**settings.getdict(name), **dict.fromkeys(paths)}, "spider")

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> FeedSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.keep_open, signal=signals.spider_idle)
        return spider

    def keep_open(self) -> None:
        raise DontCloseSpider

    async def start(self) -> AsyncIterator[Any]:
        return
        yield  # an async generator with nothing in it


@dataclass
class _Job:
    done: concurrent.futures.Future[list[Any]]
    spider: Spider
    #: The job's requests handed to Scrapy, and how many of them have not called back yet.
    requests: list[Request] = field(default_factory=list)
    pending: int = 0
    #: What a spider said about its response before its result (:class:`ResponseCaching`):
    #: handed over with the result, after it.
    extras: list[Any] = field(default_factory=list)


#: Spider attributes Scrapy's components read from *the crawler's* spider (our FeedSpider, when
#: fed): a spider that sets one needs a crawl of its own for it to count.
CRAWL_ATTRIBUTES = ("custom_settings", "allowed_domains", "handle_httpstatus_list",
                    "handle_httpstatus_all", "download_timeout", "download_maxsize",
                    "download_warnsize", "download_delay", "user_agent", "http_user",
                    "http_pass", "http_auth_domain", "max_concurrent_requests")


def takes(spidercls: type[Spider]) -> bool:
    """Whether jobs of ``spidercls`` can be fed: single-page spiders that set nothing their
    crawl reads (settings and the attributes above are per crawler; a spider with its own
    gets a crawl of its own, as before)."""
    return issubclass(spidercls, SinglePageSpider) and not any(
        getattr(spidercls, name, None) for name in CRAWL_ATTRIBUTES)


class Feed:
    """The long-lived crawler and the jobs in flight in it (reactor thread only)."""

    def __init__(self, runner: CrawlerRunner):
        self._runner = runner
        self._crawler: Crawler | None = None
        self._waiting: list[Callable[[], None]] = []  # jobs that came before the spider opened
        self._jobs: dict[int, _Job] = {}

    def start(self) -> None:
        """Open the long-lived crawler now rather than at the first job."""
        self._ensure_crawler()

    def _ensure_crawler(self) -> Crawler:
        """The crawler; a new one if there is none or it ended (it should not: it is kept
        open). Not ``crawler.crawling``: that turns true only once its start has run, a
        reactor turn later, and a second job in the same turn would start a second crawler."""
        if self._crawler is None:
            crawler = self._runner.create_crawler(FeedSpider)
            crawler.signals.connect(self._opened, signal=signals.spider_opened)
            crawler.signals.connect(self._dropped, signal=signals.request_dropped)
            self._crawler = crawler
            self._runner.crawl(crawler).addBoth(self._ended, crawler)
        return self._crawler

    def _ended(self, result: Any, crawler: Crawler) -> None:
        if isinstance(result, Failure):
            logger.error("The feed crawler failed: %s", result.value)
        else:
            logger.warning("The feed crawler closed; the next job opens another")
        if self._crawler is crawler:
            self._crawler = None

    def _opened(self, spider: Spider) -> None:
        waiting, self._waiting = self._waiting, []
        for start in waiting:
            start()

    def submit(self, job_id: int, spidercls: type[Spider], kwargs: dict[str, Any],
               done: concurrent.futures.Future[list[Any]]) -> None:
        """Start job ``job_id``: ``done`` gets its items, or the exception that stopped it."""
        crawler = self._ensure_crawler()
        try:
            spider = spidercls(**kwargs)  # as ``scrapy crawl`` would, bound to our crawler
        except Exception as exc:
            done.set_exception(exc)
            return
        spider.crawler, spider.settings = crawler, crawler.settings
        self._jobs[job_id] = _Job(done, spider)

        def start() -> None:
            deferred_from_coro(self._start(job_id, spider))

        if crawler.engine is not None and crawler.engine.spider is not None:
            start()
        else:
            self._waiting.append(start)

    async def _start(self, job_id: int, spider: Spider) -> None:
        try:
            async for output in spider.start():
                if isinstance(output, Request):
                    self._crawl(job_id, output)
                else:
                    self._finish(job_id, [output])
        except Exception as exc:
            self._fail(job_id, exc)
        job = self._jobs.get(job_id)
        if job is not None and not job.pending:
            self._finish(job_id, [])  # started nothing and yielded nothing

    def _crawl(self, job_id: int, request: Request) -> None:
        if job_id not in self._jobs:
            return
        assert self._crawler is not None and self._crawler.engine is not None
        self._crawler.engine.crawl(self._tag(job_id, request))

    def _tag(self, job_id: int, request: Request) -> Request:
        """Mark ``request`` as the job's and route what its callbacks yield (see module)."""
        job = self._jobs[job_id]
        job.requests.append(request)
        job.pending += 1
        request.meta[JOB_KEY] = job_id
        request.dont_filter = True  # one job's page is no duplicate of another job's
        request.callback = partial(self._callback, job_id, request.callback)
        request.errback = partial(self._errback, job_id, request.errback)
        return request

    def _callback(self, job_id: int, callback: Callable[..., Any] | None, response: Any,
                  **kwargs: Any) -> Iterable[Request]:
        job = self._jobs.get(job_id)
        if job is None:
            return ()  # given up on meanwhile
        call = callback or job.spider.parse  # Scrapy's default callback, of the job's spider
        return self._route(job_id, lambda: call(response, **kwargs))

    def _errback(self, job_id: int, errback: Callable[..., Any] | None,
                 failure: Any) -> Iterable[Request]:
        if errback is None:
            logger.info("A request of job %s failed: %s", job_id, escaped(failure.value))
            return self._route(job_id, lambda: ())
        return self._route(job_id, lambda: errback(failure))

    def _route(self, job_id: int, call: Callable[[], Any]) -> Iterable[Request]:
        """Run a callback of the job: items complete it, requests go on (tagged)."""
        if job_id not in self._jobs:
            return  # given up on meanwhile
        try:
            for output in call() or ():
                if isinstance(output, Request):
                    if job_id in self._jobs:
                        yield self._tag(job_id, output)
                elif isinstance(output, ResponseCaching):
                    if job_id in self._jobs:
                        self._jobs[job_id].extras.append(output)
                else:
                    job = self._jobs.get(job_id)
                    self._finish(job_id, [output, *(job.extras if job else ())])
        except Exception as exc:
            logger.exception("A spider callback failed")
            self._fail(job_id, exc)
        finally:
            job = self._jobs.get(job_id)
            if job is not None:
                job.pending -= 1  # this request is done; the ones it yielded are counted
                if not job.pending:
                    self._finish(job_id, [])  # its last request yielded no result

    def _dropped(self, request: Request, spider: Spider) -> None:
        job_id = request.meta.get(JOB_KEY)
        if job_id is not None:
            self._finish(job_id, [])  # never downloaded: the job ends without a result

    def _close(self, job_id: int) -> _Job | None:
        """Forget job ``job_id``; any request of it not downloaded yet will not be."""
        job = self._jobs.pop(job_id, None)
        if job is not None:
            for request in job.requests:
                request.meta[JOB_CLOSED] = True  # seen by the download handler
        return job

    def _finish(self, job_id: int, items: list[Any]) -> None:
        job = self._close(job_id)
        if job is not None and not job.done.done():
            job.done.set_result(items)

    def _fail(self, job_id: int, exc: BaseException) -> None:
        job = self._close(job_id)
        if job is not None and not job.done.done():
            job.done.set_exception(exc)

    def abandon(self, job_id: int) -> None:
        """Forget job ``job_id`` and cancel its downloads: its caller gave up on it."""
        if self._close(job_id) is not None and self._crawler is not None:
            self._crawler.signals.send_catch_log(crawl_abandoned, job=job_id)
