"""The embedded Redis of ``make run`` (and of the tests and benchmarks that start a stack of
their own): a private ``redis-server`` on a free loopback port, keeping nothing on disk."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

from core.processes import start_redis_server

#: Seconds the server may take to answer its first PING.
START_TIMEOUT = 5.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_redis(directory: Path) -> tuple[subprocess.Popen, str]:
    """A private Redis on a free loopback port, keeping nothing on disk; (process, URL).

    It runs in a session of its own and dies with its parent
    (:func:`core.processes.start_redis_server`).
    """
    from redis import Redis

    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    client = Redis.from_url(url)
    try:
        return start_redis_server(directory, ["--port", str(port), "--bind", "127.0.0.1"],
                                  client.ping, timeout=START_TIMEOUT), url
    except RuntimeError:
        raise SystemExit("The embedded Redis did not start.") from None
    finally:
        client.close()
