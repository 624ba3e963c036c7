"""The embedded Redis of ``make run`` (and of the tests and benchmarks that start a stack of
their own): a private ``redis-server`` on a free loopback port, keeping nothing on disk."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

from core.processes import redis_binary, spawn


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_redis(directory: Path) -> tuple[subprocess.Popen, str]:
    """A private Redis on a free loopback port, keeping nothing on disk; (process, URL).

    It runs in a session of its own and dies with its parent (:func:`core.processes.spawn`).
    """
    port = free_port()
    proc = spawn(
        [redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(directory)],
        stdout=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    from redis import Redis

    client = Redis.from_url(url)
    for _ in range(100):
        try:
            client.ping()
            return proc, url
        except Exception:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("The embedded Redis did not start.")
