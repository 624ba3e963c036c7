"""Control characters in text from outside: which they are, why a URL holding one is refused,
and how such text is written to logs and to the history without them.

A control character in a URL is never part of an address a browser sends (it percent-encodes
them: ``%0D%0A``), and raw it is an attack on whoever reads the logs: CR and LF forge a log
line, ESC drives the operator's terminal, NEL and the line separator break lines in many log
viewers. The API (422), batch code (``ValueError``) and the spiders (a failed result) refuse
such URLs by :func:`control_character_error`; what is logged goes through :func:`escaped`, and
every handler of our processes through :class:`LineSafeFormatter`, so that no line of a log
starts with what a client wrote.

Standard library only: the API, the workers, gunicorn's logger and the spiders share it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

#: Unicode category Cc (C0 U+0000 to U+001F, DEL U+007F, C1 U+0080 to U+009F with NEL U+0085) and
#: the line and paragraph separators U+2028/U+2029 (category Zl/Zp, line breaks to many
#: viewers), as the inside of a regular expression's character class: Python's and ECMAScript's (the
#: OpenAPI document's ``pattern``) read it alike.
CONTROL_RANGES = r"\x00-\x1f\x7f-\x9f\u2028\u2029"
CONTROL_CHARACTERS = re.compile(f"[{CONTROL_RANGES}]")
#: What a log record may keep raw: the line feeds between its own lines (a traceback's).
_ESCAPED_IN_LOGS = re.compile(rf"(?!\n)[{CONTROL_RANGES}]")
#: A line's end: ``str.splitlines`` also splits at VT, FF, FS, GS, RS, NEL, LS and PS, which
#: inside a URL are control characters to refuse, not the end of its line.
_LINE_END = re.compile(r"\r\n|\r|\n")
#: What starts each line of a log record after its first: a line at column 0 always starts a
#: record, whatever the record holds.
CONTINUATION = "    "


def control_character_error(text: str) -> str | None:
    """Why ``text`` may not be a URL because of a control character, in words (the first one,
    its code point and position); None when it has none."""
    found = CONTROL_CHARACTERS.search(text)
    if found is None:
        return None
    code = ord(found.group())
    return (f"Must not contain control characters: U+{code:04X} at position {found.start()} "
            f"(percent-encode it as {percent_encoded(found.group())} if the address really "
            "has one).")


def escaped(text: object) -> str:
    """``text`` with each control character written as its Python escape (``\\r``, ``\\n``,
    ``\\x1b``, ``\\x85``, ``\\u2028``): what a log line shows of a URL or any text from outside,
    one line whatever it holds, other characters (``é``, ``中文``) as they are."""
    return CONTROL_CHARACTERS.sub(_escape, str(text))


def percent_encoded(text: str) -> str:
    """``text`` with each control character percent-encoded as its UTF-8 bytes (``%0D``,
    ``%C2%85``, ``%E2%80%A8``), as a browser writes it in a URL: how the history keeps the URL
    of a request refused for one."""
    return CONTROL_CHARACTERS.sub(
        lambda found: "".join(f"%{byte:02X}" for byte in found.group().encode()), text)


def url_lines(text: str) -> list[tuple[int, str]]:
    """(line number, URL) of each line of a list of URLs, one a line (a pasted list, a file):
    split at line ends only (LF, CRLF, CR), stripped of spaces and tabs; blank lines and
    ``#`` comments skipped. Any other control character stays in its URL, to be refused."""
    found = enumerate((line.strip(" \t") for line in _LINE_END.split(text)), 1)
    return [(number, line) for number, line in found if line and not line.startswith("#")]


def _escape(found: re.Match[str]) -> str:
    return repr(found.group())[1:-1]


def one_record(text: str) -> str:
    """A formatted log record that cannot pass for more than one: its control characters
    escaped but the line feeds of its own lines (a traceback), each line after the first
    indented by :data:`CONTINUATION`."""
    text = _ESCAPED_IN_LOGS.sub(_escape, text).rstrip("\n")
    return text.replace("\n", "\n" + CONTINUATION)


class LineSafeFormatter(logging.Formatter):
    """A Formatter whose every record is :func:`one_record`: defence in depth, so that a log
    call that forgets :func:`escaped` (ours, a library's) still writes no forged line and no
    raw escape. ``inner`` formats the record first when given (a handler's own formatter,
    wrapped by :func:`guard_handlers`); else the ``fmt``/``datefmt`` given."""

    def __init__(self, fmt: str | None = None, datefmt: str | None = None, *,
                 inner: logging.Formatter | None = None):
        super().__init__(fmt, datefmt)
        self.inner = inner

    def format(self, record: logging.LogRecord) -> str:
        text = self.inner.format(record) if self.inner else super().format(record)
        return one_record(text)


def guard_handlers(loggers: Iterable[logging.Logger] = ()) -> None:
    """Give every handler of the root logger and of ``loggers`` a :class:`LineSafeFormatter`
    around the formatter it has (once: a guarded handler is left as it is)."""
    for logger in (logging.getLogger(), *loggers):
        for handler in logger.handlers:
            if not isinstance(handler.formatter, LineSafeFormatter):
                handler.setFormatter(LineSafeFormatter(inner=handler.formatter
                                                       or logging.Formatter()))

