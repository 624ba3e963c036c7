"""gunicorn's server hooks for the API (``gunicorn -c python:api.gunicorn_conf``, as
``make run`` starts it).

With ``--preload`` the app is built once in gunicorn's master and its workers are forked
from it, sharing its memory until they write to it. The garbage collector writes to every
object it visits: frozen before each fork, the objects made so far are never visited again,
and stay shared (docs/benchmarks.md, Memory of the default stack).
"""

from __future__ import annotations

import gc
from typing import Any


def pre_fork(server: Any, worker: Any) -> None:
    gc.collect()
    gc.freeze()
