"""What a warm worker's main thread does between two dequeues, at its own pace: RQ's heartbeat
every :data:`HEARTBEAT_EVERY` seconds (not three round trips after each job it takes), and a
look at ``rq suspend`` every :data:`SUSPENSION_EVERY` seconds (also while it waits for work,
where RQ looks only between jobs)."""

from __future__ import annotations

import logging
import time
from typing import Any

from rq.exceptions import StopRequested
from rq.suspension import is_suspended
from rq.worker import WorkerStatus

logger = logging.getLogger(__name__)

#: Seconds between the main thread's heartbeats while it waits.
HEARTBEAT_EVERY = 10.0
#: Seconds between two looks at ``rq suspend`` (RQ looks before every job it takes).
SUSPENSION_EVERY = 1.0


class Paced:
    """A mixin of :class:`worker.worker.WarmWorker`'s, before RQ's worker class: its dequeue
    loop calls :meth:`_beat` and :meth:`_suspended` at each turn. It reads the worker's
    ``running`` count."""

    _last_beat = 0.0
    _suspension_seen = -SUSPENSION_EVERY
    _suspension = False

    def _beat(self) -> None:
        if time.monotonic() - self._last_beat >= HEARTBEAT_EVERY:
            super().heartbeat()
            self._last_beat = time.monotonic()

    def heartbeat(self, timeout: int | None = None, pipeline: Any = None) -> None:
        """RQ's heartbeat, except the one its work loop sends after handing over each job:
        three Redis round trips per job for a key that lives minutes. The dequeue loop beats
        every :data:`HEARTBEAT_EVERY` seconds instead."""
        if timeout is None and pipeline is None:
            self._beat()
        else:
            super().heartbeat(timeout, pipeline)

    def check_for_suspension(self, burst: bool) -> None:
        """Nothing: the dequeue loop looks at ``rq suspend`` itself (:meth:`_suspended`). RQ
        looks here, between the jobs it takes: a worker waiting for work took one more job
        however long the suspension had lasted."""

    def _suspended(self, burst: bool) -> bool:
        """Whether ``rq suspend`` holds the taking of jobs now; looked at every
        :data:`SUSPENSION_EVERY` seconds, while the worker waits for work too, so a
        suspension stops it within that and one dequeue slice. Jobs in flight go on.
        Suspended, the worker shows it (``rq info``) and waits a slice; in burst mode it
        stops, as RQ's does."""
        if time.monotonic() - self._suspension_seen >= SUSPENSION_EVERY:
            self._suspension_seen = time.monotonic()
            self._suspension = is_suspended(self.connection, self)
        if not self._suspension:
            if self._state == WorkerStatus.SUSPENDED:  # resumed
                self.set_state(WorkerStatus.BUSY if self.running else WorkerStatus.IDLE)
            return False
        if burst:
            logger.info("Worker %s: suspended in burst mode, stopping", self.name)
            raise StopRequested
        if self._state != WorkerStatus.SUSPENDED:
            logger.info("Worker %s: suspended, run `rq resume` to resume", self.name)
            self.set_state(WorkerStatus.SUSPENDED)
        time.sleep(SUSPENSION_EVERY)
        return True
