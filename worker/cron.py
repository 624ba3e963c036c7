"""``python -m worker.cron``: RQ's cron scheduler, enqueuing the housekeeping jobs on time.

``make run`` runs the same schedule in a thread of its first worker (``python -m worker
--cron``: :func:`in_thread`), a process less; with ``WORKERS=0`` it supervises this process as
``worker-cron``.

It only enqueues; the warm workers run the jobs (they listen on ``maintenance`` too), so it is
a small process: no Scrapy, and not even the jobs' own modules (the database's), as it names
the jobs rather than importing them (:data:`SCHEDULE`). One per Redis is enough; two only
sweep twice, which changes nothing (every job here is idempotent).

Why RQ's ``CronScheduler`` and not ``enqueue_in`` with scheduler-enabled workers: a job that
re-schedules itself stops for good the first time it is lost (a killed worker, a Redis
restart), and every worker would run a scheduler; the cron process keeps the schedule in one
place and restarts with it. RQ 3.0's ``CronJob.enqueue`` always uses the default (pickle)
serializer, which our JSON workers cannot read: :class:`JsonCronJob` enqueues through
:func:`worker.queues.queue` instead.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Callable
from typing import Any

from redis import Redis
from redis.exceptions import RedisError
from rq import cron_job_registry
from rq.cron import CronJob, CronScheduler
from rq.defaults import DEFAULT_CRON_JOB_HISTORY_LIMIT, DEFAULT_CRON_JOB_HISTORY_TTL
from rq.job import Job

from core.config import Config, load_or_exit
from worker import logs, queues

#: The housekeeping jobs, each named (the workers import it, not this process) with the
#: timeout of one run in seconds, or a function of the configuration for it.
SCHEDULE: tuple[tuple[str, Any], ...] = (
    ("worker.maintenance.release_abandoned_reservations", 60),
    ("worker.maintenance.look_after_collections", 60),
    ("worker.maintenance.run_due_monitors", 120),
    # a drain of 15 s (worker.webhook_drain.DRAIN_SECONDS), its last attempts
    ("worker.webhooks.deliver_due", lambda config: 15 * config.collections.webhook_timeout + 60),
    ("worker.maintenance.purge_expired_collections", 3600),
)

logger = logging.getLogger(__name__)


class JsonCronJob(CronJob):
    """A cron job enqueued with our serializer (JSON), as ``CronJob.enqueue`` otherwise does."""

    def enqueue(self, connection: Redis) -> Job:
        queue = queues.queue(self.queue_name, connection)
        with connection.pipeline() as pipeline:
            job = queue.enqueue(self.func or self.func_name, args=self.args, kwargs=self.kwargs,
                                **self.job_options, pipeline=pipeline)
            pipeline.zadd(self.job_history_key, {job.id: job.enqueued_at.timestamp()})
            pipeline.zremrangebyrank(self.job_history_key, 0, -(DEFAULT_CRON_JOB_HISTORY_LIMIT + 1))
            pipeline.expire(self.job_history_key, DEFAULT_CRON_JOB_HISTORY_TTL)
            cron_job_registry.add(self.name, pipeline,
                                  enqueue_timestamp=job.enqueued_at.timestamp())
            pipeline.execute()
        logger.debug("Enqueued %s on %s", self.func_name, self.queue_name)
        return job


class JsonCronScheduler(CronScheduler):
    """RQ's cron scheduler whose jobs are :class:`JsonCronJob`."""

    def register(self, func: Any, queue_name: str, **options: Any) -> CronJob:
        named = {"func_name": func} if isinstance(func, str) else {"func": func}
        job = JsonCronJob(queue_name=queue_name, **named, **options)
        self._cron_jobs.append(job)
        logger.info("Every %s s: %s on %s", options.get("interval"), job.func_name, queue_name)
        return job


def scheduler(config: Config, connection: Redis) -> JsonCronScheduler:
    """The schedule, every ``SWEEP_INTERVAL`` seconds: the reservation sweep, the
    collections' watchdog (resumes a collection whose slices were all lost), the monitors'
    runs that are due, the webhook attempts that are due, and the purge of expired
    collections' results."""
    cron = JsonCronScheduler(connection=connection, logging_level=config.log.log_level)
    every = config.api.sweep_interval
    for job, timeout in SCHEDULE:
        if callable(timeout):
            timeout = timeout(config)
        # Not taken within an interval (no worker running): dropped, the next one follows.
        cron.register(job, queues.MAINTENANCE, interval=every,
                      job_timeout=int(max(timeout, every)), ttl=every, result_ttl=every,
                      failure_ttl=86400)
    return cron


class Schedule:
    """The schedule, turn by turn: RQ's loop (``CronScheduler.start``) cut into turns that
    the caller spaces out, so that Redis going away neither ends it nor leaves it asleep."""

    def __init__(self, config: Config):
        self.config = config
        self.cron: JsonCronScheduler | None = None
        self.born = False

    def start(self) -> None:
        storage = self.config.storage
        self.cron = scheduler(self.config, queues.redis_connection(storage.redis_url,
                                                                   storage.redis_timeout))

    def turn(self) -> float:
        """One turn: registered the first time (Redis may be away at the start: the next
        turn tries again), the jobs due enqueued, the heartbeat; seconds until the next job
        is due."""
        assert self.cron is not None
        if not self.born:
            self.cron.register_birth()
            self.born = True
        if self.cron.enqueue_jobs():
            self.cron.save()
        self.cron.heartbeat()
        return self.cron.calculate_sleep_interval()

    def stop(self) -> None:
        if self.cron is not None and self.born:
            with contextlib.suppress(RedisError):
                self.cron.register_death()


#: Longest wait between two turns while Redis is away (s).
MAX_BACKOFF = 30.0


def keep(config: Config, stop: threading.Event) -> None:
    """Run the schedule until ``stop`` is set. Redis going away (a restart, a network cut)
    does not end it: the next turn comes after 1 s, then twice as long each time, at most
    :data:`MAX_BACKOFF` (a schedule that ended would leave the sweeps and the collections'
    watchdog to whatever restarts its process, and ``make run`` or systemd may not be
    there). Neither does any other failure of a turn, which is logged."""
    schedule = Schedule(config)
    backoff = 1.0
    while not stop.is_set():
        try:
            if schedule.cron is None:
                schedule.start()
            wait, backoff = schedule.turn(), 1.0
        except RedisError as exc:
            logger.error("Redis unreachable (%s); the schedule goes on in %g s", exc, backoff)
            wait, backoff = backoff, min(2 * backoff, MAX_BACKOFF)
        except Exception:
            logger.exception("The schedule's turn failed; it goes on in %g s", backoff)
            wait, backoff = backoff, min(2 * backoff, MAX_BACKOFF)
        stop.wait(wait)
    schedule.stop()


def in_thread(config: Config) -> Callable[[], None]:
    """Run the schedule in a thread of this process (a worker's: ``python -m worker
    --cron``); the function that stops it (and waits for it to have said goodbye to
    Redis)."""
    stop = threading.Event()
    thread = threading.Thread(target=keep, args=(config, stop), name="cron", daemon=True)
    thread.start()

    def stopped() -> None:
        """Ask the schedule to stop; wait for its goodbye (a turn's Redis calls at most)."""
        stop.set()
        thread.join(timeout=config.storage.redis_timeout + 5)

    return stopped


def main() -> None:
    """Run the schedule (:func:`keep`) until SIGTERM or Ctrl-C."""
    config = load_or_exit()
    logs.configure(config.log.log_level, config.log.log_format)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    keep(config, stop)


if __name__ == "__main__":
    main()
