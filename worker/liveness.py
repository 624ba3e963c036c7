"""Whether a worker process is dead, as seen by another process of the same machine.

The API answers a request at once when the worker running its job died (``kill -9``, OOM):
RQ itself notices only when the job's lease expires, long after the client gave up. A process
can only look at processes of its own PID namespace on the same boot, and a host name does not
say that (containers with host networking share it, not their PIDs). So every warm worker
writes its *process space* (boot id and PID namespace) into its RQ worker hash, and a pid is
only judged where the spaces match; anywhere else the API waits for RQ's own verdict.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

#: Field of the RQ worker hash holding the worker's process space.
FIELD = "process_space"


@functools.cache
def process_space() -> str | None:
    """This process's boot id and PID namespace (Linux), or None where they are unknown."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return None
    return f"{boot}:{namespace}"


def record(connection: Any, worker_key: str) -> None:
    """Write this process's space into its worker hash (a warm worker, at birth)."""
    space = process_space()
    if space is not None:
        connection.hset(worker_key, FIELD, space)


def process_gone(pid: int) -> bool:
    """Whether process ``pid`` of this process space is dead (a zombie not yet reaped counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    try:  # Linux: state "Z", dead but its parent has not collected its status yet
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[0] == b"Z"
    except (OSError, IndexError):
        return False


def of_this_space(space: bytes | None) -> bool:
    """Whether a worker hash's process space (its ``FIELD``) is this process's: only then can
    its pid be looked at from here."""
    here = process_space()
    return here is not None and space is not None and space.decode() == here


def is_dead(connection: Any, worker_key: str, pid: int | None) -> bool:
    """Whether the worker of ``worker_key`` (process ``pid``) is known dead: only a worker of
    this process space can be looked at."""
    if not pid or process_space() is None:
        return False
    return of_this_space(connection.hget(worker_key, FIELD)) and process_gone(pid)
