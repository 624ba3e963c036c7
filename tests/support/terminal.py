"""A command run in a pseudo-terminal of a given size, as a person runs it: what it draws is
read back, keys (Ctrl-C is a byte, 0x03, that the terminal turns into SIGINT) are typed.

Every wait is bounded: :meth:`Terminal.expect` and :meth:`Terminal.wait` fail with the screen
so far instead of hanging.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import select
import signal
import struct
import termios
import time
from collections.abc import Callable

CTRL_C = b"\x03"
ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07]*\x07|[@-Z\\-_])")


class Terminal:
    def __init__(self, argv: list[str], env: dict[str, str], cwd: str,
                 rows: int = 30, columns: int = 120):
        pid, fd = pty.fork()
        if pid == 0:  # the child: its own session, the pty as its controlling terminal
            try:
                # Ctrl-C must interrupt it even if this process ignores SIGINT (an ignored
                # signal stays ignored across exec).
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
                os.chdir(cwd)
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.output = b""
        self.status: int | None = None

    @property
    def text(self) -> str:
        """What was written, without the escape sequences of colours and cursor moves."""
        return ESCAPES.sub("", self.output.decode("utf-8", "replace"))

    def _read(self, timeout: float) -> bool:
        """Read what is there (waiting up to ``timeout``); False once the child closed it."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # EIO: the child's side is closed
            return False
        self.output += chunk
        return bool(chunk)

    def expect(self, pattern: str, timeout: float = 30.0, start: int = 0) -> re.Match[str]:
        """The first match of ``pattern`` in the output after character ``start``."""
        deadline = time.monotonic() + timeout
        while True:
            found = re.search(pattern, self.text[start:])
            if found:
                return found
            if time.monotonic() > deadline or not self._read(0.1):
                found = re.search(pattern, self.text[start:])
                if found:
                    return found
                raise AssertionError(f"{pattern!r} never appeared; the terminal shows:\n"
                                     f"{self.text[start:][-3000:]}")

    def until(self, predicate: Callable[[], object], what: str, timeout: float = 30.0) -> None:
        """Read the output (a full pty would block the program) until ``predicate()``."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline or not self._read(0.05):
                raise AssertionError(f"gave up waiting for {what}; the terminal shows:\n"
                                     f"{self.text[-3000:]}")

    def type(self, keys: bytes) -> None:
        os.write(self.fd, keys)

    def wait(self, timeout: float = 60.0) -> int:
        """The exit status (reading everything it writes until then)."""
        deadline = time.monotonic() + timeout
        while self.status is None:
            self._read(0.1)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                for _ in range(100):  # what is left in the pty's buffer
                    if not self._read(0.05):
                        break
                self.status = os.waitstatus_to_exitcode(status)
            elif time.monotonic() > deadline:
                self.close()
                raise AssertionError(f"still running after {timeout} s:\n{self.text[-3000:]}")
        return self.status

    def close(self) -> None:
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self.status = -9
        with contextlib.suppress(OSError):
            os.close(self.fd)
