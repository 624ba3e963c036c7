"""The warm worker: an RQ worker that keeps many jobs in flight on one long-lived Scrapy reactor.

``rq worker`` forks a work horse per job, and a fresh Scrapy process per page costs ~700 ms
(docs/design.md, Measured decisions). :class:`WarmWorker` forks nothing: the reactor starts
once, in a background thread, before the first job, and every job's spider runs in it (fed to
one long-lived crawler, :mod:`crawler.feed`). A page job spends nearly all its time waiting on
the network, so one process runs up to ``WORKER_CONCURRENCY`` jobs at once, each in a job thread
(kept and reused) that blocks on its crawl while the reactor does the I/O of all of them
(docs/benchmarks.md, Scrape latency, measures the choice against one job at a time).

Each job is still an ordinary RQ job, run by RQ's own :meth:`perform_job`: RQ 3.x records one
*execution* per running job (``StartedJobRegistry``, the worker's execution index) and a worker
may hold several, so ``rq info``, the registries, results, retries and callbacks all work as
with any RQ worker. What changes per job:

- the timeout is raised in the job's own thread (:class:`worker.timeouts.ThreadDeathPenalty`),
  so a job over its timeout is stopped alone and its neighbours go on;
- the main thread only dequeues: it takes a job when a slot is free, in queue order
  (maintenance, interactive, collections), and background queues (``collections``) may hold
  at most ``WORKER_CONCURRENCY - WORKER_INTERACTIVE_RESERVE`` slots, so single-page requests
  always find a slot that a long crawl cannot take;
- RQ's stop-job command stops that one job (the API sends it for a request it gave up on): it
  ends STOPPED, its result says ``JobStopped``, and RQ runs its failure callback (not
  ``on_stopped``, which RQ runs only for a killed work horse);
- a warm shutdown (SIGTERM) stops dequeuing and waits for the jobs in flight; a cold one (a
  second signal) exits at once, leaving them to the API's abandoned-job detection.

Supported: RQ >= 3.0, < 4 (multiple executions per worker arrived in 3.0). It overrides RQ
``Worker`` methods (some in its mixins, :mod:`worker.stopping` and :mod:`worker.pacing`), most
of them undocumented: ``work``, ``register_birth``, ``heartbeat``,
``check_for_suspension``, ``dequeue_job_and_maintain_ttl``, ``execute_job``,
``prepare_execution``, ``prepare_job_execution``, ``handle_execution_ended``,
``handle_payload``, ``handle_job_failure``, ``request_force_stop``, ``teardown``, ``_shutdown``
and the ``_stopped_job_id`` mark; what it reads or writes of RQ's Redis layout itself is in
:mod:`worker.rq_state`. The stack tests (``tests/test_worker*.py``) run each path. Scale with
several processes (``WORKERS``) and machines sharing ``REDIS_URL``:

    rq worker-pool -w worker.worker.WarmWorker -S rq.serializers.JSONSerializer -n 4 interactive
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from queue import SimpleQueue
from typing import Any

import redis.exceptions
from rq import SimpleWorker
from rq.exceptions import DequeueTimeout
from rq.executions import Execution
from rq.job import Job, JobStatus
from rq.queue import Queue
from rq.worker import WorkerStatus

from core.config import load_or_exit
from core.logformat import bound
from crawler.extract.language import load_language_model
from crawler.runner import shared_crawler
from worker import logs, rq_state
from worker.allocator import give_back_large_blocks
from worker.pacing import Paced
from worker.queues import COLLECTIONS, SERIALIZER
from worker.replies import ReplyingJob
from worker.stopping import StopsOneJob
from worker.timeouts import ThreadDeathPenalty

logger = logging.getLogger(__name__)

#: Longest blocking dequeue, in seconds: how soon the main thread sees a freed background slot
#: or a stop request while it waits on the queues.
DEQUEUE_SLICE = 1
#: A job's statuses once its end is written.
ENDED = {JobStatus.FINISHED, JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED}


class WarmWorker(StopsOneJob, Paced, SimpleWorker):
    """A non-forking RQ worker whose jobs run side by side on one running Twisted reactor."""

    death_penalty_class = ThreadDeathPenalty

    def __init__(self, *args: Any, concurrency: int | None = None,
                 interactive_reserve: int | None = None,
                 background_queues: Iterable[str] = (COLLECTIONS,),
                 beside: Callable[[], Callable[[], None]] | None = None, **kwargs: Any):
        kwargs.setdefault("serializer", SERIALIZER)
        super().__init__(*args, **kwargs)
        if self.job_class is Job:  # RQ's default, given or not (``rq worker-pool`` gives it)
            # sends the value of a job an API request waits on before RQ's bookkeeping
            self.job_class = ReplyingJob
        if concurrency is None or interactive_reserve is None:
            # Not given by ``python -m worker``: started by ``rq worker -w worker.worker…``,
            # so this is the process's entry point and checks the whole configuration.
            workers = load_or_exit().worker
            concurrency = concurrency or workers.worker_concurrency
            if interactive_reserve is None:
                interactive_reserve = workers.worker_interactive_reserve
        self.concurrency = concurrency
        self.background_queues = frozenset(background_queues)
        #: Most slots the background queues may hold at once: all but the reserve, on a
        #: worker that also takes interactive work (and always at least one).
        only_background = all(queue.name in self.background_queues for queue in self.queues)
        self.background_limit = (concurrency if only_background
                                 else max(1, concurrency - interactive_reserve))
        self._slots = threading.Condition()
        #: Jobs in flight, and the threads that run them (started as needed, kept: a thread
        #: per job was a thread created for every job).
        self._busy = 0
        self._job_threads = 0
        self._work: SimpleQueue[tuple[Job, Queue, Any, bool]] = SimpleQueue()
        #: Jobs whose end could not be written (Redis away): recorded by the dequeue loop.
        self._unrecorded: SimpleQueue[tuple[Job, Queue, Any]] = SimpleQueue()
        self._background_running = 0
        self._cold_shutdown = False
        #: Jobs handed to a job thread and not over; those of them asked to stop (RQ's
        #: stop-job command), until their failure is recorded.
        self._taken: set[str] = set()
        self._stopping: set[str] = set()
        #: Work run beside the jobs (``python -m worker --cron``: the schedule): started once
        #: the worker can be stopped cleanly (its signal handlers in place), stopped as it
        #: ends; ``beside()`` starts it and returns what stops it.
        self._beside = beside
        self._stop_beside: Callable[[], None] | None = None

    def register_birth(self) -> None:
        super().register_birth()
        rq_state.record_space(self.connection, self.key)  # the API sees at once if we die

    def _install_signal_handlers(self) -> None:
        super()._install_signal_handlers()
        if self._beside is not None and self._stop_beside is None:
            self._stop_beside = self._beside()

    def work(self, *args: Any, **kwargs: Any) -> bool:
        logs.configure(kwargs.get("logging_level") or "INFO")  # `rq worker-pool` too
        give_back_large_blocks()  # a large answer's copies leave no heap behind
        shared_crawler()  # reactor up before the first job, not during it
        load_language_model()  # half a second, paid here rather than by the first page
        logger.info("Warm crawler ready in worker %s (%d jobs at once)", self.name,
                    self.concurrency)
        return super().work(*args, **kwargs)

    # -- slots ---------------------------------------------------------------------------

    @property
    def running(self) -> int:
        """Jobs in flight in this process."""
        with self._slots:
            return self._busy

    def _open_queues(self) -> list[Queue]:
        """The queues a job may be taken from now: all, but background ones only while they
        hold fewer than their share of the slots."""
        with self._slots:
            background_full = self._background_running >= self.background_limit
        return [queue for queue in self._ordered_queues
                if not (background_full and queue.name in self.background_queues)]

    def _wait_for_slot(self, seconds: float) -> bool:
        with self._slots:
            return self._slots.wait_for(lambda: self._busy < self.concurrency, seconds)

    # -- the main thread: dequeue ----------------------------------------------------------

    def dequeue_job_and_maintain_ttl(
        self, timeout: int | None, max_idle_time: int | None = None,
    ) -> tuple[Job, Queue] | None:
        """Wait for a free slot, then for a job on the open queues, in short slices.

        RQ's own loop blocks on one fixed list of queues for minutes; this one looks again
        every :data:`DEQUEUE_SLICE` whether a slot (or a background slot) came free and
        whether a stop was asked for. ``timeout`` None is burst mode: return None as soon as
        the queues are empty.
        """
        self.procline("Listening on " + ",".join(self.queue_names()))
        idle_since = time.monotonic()
        backoff = 1.0
        while not self._stop_requested:
            if self.running:
                idle_since = time.monotonic()  # idle only once the last job has ended
            elif max_idle_time is not None and time.monotonic() - idle_since > max_idle_time:
                return None
            try:
                self._beat()
                if self._suspended(burst=timeout is None):
                    continue
                if self._state != WorkerStatus.IDLE and not self.running:
                    self.set_state(WorkerStatus.IDLE)  # within a slice of the last job's end
                if self.should_run_maintenance_tasks:
                    self.run_maintenance_tasks()
                self._record_unrecorded()
                if not self._wait_for_slot(DEQUEUE_SLICE):
                    continue
                queues = self._open_queues()
                blocking = None if timeout is None else DEQUEUE_SLICE
                result = self.queue_class.dequeue_any(
                    queues, blocking, connection=self.connection, job_class=self.job_class,
                    serializer=self.serializer, death_penalty_class=self.death_penalty_class)
                backoff = 1.0
            except DequeueTimeout:
                continue
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
                logger.error("Worker %s: Redis unreachable (%s); retrying in %g s",
                             self.name, exc, backoff)
                time.sleep(backoff)
                backoff = min(backoff * 2, self.max_connection_wait_time)
                continue
            if result is not None:
                job, queue = result
                if self._stop_requested:  # asked while the pop was under way: not ours now
                    self._give_back(job, queue)
                    return None
                if len(queues) == 1 and len(self.queues) > 1:
                    # with the background queues closed this one popped from one of several
                    rq_state.forget_popped(self.connection, queue, job.id)
                self.reorder_queues(reference_queue=queue)  # --dequeue-strategy, as RQ does
                job.redis_server_version = self.get_redis_server_version()
                logger.info("Worker %s: %s: %s", self.name, queue.name, job.id)
                return result
            if timeout is not None:
                continue
            # Burst mode and nothing to take: done, unless background jobs wait behind the
            # background share while some run (they will free a slot).
            if len(queues) < len(self._ordered_queues) and self._queued_background():
                with self._slots:
                    self._slots.wait(DEQUEUE_SLICE)
                continue
            return None
        return None

    def _record_unrecorded(self) -> None:
        """Record as failed the jobs whose end could not be written while Redis was away
        (:meth:`_serve`), now that it answers (a heartbeat just went through): out of the
        started registry, FAILED, so that the API and the collections' watchdog
        (:func:`collecting.control.look_after`) see them ended; one whose end was written
        before Redis went (its result stands) only leaves the started registry. A Redis error
        here leaves the rest for the next turn."""
        while not self._unrecorded.empty():
            job, queue, execution = self._unrecorded.get()
            try:
                self.connection.ping()
            except redis.exceptions.RedisError:
                self._unrecorded.put((job, queue, execution))
                raise
            if job.get_status(refresh=True) in ENDED:  # its end was written before the loss
                with self.connection.pipeline() as pipeline:
                    execution.delete(job, pipeline)  # out of the started registry
                    pipeline.execute()
                continue
            self.handle_job_failure(job, queue, execution=execution, exc_string=(
                "The worker lost Redis while ending this job; recorded once it was back."))
            logger.info("Worker %s: job %s recorded as failed", self.name, job.id)

    def _give_back(self, job: Job, queue: Queue) -> None:
        """Put a job taken after a stop request back at the front of its queue, untouched."""
        rq_state.give_back(self.connection, queue, job.id)
        logger.info("Worker %s: stopping; job %s left for another worker", self.name, job.id)

    def _queued_background(self) -> bool:
        return any(queue.count for queue in self._ordered_queues
                   if queue.name in self.background_queues)

    def prepare_execution(self, job: Job) -> Execution:
        """RQ's two preparations of a job in one round trip: its execution (the started
        registry, the worker busy: RQ's main thread) and its start (status, worker, heartbeat,
        out of the intermediate queue: RQ's work horse, :meth:`prepare_job_execution`), both
        here, before a job thread takes it. RQ makes them one round trip each, both on the way
        of a client waiting for the job (docs/benchmarks.md, Scrape latency)."""
        with self.connection.pipeline() as pipeline:
            ttl = self.get_heartbeat_ttl(job)
            execution = Execution.create(job, ttl, pipeline=pipeline, worker_name=self.name)
            self.executions[execution.id] = execution
            self.set_state(WorkerStatus.BUSY, pipeline=pipeline)
            self.heartbeat(ttl, pipeline=pipeline)
            job.prepare_for_execution(self.name, pipeline=pipeline)
            pipeline.persist(job.key)
            if len(self.queues) == 1:  # as RQ's perform_job decides
                rq_state.forget_popped(
                    pipeline, self.queue_class(job.origin, connection=self.connection), job.id)
            pipeline.execute()
        return execution

    def prepare_job_execution(self, job: Job, remove_from_intermediate_queue: bool = False
                              ) -> None:
        """Nothing left to do: :meth:`prepare_execution` did it with the execution."""

    def handle_execution_ended(self, job: Job, queue: Queue, heartbeat_ttl: int) -> None:
        """RQ's end of an execution (a heartbeat round trip), after the early reply of a job
        an API request waits on (:class:`~worker.replies.ReplyingJob`): RQ calls this first,
        once the job's timeout is over, for a success and a failure alike."""
        if isinstance(job, ReplyingJob):
            job.reply()
        super().handle_execution_ended(job, queue, heartbeat_ttl)

    def execute_job(self, job: Job, queue: Queue) -> None:
        """Register the job's execution, then hand it to a job thread (it takes a slot).

        Under the slots' lock, so that a job ending meanwhile in another thread cannot mark
        the worker idle between this job's registration and its thread's start.
        """
        background = queue.name in self.background_queues
        with self._slots:
            execution = self.prepare_execution(job)  # started registry, state busy
            self._busy += 1
            self._background_running += background
            self._taken.add(job.id)
            if self._job_threads < self._busy:
                threading.Thread(target=self._serve, name=f"job-{self._job_threads}",
                                 daemon=True).start()
                self._job_threads += 1
        self._work.put((job, queue, execution, background))

    def _serve(self) -> None:
        """A job thread: runs the jobs handed to it, one at a time, for the process's life."""
        while True:
            job, queue, execution, background = self._work.get()
            try:
                with bound(job_id=job.id):
                    self.perform_job(job, queue, execution)
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
                # Redis went away while RQ recorded the job's end: left as it is, the job
                # would show "started" on this live worker for ever, and the collections'
                # watchdog would never replace a slice that died this way.
                logger.error("Worker %s: could not record the end of job %s (%s); recorded "
                             "as failed once Redis answers", self.name, job.id, exc)
                self._unrecorded.put((job, queue, execution))
            except BaseException:  # RQ handles the job's own failures; this is RQ failing
                logger.exception("Worker %s: could not finish job %s", self.name, job.id)
            finally:
                with self._slots:  # "idle" is shown by the dequeue loop, not a write per job
                    self._busy -= 1
                    self._background_running -= background
                    self._taken.discard(job.id)
                    self._stopping.discard(job.id)  # a stop that came as the job returned
                    ThreadDeathPenalty.forget(job.id)  # one that came after its block
                    self._slots.notify_all()
            del job, queue, execution  # its result (a map's links) not held while waiting

    # -- shutdown ----------------------------------------------------------------------

    def _shutdown(self) -> None:
        """A warm shutdown request: take no more jobs, finish those in flight (``teardown``).

        Unlike RQ's, it never raises from the signal handler: the main thread may be between
        popping a job and handing it to a thread, and the job would be lost. The dequeue loop
        sees the request within :data:`DEQUEUE_SLICE` and gives back a job popped meanwhile.
        """
        self._stop_requested = True
        with contextlib.suppress(redis.exceptions.RedisError):
            self.set_shutdown_requested_date()
        logger.info("Worker %s: stopping after %d jobs in flight; signal again to stop at "
                    "once", self.name, self.running)

    def request_force_stop(self, signum: int, frame: Any) -> None:
        try:
            super().request_force_stop(signum, frame)
        except SystemExit:
            self._cold_shutdown = True  # teardown must not wait for the jobs in flight
            raise

    def teardown(self) -> None:
        try:
            if not self._cold_shutdown:
                with self._slots:  # a second signal raises SystemExit here: still register
                    self._slots.wait_for(lambda: not self._busy)
        finally:
            if self._stop_beside is not None:
                self._stop_beside()
            super().teardown()  # death, at once: the API answers this worker's requests
