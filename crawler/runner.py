"""Run spiders in one long-lived Twisted reactor (the warm worker's engine room).

Measured (docs/design.md, Measured decisions): a fresh ``CrawlerProcess`` per request costs ~700
ms; a crawl started in a reactor that is already running costs ~15 ms, and a request fed to a
crawler that is already running costs less again (:mod:`crawler.feed`). So the reactor runs for
the life of the process in a background thread, the filtering resolver is installed on it once,
one long-lived crawler takes the requests of every single-page job, and each call to
:meth:`WarmCrawler.crawl` blocks its caller (an RQ job, in a thread of its own: many run at
once) until the job's items are in or its time budget is spent. A spider that needs settings of
its own still gets a crawler of its own for its job.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import itertools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from scrapy import Spider, signals
from scrapy.crawler import Crawler, CrawlerRunner
from scrapy.settings import Settings
from scrapy.utils.reactor import install_reactor

from core import stops
from crawler import feed
from crawler.exceptions import CrawlTimeout
from crawler.resolver import FilteringResolver, policy_from_settings
from crawler.signals import crawl_abandoned

logger = logging.getLogger(__name__)

#: Seconds a stopped crawl gets to wind down before its caller moves on.
STOP_GRACE = 5.0
#: Longest single blocking wait of a caller on its crawl (see :func:`_wait`).
WAIT_SLICE = 0.2


def crawler_settings(overrides: dict[str, Any] | None = None) -> Settings:
    """The project's settings (``crawler.settings``) plus ``overrides``."""
    settings = Settings()
    settings.setmodule("crawler.settings", priority="project")
    if overrides:
        settings.update(overrides, priority="cmdline")
    return settings


