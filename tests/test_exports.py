"""The export's serialisers (``api.exports``), without a server: rows as the database gives
them in, bytes out. JSON is the results endpoint's objects; CSV reads back with any CSV reader,
its columns fixed per extract, nested values as JSON text, formulas neutralised."""

from __future__ import annotations

import csv
import io
import json
import unicodedata
import zlib

import hypothesis
import pytest
from hypothesis import strategies as st

from api import exports
from core.formats import csv_cell
from storage.collection_results import body as result_body
from storage.exports import Appended, ExportRow
from storage.models import CollectionResult

COMMON = ("url", "final_url", "status", "status_code", "fetched_at", "error", "error_message")
ERROR = {"error": "target_http_error", "message": 'The target answered 404, "Not Found".',
         "details": {"url": "http://a.test/x", "target_status": 404}}
DATA = {"title": "Tides", "text": "Twice a day.\n\nAnd again, ümlaut.", "language": "en",
        "links": [{"url": "http://a.test/b", "text": "b", "rel": None, "internal": True}],
        "metadata": {"description": None, "keywords": ["sea", "tide"], "json_ld": [{"a": -1}]}}
SETTINGS = hypothesis.settings(max_examples=200, deadline=None, derandomize=True,
                               database=None)


def row(n: int = 1, *, data: dict | None = DATA, error: dict | None = None) -> ExportRow:
    """A stored row, as storage.collection_store.store writes one (JSON text columns)."""
    return ExportRow(url=f"http://a.test/{n}", final_url=f"http://a.test/{n}" if data else None,
                     status="succeeded" if error is None else "failed",
                     status_code=200 if data else None, fetched_at="2026-11-23T04:30:00Z",
                     error=json.dumps(error) if error is not None else None,
                     data=json.dumps(data) if data is not None else None)


def body(stored: ExportRow) -> dict:
    """What the results endpoint answers for the same row."""
    return result_body(CollectionResult(**stored._asdict()))


def chunks_of(serialiser, rows, selection, batch: int = 2) -> bytes:
    batches = (rows[i:i + batch] for i in range(0, len(rows), batch))
    return b"".join(serialiser(batches, selection))


def read_csv(payload: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(payload.decode("utf-8"), newline="")))


ROWS = [row(1), row(2, data=None, error=ERROR), row(3)]


def test_the_csv_columns_are_fixed_per_extract():
    assert exports.csv_columns("page") == (*COMMON, "title", "text", "markdown", "html",
                                           "raw_html", "language", "links", "metadata", "records")
    assert exports.unasked("page", {}) == {"markdown", "html", "raw_html", "records"}
    asked = exports.unasked("page", {"options": {"formats": ["markdown"], "schema": {}}})
    assert asked == {"text", "html", "raw_html"}
    assert exports.csv_columns("page", asked) == (
        *COMMON, "title", "markdown", "language", "links", "metadata", "records")
    assert exports.unasked("schema", {"options": {"schema": {}}}) == set()
    assert exports.csv_columns("contacts") == (*COMMON, "emails", "phones", "social_links",
                                               "organization", "suggested_pages")
    assert exports.csv_columns("products") == (*COMMON, "products")
    assert exports.csv_columns("schema") == (*COMMON, "records")


def test_fields_pick_keys_and_columns_in_the_order_asked():
    selection = exports.select("page", ["data.title", "status", "error", "url", "status"])
    assert selection.keys == ("data", "status", "error", "url")
    assert selection.data_keys == ("title",)
    assert selection.columns == ("title", "status", "error", "error_message", "url")
    whole = exports.select("products", ["data.products", "data"])
    assert whole.data_keys is None and whole.columns == ("products",)


@pytest.mark.parametrize(("extract", "names", "unknown"), [
    ("page", ["url", "title", "data.nope"], ("title", "data.nope")),
    ("page", ["data.products"], ("data.products",)),  # a products collection's key
    ("contacts", ["data.", "error_message"], ("data.", "error_message")),
])
def test_unknown_fields_are_named(extract, names, unknown):
    with pytest.raises(exports.UnknownFields) as raised:
        exports.select(extract, names)
    assert raised.value.names == unknown
    assert all(name in str(raised.value) for name in unknown)


def test_json_and_json_lines_are_the_results_endpoint_objects():
    everything = exports.select("page")
    expected = [body(r) for r in ROWS]
    assert json.loads(chunks_of(exports.json_array, ROWS, everything)) == expected
    lines = chunks_of(exports.json_lines, ROWS, everything).decode().splitlines()
    assert [json.loads(line) for line in lines] == expected
    assert json.loads(chunks_of(exports.json_array, [], everything)) == []
    assert chunks_of(exports.json_lines, [], everything) == b""


