"""Stop requests a thread takes at points of its own choosing.

A worker runs many jobs at once, one per thread, and stops one alone (its timeout, RQ's
stop-job command). An asynchronous exception (``PyThreadState_SetAsyncExc``) lands wherever
the thread happens to be: inside an import's module lock, one thread stopped there left the
lock held, and every job importing that module after it waited forever. So a stop is first
*requested* here for the job's thread, and the job raises it itself at its next
:func:`checkpoint`, placed where unwinding is safe (each slice of a crawl's wait, each turn of
a collection's loop). :mod:`worker.timeouts` falls back to the asynchronous exception only for
a job that reaches no checkpoint within a few seconds.
"""

from __future__ import annotations

import threading

_pending: dict[int, type[BaseException]] = {}
_lock = threading.Lock()


def request(thread_id: int, exception: type[BaseException]) -> None:
    """Ask thread ``thread_id`` to raise ``exception`` at its next checkpoint."""
    with _lock:
        _pending[thread_id] = exception


def take(thread_id: int) -> type[BaseException] | None:
    """The stop requested for ``thread_id``, now withdrawn; None if there was none."""
    with _lock:
        return _pending.pop(thread_id, None)


def checkpoint() -> None:
    """Raise the stop requested for this thread, if any."""
    if _pending:  # a dict's truth needs no lock: the common case costs nothing
        exception = take(threading.get_ident())
        if exception is not None:
            raise exception()
