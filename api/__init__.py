"""The HTTP API: ``create_app(config)`` builds the Flask app (``flask --app api …``).

The app is made in :mod:`api.factory`, imported when ``create_app`` is first asked for: the
package itself imports nothing, so that gunicorn's master, which loads the API's worker and
logger classes from here (:mod:`api.gunicorn_worker`, :mod:`api.gunicorn_logger`), does not
hold a copy of the app its one worker builds (docs/benchmarks.md, Memory of the default stack).
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from api.factory import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