def test_json_fields_keep_only_what_was_asked():
    selection = exports.select("page", ["url", "data.title", "data.language", "error"])
    objects = json.loads(chunks_of(exports.json_array, ROWS, selection))
    assert objects[0] == {"url": "http://a.test/1", "data": {"title": "Tides", "language": "en"},
                          "error": None}
    assert objects[1]["data"] is None
    assert objects[1]["error"] == {"error": ERROR["error"], "message": ERROR["message"]}
    assert objects == [exports.pick(body(r), selection) for r in ROWS]


def test_csv_has_a_header_and_one_row_a_page_with_nested_values_as_json_text():
    table = read_csv(chunks_of(exports.csv_table, ROWS, exports.select("page")))
    header, first, failed = table[0], table[1], table[2]
    assert tuple(header) == exports.csv_columns("page") and len(table) == 4
    cells = dict(zip(header, first, strict=True))
    assert cells["status_code"] == "200" and cells["error"] == cells["error_message"] == ""
    assert cells["text"] == DATA["text"]  # newlines and non-ASCII kept inside the cell
    assert json.loads(cells["links"]) == DATA["links"]
    assert json.loads(cells["metadata"]) == DATA["metadata"]
    failure = dict(zip(header, failed, strict=True))
    assert (failure["error"], failure["error_message"]) == (ERROR["error"], ERROR["message"])
    assert failure["title"] == failure["links"] == failure["final_url"] == ""


SKIPS = Appended("skipped", [("http://a.test/=x?a,b", "robots", None),
                             ("http://a.test/d", "duplicate", "http://a.test/1")])
REMOVED = Appended("removed", [("http://a.test/gone", "2026-11-01T00:00:00Z")])


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_skipped_and_removed_urls_follow_the_results_as_their_endpoints_list_them(fmt):
    selection = exports.select("page", ["url", "data.title"]).appending({"skipped", "removed"})
    batches = [ROWS[:2], ROWS[2:], SKIPS, REMOVED]
    text = b"".join(exports.SERIALISERS[fmt](iter(batches), selection)).decode()
    objects = json.loads(text) if fmt == "json" else [json.loads(x) for x in text.splitlines()]
    assert objects[:3] == [exports.pick(body(r), selection) for r in ROWS]
    assert objects[3:] == [
        {"url": "http://a.test/=x?a,b", "status": "skipped", "reason": "robots",
         "duplicate_of": None},
        {"url": "http://a.test/d", "status": "skipped", "reason": "duplicate",
         "duplicate_of": "http://a.test/1"},
        {"url": "http://a.test/gone", "status": "removed",
         "previous_fetched_at": "2026-11-01T00:00:00Z"}]


def test_skipped_and_removed_urls_in_a_csv_fill_their_own_columns():
    selection = exports.select("page", ["status", "url", "data.title"]).appending(
        {"removed", "skipped"})
    table = read_csv(b"".join(exports.csv_table(iter([ROWS, SKIPS, REMOVED]), selection)))
    assert table[0] == ["status", "url", "title", "reason", "duplicate_of",
                        "previous_fetched_at"]
    assert table[1] == ["succeeded", "http://a.test/1", "Tides", "", "", ""]
    assert table[4:] == [["skipped", "http://a.test/=x?a,b", "", "robots", "", ""],
                         ["skipped", "http://a.test/d", "", "duplicate", "http://a.test/1", ""],
                         ["removed", "http://a.test/gone", "", "", "", "2026-11-01T00:00:00Z"]]
    assert exports.select("page").appending({"skipped"}).columns == (
        *exports.csv_columns("page"), "reason", "duplicate_of")
    # a tracked collection's CSV has the column already: a removed page fills that one
    tracked = exports.select("page", tracked=True)
    assert tracked.appending({"removed"}).columns == tracked.columns
    line = exports.appended_line("removed", REMOVED[0], tracked.columns)
    cells = dict(zip(tracked.columns, read_csv(line.encode())[0], strict=True))
    assert {k: v for k, v in cells.items() if v} == {
        "url": "http://a.test/gone", "status": "removed",
        "previous_fetched_at": "2026-11-01T00:00:00Z"}


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_formula_cells_are_neutralised(start):
    hostile = f"{start}HYPERLINK(\"http://evil.test/\",\"click\")"
    data = {**DATA, "title": hostile, "language": start}
    table = read_csv(chunks_of(exports.csv_table, [row(1, data=data)], exports.select("page")))
    cells = dict(zip(table[0], table[1], strict=True))
    assert cells["title"] == "'" + hostile and cells["language"] == "'" + start
    assert json.loads(cells["metadata"]) == DATA["metadata"]  # JSON text starts with {