class WarmCrawler:
    """Owns the reactor thread; thread-safe :meth:`crawl` for callers in other threads."""

    def __init__(self, settings: Settings | None = None):
        self.settings = settings or crawler_settings()
        self._runner: CrawlerRunner | None = None
        self._feed: feed.Feed | None = None
        self._job_ids = itertools.count()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Install the reactor and the resolver, start the reactor thread (idempotent)."""
        with self._lock:
            if self.running:
                return
            install_reactor(self.settings["TWISTED_REACTOR"], self.settings["ASYNCIO_EVENT_LOOP"])
            from twisted.internet import reactor

            FilteringResolver(reactor, policy_from_settings(self.settings)).install_on_reactor()
            self._runner = CrawlerRunner(self.settings)
            self._feed = feed.Feed(self._runner)
            _call_in_reactor(self._feed.start)  # open before the first job needs it
            self._thread = threading.Thread(
                target=reactor.run,
                kwargs={"installSignalHandlers": False},
                name="scrapy-reactor",
                daemon=True,
            )
            self._thread.start()

    def stop(self) -> None:
        """Stop every crawl and the reactor (process shutdown)."""
        if not self.running:
            return
        from twisted.internet import reactor

        _call_in_reactor(reactor.stop)
        assert self._thread is not None
        self._thread.join(timeout=STOP_GRACE)

    def crawl(
        self,
        spider: type[Spider] | str,
        *,
        timeout: float | None = None,
        **spider_kwargs: Any,
    ) -> list[Any]:
        """Run one spider to the end and return the items it scraped.

        A single-page spider is fed to the process's long-lived crawler (:mod:`crawler.feed`);
        any other gets a crawl of its own. Raises :class:`CrawlTimeout` after ``timeout``
        seconds (``CRAWL_TIMEOUT`` by default), having given up on the job. Any other
        interruption of the caller (an RQ job timeout) gives up on it too before it
        propagates, so the reactor is never left with orphans.
        """
        self.start()
        assert self._runner is not None and self._feed is not None
        timeout = timeout if timeout is not None else self.settings.getfloat("CRAWL_TIMEOUT")
        spidercls = self._runner.spider_loader.load(spider) if isinstance(spider, str) else spider
        if feed.takes(spidercls):
            return self._fed(spidercls, timeout, spider_kwargs)
        return self._alone(spidercls, timeout, spider_kwargs)

    def submit(self, spider: type[Spider], **spider_kwargs: Any
               ) -> tuple[concurrent.futures.Future[list[Any]], Callable[[], None]]:
        """Feed a job of a single-page ``spider`` to the long-lived crawler without waiting:
        the future of its items, and the call that gives up on it (cancels its downloads).

        For callers that keep many pages in flight from one thread (a collection's slice,
        :mod:`collecting.slice`); the caller owns the time budget.
        """
        self.start()
        assert self._feed is not None
        if not feed.takes(spider):
            raise TypeError(f"{spider.__name__} cannot be fed (see crawler.feed.takes)")
        job_id = next(self._job_ids)
        done: concurrent.futures.Future[list[Any]] = concurrent.futures.Future()
        _call_in_reactor(self._feed.submit, job_id, spider, spider_kwargs, done)
        return done, lambda: _call_in_reactor(self._feed.abandon, job_id)

    def _fed(self, spidercls: type[Spider], timeout: float,
             spider_kwargs: dict[str, Any]) -> list[Any]:
        done, give_up = self.submit(spidercls, **spider_kwargs)
        return _wait(done, timeout, give_up=give_up)

    def _alone(self, spider: type[Spider], timeout: float,
               spider_kwargs: dict[str, Any]) -> list[Any]:
        """The spider in a crawler of its own, built for this job and closed after it."""
        items: list[Any] = []
        done: concurrent.futures.Future[list[Any]] = concurrent.futures.Future()
        started: concurrent.futures.Future[Crawler] = concurrent.futures.Future()

        def collect(item: Any, **_: Any) -> None:
            items.append(item)

        def launch() -> None:
            try:
                assert self._runner is not None
                crawler = self._runner.create_crawler(spider)
                crawler.signals.connect(collect, signal=signals.item_scraped)
                deferred = self._runner.crawl(crawler, **spider_kwargs)
            except BaseException as exc:
                started.set_exception(exc)
                done.set_exception(exc)
                return
            started.set_result(crawler)
            deferred.addCallbacks(
                lambda _: done.set_result(items),
                lambda failure: done.set_exception(failure.value),
            )

        _call_in_reactor(launch)
        return _wait(done, timeout, give_up=lambda: self._stop_crawl(started, done))

    def _stop_crawl(
        self,
        started: concurrent.futures.Future[Crawler],
        done: concurrent.futures.Future[list[Any]],
    ) -> None:
        try:
            crawler = started.result(timeout=STOP_GRACE)
        except BaseException:
            return
        if done.done():
            return
        _call_in_reactor(_abandon, crawler)
        try:
            done.result(timeout=STOP_GRACE)
        except BaseException:
            logger.warning("A stopped crawl did not wind down within %s s", STOP_GRACE)


def _call_in_reactor(call: Callable[..., Any], *args: Any) -> None:
    """``reactor.callFromThread(call, *args)`` in an empty context: asyncio runs what it
    schedules in a copy of the scheduling thread's context variables, and so does everything
    scheduled from there on (timers, tasks, the downloads). A job thread's context holds RQ's
    current job, so a job's timers (a download timeout, a keep-alive connection's) would keep
    the finished job alive, its return value with it: a map's 50,000 links held into the
    next job (docs/benchmarks.md, Map speed)."""
    from twisted.internet import reactor

    contextvars.Context().run(reactor.callFromThread, call, *args)


def _abandon(crawler: Crawler) -> None:
    """Stop ``crawler`` without waiting for its downloads in progress (see
    :data:`crawler.signals.crawl_abandoned`)."""
    crawler.signals.send_catch_log(crawl_abandoned)
    crawler.stop()


def _wait(done: concurrent.futures.Future[list[Any]], timeout: float,
          give_up: Callable[[], None]) -> list[Any]:
    """The crawl's items, waited for; :class:`CrawlTimeout` after ``timeout`` seconds. On the
    timeout, or any interruption of the caller (an RQ job timeout), ``give_up()`` first.

    A worker running many jobs stops one alone (its RQ timeout, RQ's stop-job command) by
    asking its thread (:mod:`core.stops`): the wait looks every :data:`WAIT_SLICE` seconds.
    """
    deadline = time.monotonic() + timeout
    try:
        while (remaining := deadline - time.monotonic()) > 0:
            stops.checkpoint()
            try:
                return done.result(timeout=min(WAIT_SLICE, remaining))
            except concurrent.futures.TimeoutError:
                continue
    except BaseException:
        give_up()
        raise
    give_up()
    raise CrawlTimeout(f"The crawl did not finish within {timeout:g} s.")


_shared: WarmCrawler | None = None
_shared_lock = threading.Lock()


def shared_crawler() -> WarmCrawler:
    """The process's one warm crawler, started on first use.

    The warm worker starts it before taking jobs; a job run by any other RQ worker class (or
    from a script) gets one started on demand, slower the first time but otherwise the same.
    """
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = WarmCrawler()
        crawler = _shared
    crawler.start()
    return crawler
