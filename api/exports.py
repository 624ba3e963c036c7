"""A collection's export as bytes: batches of stored rows in, chunks of JSON, JSON Lines or CSV
out (``GET /collections/{id}/export``), and the skipped URLs or removed pages after them when
asked (``include``). Pure functions: no Flask, no database.

Each result has the shape of ``storage.collection_results.body`` (docs/api.md, Results). The JSON
formats splice the stored JSON text of ``data`` into their output as it is: decoding and
encoding a few KB per row again would cost most of the export's time. CSV has one row per page
with a fixed set of columns per ``extract`` (:func:`csv_columns`), nested values as JSON text
(as ``crawler.exporters`` writes a feed's), and every cell that a spreadsheet would read as a
formula neutralised with :func:`core.formats.csv_cell`.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass, replace
from typing import Any

from core.formats import csv_cell
from core.operations import COLLECTION_EXTRACTS, EXTRACTIONS, FORMAT_FIELDS
from storage.exports import APPENDED, Appended


@dataclass(frozen=True)
class Format:
    """What an export format answers with: its Content-Type and its file name's extension."""

    media_type: str
    extension: str


FORMATS: dict[str, Format] = {
    "json": Format("application/json", "json"),
    "jsonl": Format("application/x-ndjson", "jsonl"),
    "csv": Format("text/csv; charset=utf-8", "csv"),
}

#: The keys of every result, in the order the API writes them.
RESULT_KEYS = ("url", "final_url", "status", "status_code", "fetched_at", "error", "data",
               "change")
#: The top-level keys of ``data`` for each ``extract``: the fields of its operation's item
#: (what its page operation answers with beside the page fields).
DATA_KEYS: dict[str, tuple[str, ...]] = {
    extract: EXTRACTIONS[extract].data_keys for extract in COLLECTION_EXTRACTS}
#: What an export can add after the results (``include``), in the order it follows them; each
#: such entry's ``status`` is its kind (``skipped``, ``removed``).
INCLUDES = tuple(APPENDED)
#: A result's change against its previous version (null without change tracking).
CHANGE = "change"
#: The columns a CSV gives for each result key: ``error`` is two (its code and message), a
#: ``change`` three (its status, the previous version's time, the diff).
_KEY_COLUMNS = {"error": ("error", "error_message"),
                CHANGE: ("change", "previous_fetched_at", "change_diff")}
#: zlib level of a gzipped export: 1 still makes page results about 4x smaller, at several
#: times level 6's speed (which would make compression, not the database, the bottleneck).
GZIP_LEVEL = 1


class UnknownFields(ValueError):
    """``fields`` named something a result of this collection does not have."""

    def __init__(self, names: Sequence[str]):
        super().__init__(f"Unknown field(s): {', '.join(names)}.")
        self.names = tuple(names)


@dataclass(frozen=True)
class Selection:
    """What of each result is exported (the ``fields`` parameter), for one ``extract``."""

    #: Top-level keys of each result object, in order (``data`` where it is first named).
    keys: tuple[str, ...]
    #: The keys kept in ``data``; None: all of it, as stored.
    data_keys: tuple[str, ...] | None
    #: A CSV's columns, in order.
    columns: tuple[str, ...]

    def appending(self, kinds: Set[str]) -> Selection:
        """This selection, with ``kinds`` of :data:`INCLUDES` after the results: a CSV gains
        their columns (:data:`storage.exports.APPENDED`, those it has not already), which a
        result leaves empty."""
        extra = [name for kind in INCLUDES if kind in kinds for name in APPENDED[kind][1][1:]]
        return replace(self, columns=tuple(dict.fromkeys((*self.columns, *extra))))