#: What may stand unseen before a formula: zero-width space, non-joiner and joiner, word joiner,
#: byte order mark, a left-to-right mark, NBSP, an ideographic space, and a mix of them.
INVISIBLE_PREFIXES = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u200e", "\xa0",
                      "\u3000", " ", "\n", "\u200b\xa0\ufeff"]


@pytest.mark.parametrize("prefix", INVISIBLE_PREFIXES)
@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_a_formula_behind_invisible_characters_is_neutralised(prefix, start):
    hostile = f"{prefix}{start}HYPERLINK(\"http://evil.test/\",\"click\")"
    assert csv_cell(hostile) == "'" + hostile
    data = {**DATA, "title": hostile, "text": f"{prefix}Tides{start}"}
    table = read_csv(chunks_of(exports.csv_table, [row(1, data=data)], exports.select("page")))
    cells = dict(zip(table[0], table[1], strict=True))
    assert cells["title"] == "'" + hostile
    assert cells["text"] == data["text"]  # a visible letter first: text as it was


def neutralised(text: str) -> bool:
    """Whether a cell must be quoted, said another way than ``csv_cell`` says it: the text
    stripped of its leading whitespace and format characters (not tab, not CR) starts a
    formula."""
    invisible = "".join(char for char in set(text) if char not in "\t\r"
                        and (char.isspace() or unicodedata.category(char) == "Cf"))
    return text.lstrip(invisible).startswith(("=", "+", "-", "@", "\t", "\r"))


def test_a_lone_empty_cell_is_not_a_blank_line():
    payload = chunks_of(exports.csv_table, ROWS, exports.select("page", ["final_url"]))
    assert read_csv(payload) == [["final_url"], ["http://a.test/1"], [""], ["http://a.test/3"]]


#: Text that often starts with what the guard looks past, then maybe a formula.
_CELL_TEXT = st.one_of(st.text(), st.builds(
    str.__add__, st.text(st.sampled_from(["\u200b", "\ufeff", "\u2060", "\xa0", " ", "\t",
                                          "\n", "\r", "="])), st.text()))


@SETTINGS
@hypothesis.given(texts=st.lists(_CELL_TEXT, min_size=3, max_size=3),
                  nested=st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                                      lambda inner: st.lists(inner, max_size=3)
                                      | st.dictionaries(st.text(), inner, max_size=3),
                                      max_leaves=8))
def test_any_text_reads_back_from_the_csv(texts, nested):
    """Whatever a page holds (quotes, commas, CR, LF, NUL-free Unicode), a CSV reader gets
    the cell back: the text itself, or neutralised, and nested values as their JSON."""
    texts = [text.replace("\x00", "") for text in texts]
    data = {"title": texts[0], "text": texts[1], "language": texts[2], "links": [nested],
            "metadata": {"x": nested}}
    table = read_csv(chunks_of(exports.csv_table, [row(1, data=data)], exports.select("page")))
    assert len(table) == 2
    cells = dict(zip(table[0], table[1], strict=True))
    for column, text in zip(("title", "text", "language"), texts, strict=True):
        assert cells[column] == ("'" + text if neutralised(text) else text)
    assert json.loads(cells["links"]) == [nested]
    assert json.loads(cells["metadata"]) == {"x": nested}


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(), inner, max_size=3), max_leaves=10)


@SETTINGS
@hypothesis.given(data=st.dictionaries(st.text(), JSON, max_size=6))
def test_nested_cells_cut_from_the_stored_json_are_what_encoding_them_gives(data):
    """The CSV takes a nested value's JSON text from the stored JSON instead of encoding the
    value again: the same text, also for non-ASCII, escapes, big integers and odd floats."""
    expected = {key: exports._json_text(value) for key, value in data.items()}
    assert exports._member_texts(json.dumps(data)) == expected
    spaced = exports._member_texts(json.dumps(data, indent=2))  # not json.dumps' usual form

    def decoded(texts: dict) -> str:
        return json.dumps({key: text if text is None or isinstance(data[key], str)
                           else json.loads(text) for key, text in texts.items()})

    assert decoded(spaced) == decoded(expected)  # other whitespace, the same JSON


def test_gzip_streams_every_chunk_as_it_comes():
    chunks = [b"[", b'{"a": 1}' * 1000, b"]"]
    pieces = list(exports.gzipped(iter(chunks)))
    assert zlib.decompress(b"".join(pieces), 31) == b"".join(chunks)
    reader = zlib.decompressobj(31)
    assert reader.decompress(pieces[0]) == b"["  # flushed: readable before the rest exists
