"""The API's gunicorn settings as a gunicorn configuration module, for a deployment that runs
gunicorn itself (deploy/systemd/webdata-api.service)::

    gunicorn -c python:launcher.gunicorn_config 'api:create_app()'

The same settings ``make run`` gives it (:func:`launcher.serve.gunicorn_settings`), from the
same environment: ``HOST``, ``PORT``, ``API_PROCESSES``, ``API_THREADS``, ``JOB_WAIT_SECONDS``.
A bad variable stops gunicorn before it starts, with the line naming it. ``make run`` reads it
too, for its hook, its own command line's flags winning.

The hook: with ``preload_app`` (``API_PROCESSES`` above 1) the app is built once in gunicorn's
master and its workers are forked from it, sharing its memory until they write to it. The
garbage collector writes to every object it visits: frozen before each fork, the objects made
so far are never visited again, and stay shared (docs/benchmarks.md, Memory of the default
stack).
"""

from __future__ import annotations

import gc
from typing import Any

from core.config import load_or_exit
from launcher.serve import gunicorn_settings

_config = load_or_exit()
globals().update(gunicorn_settings(_config.launch, _config.api))


def pre_fork(server: Any, worker: Any) -> None:
    gc.collect()
    gc.freeze()
