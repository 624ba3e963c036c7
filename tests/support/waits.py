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
