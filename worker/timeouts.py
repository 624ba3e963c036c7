"""Per-job timeouts for a worker that runs many jobs at once, each in its own thread.

RQ's default timeout is ``SIGALRM`` (:class:`rq.timeouts.UnixSignalDeathPenalty`): one alarm
per process, delivered to the main thread, so it can time only one job. RQ's
:class:`rq.timeouts.TimerDeathPenalty` raises the timeout in the job's own thread instead
(``PyThreadState_SetAsyncExc``), which is what a job thread needs, but its timer can fire in
the instant the job returns and land the exception in RQ's own bookkeeping of the result
(a finished job then recorded as failed, or a result lost). :class:`ThreadDeathPenalty` is the
same idea with that window closed: the exception is raised only while the job thread is still
inside the ``with`` block, decided under a lock both sides take.

An asynchronous exception is seen when the thread next runs Python code: a job blocked in one
long C call (``time.sleep(600)``) is interrupted only when that call returns. Our own jobs
wait on the crawl in short slices (:meth:`crawler.runner.WarmCrawler.crawl`) for this reason.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

from rq.timeouts import BaseDeathPenalty
from rq.timeouts import JobTimeoutException as RQJobTimeoutException


class JobTimeoutException(RQJobTimeoutException):
    """RQ's timeout exception, with a message: an asynchronous exception is raised from its
    class, without arguments. Callers match RQ's class (or its name in the stored traceback)."""

    def __init__(self, *args: Any):
        super().__init__(*(args or ("The job exceeded its timeout and was stopped.",)))


class ThreadDeathPenalty(BaseDeathPenalty):
    """Stops the job of the thread that entered it after ``timeout`` seconds, and only it."""

    def __init__(self, timeout: int, exception: type[BaseException] = JobTimeoutException,
                 **kwargs: Any):
        if exception is RQJobTimeoutException:  # RQ passes its own class; ours has a message
            exception = JobTimeoutException
        super().__init__(timeout, exception, **kwargs)
        self._thread_id = threading.get_ident()
        self._lock = threading.Lock()
        self._armed = False
        self._timer: threading.Timer | None = None

    def setup_death_penalty(self) -> None:
        if self._timeout <= 0:
            return
        self._armed = True
        self._timer = threading.Timer(self._timeout, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def _expire(self) -> None:
        with self._lock:
            if not self._armed:
                return  # the job left its block in time
            self._armed = False
            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(self._thread_id), ctypes.py_object(self._exception))

    def cancel_death_penalty(self) -> None:
        with self._lock:
            self._armed = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