def select(extract: str, names: Sequence[str] | None = None,
           unasked: Set[str] = frozenset(), tracked: bool = False) -> Selection:
    """The selection of ``names`` (result keys and ``data.<key>``, in the order asked;
    duplicates ignored), or of everything when ``names`` is empty. Raises
    :class:`UnknownFields` naming what a result of an ``extract`` collection lacks.
    ``unasked``: the keys of ``data`` the collection did not ask for (:func:`unasked`),
    always null: a CSV of all of ``data`` has no column for them. ``tracked``: the
    collection tracks changes (else ``change`` is null, and a CSV of everything has no
    column for it)."""
    own = DATA_KEYS[extract]
    names = list(dict.fromkeys(names or ()))
    unknown = [name for name in names if name not in RESULT_KEYS
               and not (name.startswith("data.") and name[5:] in own)]
    if unknown:
        raise UnknownFields(unknown)
    if not names:  # a CSV of a collection without change tracking has no change columns
        names = [key for key in RESULT_KEYS if tracked or key != CHANGE]
        if not tracked:
            return replace(select(extract, [*names, CHANGE], unasked), columns=select(
                extract, names, unasked).columns)
    keys = tuple(dict.fromkeys("data" if name.startswith("data.") else name for name in names))
    whole = "data" in names
    data_keys = None if whole else tuple(name[5:] for name in names if name.startswith("data."))
    columns: list[str] = []
    for name in names:
        if name == "data":
            columns += (key for key in own if key not in unasked)
        elif name.startswith("data."):
            columns.append(name[5:])
        else:
            columns += _KEY_COLUMNS.get(name, (name,))
    return Selection(keys, data_keys, tuple(dict.fromkeys(columns)))


def csv_columns(extract: str, unasked_keys: Set[str] = frozenset()) -> tuple[str, ...]:
    """The columns of an ``extract`` collection's CSV when no ``fields`` are given."""
    return select(extract, unasked=unasked_keys).columns


def unasked(extract: str, spec: Mapping[str, Any]) -> frozenset[str]:
    """The keys of ``data`` a collection (its ``extract`` and stored ``spec``) left null on
    every page: the formats it did not ask for, ``records`` without a ``schema``."""
    own = {option.name: option for option in EXTRACTIONS[extract].options}
    given = spec.get("options") or {}
    keys: set[str] = set()
    if "formats" in own:
        keys |= set(FORMAT_FIELDS) - set(given.get("formats", own["formats"].default))
    if "schema" in own and "records" in DATA_KEYS[extract] and given.get("schema") is None:
        keys.add("records")
    return frozenset(keys)


def pick(result: dict[str, Any], selection: Selection) -> dict[str, Any]:
    """A result object (``collection_results.body``'s) cut down to ``selection``: the
    results endpoint's ``fields``, the same as an export's."""
    picked: dict[str, Any] = {}
    for key in selection.keys:
        value = result[key]
        if key == "data" and value is not None and selection.data_keys is not None:
            value = {name: value.get(name) for name in selection.data_keys}
        picked[key] = value
    return picked


# -- JSON and JSON Lines ------------------------------------------------------------------------

#: JSON text of a string, in C (what ``json.dumps`` runs for one, without its overhead).
_string = json.encoder.encode_basestring_ascii  # type: ignore[attr-defined]


def _text(value: str | None) -> str:
    return "null" if value is None else _string(value)


def _error(stored: str | None) -> dict[str, Any] | None:
    """The stored error as the API shows it: its code and message (the details are the
    crawler's)."""
    if not stored:
        return None
    error = json.loads(stored)
    return {"error": error.get("error"), "message": error.get("message")}


def _error_json(stored: str | None) -> str:
    error = _error(stored)
    if error is None:
        return "null"
    return f'{{"error": {_text(error["error"])}, "message": {_text(error["message"])}}}'


def _data_json(stored: str | None, keys: tuple[str, ...] | None) -> str:
    if not stored:
        return "null"
    if keys is None:
        return stored  # JSON text as json.dumps wrote it (storage.collection_store.store)
    data = json.loads(stored)
    return json.dumps({key: data.get(key) for key in keys})


#: Each result key's JSON text, from a stored row (storage.exports.ExportRow's columns).
_JSON: dict[str, Callable[[Sequence[Any], tuple[str, ...] | None], str]] = {
    "url": lambda row, _: _string(row[0]),
    "final_url": lambda row, _: _text(row[1]),
    "status": lambda row, _: _string(row[2]),
    "status_code": lambda row, _: "null" if row[3] is None else str(int(row[3])),
    "fetched_at": lambda row, _: _text(row[4]),
    "error": lambda row, _: _error_json(row[5]),
    "data": lambda row, keys: _data_json(row[6], keys),
    CHANGE: lambda row, _: row[7] if len(row) > 7 and row[7] else "null",
}


