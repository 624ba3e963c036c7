"""A collection's results read in one pass, for ``GET /collections/{id}/export``.

An export may be any size, so it never holds more than a few batches of rows (the one being
serialised, and :data:`READ_AHEAD` more on their way). The query runs on a server-side cursor
(PostgreSQL; SQLite's cursor reads as it goes anyway) and hands back plain tuples of columns
through SQLAlchemy Core, not ORM objects, whose identity map and per-object bookkeeping would
cost more than the export itself. ``error`` and ``data`` come back as the JSON text they are
stored as, so a serialiser can splice ``data`` into its output without decoding and encoding
it again.

The rows are read in one transaction: one consistent snapshot, also while the collection runs
(what is stored at the start is exported, nothing half-written); the skipped URLs and removed
pages asked for are read after them.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence, Set
from typing import Any, NamedTuple

from sqlalchemy import select

from storage.db import Database
from storage.models import CollectionResult, CollectionSkip
from storage.page_models import RemovedPage

#: Rows fetched from the database at a time: one serialised chunk each (a few hundred KB).
BATCH = 200
#: Batches read ahead of the one being serialised (at most this many more in memory).
READ_AHEAD = 2
#: Seconds the read-ahead waits for a reader that stopped reading (a client that keeps its
#: connection open and reads nothing) before it gives its database connection back.
IDLE = 60.0
THREAD_NAME = "export-read-ahead"


class ExportRow(NamedTuple):
    """One stored result, columns as stored (``error`` and ``data``: JSON text or None)."""

    url: str
    final_url: str | None
    status: str
    status_code: int | None
    fetched_at: str | None
    error: str | None
    data: str | None
    change: str | None = None  #: JSON text, with change tracking


_COLUMNS = (CollectionResult.url, CollectionResult.final_url, CollectionResult.status,
            CollectionResult.status_code, CollectionResult.fetched_at, CollectionResult.error,
            CollectionResult.data, CollectionResult.change)


#: What an export can add after a collection's results (``include``), in the order they follow
#: them: each kind's table and the columns it gives of each row, the URL first, each named as
#: the API names it (its ``/skipped`` or ``/changes`` entry's key).
APPENDED: dict[str, tuple[type[CollectionSkip | RemovedPage], tuple[str, ...]]] = {
    "skipped": (CollectionSkip, ("url", "reason", "duplicate_of")),
    "removed": (RemovedPage, ("url", "previous_fetched_at")),
}


class Appended(list):  # type: ignore[type-arg]
    """A batch of rows the export adds after the results: of ``kind`` (:data:`APPENDED`), each
    row its kind's columns."""

    def __init__(self, kind: str, rows: Iterable[Sequence[Any]]):
        super().__init__(rows)
        self.kind = kind


def stream_results(db: Database, collection_id: str, *, status: str | None = None,
                   include: Set[str] = frozenset(), batch: int = BATCH
                   ) -> Iterator[Sequence[Any]]:
    """The collection's results in completion order, ``batch`` rows at a time (each row an
    :class:`ExportRow`-shaped tuple); then the kinds of :data:`APPENDED` in ``include``, each
    in the order it was recorded (:class:`Appended` batches), on the same connection. The
    connection is held until the generator is exhausted or closed: close it (a streamed
    response does, also when the client goes away)."""
    query = select(*_COLUMNS).where(CollectionResult.collection_id == collection_id)
    if status is not None:
        query = query.where(CollectionResult.status == status)
    query = query.order_by(CollectionResult.seq)
    with db.engine.connect() as connection:
        streaming = connection.execution_options(stream_results=True, yield_per=batch)
        yield from streaming.execute(query).partitions()
        for kind, (table, names) in APPENDED.items():
            if kind not in include:
                continue
            rows = (select(*(getattr(table, name) for name in names))
                    .where(table.collection_id == collection_id).order_by(table.seq))
            for part in streaming.execute(rows).partitions():
                yield Appended(kind, part)


def read_ahead(db: Database, collection_id: str, *, status: str | None = None,
               include: Set[str] = frozenset(), batch: int = BATCH,
               on_end: Callable[[], None] | None = None) -> ReadAhead:
    """:func:`stream_results`, read ahead in a thread (:class:`ReadAhead`); close it.
    ``on_end`` runs in that thread once it is done with the database (read to the end,
    closed, failed, or left idle)."""
    return ReadAhead(stream_results(db, collection_id, status=status, include=include,
                                    batch=batch), on_end=on_end)


def live() -> int:
    """Read-ahead threads of this process still holding (or about to hold) a connection."""
    return sum(thread.name == THREAD_NAME and thread.is_alive()
               for thread in threading.enumerate())


class ReadAhead:
    """Iterates ``source`` in a thread of its own, up to ``depth`` items ahead of the reader.

    While a batch is serialised, the next one is on its way from the database: PostgreSQL
    reads (and decompresses) rows in its own process, and the driver waits for them without
    the GIL, so that time is not added to the serialiser's (docs/benchmarks.md, Export: CSV
    from PostgreSQL twice as fast). :meth:`close` (a streamed response calls it, also when the
    client went away) stops the thread after its current item and closes ``source``, which
    gives the connection back; so does dropping the last reference to it.
    """

    _END = object()

    def __init__(self, source: Iterator[Any], depth: int = READ_AHEAD,
                 on_end: Callable[[], None] | None = None):
        self._queue: queue.Queue[tuple[Any, BaseException | None]] = queue.Queue(depth)
        self._stop = threading.Event()
        # The thread holds the queue and the event, not self: self can be dropped.
        self._thread = threading.Thread(target=_read, daemon=True, name=THREAD_NAME,
                                        args=(source, self._queue, self._stop, self._END,
                                              on_end))
        self._thread.start()

    def __iter__(self) -> ReadAhead:
        return self

    def __next__(self) -> Any:
        while True:
            try:
                item, error = self._queue.get(timeout=1.0)
                break
            except queue.Empty:
                if not self._thread.is_alive() and self._queue.empty():
                    # it gave up on a reader that stopped reading (IDLE): the export is cut
                    raise TimeoutError(
                        "the export was idle too long; its rows were let go") from None
                continue
        if error is not None:
            raise error
        if item is self._END:
            self._queue.put((self._END, None))  # a further next() stops again
            raise StopIteration
        return item

    def close(self) -> None:
        self._stop.set()
        self._thread.join()

    def __del__(self) -> None:
        self._stop.set()


def _read(source: Iterator[Any], out: queue.Queue, stop: threading.Event, end: object,
          on_end: Callable[[], None] | None = None) -> None:
    """The thread of a :class:`ReadAhead`: ``source`` into ``out`` until it ends (then
    ``end``), fails (``end`` with the error) or ``stop`` is set; then ``source`` is closed."""

    def put(entry: tuple[Any, BaseException | None]) -> bool:
        waited = 0.0
        while not stop.is_set() and waited < IDLE:
            try:
                out.put(entry, timeout=0.2)
                return True
            except queue.Full:
                waited += 0.2
        return False  # stopped, or the reader stopped reading: the connection goes back

    try:
        for item in source:
            if not put((item, None)):
                return
        put((end, None))
    except BaseException as exc:  # handed to the reader, raised there
        put((end, exc))
    finally:
        try:
            close = getattr(source, "close", None)
            if close is not None:
                close()
        finally:
            if on_end is not None:
                on_end()
