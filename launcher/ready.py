"""``make run``'s wait for its stack to serve: the demo key is printed once ``/healthz`` says a
crawler worker listens on the ``interactive`` queue (docs/operators.md, "make run"), so that the
first request sent with it is served."""

from __future__ import annotations

import json
import math
import socket
import sys
import time

from core.config import LaunchConfig
from core.queues import INTERACTIVE
from launcher.supervisor import Supervisor

#: Seconds ``make run`` waits for its first worker before it gives up; between two lines saying
#: it still waits; and for the rest of its workers once one is ready.
READY_LIMIT = 180.0
STILL_WAITING_EVERY = 15.0
OTHERS_GRACE = 10.0
#: Seconds between two looks at ``/healthz`` (and at the children) while it waits: each look
#: is a line of the API's access log.
HEALTH_EVERY = 0.5
#: Starts in a row that a worker may die in before ``make run`` stops waiting for it.
CRASH_LOOP = 3


#: The most of a ``/healthz`` answer read (bytes).
HEALTH_MAX = 64 * 1024


def health(launch: LaunchConfig) -> dict | None:
    """The API's ``/healthz`` answer (200 or 503 alike), or None while it does not answer.

    An HTTP/1.0 request on a socket: the server closes the connection after its answer, and
    the supervisor, which asks, does not import ``urllib``'s (and ``ssl``'s) 3.5 MiB for it.
    """
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(launch.host, launch.host)
    try:
        with socket.create_connection((host, launch.port), timeout=2) as connection:
            connection.sendall(f"GET /healthz HTTP/1.0\r\nHost: localhost:{launch.port}"
                               "\r\n\r\n".encode())
            answer = b""
            while chunk := connection.recv(HEALTH_MAX - len(answer)):
                answer += chunk
    except OSError:
        return None
    try:
        seen = json.loads(answer.partition(b"\r\n\r\n")[2])
    except ValueError:
        return None
    return seen if isinstance(seen, dict) else None


def workers_phrase(count: int) -> str:
    """``count`` worker(s), in words."""
    return f"{count} worker{'' if count == 1 else 's'}"


def _progress(launch: LaunchConfig, seen: dict | None) -> str:
    """Where the start is, from a ``/healthz`` answer."""
    if seen is None:
        return "the API does not answer yet"
    listening = (seen.get("workers") or {}).get(INTERACTIVE, 0)
    down = [name for name in ("redis", "database") if seen.get(name) == "down"]
    return (f"{listening} of {workers_phrase(launch.workers)} listen on the interactive queue"
            + (f"; {' and '.join(down)} down" if down else ""))


def wait_until_ready(launch: LaunchConfig, supervisor: Supervisor) -> bool | None:
    """Watch the children until ``/healthz`` answers ``ok`` (a worker listens on the
    ``interactive`` queue) and all ``WORKERS`` listen, or :data:`OTHERS_GRACE` after the first:
    True. False when it cannot come: the API or Redis died, every worker keeps dying as it
    starts, or none listens within :data:`READY_LIMIT` (no limit when ``WORKERS=0``: workers
    of other machines may come any time). None when a stop was requested meanwhile."""
    started = time.monotonic()
    limit = READY_LIMIT if launch.workers else math.inf
    first_ready = None
    next_line = started + STILL_WAITING_EVERY
    own = ["worker"] if launch.workers else []  # the pool of them (worker.pool)
    while not supervisor.stop_requested:
        if not supervisor.check():
            return False
        seen = health(launch)
        now = time.monotonic()
        if seen is not None and seen.get("status") == "ok":
            first_ready = first_ready or now
            listening = (seen.get("workers") or {}).get(INTERACTIVE, 0)
            if listening >= launch.workers or now - first_ready >= OTHERS_GRACE:
                print(f"{workers_phrase(listening)} ready.", flush=True)
                return True
        elif own and all(supervisor.early_deaths.get(name, 0) >= CRASH_LOOP for name in own):
            print(f"The crawler workers keep exiting as they start ({CRASH_LOOP} times): "
                  "see their output above. Stopping.", file=sys.stderr, flush=True)
            return False
        elif now - started >= limit:
            print(f"Not ready after {limit:g} s: {_progress(launch, seen)}; see the output "
                  "above. Stopping.", file=sys.stderr, flush=True)
            return False
        elif now >= next_line:
            print(f"Still starting after {now - started:.0f} s: {_progress(launch, seen)}.",
                  flush=True)
            next_line += STILL_WAITING_EVERY
        time.sleep(HEALTH_EVERY)
    return None
