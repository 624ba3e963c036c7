"""A collection's results in the console: each page's URL, status or error, and its content
in each format the collection asked for, as text (never the page's markup rendered: the
markdown, the clean HTML and the raw HTML are escaped like any other text), each with a Copy
button; what other extracts give, as JSON.

Results are read as the API's ``GET …/results`` reads them (:mod:`storage.collection_results`),
a few at a time in completion order, and each shown text is cut at :data:`SHOWN_CHARACTERS`
(the downloads have all of it): a page of the console stays small whatever the pages were.
"""

from __future__ import annotations

import json
from typing import Any

from flask import render_template, request

from api import exports
from api.console import blp
from api.console.collection_pages import FORMAT_LABELS
from api.cursors import MAX_ROW_ID
from api.exports import FORMATS
from api.extensions import db
from api.resources import collection_routes as api_collections
from core.operations import EXTRACTIONS, FORMAT_FIELDS
from storage import collection_results, collections
from storage.models import LIVE_STATUSES

#: Results a page of the console shows.
RESULTS_PAGE = 10
#: Bytes of stored results a page reads at most (past its first result, always shown).
RESULTS_PAGE_BYTES = 4 * 1024 * 1024
#: Characters of one text (a format, a JSON of data) shown; the download has the rest.
SHOWN_CHARACTERS = 100_000


@blp.route("/collections/<collection_id>")
def collection_page(collection_id: str) -> Any:
    """The results of the account's collection, :data:`RESULTS_PAGE` at a time after the
    position ``after`` (404 for another account's, 410 once expired)."""
    row = api_collections.readable(collection_id)
    after = request.args.get("after", type=int) or 0
    if not 0 <= after < MAX_ROW_ID:
        after = 0
    rows, more = collection_results.page(db(), row.id, after=after, limit=RESULTS_PAGE,
                                         max_bytes=RESULTS_PAGE_BYTES)
    spec = collections.spec_of(row)
    unasked = exports.unasked(row.extract, spec)
    asked = (tuple(name for name in FORMAT_FIELDS if name not in unasked)
             if any(option.name == "formats" for option in EXTRACTIONS[row.extract].options)
             else None)
    return render_template(
        "console/collection.html", c=api_collections.body(row),
        results=[_shown(collection_results.body(result), asked) for result in rows],
        asked=asked, options=spec.get("options") or {},
        format_labels={**FORMAT_LABELS, "records": "Records (JSON)"},
        next_after=more, first=after == 0, live=row.status in LIVE_STATUSES,
        export_formats=list(FORMATS), shown_characters=SHOWN_CHARACTERS)


def _shown(result: dict[str, Any], asked: tuple[str, ...] | None) -> dict[str, Any]:
    """A result as the page shows it: ``texts``, (name, text or None, its length) for each
    asked format, or for the JSON of another extract's data."""
    data = result["data"]
    texts: list[tuple[str, str | None, int]] = []
    if data is not None and asked is not None:
        texts = [_cut(name, data.get(name)) for name in asked]
        if data.get("records") is not None:  # a page's records by the collection's schema
            texts.append(_cut("records", json.dumps(data["records"], indent=2,
                                                    ensure_ascii=False)))
    elif data is not None:
        texts = [_cut("data", json.dumps(data, indent=2, ensure_ascii=False))]
    return {**result, "title": (data or {}).get("title"), "texts": texts}


def _cut(name: str, text: str | None) -> tuple[str, str | None, int]:
    return name, (text[:SHOWN_CHARACTERS] if text else None), len(text or "")
