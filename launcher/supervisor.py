"""The process tree of ``make run``: start children so that a Ctrl-C stops them in order.

Why it is not enough to let the terminal's SIGINT reach everyone: the whole process group gets
it at the same instant, so Redis dies while workers still talk to it (connection tracebacks),
gunicorn's workers and master race each other (one worker was left holding the port in 1 stop
of 3), and requests in flight are reset. So:

- every child runs in a session of its own (``start_new_session``): the terminal's SIGINT
  reaches only the supervisor, which forwards the stop in order — the API stops accepting and
  finishes its requests (gunicorn master, SIGTERM), then the workers finish their job or give
  it back (RQ warm shutdown, SIGTERM once), then Redis;
- each step waits a bounded time, then kills the child's whole process group (gunicorn's
  workers included), so nothing outlives ``make run``;
- every child asks the kernel for SIGTERM when the supervisor dies (``PR_SET_PDEATHSIG``,
  Linux), so a killed supervisor orphans nothing either.

A second Ctrl-C hurries the stop: what is still running is killed at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from core.processes import RESTART_DELAY, RESTART_DELAY_MAX, STABLE_AFTER, spawn

#: Seconds between two looks at the children.
POLL = 0.1


def _signal(proc: subprocess.Popen, signum: int, *, group: bool = False) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if group:
            os.killpg(proc.pid, signum)  # the child leads its own session: pgid == pid
        elif proc.poll() is None:
            proc.send_signal(signum)


class Supervisor:
    """Children by name; :meth:`watch` restarts dead workers, :meth:`stop` stops in order."""

    def __init__(self, env: dict[str, str], cwd: Path, *, api_grace: float = 30,
                 worker_grace: float = 60, redis_grace: float = 10,
                 restart_delay: float = RESTART_DELAY,
                 restart_delay_max: float = RESTART_DELAY_MAX,
                 stable_after: float = STABLE_AFTER):
        self.env = env
        self.cwd = cwd
        self.grace = {"api": api_grace, "worker": worker_grace, "redis": redis_grace}
        self.procs: dict[str, subprocess.Popen] = {}
        self.commands: dict[str, list[str]] = {}
        self.own_env: dict[str, dict[str, str]] = {}
        self.restart_delay = restart_delay
        self.restart_delay_max = restart_delay_max
        self.stable_after = stable_after
        #: Per child: when it was started, how many times in a row it died early, and when
        #: a dead one is due to start again.
        self.started_at: dict[str, float] = {}
        self.early_deaths: dict[str, int] = {}
        self.restart_at: dict[str, float] = {}
        #: Set by the first SIGINT/SIGTERM; the second one sets ``hurry``.
        self.stop_requested = False
        self.hurry = False

    def adopt(self, name: str, proc: subprocess.Popen) -> None:
        """Supervise a child started elsewhere (the embedded Redis), stopped last."""
        self.procs[name] = proc

    def spawn(self, name: str, command: list[str], env: dict[str, str] | None = None) -> None:
        """Start ``name`` (and again, as it was, when it dies); ``env``: variables of its own
        on top of :attr:`env`."""
        self.commands[name] = command
        self.own_env[name] = env or {}
        self.procs[name] = spawn(command, env={**self.env, **self.own_env[name]}, cwd=self.cwd)
        self.started_at[name] = time.monotonic()

    def _schedule_restart(self, name: str, returncode: int | None) -> None:
        """Restart ``name`` after a delay that doubles with each early death in a row."""
        now = time.monotonic()
        if now - self.started_at.get(name, now) >= self.stable_after:
            self.early_deaths[name] = 0
        deaths = self.early_deaths.get(name, 0)
        delay = min(self.restart_delay_max, self.restart_delay * 2 ** deaths)
        self.early_deaths[name] = deaths + 1
        self.restart_at[name] = now + delay
        print(f"{name} exited ({returncode}); restarting it in {delay:g} s.", file=sys.stderr)

    def install_signal_handlers(self) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, _frame) -> None:
        if self.stop_requested:
            self.hurry = True
        self.stop_requested = True

    def check(self) -> bool:
        """One look at the children: a dead worker is started again when its back-off is over
        (see :data:`RESTART_DELAY`); False when the API or Redis has died."""
        for name, proc in list(self.procs.items()):
            if proc.poll() is None or self.stop_requested:
                continue
            if name not in self.commands or not name.startswith("worker"):
                print(f"{name} stopped ({proc.returncode}); shutting down.", file=sys.stderr)
                return False
            if name not in self.restart_at:
                self._schedule_restart(name, proc.returncode)
            elif time.monotonic() >= self.restart_at[name]:
                del self.restart_at[name]
                self.spawn(name, self.commands[name], self.own_env.get(name))
        return True

    def watch(self) -> bool:
        """:meth:`check` until a stop is requested (True) or the API or Redis dies (False)."""
        while not self.stop_requested:
            if not self.check():
                return False
            time.sleep(POLL)
        return True

    def stop(self) -> None:
        """The API, then the workers, then Redis: each asked once (SIGTERM), given its grace
        period, then killed with whatever it started."""
        self.stop_requested = True
        order = ("api", "worker", "redis")
        for role in order:
            group = [proc for name, proc in self.procs.items() if name.startswith(role)]
            for proc in group:
                _signal(proc, signal.SIGTERM)
            deadline = time.monotonic() + self.grace[role]
            while (any(proc.poll() is None for proc in group)
                   and time.monotonic() < deadline and not self.hurry):
                time.sleep(POLL)
            for proc in group:
                if proc.poll() is None:
                    print(f"{proc.args[-1]} did not stop in time; killing it.", file=sys.stderr)
                _signal(proc, signal.SIGKILL, group=True)  # and anything it left behind
                proc.wait()
