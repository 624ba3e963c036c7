"""gunicorn's logger for the API: lines no client can forge.

gunicorn's access log writes what clients send (the request line, Referer, User-Agent) as it
came: an ESC or a NEL in a header reached the operator's terminal raw. :class:`ApiLogger`
(``--logger-class``, gunicorn's documented hook for it) formats every line of the error and
access logs, and of the app's own loggers, with :class:`core.controls.LineSafeFormatter`.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from gunicorn import glogging

from core.controls import LineSafeFormatter, guard_handlers


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
        guard_handlers((self.error_log, self.access_log))
