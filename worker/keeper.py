"""``python -m worker.keeper``: what a worker pool's parent becomes once its workers are forked.

The pool's parent imported the workers' code (~190 MB) only to fork them from it
(:mod:`worker.pool`); kept, that copy would hold the originals of every page the workers
wrote to, some 40 MiB that nobody uses. So the parent replaces its program by this one
(``exec``: same process, same children): a few MiB of the standard library that looks after
the workers until they have stopped.

It forwards stop signals (SIGTERM or SIGINT once is each worker's warm shutdown, twice its cold
one; SIGHUP is forwarded as SIGTERM) and replaces a worker that died, after a delay that
doubles with each early death in a row. A replacement is a worker started afresh
(``python -m worker --member N.G …``: the pool's arguments, the member's number and
generation before them, and the interpreter's flags): it shares no memory with its siblings,
which only a fork from the preloaded parent gave. A worker that fails (exits with an error)
in its first life, or :data:`CRASH_LOOP` times in a row as it starts again, stops the pool
with exit code 1, so that whoever started it (``make run``'s supervisor) sees it fail and says
so.

Standard library only, and the framework-free core: ``tests/test_worker_pool.py`` checks it.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
import traceback

from core.config import load_or_exit
from core.controls import guard_handlers
from core.logformat import TEXT_FORMAT, use_json
from core.processes import RESTART_DELAY, RESTART_DELAY_MAX, STABLE_AFTER, die_with

logger = logging.getLogger(__name__)

#: Deaths as it starts, in a row, after which a worker is not replaced and the pool stops.
CRASH_LOOP = 3
#: The signals that stop the pool (forwarded to the workers).
STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
#: Seconds between two looks at the workers.
POLL = 0.5


def interpreter() -> list[str]:
    """This Python with the flags it was started with (``-X dev``, ``-W error``, ``-I``…),
    as :mod:`multiprocessing` starts its processes: the keeper and the replacements run as
    the pool did."""
    return [sys.executable, *subprocess._args_from_interpreter_flags()]


def member_command(arguments: list[str], number: int, generation: int) -> list[str]:
    """The command that starts member ``number`` of the pool started with ``arguments``
    afresh, in its ``generation``-th life (``--member`` first: the pool's arguments may end
    with ``-- QUEUE…``)."""
    return [*interpreter(), "-m", "worker", "--member", f"{number}.{generation}", *arguments]


def member(text: str) -> tuple[int, int]:
    """``--member N.G`` of :func:`member_command`, read: (number, generation)."""
    try:
        number, generation = (int(part) for part in text.split("."))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not N.G: {text!r}") from None
    return number, generation


def become_member(parent: int) -> None:
    """In a worker just forked by ``parent`` (the pool, or its keeper), stop signals blocked:
    their default actions back, a process group of its own (so that a group-wide signal, a
    terminal's Ctrl-C or a service manager's, reaches the keeper alone, which forwards it
    once), killed if ``parent`` dies (it would have stopped its workers first), then the
    signals let through."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)
    os.setpgid(0, 0)
    die_with(parent, signal.SIGKILL)()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


