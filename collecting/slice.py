"""Collections run as time-sliced RQ jobs on the ``collections`` queue.

A slice job (:func:`run_slice`) takes pages from the collection's shared frontier in Redis
(:mod:`collecting.frontier`), keeps up to ``COLLECTION_CONCURRENCY`` of them in flight in the
worker's one long-lived crawler (the same fetch and extraction as ``/scrape``…), stores their
results and charges them in batches, and after ``COLLECTION_SLICE_SECONDS`` hands over to a
successor it enqueues itself. ``COLLECTION_SLICES`` slices run at once, on any worker of any
machine, so one crawl uses several processes; interactive work keeps its reserved slots
(``WORKER_INTERACTIVE_RESERVE``).

Every page goes: leased → fetched → (its links admitted) → stored and charged in one
transaction → acknowledged. A worker killed anywhere in between leaves a lease that expires
and another slice fetches the page again; the store skips a page stored already, so nothing is
stored or charged twice. The slice that finds the frontier seeded and idle finishes the
collection (:func:`collecting.control.finish`); the database lets exactly one such transition
happen.
"""

from __future__ import annotations

import concurrent.futures
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from redis import Redis
from rq import get_current_job

from collecting import control, seeding
from collecting.changes import ChangeTracker
from collecting.frontier import Entry, Frontier, Skip
from collecting.host_gate import HostGate, host_of
from collecting.host_share import HostShare
from collecting.landing import Landed, failure, land
from collecting.page_cache import CollectionCache
from collecting.repeats import RepeatedBlocks, clean_outcomes
from core import stops
from core.config import Config
from core.contract import ErrorCode, SkipReason
from core.controls import escaped
from core.logformat import bound
from core.scope import CrawlScope
from crawler.runner import shared_crawler
from crawler.spiders.collected import collection_spider
from storage import collection_skips, collection_store, collections, webhooks
from storage.db import Database, shared_for
from storage.models import LIVE_STATUSES
from worker import metrics, queues
from worker.webhooks import drainer

logger = logging.getLogger(__name__)

#: Seconds between two looks at the slice's pages in flight (and at a cancel).
POLL = 0.2
#: Seconds a slice waits for more pages to land once one did (see ``_collect``): each turn of
#: its loop costs Redis round trips and GIL hand-overs from the reactor, so fewer turns with
#: more pages each leave more of the process to extraction (the slice thread's CPU a page
#: down by a quarter: docs/benchmarks.md, Collections throughput).
GATHER = 0.025
#: Results stored in one transaction at most, and the longest a result waits for one (s).
FLUSH_SIZE = 50
FLUSH_EVERY = 0.5


def run_slice(collection_id: str) -> dict[str, Any]:
    """One slice of collection ``collection_id`` (an RQ job; see the module)."""
    config = Config.from_env()
    job = get_current_job()
    redis = job.connection if job is not None else queues.redis_connection()
    db = shared_for(config.storage)
    try:
        with bound(collection_id=collection_id):
            return Slice(collection_id, config, db, redis,
                         job_id=job.id if job is not None else None).run()
    finally:
        if job is not None:
            Frontier(redis, collection_id).drop_slice(job.id)


@dataclass
class _InFlight:
    entry: Entry
    give_up: Callable[[], None]
    deadline: float
    host: str
    permit: str


