"""Whether a worker process is dead, as seen by another process of the same machine.

The API answers a request at once when the worker running its job died (``kill -9``, OOM):
RQ itself notices only when the job's lease expires, long after the client gave up. A process
can only look at processes of its own PID namespace on the same boot, and a host name does not
say that (containers with host networking share it, not their PIDs). So every warm worker
writes its *process space* (boot id and PID namespace) into its RQ worker hash
(:func:`worker.rq_state.record_space`), and a pid is only judged where the spaces match;
anywhere else the API waits for RQ's own verdict.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path


@functools.cache
def process_space() -> str | None:
    """This process's boot id and PID namespace (Linux), or None where they are unknown."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return None
    return f"{boot}:{namespace}"


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
    """Whether a worker hash's process space is this process's: only then can its pid be
    looked at from here."""
    here = process_space()
    return here is not None and space is not None and space.decode() == here
