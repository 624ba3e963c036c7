"""Per-job timeouts for a worker that runs many jobs at once, each in its own thread.

RQ's default timeout is ``SIGALRM`` (:class:`rq.timeouts.UnixSignalDeathPenalty`): one alarm
per process, delivered to the main thread, so it can time only one job. RQ's
:class:`rq.timeouts.TimerDeathPenalty` raises the timeout in the job's own thread instead
(``PyThreadState_SetAsyncExc``), which is what a job thread needs, but its timer can fire in
the instant the job returns and land the exception in RQ's own bookkeeping of the result
(a finished job then recorded as failed, or a result lost). :class:`ThreadDeathPenalty` is the
same idea with that window closed: the exception is raised only while the job thread is still
inside the ``with`` block, decided under a lock both sides take.

A stop is first *requested* (:mod:`core.stops`): our jobs raise it themselves at their next
checkpoint (each slice of a crawl's wait, each turn of a collection's loop), where unwinding is
safe; an asynchronous exception can land inside an import's module lock and leave it held for
every other job. Only a job that reaches no checkpoint within :data:`FORCE_AFTER` seconds (a
batch script's own function, say) gets the asynchronous exception. That one is seen when the
thread next runs Python code: a job blocked in one long C call (``time.sleep(600)``) is
interrupted only when that call returns.
"""

from __future__ import annotations

import ctypes
import heapq
import itertools
import logging
import threading
import time
from typing import Any

from rq.timeouts import BaseDeathPenalty, BaseTimeoutException
from rq.timeouts import JobTimeoutException as RQJobTimeoutException

from core import stops

logger = logging.getLogger(__name__)

#: Seconds a job asked to stop has to reach a checkpoint before it is stopped by force.
FORCE_AFTER = 5.0


class JobTimeoutException(RQJobTimeoutException):
    """RQ's timeout exception, with a message: an asynchronous exception is raised from its
    class, without arguments. Callers match RQ's class (or its name in the stored traceback)."""

    def __init__(self, *args: Any):
        super().__init__(*(args or ("The job exceeded its timeout and was stopped.",)))


class JobStopped(BaseTimeoutException):
    """The job was stopped on request (RQ's stop-job command, e.g. by the API that gave up)."""

    def __init__(self, *args: Any):
        super().__init__(*(args or ("The job was stopped on request.",)))


class ThreadDeathPenalty(BaseDeathPenalty):
    """Stops the job of the thread that entered it after ``timeout`` seconds, and only it; or
    at once when :meth:`stop` is called with its job's id."""

    #: Penalties inside their block, by job id (RQ passes ``job_id``).
    _active: dict[str, ThreadDeathPenalty] = {}
    #: Jobs asked to stop while taken but not yet inside their block: stopped as they enter.
    _early: set[str] = set()
    #: Jobs that entered their block once (until :meth:`forget`): a stop that comes after
    #: it is too late, not early (RQ's callbacks of the job enter a block of their own).
    _begun: set[str] = set()
    _active_lock = threading.Lock()

    def __init__(self, timeout: int, exception: type[BaseException] = JobTimeoutException,
                 **kwargs: Any):
        if exception is RQJobTimeoutException:  # RQ passes its own class; ours has a message
            exception = JobTimeoutException
        super().__init__(timeout, exception, **kwargs)
        self._job_id: str | None = kwargs.get("job_id")
        self._thread_id = threading.get_ident()
        self._lock = threading.Lock()
        self._armed = False
        #: The stop requested of the job (its exception), once asked.
        self._asked: type[BaseException] | None = None

    @classmethod
    def stop(cls, job_id: str, taken: bool = False) -> bool:
        """Stop job ``job_id`` now if it runs in this process; whether it will stop.

        ``taken``: the caller's worker holds the job (handed to a thread, not finished), so
        a job not inside its block yet is stopped as it enters it (:meth:`forget` when the
        job is over): a stop that comes between "started" and the block is not lost.
        """
        with cls._active_lock:
            penalty = cls._active.get(job_id)
            if penalty is None:
                early = taken and job_id not in cls._begun
                if early:
                    cls._early.add(job_id)
                return early
        return penalty._ask(JobStopped)

    @classmethod
    def forget(cls, job_id: str) -> None:
        """Job ``job_id`` is over: an early stop that never met its block is dropped, and
        the job is forgotten."""
        with cls._active_lock:
            cls._early.discard(job_id)
            cls._begun.discard(job_id)

    def setup_death_penalty(self) -> None:
        self._armed = True
        if self._job_id is not None:
            with self._active_lock:
                if self._job_id in self._early:  # stopped before it began: never begins
                    self._early.discard(self._job_id)
                    self._armed = False
                    raise JobStopped
                self._active[self._job_id] = self
                self._begun.add(self._job_id)
        if self._timeout > 0:
            _watchdog.add(time.monotonic() + self._timeout, self)

    def _ask(self, exception: type[BaseException]) -> bool:
        """Request the stop at the job's next checkpoint; force it after :data:`FORCE_AFTER`.
        Whether the job is still inside its block (asked now or before)."""
        with self._lock:
            if not self._armed:
                return False  # the job left its block already
            if self._asked is not None:
                return True
            self._asked = exception
            stops.request(self._thread_id, exception)
        _watchdog.force_at(time.monotonic() + FORCE_AFTER, self)
        return True

    def _force(self) -> None:
        """The asynchronous exception, for a job asked to stop that reached no checkpoint."""
        with self._lock:
            if not self._armed:
                return  # it left its block
            exception = stops.to_force(self._thread_id)
            if exception is None:
                return  # it raised the stop at a checkpoint: it is on its way out
            self._armed = False
            self._forget()  # here too: the exception may land before cancel's own removal
            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(self._thread_id), ctypes.py_object(exception))
        logger.warning("Job %s reached no checkpoint within %g s: stopped by force",
                       self._job_id, FORCE_AFTER)

    def cancel_death_penalty(self) -> None:
        with self._lock:
            self._armed = False
            if self._asked is not None:
                stops.withdraw(self._thread_id)  # not for the thread's next job
        self._forget()
        if self._timeout > 0:
            _watchdog.done()

    def _forget(self) -> None:
        if self._job_id is not None:
            with self._active_lock:
                if self._active.get(self._job_id) is self:
                    del self._active[self._job_id]


