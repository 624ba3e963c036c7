"""gunicorn's logger for the API: lines no client can forge.

gunicorn's access log writes what clients send (the request line, Referer, User-Agent) as it
came: an ESC or a NEL in a header reached the operator's terminal raw. :class:`ApiLogger`
(``--logger-class``, gunicorn's documented hook for it) formats every line of the error and
access logs, and of the app's own loggers, with :class:`core.controls.LineSafeFormatter` — or,
with ``LOG_FORMAT=json``, as one JSON object a line (:mod:`core.logformat`), an access line
with its fields (method, path, status, duration, request and account ids) as keys.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from gunicorn import glogging

from core.config import LogConfig
from core.controls import LineSafeFormatter, guard_handlers
from core.logformat import use_json

#: Where the API leaves the account it served, for the access log's line.
ACCOUNT_ENVIRON = "webdata.account_id"


class ApiLogger(glogging.Logger):
    """gunicorn's logger, every handler of it guarded (:func:`~core.controls.guard_handlers`).

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
        self.json = LogConfig.from_env().log_format == "json"
        if self.json:
            use_json([*root.handlers, *self.error_log.handlers, *self.access_log.handlers])
        guard_handlers((self.error_log, self.access_log))

    def access(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any) -> None:
        """gunicorn's access line; as JSON, its fields as keys."""
        if not self.json:
            super().access(resp, req, environ, request_time)
            return
        if not self.access_log_enabled:
            return
        pairs = resp.headers.items() if hasattr(resp.headers, "items") else resp.headers
        headers = {name.lower(): value for name, value in pairs}
        fields = {"method": environ.get("REQUEST_METHOD"), "path": environ.get("PATH_INFO"),
                  "query": environ.get("QUERY_STRING") or None,
                  "status": int(str(resp.status).split()[0]),
                  "bytes": getattr(resp, "sent", None),
                  "duration_ms": round(request_time.total_seconds() * 1000, 1),
                  "remote": environ.get("REMOTE_ADDR"),
                  "user_agent": environ.get("HTTP_USER_AGENT"),
                  "request_id": headers.get("x-request-id"),
                  "account_id": environ.get(ACCOUNT_ENVIRON)}
        self.access_log.info("%s %s %s", fields["method"], fields["path"], fields["status"],
                             extra={"fields": fields})
