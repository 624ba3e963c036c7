"""Bounded waits for the tests: poll a condition, fail the test when it does not come."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable


def wait_until(predicate: Callable[[], object], what: str, timeout: float = 30.0, *,
               proc: subprocess.Popen | None = None, pause: float = 0.02) -> None:
    """Until ``predicate()`` is true; AssertionError after ``timeout`` seconds, or at once if
    ``proc`` (the process that should bring it about) has exited."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"process exited ({proc.returncode}) while waiting for {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(pause)


def job_results(jobs: list, timeout: float = 60.0, *,
                proc: subprocess.Popen | None = None) -> list:
    """Each RQ job's latest result once it has one, each waited for at most ``timeout``
    seconds (see :func:`wait_until` for ``proc``)."""
    for job in jobs:
        wait_until(lambda job=job: job.latest_result() is not None, f"a result of {job.id}",
                   timeout, proc=proc, pause=0.1)
    return [job.latest_result() for job in jobs]
