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
#: Threads that raised their stop at a checkpoint at least once (it stays requested: a caller
#: that swallowed it, ``except Exception``, meets it again at the next checkpoint).
_raised: set[int] = set()
_lock = threading.Lock()


def request(thread_id: int, exception: type[BaseException]) -> None:
    """Ask thread ``thread_id`` to raise ``exception`` at its checkpoints, until withdrawn."""
    with _lock:
        _pending[thread_id] = exception


def withdraw(thread_id: int) -> None:
    """The stop of ``thread_id`` is over (its job left the block that could be stopped)."""
    with _lock:
        _pending.pop(thread_id, None)
        _raised.discard(thread_id)


def to_force(thread_id: int) -> type[BaseException] | None:
    """The stop of ``thread_id``, withdrawn, if the thread never raised it at a checkpoint
    (the caller then stops it by force); None otherwise, or if there is none."""
    with _lock:
        if thread_id in _raised or thread_id not in _pending:
            return None
        return _pending.pop(thread_id)


def checkpoint() -> None:
    """Raise the stop requested for this thread, if any."""
    if _pending:  # a dict's truth needs no lock: the common case costs nothing
        thread_id = threading.get_ident()
        with _lock:
            exception = _pending.get(thread_id)
            if exception is not None:
                _raised.add(thread_id)
        if exception is not None:
            raise exception()