def json_object(row: Sequence[Any], selection: Selection) -> str:
    """One stored row as its result's JSON text (one line: stored JSON has no raw newline)."""
    keys = selection.data_keys
    return "{" + ", ".join(f'"{key}": {_JSON[key](row, keys)}' for key in selection.keys) + "}"


def appended_values(kind: str, row: Sequence[Any]) -> dict[str, Any]:
    """One row added after the results (:data:`storage.exports.APPENDED`) as its entry:
    ``{"url", "status": kind, …}``, its other columns as ``/skipped`` or ``/changes`` names
    them."""
    names = APPENDED[kind][1]
    return {"url": row[0], "status": kind, **dict(zip(names[1:], row[1:], strict=True))}


def _objects(rows: Sequence[Sequence[Any]], selection: Selection) -> Iterator[str]:
    if isinstance(rows, Appended):
        return (json.dumps(appended_values(rows.kind, row)) for row in rows)
    return (json_object(row, selection) for row in rows)


def json_lines(batches: Iterable[Sequence[Sequence[Any]]], selection: Selection
               ) -> Iterator[bytes]:
    """JSON Lines: one result (then skipped URL) a line, one chunk per batch of rows."""
    for rows in batches:
        if rows:
            yield "".join(text + "\n" for text in _objects(rows, selection)).encode()


def json_array(batches: Iterable[Sequence[Sequence[Any]]], selection: Selection
               ) -> Iterator[bytes]:
    """One JSON array of the results (then skipped URLs), one a line; ``[`` goes out before
    any row is read."""
    yield b"["
    separator = "\n"
    for rows in batches:
        if rows:
            yield (separator + ",\n".join(_objects(rows, selection))).encode()
            separator = ",\n"
    yield b"\n]\n"


# -- CSV ----------------------------------------------------------------------------------------


def _cell(text: str | None) -> str:
    """One CSV cell of ``text`` (None: empty), neutralised against formulas and quoted as
    RFC 4180 asks.

    Written by hand rather than with :mod:`csv`: its writer scans every character of every
    cell in a loop of its own, which made it the largest cost of a CSV export; ``str``'s
    searches do the same in a fraction of the time, with the same quoting rules (the excel
    dialect's minimal quoting)."""
    if not text:
        return ""
    text = csv_cell(text)
    if '"' in text:
        return '"' + text.replace('"', '""') + '"'
    if "," in text or "\n" in text or "\r" in text:
        return '"' + text + '"'
    return text


