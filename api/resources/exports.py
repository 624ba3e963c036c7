"""``GET /collections/{id}/export``: a collection's results as one file, streamed.

Its own module (and blueprint) beside :mod:`api.resources.collection_routes`: the answer is a stream
of bytes rather than a schema-dumped object. What it asks of a collection (the account's, not
expired) and of ``fields`` is what the results endpoint asks, with the same code.
"""

from __future__ import annotations

import itertools
from datetime import timedelta

from flask import Response, g, request
from flask_smorest import Blueprint

from api import exports, inflight
from api.auth import authenticated
from api.errors import ApiError
from api.extensions import db, redis
from api.openapi import AUTHENTICATED, BASE_PATH, documented
from api.resources.collection_routes import readable, selection_of
from api.schemas.collection_lists import (
    ExportedRemovedSchema,
    ExportedSkippedSchema,
    ExportQuerySchema,
    ResultSchema,
    SelectedResultSchema,
)
from core.changes import REMOVED
from storage import collections
from storage.exports import live, read_ahead

#: Exports one API process streams at once: each holds a database connection of the pool
#: and a read-ahead thread for as long as its client reads. One account may stream at most
#: ``inflight.EXPORTS_PER_ACCOUNT`` of them, on every process together.
PER_PROCESS = 8
#: How long an export's account slots are held at most (a process killed mid-export).
EXPORT_LEASE = timedelta(hours=1)

blp = authenticated(Blueprint("exports", __name__, url_prefix=BASE_PATH,
                              description="A collection's results as one file (JSON, JSON "
                                          "Lines, CSV), streamed; free of charge."))

#: The export's JSON (``format=json``; each line of ``jsonl`` is one item): its results, whole
#: or with the keys ``fields`` named, then what ``include`` adds (skipped URLs, removed pages).
ROWS = {"type": "array", "items": {"anyOf": [
    ResultSchema, ExportedSkippedSchema, ExportedRemovedSchema, SelectedResultSchema]}}
#: The export's bodies besides JSON, for the OpenAPI document: listed before it, CSV first,
#: so that a generator reading only the first media type it knows reads every format as
#: text (api.openapi.documented).
BODIES = {
    "text/csv": {"type": "string", "description": "format=csv: a header row, then one row a "
                                                  "page (columns: see the description)."},
    "application/x-ndjson": {"type": "string", "description": "format=jsonl: one result "
                                                               "object a line."},
}


@blp.route("/collections/<collection_id>/export", methods=["GET"])
@documented(blp, "exportCollectionResults", ROWS,
            (*AUTHENTICATED, 404, 409, 410, 422), media_types=BODIES,
            headers=("Content-Disposition", "Content-Encoding"), descriptions={
                409: "conflict: `include=removed` for a collection without change tracking."})
@blp.arguments(ExportQuerySchema, location="query")
def export(args: dict, collection_id: str):
    """Every result of the collection as one file: JSON, JSON Lines or CSV, streamed.

    Works while the collection runs (the results stored when the export starts) and after,
    until `expires_at` (then 410). Streamed from the database in constant memory, whatever the
    size; compressed as it streams when `Accept-Encoding` accepts gzip. `Content-Disposition`
    names the file after the collection (`attachment; filename="col_….csv"`). Costs nothing
    and, like /results, writes no line of history.

    - `json`: one array of result objects, as /results gives them (`application/json`);
    - `jsonl`: one result object a line (`application/x-ndjson`);
    - `csv` (`text/csv`, UTF-8): a header row, then one row a page, nested values as JSON
      text; a cell that starts with `=`, `+`, `-`, `@`, tab or CR, also behind whitespace
      or invisible characters (NBSP, zero-width space, joiners, word joiner, BOM), gets a
      `'` in front, so that no spreadsheet runs it as a formula. The columns are fixed by
      the collection's `extract` and options (a missing value is an empty cell): `url`,
      `final_url`, `status`, `status_code`, `fetched_at`, `error` (its code),
      `error_message`, then for `page`: `title`, `text`, `markdown`, `html`, `raw_html`
      (each only when the collection's `formats` asked for it), `language`, `links`,
      `metadata`, `records` (only with a `schema`); for `contacts`: `emails`, `phones`,
      `social_links`, `organization`, `suggested_pages`; for `products`: `products`; for
      `schema`: `records`.

    `fields` keeps the keys (CSV: the columns) named, in that order: `error` gives the
    columns `error` and `error_message`, `data` every column of `data`, `data.<key>` one.

    `include=skipped` adds the collection's skipped URLs after its results, in the order they
    were recorded, each as /skipped gives it with `"status": "skipped"`; a CSV gains the
    columns `reason` and `duplicate_of` (empty for a result), and a skipped URL's row fills
    `url`, `status` and those two. `include=removed` (change tracking; else a 409) adds the
    pages the completed collection did not find again, after the results and the skipped
    URLs, each `{"url", "status": "removed", "previous_fetched_at"}`; a CSV's row fills
    `url`, `status` and `previous_fetched_at` (a column added when it has none). Both:
    `include=skipped,removed`.
    """
    return stream(collection_id, args)


def stream(collection_id: str, args: dict) -> Response:
    """The export of the account's collection ``collection_id`` as asked by ``args`` (a loaded
    :class:`ExportQuerySchema`): the API's and the console's download."""
    row = readable(collection_id)
    selection = selection_of(row, args["field_names"]) or exports.select(
        row.extract, unasked=exports.unasked(row.extract, collections.spec_of(row)),
        tracked=collections.tracked(row))
    include = args["include"] or frozenset()
    if REMOVED in include and not collections.tracked(row):
        raise ApiError("conflict", "This collection does not track changes (it was created "
                                   "without change_tracking): it has no removed pages.")
    selection = selection.appending(include)
    kind = exports.FORMATS[args["format"]]
    headers = {"Content-Disposition": f'attachment; filename="{row.id}.{kind.extension}"',
               "Vary": "Accept-Encoding"}
    _stream_slots()
    batches = read_ahead(db(), collection_id, status=args["status"], include=include)
    try:
        first = next(batches, ())  # here, so that a database failure is a 503, not a cut file
        body = exports.SERIALISERS[args["format"]](itertools.chain([first], batches),
                                                   selection)
        if request.accept_encodings["gzip"] > 0:
            body = exports.gzipped(body)
            headers["Content-Encoding"] = "gzip"
        response = Response(body, content_type=kind.media_type, headers=headers)
    except BaseException:
        batches.close()  # ends the read-ahead thread: the database connection goes back
        raise
    response.call_on_close(batches.close)  # the connection goes back, also on a disconnect
    return response


def _stream_slots() -> None:
    """Check this process streams fewer than :data:`PER_PROCESS` exports, and take one of the
    account's request slots (its plan's ``max_concurrent_requests``) and one of its export
    slots (:mod:`api.inflight`), both held until the answer is sent or its client went away.
    An export holds a connection and two threads while its client reads: without these caps
    one client opening exports and reading nothing would hold every connection of the pool,
    and one account every stream of a server."""
    if live() >= PER_PROCESS:
        raise ApiError("unavailable", "This server is streaming as many exports as it can; "
                                      "retry shortly.", headers={"Retry-After": "5"})
    principal, member, connection = g.principal, f"export:{g.request_id}", redis()
    inflight.hold_until_sent(connection, principal.account_id, member,
                             inflight.EXPORTS_PER_ACCOUNT, lease=EXPORT_LEASE,
                             pool=inflight.EXPORTS)
    inflight.hold_until_sent(connection, principal.account_id, member,
                             principal.max_concurrent_requests, lease=EXPORT_LEASE)