@dataclass
class Slice:
    """One slice's run (see the module)."""

    collection_id: str
    config: Config
    db: Database
    redis: Redis
    frontier: Frontier = field(init=False)
    scope: CrawlScope | None = None
    extract: str = "page"
    webhook: bool = False  #: the collection asked for a webhook (announced when it ends)
    #: The extract's options the collection gave (the spider takes its defaults for others).
    options: dict[str, Any] = field(default_factory=dict)
    #: A crawl's counts of repeated blocks (None: it keeps them, or it is a batch).
    repeats: RepeatedBlocks | None = None
    #: The page cache, for a collection with ``max_age`` or change tracking (None: every
    #: page is fetched whole).
    cache: CollectionCache | None = None
    #: Change tracking, for a collection that asked for it.
    changes: ChangeTracker | None = None
    stats: dict[str, int] = field(default_factory=lambda: {"stored": 0, "duplicates": 0})
    job_id: str | None = None  #: its RQ job's (None: run outside RQ)

    def __post_init__(self) -> None:
        self.frontier = Frontier(self.redis, self.collection_id)
        self.limits = self.config.collections
        self.crawl_timeout = self.config.crawler.crawl_timeout
        cap = self.limits.collection_host_concurrency
        self.hosts = HostShare(HostGate(self.redis, cap, self.crawl_timeout + 30), cap)
        self._flying: dict[concurrent.futures.Future[list[Any]], _InFlight] = {}
        #: Leased pages waiting for their host's permit.
        self._waiting: list[Entry] = []
        #: The conditional fetch of leased pages the cache holds (change tracking).
        self._conditions: dict[Entry, dict[str, str]] = {}
        self._done: list[Landed] = []
        #: Pages done that were not stored (the collection closed, or could not pay).
        self._unsettled: list[Entry] = []
        self._last_flush = self._last_renew = time.monotonic()
        self._stopped: str | None = None  # why no more page of this collection may be fetched
        self._budget = 0
        self._reported = 0  # the total this slice last wrote

    def run(self) -> dict[str, Any]:
        row = collections.get(self.db, self.collection_id)
        if row is None or row.status not in LIVE_STATUSES:
            return {"collection": self.collection_id, "status": row.status if row else None}
        spec = collections.spec_of(row)
        self.extract, self.webhook = row.extract, webhooks.may_call(row)
        self.options = dict(spec.get("options") or {})
        if row.mode == "crawl" and row.extract == "page" and spec.get(
                "remove_repeated_blocks", True):
            self.repeats = RepeatedBlocks(self.redis, self.frontier)
        self.cache = CollectionCache.of(self.db, self.config, row.extract, spec,
                                        crawl=row.mode == "crawl")
        self.changes = ChangeTracker.of(self.db, row.account_id, spec)
        self._budget = int(spec.get("max_pages") or 0)  # a crawl's pages in all; 0: none
        if row.mode == "crawl":
            self.scope = CrawlScope(start_url=spec["url"], max_depth=spec["max_depth"],
                                    include_paths=tuple(spec.get("include_paths") or ()),
                                    exclude_paths=tuple(spec.get("exclude_paths") or ()))
        if collections.start(self.db, self.collection_id) and self.webhook:
            drainer(self.config).kick(self.collection_id)  # its collection.started, if asked
        self.frontier.beat()
        if not self.frontier.state().seeded:
            refused = seeding.seed(self.frontier, self.redis, self.config,
                                   self.collection_id, spec, self.scope, self._budget)
            if refused:  # sitemap URLs out of the crawl's scope
                collection_store.store(self.db, self.collection_id, [], refused)
            self._report_total()
        self.hosts.split(self.frontier.width())
        try:
            self._crawl()
        except BaseException:
            self._give_up_all()  # a job timeout, a stop: the leases go back to the frontier
            raise
        self.hosts.exchange()
        self._end()
        return {"collection": self.collection_id, **self.stats}

    # --- the loop ----------------------------------------------------------------------------

    def _crawl(self) -> None:
        slice_end = time.monotonic() + self.limits.collection_slice_seconds
        looked = 0.0
        while True:
            stops.checkpoint()  # a job timeout or a stop: raised here, between two turns
            now = time.monotonic()
            if now - looked >= POLL:  # a cancel is seen within POLL (not one Redis call a page)
                looked = now
                if self.frontier.flag("cancelled"):
                    self._stopped = "cancelled"
            if self._stopped:
                self._give_up_all()
                return
            leasing = now < slice_end
            self._lease(leasing)
            if not leasing and self._waiting:  # the successor starts them
                self.frontier.give_back(self._waiting)
                self._waiting = []
            if not self._flying and not self._done and not self._waiting:
                self._last_renew = now  # no lease held: none can be stale (see _flush)
                if not leasing:
                    return
                state = self.frontier.state()
                if state.idle:
                    return  # the end of the collection (checked again in _end)
                if not state.queued:
                    time.sleep(POLL)  # other slices' pages are in flight: they may add more
                continue
            self._collect(now)
            if self._done and (len(self._done) >= FLUSH_SIZE or not self._flying
                               or now - self._last_flush >= FLUSH_EVERY):
                self._flush()
            if now - self._last_renew >= self.limits.collection_lease_seconds / 3:
                self.frontier.renew([f.entry for f in self._flying.values()] + self._waiting,
                                    self.limits.collection_lease_seconds)
                self._last_renew = now

    def _lease(self, leasing: bool) -> None:
        """Lease pages up to the slice's concurrency (while ``leasing``), then start the
        waiting ones whose host gives a permit (:mod:`collecting.host_share`). A slice leases
        little more than it can start (its share of a host's permits)."""
        room = min(self.limits.collection_concurrency - len(self._flying) - len(self._waiting),
                   self.hosts.share - len(self._waiting))
        if leasing and room > 0:
            leased = self.frontier.lease(room, self.limits.collection_lease_seconds)
            if self.cache is not None and leased:  # fresh enough in the page cache: no fetch
                hits, conditions = self.cache.look_up(leased)
                self._done += (self._outcome(entry, [page]) for entry, page in hits.items())
                leased = [entry for entry in leased if entry not in hits]
                self._conditions.update(conditions)
            self._waiting += leased
        now = time.monotonic()
        self._waiting, granted = self.hosts.ask(self._waiting, now)
        for entry, host, permit in granted:
            future, give_up = shared_crawler().submit(
                collection_spider(self.extract), url=entry.url, follow=self.scope is not None,
                site=self.scope.start_url if self.scope is not None else None, **self.options,
                **self._conditions.pop(entry, {}))
            self._flying[future] = _InFlight(entry, give_up, now + self.crawl_timeout,
                                             host, permit)

    def _landed(self, *pages: _InFlight) -> None:
        """Pages in flight are done (or given up): their hosts' permits come free."""
        self.hosts.done((page.host, page.permit) for page in pages)

    def _collect(self, now: float) -> None:
        """Wait a little for pages in flight; turn the finished (and the overdue) into
        outcomes ready to store."""
        if self._flying:
            done, _ = concurrent.futures.wait(list(self._flying), timeout=POLL,
                                              return_when=concurrent.futures.FIRST_COMPLETED)
            if done and len(done) < len(self._flying) // 2:
                # let a few more land: one turn of this loop (Redis calls, a GIL hand-over
                # from the reactor) for several pages instead of one each
                time.sleep(GATHER)
                done = {future for future in self._flying if future.done()}
        else:
            done = set()
            if not self._done:
                time.sleep(POLL)  # only pages waiting for their host
        landed: list[_InFlight] = []
        for future in done:
            flying = self._flying.pop(future)
            try:
                items = future.result()
            except Exception as exc:
                logger.exception("Page %s of %s failed", escaped(flying.entry.url),
                                 self.collection_id)
                items = [failure(flying.entry.url, ErrorCode.INTERNAL_ERROR,
                                  f"The page could not be processed ({type(exc).__name__}).")]
            landed.append(flying)
            if items and self.cache is not None:  # a 304: the cached answer, or fetched whole
                page = self.cache.revalidated(flying.entry, items[0])
                if page is None:
                    self._waiting.append(flying.entry)
                    continue
                items = [page]
            # the site's Crawl-delay is reported (in _outcome) before its permit comes free
            self._done.append(self._outcome(flying.entry, items))
        for future, flying in list(self._flying.items()):
            if flying.deadline < now:
                del self._flying[future]
                flying.give_up()
                landed.append(flying)
                self._done.append(self._outcome(flying.entry, [failure(
                    flying.entry.url, ErrorCode.TIMEOUT, "The page took too long to fetch.")]))
        if landed:
            self._landed(*landed)

    def _outcome(self, entry: Entry, items: list[Any]) -> Landed:
        page = items[0] if items else failure(entry.url, ErrorCode.FETCH_FAILED,
                                              "The crawl ended without a result.")
        self.hosts.report_delay(host_of(entry.url), page.crawl_delay)
        landed = land(self.frontier, self.scope, entry, page)
        if self.cache is not None:  # a duplicate too: its next fetch tells the same
            self.cache.keep(entry, page)
        if landed.outcome is None and landed.refused[0].reason == SkipReason.DUPLICATE:
            self.stats["duplicates"] += 1
        return landed

    def _flush(self) -> None:
        """Admit the links found, store and charge the results, acknowledge the pages."""
        done, self._done = self._done, []
        self._last_flush = time.monotonic()
        if self._last_flush - self._last_renew > self.limits.collection_lease_seconds:
            # Held up past its leases (its host cut off, a store that hung): other slices
            # may fetch these pages now, and a timeout seen from a cut-off host is no answer
            # of the site's. Their results are not stored nor acknowledged: their leases
            # bring them back. Skips stay (landing them gave their budget slots back already).
            fetched = [page for page in done if page.outcome is not None]
            logger.warning("Slice of %s held up %.0f s past its leases: %d page(s) left to "
                           "be fetched again", self.collection_id,
                           self._last_flush - self._last_renew, len(fetched))
            done = [page for page in done if page.outcome is None]
        skipped: list[Skip] = []
        if self.scope is not None:
            _, skipped = self.frontier.decide([link for page in done for link in page.found],
                                              [skip for page in done for skip in page.refused],
                                              self._budget)
        outcomes = [page.outcome for page in done if page.outcome is not None]
        if self.repeats is not None:  # without the blocks the crawl's pages repeat
            for outcome, data in zip(outcomes, clean_outcomes(
                    self.repeats, [outcome.data for outcome in outcomes]), strict=True):
                outcome.data = data
        stored = collection_store.store(self.db, self.collection_id, outcomes, skipped,
                                   *ChangeTracker.versions(self.changes, outcomes))
        if stored.closed:  # a stop came first: the skips decided here are still skips
            collection_skips.record_left(self.db, self.collection_id, skipped)
            self._stopped = "closed"
        elif stored.out_of_credits:
            self._stopped = control.OUT_OF_CREDITS
        if stored.events:  # collection.page events written: sent beside the crawl
            drainer(self.config).kick(self.collection_id)
        self.stats["stored"] += len(outcomes)
        settled = set(stored.settled)
        metrics.stored([o.status for o in outcomes if o.key in settled],
                       0 if stored.closed else len(skipped), stored.charged)
        unsettled = [page.entry for page in done
                     if page.outcome is not None and page.outcome.key not in settled]
        # a page not stored (the collection closed, or could not pay for it) is left leased
        # for _give_up_all to give back: the stop records it as a skip (collecting.skips)
        self.frontier.ack([page.entry for page in done
                           if page.outcome is None or page.outcome.key in settled])
        self._unsettled += unsettled
        self.frontier.beat()
        self._report_total()

    def _report_total(self) -> None:
        """Raise the stored ``total`` to the frontier's (a write only when it grew)."""
        total = self.frontier.state().total
        if total > self._reported:
            collections.report_total(self.db, self.collection_id, total)
            self._reported = total

    def _give_up_all(self) -> None:
        """Drop the pages in flight. Stopped (a cancel, the end of the money): they go back to
        the queue, with the pages done but not stored, for the stop to record as skips (a
        cancel sees no lease left at once); interrupted (a job timeout): their leases expire
        and they are fetched again, and what is done is stored."""
        flying = list(self._flying.values())
        for page in flying:
            page.give_up()
        self._landed(*flying)
        self.hosts.exchange()
        self._flying.clear()
        if self._stopped:  # for the stop to record as skips (collecting.skips)
            self.frontier.give_back([page.entry for page in flying] + self._waiting
                                    + [page.entry for page in self._done] + self._unsettled)
            self._done, self._unsettled = [], []
        else:
            self.frontier.give_back(self._waiting)
        self._waiting = []
        if self._done:
            self._flush()

    # --- the end of a slice ------------------------------------------------------------------

    def _end(self) -> None:
        """Finish the collection (once), or hand over to a successor slice."""
        control.end_slice(self.db, self.redis, self.frontier, self.collection_id, self.config,
                          stopped=self._stopped, repeats=self.repeats, webhook=self.webhook,
                          job_id=self.job_id)