def _json_text(value: Any) -> str | None:
    """A value as a CSV cell shows it: text as is, null empty, anything else as JSON text."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


#: The C scanner behind ``json.loads``: one JSON value at an offset → (value, its end).
_scan = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[attr-defined]
_space = json.decoder.WHITESPACE.match  # type: ignore[attr-defined]


def _member_texts(stored: str) -> dict[str, str | None]:
    """The members of the stored JSON object ``stored`` as cell texts (:func:`_json_text`).

    A nested value's JSON text is cut out of ``stored`` as it is, not encoded again: encoding
    links and metadata again cost more than decoding the whole object. ``json.dumps`` wrote
    ``stored`` with the separators it uses for a cell, so the cut is the same text, unless it
    holds a ``\\u`` escape (``stored`` is ASCII, a cell is UTF-8): that value is encoded again.
    What is not a JSON object takes the slow way (``json.loads``, which says what is wrong)."""
    texts: dict[str, str | None] = {}
    try:
        at = _space(stored, 0).end()
        if stored[at] != "{":
            raise ValueError("not an object")
        at = _space(stored, at + 1).end()
        while stored[at] != "}":
            key, at = _scan(stored, at)
            at = _space(stored, at).end()
            if stored[at] != ":" or not isinstance(key, str):
                raise ValueError("not a member")
            start = _space(stored, at + 1).end()
            value, at = _scan(stored, start)
            if value is None or isinstance(value, str):
                texts[key] = value
            else:
                cut = stored[start:at]
                texts[key] = json.dumps(value, ensure_ascii=False) if "\\u" in cut else cut
            at = _space(stored, at).end()
            if stored[at] == ",":
                at = _space(stored, at + 1).end()
            elif stored[at] != "}":
                raise ValueError("not a member")
    except (ValueError, IndexError, StopIteration):
        return {key: _json_text(value) for key, value in json.loads(stored).items()}
    return texts


#: The CSV columns read from a row as they are, by their index in it.
_ROW_COLUMNS = {"url": 0, "final_url": 1, "status": 2, "status_code": 3, "fetched_at": 4}


def csv_line(row: Sequence[Any], columns: tuple[str, ...], data_columns: bool = True) -> str:
    """One stored row as a CSV line (CRLF-terminated) of ``columns``; ``data_columns``: some
    of them are ``data``'s (else its JSON is not decoded at all)."""
    error = _error(row[5]) or {}
    data = _member_texts(row[6]) if data_columns and row[6] else {}
    change = _change_cells(row) if _KEY_COLUMNS[CHANGE][0] in columns else {}
    cells = []
    for column in columns:
        index = _ROW_COLUMNS.get(column)
        if index is not None:
            value = row[index]
            text = value if value is None or isinstance(value, str) else str(value)
        elif column == "error":
            text = error.get("error")
        elif column == "error_message":
            text = error.get("message")
        elif column in change:
            text = change[column]
        else:
            text = data.get(column)
        cells.append(_cell(text))
    if cells == [""]:
        cells = ['""']  # a lone empty cell must not read as a blank line
    return ",".join(cells) + "\r\n"


def _change_cells(row: Sequence[Any]) -> dict[str, str | None]:
    """A row's ``change`` as its three CSV cells."""
    stored = json.loads(row[7]) if len(row) > 7 and row[7] else {}
    status, since, diff = _KEY_COLUMNS[CHANGE]
    return {status: stored.get("status"), since: stored.get("previous_fetched_at"),
            diff: stored.get("diff")}


def csv_table(batches: Iterable[Sequence[Sequence[Any]]], selection: Selection
              ) -> Iterator[bytes]:
    """UTF-8 CSV: the header row (sent before any row is read), then one row a page."""
    columns = selection.columns
    data_columns = any(column not in _ROW_COLUMNS and column not in _KEY_COLUMNS["error"]
                       and column not in _KEY_COLUMNS[CHANGE] for column in columns)
    yield (",".join(_cell(column) for column in columns) + "\r\n").encode()
    for rows in batches:
        if isinstance(rows, Appended):
            yield "".join(appended_line(rows.kind, row, columns) for row in rows).encode()
        elif rows:
            yield "".join(csv_line(row, columns, data_columns) for row in rows).encode()


def appended_line(kind: str, row: Sequence[Any], columns: tuple[str, ...]) -> str:
    """One row added after the results as a CSV line of ``columns``: its URL, its kind as
    ``status`` and its other values (:func:`appended_values`) where they have a column."""
    values = appended_values(kind, row)
    return ",".join(_cell(values.get(column)) for column in columns) + "\r\n"


SERIALISERS: dict[str, Callable[[Iterable[Sequence[Sequence[Any]]], Selection],
                                Iterator[bytes]]] = {
    "json": json_array, "jsonl": json_lines, "csv": csv_table,
}


def gzipped(chunks: Iterable[bytes], level: int = GZIP_LEVEL) -> Iterator[bytes]:
    """``chunks`` as one gzip stream, compressed as they come (never the whole export in
    memory); each chunk is flushed, so what was read so far reaches the client now."""
    compressor = zlib.compressobj(level, zlib.DEFLATED, 31)  # 31: the gzip container
    for chunk in chunks:
        out = compressor.compress(chunk) + compressor.flush(zlib.Z_SYNC_FLUSH)
        if out:
            yield out
    yield compressor.flush()
