"""Several warm workers forked from one process that imported their code first.

A warm worker holds ~185 MB, nearly all of it the code and data of what it imports (Scrapy,
Twisted, lxml, trafilatura, extruct, numpy through the language detector) and most of it
the same in every worker. Started apart, each worker has its own copy; forked after the
imports (``python -m worker --processes N``), they share those pages until one writes to
them, and :func:`gc.freeze` keeps the garbage collector from writing to every object it
visits. Only what must be each worker's own is made after the fork: the Redis connection,
the reactor and its threads, the job threads (docs/benchmarks.md, Memory of the default
stack).

Once the workers are forked, the parent has no use for its copy: it becomes
:mod:`worker.keeper` (``exec``), which looks after the workers in a few MiB (replaces one that
died, forwards stop signals, stops the pool on a crash loop). With ``--cron``, worker 0 also
runs the housekeeping schedule (:func:`worker.cron.in_thread`).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import random
import signal
import sys
import traceback
from collections.abc import Callable
from typing import NoReturn

from worker.keeper import STOP_SIGNALS, become_member, command_line

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




def run(count: int, work: Callable[[int, int], None], arguments: list[str]) -> NoReturn:
    """Fork ``count`` workers, each running ``work(number, 0)``, then become their keeper
    (:mod:`worker.keeper`), which replaces a dead one by a worker started afresh with this
    pool's ``arguments``.

    Stop signals must be blocked from before this process started any thread (``python -m
    worker`` blocks them before its imports: numpy's OpenBLAS starts threads, and a thread
    that lets a signal through would take it) until the keeper handles them: one handled in
    between would miss a worker (the parent's list) or be forwarded by it to its siblings
    (the child's copy of the handler). Pending, it survives the ``exec``, and the keeper
    forwards it."""
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    preload()
    children = {fork(number, work): number for number in range(count)}
    sys.stdout.flush()
    sys.stderr.flush()
    keeper = command_line(children, arguments)
    os.execv(keeper[0], keeper)


def fork(number: int, work: Callable[[int, int], None]) -> int:
    """Fork worker ``number`` (its first life: ``work(number, 0)``), stop signals blocked
    (see :func:`run`); its pid."""
    parent = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        become_member(parent)
        random.seed()  # not the parent's sequence in every worker
        work(number, 0)
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
