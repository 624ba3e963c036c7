"""gunicorn's worker for the API: its own error answers in the API's one JSON error shape; and
its logger, whose lines no client can forge.

gunicorn answers some requests itself, before any application code runs: a malformed request
line or header (400), a request line over ``limit_request_line`` (414), headers over
``limit_request_fields``/``limit_request_field_size`` (431). It writes those as an HTML page
and offers no setting or hook for their body; the worker class is its documented extension
point (``--worker-class``), so this worker lets gunicorn decide status, reason and logging as
usual, captures the page it would send, and sends the JSON of ``api.errors`` instead.

gunicorn's access log writes what clients send (the request line, Referer, User-Agent) as it
came: an ESC or a NEL in a header reached the operator's terminal raw. :class:`ApiLogger`
(``--logger-class``, gunicorn's documented hook for it) formats every line of the error and
access logs, and of the app's own loggers, with :class:`crawler.controls.LineSafeFormatter`.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from typing import Any

from gunicorn import glogging, util
from gunicorn.workers.gthread import ThreadWorker

from api.errors import new_request_id
from crawler.controls import LineSafeFormatter, guard_handlers

#: What each status gunicorn answers itself means to a client.
MESSAGES = {
    400: "The HTTP request is malformed.",
    403: "The request was refused.",
    414: "The request line (method and URL) is too long.",
    417: "The Expect header cannot be met.",
    431: "The request headers are too many or too large.",
    501: "The request uses a transfer coding this server does not support.",
}
_STATUS_LINE = re.compile(rb"^HTTP/1\.1 (\d{3}) ([^\r\n]*)")


class _Captured:
    """Stands in for the client socket while gunicorn writes its error page."""

    def __init__(self) -> None:
        self.data = b""

    def gettimeout(self) -> float:
        return 0.0  # "non-blocking already": gunicorn then just calls sendall

    def sendall(self, data: bytes) -> None:
        self.data += data


class ApiWorker(ThreadWorker):
    """gunicorn's threaded worker, answering its own errors in the API's error shape."""

    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        captured = _Captured()
        super().handle_error(req, captured, addr, exc)  # status, logs, access log
        match = _STATUS_LINE.match(captured.data)
        if match is None:  # gunicorn wrote nothing we know: let it through unchanged
            util.write_nonblock(client, captured.data)
            return
        status, reason = int(match.group(1)), match.group(2).decode("latin1")
        request_id = new_request_id()
        body = json.dumps({
            "code": status, "status": reason,
            "error": "bad_request" if status < 500 else "internal_error",
            "message": MESSAGES.get(status, "Something went wrong on our side."),
            "request_id": request_id, "errors": {},
        }).encode()
        head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                f"X-Request-Id: {request_id}\r\n\r\n").encode("latin1")
        try:
            util.write_nonblock(client, head + body)
        except Exception:
            self.log.debug("Failed to send error message.")


class ApiLogger(glogging.Logger):
    """gunicorn's logger, every handler of it guarded (:func:`~crawler.controls.guard_handlers`).

    The app's loggers (``api.…``, ``storage.…``) get a handler too, on the root logger, in
    the error log's format: without one, Python wrote their warnings bare, neither dated nor
    guarded. Its level is left as it was (warnings and worse).
    """

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        root = logging.getLogger()
        if not root.handlers:
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(LineSafeFormatter(
                self.error_fmt.replace("%(message)s", "%(name)s: %(message)s"), self.datefmt))
            root.addHandler(handler)
        guard_handlers((self.error_log, self.access_log))
