"""Stopping one job among the many a warm worker runs (RQ's ``stop-job`` command).

RQ's own handlers compare the job with the worker's one "current" job, or kill its work horse,
which a warm worker has not (:mod:`worker.worker`). Here the job is looked up among those the
worker holds, stopped in its own thread (:class:`worker.timeouts.ThreadDeathPenalty`, at its
next checkpoint), and its failure recorded as a stop: it ends STOPPED, its result says
``JobStopped``, and RQ runs its failure callback (not ``on_stopped``, which RQ runs only for a
killed work horse).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from rq.command import parse_payload
from rq.job import Job
from rq.queue import Queue

from worker.timeouts import ThreadDeathPenalty

logger = logging.getLogger(__name__)


class StopsOneJob:
    """A mixin of :class:`worker.worker.WarmWorker`'s, before RQ's worker class. It reads the
    worker's ``_slots`` lock, the ids of the jobs handed to its threads (``_taken``) and keeps
    those asked to stop (``_stopping``)."""

    _slots: threading.Condition
    _taken: set[str]
    _stopping: set[str]
    name: str

    def handle_payload(self, message: Any) -> None:
        """RQ's command channel; ``stop-job`` and ``stop-execution`` stop that job among the
        many in flight (RQ's own handlers compare the job with one "current" job, or kill a
        work horse, which this worker has not)."""
        payload = parse_payload(message)
        if payload.get("command") not in ("stop-job", "stop-execution"):
            super().handle_payload(message)  # type: ignore[misc]
            return
        job_id = payload.get("job_id") or ""
        with self._slots:  # the job cannot end meanwhile (its thread's end takes the lock)
            taken = job_id in self._taken
            if taken:  # recorded first: the job's failure handling looks for it
                self._stopping.add(job_id)
            # A job taken but not begun yet (RQ shows it started) stops as it begins.
            if ThreadDeathPenalty.stop(job_id, taken=taken):
                logger.info("Worker %s: stopping job %s on request", self.name, job_id)
                return
            self._stopping.discard(job_id)
        logger.info("Worker %s: not running job %s, stop ignored", self.name, job_id)

    #: RQ's "this failure is a stop" mark, one per thread: RQ keeps one for the whole worker.
    _stopped_job_id = property(
        lambda self: getattr(self._thread_state(), "stopped_job_id", None),
        lambda self, value: setattr(self._thread_state(), "stopped_job_id", value))

    def _thread_state(self) -> threading.local:
        return self.__dict__.setdefault("_per_thread", threading.local())

    def handle_job_failure(self, job: Job, queue: Queue, *args: Any, **kwargs: Any) -> None:
        """RQ's, with "stopped on request" decided per job: the job ends STOPPED (its result
        says ``JobStopped``; RQ runs its failure callback, as for any job that raised)."""
        with self._slots:
            stopped = job.id in self._stopping
            self._stopping.discard(job.id)
        if stopped:
            self._stopped_job_id = job.id  # this thread's mark, read and cleared by RQ
        super().handle_job_failure(job, queue, *args, **kwargs)  # type: ignore[misc]
