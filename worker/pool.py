"""Several warm workers forked from one process that imported their code first.

A warm worker holds ~185 MB, nearly all of it the code and data of what it imports (Scrapy,
Twisted, lxml, trafilatura, extruct, numpy through the language detector) and most of it
the same in every worker. Started apart, each worker has its own copy; forked after the
imports (``python -m worker --processes N``), they share those pages until one writes to
them, and :func:`gc.freeze` keeps the garbage collector from writing to every object it
visits. Only what must be each worker's own is made after the fork: the Redis connection,
the reactor and its threads, the job threads (docs/benchmarks.md, Memory of the default
stack).

The parent forks, forwards signals, replaces a worker that died, and may run a side job
between (``make run``'s cron: :class:`worker.cron.PoolCron`, a process less). SIGTERM (or
SIGINT) once is each worker's warm shutdown, twice its cold one, as for a worker started
alone. A worker that dies as the pool starts, or keeps dying as it starts again
(:data:`CRASH_LOOP` times in a row), stops the pool, so that whoever started it (``make
run``'s supervisor) sees it fail and says so.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import logging
import os
import random
import signal
import sys
import time
import traceback
from collections.abc import Callable
from typing import Protocol

from core.processes import die_with

logger = logging.getLogger(__name__)

#: What every worker imports sooner or later; imported before the fork so that it is shared.
#: Never ``twisted.internet.reactor``: the reactor is installed by each worker after the fork.
PRELOAD = ("worker.jobs", "worker.maintenance", "worker.webhooks", "collecting.slice",
           "crawler.extract.page", "crawler.spiders", "storage.db", "scrapy.crawler",
           "scrapy.core.engine", "scrapy.core.downloader.handlers.http11")
#: Scrapy settings naming one class each that a crawler loads as it starts.
COMPONENT_SETTINGS = ("SCHEDULER", "DUPEFILTER_CLASS", "SCHEDULER_PRIORITY_QUEUE",
                      "SCHEDULER_MEMORY_QUEUE", "SCHEDULER_DISK_QUEUE", "STATS_CLASS",
                      "LOG_FORMATTER", "REQUEST_FINGERPRINTER_CLASS", "SPIDER_LOADER_CLASS",
                      "TWISTED_DNS_RESOLVER", "DOWNLOADER")
#: A worker that lived less than this many seconds died "as it started".
STABLE_AFTER = 30.0
#: Deaths as it starts, in a row, after which a worker is not replaced and the pool stops.
CRASH_LOOP = 3
#: First delay before a dead worker is replaced, doubled at each early death in a row, and
#: the longest.
RESTART_DELAY = 1.0
RESTART_DELAY_MAX = 30.0
#: The signals that stop the pool (forwarded to the workers).
STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
#: Seconds between two looks at the workers; before a failed side job's next turn.
POLL = 0.5
SIDE_RETRY = 5.0


def preload() -> None:
    """Import what the workers will, then freeze the objects made so far (see module)."""
    from scrapy.utils.misc import walk_modules_iter

    from crawler.extract.language import load_language_model

    for name in PRELOAD:
        importlib.import_module(name)
    for _ in walk_modules_iter("crawler.spiders"):  # as Scrapy's spider loader at its start
        pass
    _load_crawler_components()
    load_language_model()  # 75 MB, nearly all of it arrays that no worker writes to
    if "twisted.internet.reactor" in sys.modules:
        raise RuntimeError("the preload installed a reactor: the workers could not have theirs")
    gc.collect()
    gc.freeze()


def _load_crawler_components() -> None:
    """Import every class a crawler of ours builds from its settings (middlewares,
    extensions, download handlers, the scheduler and its queues…), as its start would."""
    from scrapy.utils.conf import build_component_list
    from scrapy.utils.misc import load_object

    from crawler.runner import crawler_settings

    settings = crawler_settings()
    paths: list[object] = []
    for name in ("DOWNLOADER_MIDDLEWARES", "SPIDER_MIDDLEWARES", "EXTENSIONS", "ITEM_PIPELINES"):
        paths += build_component_list(settings.getwithbase(name))
    paths += settings.getwithbase("DOWNLOAD_HANDLERS").values()
    paths += (settings.get(name) for name in COMPONENT_SETTINGS)
    for path in paths:
        if path:
            with contextlib.suppress(Exception):  # an optional one missing: its crawl says so
                load_object(path)


class SideJob(Protocol):
    """Work the pool's parent does between looking after its workers (``make run``'s cron)."""

    def start(self) -> None: ...
    def turn(self) -> float:
        """Do what is due; seconds until the next turn."""
    def stop(self) -> None: ...


class Pool:
    """``count`` children, each running ``work(number, generation)``, replaced when one dies;
    the parent runs ``side_job`` meanwhile, if any, started once the first workers are forked
    (a replacement forked later inherits its Redis socket, unused: redis-py opens its own in a
    new process)."""

    def __init__(self, count: int, work: Callable[[int, int], None],
                 side_job: SideJob | None = None):
        self.count = count
        #: ``work(number, generation)``: worker ``number``'s life, the ``generation``-th fork
        #: of it (0 the first; a replacement's RQ name must differ from a dead one's, whose
        #: registration may linger in Redis for minutes after a SIGKILL).
        self.work = work
        self.side_job = side_job
        self.children: dict[int, int] = {}  # pid: number
        self.started: dict[int, float] = {}  # number: when
        self.generation: dict[int, int] = {}  # number: forks of it so far
        self.due: dict[int, float] = {}  # number: when it is forked again
        #: Per worker: early deaths in a row of any cause (the back-off), and early failures
        #: in a row (exits with an error: the crash loop).
        self.streak: dict[int, int] = {}
        self.failures: dict[int, int] = {}
        self.stopping = False
        self.code = 0

    def run(self) -> int:
        """Fork the workers and look after them until they have all stopped; the exit code."""
        preload()
        for number in range(self.count):
            self._fork(number)
        for signum in STOP_SIGNALS:
            signal.signal(signum, self._forward)
        next_turn = time.monotonic()
        if self.side_job is not None:
            self.side_job.start()
        try:
            while self.children or (self.due and not self.stopping):
                self._reap()
                now = time.monotonic()
                for number, when in list(self.due.items()):
                    if when <= now and not self.stopping:
                        del self.due[number]
                        self._fork(number)
                if self.side_job is not None and not self.stopping and now >= next_turn:
                    next_turn = now + self._turn()
                time.sleep(POLL)
        finally:
            if self.side_job is not None:
                self.side_job.stop()
        return self.code

    def _turn(self) -> float:
        try:
            return self.side_job.turn() if self.side_job is not None else 60.0
        except Exception:  # Redis away, say: the workers go on, the turn comes again
            logger.exception("The pool's side job failed; trying again in %g s", SIDE_RETRY)
            return SIDE_RETRY

    def _reap(self) -> None:
        """Note the workers that exited; schedule their replacement (see :meth:`_died`)."""
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.children.clear()
                return
            if not pid:
                return
            number = self.children.pop(pid, None)
            if number is not None and not self.stopping:
                self._died(number, os.waitstatus_to_exitcode(status))

    def _forward(self, signum: int, _frame: object) -> None:
        """A stop for the pool: SIGTERM (SIGINT) to every worker, again on a second one (a
        worker's cold shutdown); a SIGHUP is forwarded as SIGTERM (to a worker it would be
        death on the spot). The workers lead process groups of their own (:meth:`_fork`), so
        a terminal's Ctrl-C reaches them from here alone, once."""
        self.stopping = True
        forwarded = signal.SIGTERM if signum == signal.SIGHUP else signum
        for pid in list(self.children):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, forwarded)

    def _died(self, number: int, code: int) -> None:
        """Worker ``number`` exited: forked again after a delay that doubles with each early
        death in a row (at most :data:`RESTART_DELAY_MAX`). One that fails (exits with an
        error) in its first life, or :data:`CRASH_LOOP` times in a row as it starts again,
        stops the pool (exit code 1); one killed by a signal (the OOM killer, an operator)
        is replaced, with the same back-off."""
        quick = time.monotonic() - self.started.get(number, 0.0) < STABLE_AFTER
        self.streak[number] = streak = self.streak.get(number, 0) + 1 if quick else 0
        failed = code > 0 and quick
        self.failures[number] = failures = self.failures.get(number, 0) + 1 if failed else 0
        if failures and (self.generation[number] == 1 or failures >= CRASH_LOOP):
            logger.error("Worker %d exited (%d) as it started: stopping the pool", number, code)
            self.code = 1
            self._forward(signal.SIGTERM, None)
            return
        delay = min(RESTART_DELAY_MAX, RESTART_DELAY * 2 ** max(0, streak - 1))
        logger.warning("Worker %d exited (%d); replacing it in %g s", number, code, delay)
        self.due[number] = time.monotonic() + delay

    def _fork(self, number: int) -> None:
        """Fork worker ``number``. Stop signals are held back across the fork: one handled
        in between would miss the new worker (the parent's list) or be forwarded by it to its
        siblings (the child's copy of the handler)."""
        parent = os.getpid()
        generation = self.generation.get(number, 0)
        self.generation[number] = generation + 1
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        pid = os.fork()
        if pid:
            self.children[pid] = number
            self.started[number] = time.monotonic()
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
            if self.stopping:  # asked before the fork, handled just now
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
            return
        code = 1
        try:
            for signum in STOP_SIGNALS:
                signal.signal(signum, signal.SIG_DFL)
            os.setpgid(0, 0)  # a group-wide signal reaches the parent alone (see _forward)
            # The parent gone (killed: it would have stopped its workers first), as a kill of
            # its whole group would have ended the worker before it led a group of its own.
            die_with(parent, signal.SIGKILL)()
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
            random.seed()  # not the parent's sequence in every worker
            self.work(number, generation)
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