class Keeper:
    """The workers ``children`` (pid: member number, each in its first life) of the pool
    started with ``arguments``, replaced when one dies (:func:`member_command`); :meth:`run`
    until all have stopped."""

    def __init__(self, children: dict[int, int], arguments: list[str]):
        self.children = dict(children)
        self.arguments = arguments
        #: ``--burst``: a worker that emptied its queues and exited 0 is done, not replaced.
        self.burst = "--burst" in arguments
        now = time.monotonic()  # the forks were a moment ago
        self.started = {number: now for number in children.values()}
        self.generation = {number: 1 for number in children.values()}  # lives so far
        self.due: dict[int, float] = {}  # number: when it is started again
        #: Per worker: early deaths in a row of any cause (the back-off), and early failures
        #: in a row (exits with an error: the crash loop).
        self.streak: dict[int, int] = {}
        self.failures: dict[int, int] = {}
        self.stopping = False
        self.code = 0

    def run(self) -> int:
        """Look after the workers until they have all stopped; the exit code. Stop signals
        blocked until now (held by the pool's parent across its forks and this ``exec``) are
        handled from here."""
        for signum in STOP_SIGNALS:
            signal.signal(signum, self._forward)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        while self.children or (self.due and not self.stopping):
            self._reap()
            now = time.monotonic()
            for number, when in list(self.due.items()):
                if when <= now and not self.stopping:
                    del self.due[number]
                    self._start(number)
            time.sleep(POLL)
        return self.code

    def _reap(self) -> None:
        """Note the workers that exited; schedule their replacement (see :meth:`_died`)."""
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.children.clear()
                return
            if not pid:
                return
            number = self.children.pop(pid, None)
            if number is not None and not self.stopping:
                self._died(number, os.waitstatus_to_exitcode(status))

    def _forward(self, signum: int, _frame: object) -> None:
        """A stop for the pool: SIGTERM (SIGINT) to every worker, again on a second one (a
        worker's cold shutdown); a SIGHUP is forwarded as SIGTERM (to a worker it would be
        death on the spot). The workers lead process groups of their own, so a terminal's
        Ctrl-C reaches them from here alone, once."""
        self.stopping = True
        forwarded = signal.SIGTERM if signum == signal.SIGHUP else signum
        for pid in list(self.children):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, forwarded)

    def _died(self, number: int, code: int) -> None:
        """Worker ``number`` exited: started again after a delay that doubles with each
        early death in a row (at most :data:`RESTART_DELAY_MAX`), or the pool stopped (see
        the module); one killed by a signal (the OOM killer, an operator) is replaced, with
        the same back-off. In a ``--burst`` pool, one that exited 0 has done its work."""
        if code == 0 and self.burst:
            return
        quick = time.monotonic() - self.started.get(number, 0.0) < STABLE_AFTER
        self.streak[number] = streak = self.streak.get(number, 0) + 1 if quick else 0
        failed = code > 0 and quick
        self.failures[number] = failures = self.failures.get(number, 0) + 1 if failed else 0
        if failures and (self.generation[number] == 1 or failures >= CRASH_LOOP):
            logger.error("Worker %d exited (%d) as it started: stopping the pool", number, code)
            self.code = 1
            self._forward(signal.SIGTERM, None)
            return
        delay = min(RESTART_DELAY_MAX, RESTART_DELAY * 2 ** max(0, streak - 1))
        logger.warning("Worker %d exited (%d); replacing it in %g s", number, code, delay)
        self.due[number] = time.monotonic() + delay

    def _start(self, number: int) -> None:
        """Start worker ``number`` afresh, as the pool forked it (:func:`become_member`).
        Stop signals are held back across the fork: one handled in between would miss the
        new worker or be forwarded by it."""
        generation = self.generation[number]
        self.generation[number] = generation + 1
        command = member_command(self.arguments, number, generation)
        keeper = os.getpid()
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        pid = os.fork()
        if pid:
            self.children[pid] = number
            self.started[number] = time.monotonic()
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
            if self.stopping:  # asked before the fork, handled just now
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
            return
        try:
            become_member(keeper)
            os.execv(command[0], command)
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(1)  # not started: counted as a failure to start


def command_line(children: dict[int, int], arguments: list[str]) -> list[str]:
    """The command line of this module for :class:`Keeper` ``(children, arguments)``: what
    the pool's parent ``exec``\\ s."""
    members = ",".join(f"{pid}:{number}" for pid, number in children.items())
    return [*interpreter(), "-m", "worker.keeper", "--members", members, "--", *arguments]


def main() -> None:
    """Keep the workers named by ``--members`` (see :func:`command_line`); exit with the
    pool's code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--members", required=True, help="PID:NUMBER,…: the forked workers")
    parser.add_argument("arguments", nargs="*", help="the pool's arguments")
    args = parser.parse_args()
    log = load_or_exit().log
    logging.basicConfig(level=log.log_level, format=TEXT_FORMAT)
    if log.log_format == "json":
        use_json(logging.getLogger().handlers)
    guard_handlers()
    children = {int(pid): int(number) for pid, number in
                (member.split(":") for member in args.members.split(","))}
    sys.exit(Keeper(children, args.arguments).run())


if __name__ == "__main__":
    main()
