"""``storage.exports`` on SQLite and PostgreSQL: every result once, in completion order, a
batch at a time; a snapshot while writes go on; read ahead in a thread; and the connection
back in the pool as soon as the reader stops, also half-way."""

from __future__ import annotations

import json
import threading

import pytest

from storage import collection_store, exports
from storage.db import Database
from storage.exports import ExportRow, ReadAhead, read_ahead, stream_results
from tests.test_collections_storage import account, collection, page


@pytest.fixture
def db(database_url) -> Database:
    database = Database(database_url)
    yield database
    database.dispose()


def test_results_come_in_batches_in_completion_order(db):
    col = collection(db, account(db, 100))
    collection_store.store(db, col, [page(n, ok=n % 3 != 0) for n in range(1, 26)])
    batches = list(stream_results(db, col, batch=10))
    assert [len(rows) for rows in batches] == [10, 10, 5]
    rows = [ExportRow(*row) for rows in batches for row in rows]
    assert [row.url.rsplit("/", 1)[1] for row in rows] == [str(n) for n in range(1, 26)]
    first = rows[0]
    assert (first.status, json.loads(first.data), first.error) == ("succeeded", {"n": 1}, None)
    failed = [ExportRow(*row) for rows in stream_results(db, col, status="failed")
              for row in rows]
    assert [row.url.rsplit("/", 1)[1] for row in failed] == [str(n) for n in range(3, 26, 3)]
    assert json.loads(failed[0].error)["error"] == "fetch_failed" and failed[0].data is None
    assert list(stream_results(db, collection(db, account(db, 1)))) == []


def test_an_export_reads_one_snapshot_and_gives_its_connection_back(db):
    col = collection(db, account(db, 100))
    collection_store.store(db, col, [page(n) for n in range(1, 21)])
    pool = db.engine.pool
    reader = stream_results(db, col, batch=5)
    first = next(reader)
    assert len(first) == 5 and pool.checkedout() == 1
    collection_store.store(db, col, [page(n) for n in range(21, 31)])  # lands meanwhile
    rest = [row for rows in reader for row in rows]
    assert len(first) + len(rest) == 20  # what was stored when the export began
    assert pool.checkedout() == 0
    stopped = stream_results(db, col, batch=5)
    next(stopped)
    stopped.close()  # what a streamed response does when the client goes away
    assert pool.checkedout() == 0


def test_reading_ahead_gives_the_same_batches_and_its_connection_back(db):
    col = collection(db, account(db, 100))
    collection_store.store(db, col, [page(n) for n in range(1, 31)])
    pool = db.engine.pool
    ahead = read_ahead(db, col, batch=4)
    assert [list(map(tuple, rows)) for rows in ahead] == [
        list(map(tuple, rows)) for rows in stream_results(db, col, batch=4)]
    assert next(ahead, None) is None and pool.checkedout() == 0
    stopped = read_ahead(db, col, batch=4)
    assert len(next(stopped)) == 4
    stopped.close()  # the client went away after the first batch
    assert pool.checkedout() == 0
    dropped = read_ahead(db, col, batch=4)
    next(dropped)
    thread = dropped._thread
    del dropped  # a stream nobody closed: its thread stops all the same
    thread.join(timeout=5)
    assert not thread.is_alive() and pool.checkedout() == 0


def test_a_failure_while_reading_ahead_reaches_the_reader():
    def failing():
        yield [1]
        raise RuntimeError("connection lost")

    ahead = ReadAhead(failing())
    assert next(ahead) == [1]
    with pytest.raises(RuntimeError, match="connection lost"):
        next(ahead)
    ahead.close()


def test_a_reader_that_stops_reading_lets_the_rows_go(monkeypatch):
    """A client that keeps its connection and reads nothing: after IDLE the read-ahead
    closes its source (the database connection goes back) and says it is done (on_end:
    the account's slot); the reader, if it comes back, gets an error, not a hang."""
    monkeypatch.setattr(exports, "IDLE", 0.4)
    closed, ended = threading.Event(), threading.Event()

    def rows():
        try:
            yield from ([n] for n in range(1000))
        finally:
            closed.set()

    ahead = exports.ReadAhead(rows(), depth=2, on_end=ended.set)
    assert next(ahead) == [0]
    assert closed.wait(10) and ended.wait(10)
    with pytest.raises(TimeoutError):
        for _ in range(10):
            next(ahead)
    assert not ahead._thread.is_alive()