#: Longest single wait of the watchdog, in seconds (``Condition.wait`` refuses huge ones).
LONGEST_WAIT = 3600.0


class _Watchdog:
    """One thread for the timeouts of every job of the process (a thread per job's timer was
    a thread created and woken for every job: measurable at hundreds of jobs a second)."""

    def __init__(self) -> None:
        self._due = threading.Condition()
        #: (when, order, penalty, force): at ``when`` the penalty's timeout asks its job to
        #: stop, or (``force``) a job asked before is stopped by force.
        self._heap: list[tuple[float, int, ThreadDeathPenalty, bool]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        #: Entries of penalties still inside their block; the heap also holds finished ones,
        #: left to be dropped when due (cheap) or by :meth:`done`'s compaction (long timeouts).
        self._armed = 0

    def add(self, when: float, penalty: ThreadDeathPenalty) -> None:
        """``penalty``'s timeout, at ``when``."""
        with self._due:
            self._armed += 1
            self._push(when, penalty, False)

    def force_at(self, when: float, penalty: ThreadDeathPenalty) -> None:
        """Stop ``penalty``'s job by force at ``when`` unless it has stopped by then."""
        with self._due:
            self._push(when, penalty, True)

    def _push(self, when: float, penalty: ThreadDeathPenalty, force: bool) -> None:
        heapq.heappush(self._heap, (when, next(self._order), penalty, force))
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="job-timeouts",
                                            daemon=True)
            self._thread.start()
        elif self._heap[0][2] is penalty:
            self._due.notify()  # due before whatever the thread waits for

    def _run(self) -> None:
        with self._due:
            while True:
                if not self._heap:
                    self._due.wait()
                    continue
                when = self._heap[0][0]
                wait = when - time.monotonic()
                if wait > 0:
                    self._due.wait(min(wait, LONGEST_WAIT))  # a year-long timeout: no overflow
                    continue
                _, _, penalty, force = heapq.heappop(self._heap)
                try:  # nothing if the job left its block
                    if force:
                        penalty._force()
                    else:
                        penalty._ask(penalty._exception)
                except Exception:  # this thread times every job: it must not die of one
                    logger.exception("Could not stop job %s at its timeout", penalty._job_id)

    def done(self) -> None:
        """A penalty left its block. Its entry stays until due, unless finished entries
        outnumber the armed ones: then the heap is rebuilt without them, so jobs with hour-long
        timeouts finishing in seconds cannot pile up entries (and penalties) for an hour."""
        with self._due:
            self._armed -= 1
            if len(self._heap) > 2 * self._armed + 64:
                self._heap = [entry for entry in self._heap if entry[2]._armed]
                heapq.heapify(self._heap)


_watchdog = _Watchdog()
