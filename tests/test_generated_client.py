"""A client generated from ``/openapi.json`` with ``openapi-python-client``, as a new user
makes one, calls every operation of the document against a real stack over HTTP (workers
fetching the test site, a fake search provider), and every answer, errors included, parses
into the generated models, whole and with the types they declare
(tests/support/generated_client.py).

Where the generated client and the API disagree, the document is fixed (api/schemas/,
api/openapi.py), never the generated code. An operation added to the document without a call
here fails the test, named."""

from __future__ import annotations

import csv
import io
import json
import os
import shlex
import subprocess
import sys
import types
import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis import Redis

from api import create_app
from collecting.monitors import run_due
from tests.conftest import Customer, make_config, new_customer
from tests.support.collection_stack import FINAL, Stack, served
from tests.support.docs import doc_code
from tests.support.generated_client import (
    Caller,
    assert_parsed,
    generate,
    imported,
    operation_ids,
)
from tests.support.waits import wait_until

pytest_plugins = ["tests.support.fakes.fixtures"]

BASE = "/api/service/v1"
#: The API's address in docs/api.md's examples.
DOCUMENTED_URL = "http://127.0.0.1:8000"
VIDEO = "https://www.youtube.com/watch?v=pUbLiC_vid1"
#: A selector schema: the records of a page.
SCHEMA = {"fields": [{"name": "title", "selector": "h1"},
                     {"name": "first_link", "selector": "a", "type": "url"}]}


@pytest.fixture(scope="module")
def stack(tmp_path_factory, sqlite_url, site, fakes) -> Iterator[Stack]:
    """The collection stack, its API searching through the fake SearXNG."""
    stack = Stack(tmp_path_factory.mktemp("stack"), sqlite_url, site,
                  searxng_url=fakes["searxng"].url)
    yield stack
    stack.close()


@pytest.fixture(scope="module")
def document(service) -> dict[str, Any]:
    """The stack's OpenAPI document, as served."""
    answer = httpx.get(f"{service}{BASE}/openapi.json", timeout=30)
    assert answer.status_code == 200
    return answer.json()


def documented_command(service: str) -> list[str]:
    """The arguments of docs/api.md's ``openapi-python-client`` command, for ``service``."""
    block = doc_code("docs/api.md", "Generated clients", "sh").replace("\\\n", " ")
    line = next(line for line in block.splitlines()
                if line.startswith("openapi-python-client generate"))
    assert DOCUMENTED_URL in line
    return shlex.split(line.replace(DOCUMENTED_URL, service))[1:]


@pytest.fixture(scope="module")
def generated(service, tmp_path_factory) -> Iterator[types.ModuleType]:
    """The package docs/api.md's command generates from the stack's document, built once for
    the module, imported."""
    directory = tmp_path_factory.mktemp("generated")
    arguments = documented_command(service)
    generate(arguments, directory)
    with imported(directory, arguments[arguments.index("--output-path") + 1]) as package:
        yield package


def caller(generated: types.ModuleType, service: str, who: Customer) -> Caller:
    """The generated client as ``who``; an answer of a status the document does not list
    raises."""
    return Caller(generated, generated.AuthenticatedClient(
        base_url=service, token=who.key, timeout=httpx.Timeout(120),
        raise_on_unexpected_status=True))


def test_every_operation_answers_what_the_generated_client_parses(
        stack, service, site, document, generated):
    """Every operation of the document, through the documented generated client."""
    who = new_customer(stack.app, credits=1000, plan="standard")
    call = caller(generated, service, who)
    pages(call, site)
    search(call)
    account(call)
    collections(call, site)
    monitors(call, stack, site)
    errors(call, generated, service, stack, who)
    the_documented_snippet(generated, service, site, who)
    missing = operation_ids(document) - call.called
    assert not missing, ("operations of the document that no call of this test exercises "
                         f"(add them here): {', '.join(sorted(missing))}")


def pages(call: Caller, site: str) -> None:
    """The single-page operations with their options, and the health check."""
    m = call.model
    call("getHealth", m("Health"))
    scraped = call("scrape", m("ScrapeResponse"), body=m("ScrapeRequest")(
        url=f"{site}/article", formats=[m("ScrapeRequestFormatsItem")("markdown")],
        schema=m("ScrapeRequestSchemaType0").from_dict(SCHEMA)))
    assert scraped.markdown and scraped.records and scraped.metadata.author == "Ada Marsh"
    bare = m("ScrapeRequest")(
        url=f"{site}/article", include_links=False, include_metadata=False,
        only_main_content=False, exclude_selectors=["nav"], max_age=3600,
        formats=[m("ScrapeRequestFormatsItem")(name) for name in ("text", "html", "raw_html")])
    fetched = call("scrape", m("ScrapeResponse"), body=bare)
    assert fetched.metadata is None and fetched.html and fetched.raw_html
    cached: list[Any] = []  # the answer is kept just after it is sent: asked until it is

    def kept() -> bool:
        cached[:] = [call("scrape", m("ScrapeResponse"), body=bare)]
        return cached[0].cached

    wait_until(kept, "the page cache to answer", timeout=30, pause=0.2)
    assert cached[0].cached_at
    contacts = call("findContacts", m("ContactsResponse"), body=m("UrlRequest")(
        url=f"{site}/contact"))
    assert contacts.emails and contacts.phones
    products = call("extractProducts", m("ProductsResponse"), body=m("UrlRequest")(
        url=f"{site}/product"))
    assert products.products and products.products[0].offers
    none = call("extractProducts", m("ProductsResponse"), body=m("UrlRequest")(
        url=f"{site}/nothing"))
    assert none.products == []
    video = call("getVideo", m("VideoResponse"), body=m("UrlRequest")(url=VIDEO))
    assert video.video_id == "pUbLiC_vid1" and video.captions.tracks
    mapped = call("mapSite", m("MapResponse"), body=m("MapRequest")(url=f"{site}/site/"))
    assert mapped.links
    call("mapSite", m("MapResponse"), body=m("MapRequest")(
        url=f"{site}/site/", search="a", sitemap=m("MapRequestSitemap")("skip")))


def search(call: Caller) -> None:
    m = call.model
    for operation, answer in [("searchWeb", "SearchResponse"),
                              ("searchNews", "NewsSearchResponse"),
                              ("searchVideos", "VideoSearchResponse")]:
        found = call(operation, m(answer), body=m("SearchRequest")(query="tides", limit=3))
        assert found.results, operation


def account(call: Caller) -> None:
    m = call.model
    assert call("getAccount", m("Account")).credits_.balance > 0
    page = call("listActivity", m("ActivityPage"), limit=3)
    assert len(page.activity) == 3 and page.next_cursor
    call("listActivity", m("ActivityPage"), cursor=page.next_cursor)
    call("rotateWebhookSecret", m("WebhookSecret"))
    rotated = call("rotateWebhookSecret", m("WebhookSecret"))
    assert rotated.previous_secret_expires_at
    updated = call("updateAccount", m("Account"), body=m("AccountUpdate")(
        low_balance_threshold=5))
    assert updated.low_balance_threshold == 5
    cleared = call("updateAccount", m("Account"), body=m("AccountUpdate")(
        low_balance_threshold=None))
    assert cleared.low_balance_threshold is None


def collections(call: Caller, site: str) -> None:
    """A batch with change tracking, a crawl that skips URLs, a cancelled batch: their
    listing, results (whole and with ``fields``), skipped URLs, changes and exports."""
    m = call.model
    tag = uuid.uuid4().hex[:8]
    batch = call("createCollection", m("Collection"), 202, body=m("CollectionRequest")(
        mode=m("CollectionRequestMode")("batch"), urls=[f"{site}/article", f"{site}/missing"],
        change_tracking=m("ChangeTracking")(tag=tag)))
    crawl = call("createCollection", m("Collection"), 202, body=m("CollectionRequest")(
        mode=m("CollectionRequestMode")("crawl"), url=f"{site}/site/", max_pages=2,
        extract=m("CollectionRequestExtract")("contacts")))
    done = final(call, batch.id)
    final(call, crawl.id)
    assert done.progress.changes.new == 1 and done.webhook is None
    listed = call("listCollections", m("CollectionPage"), limit=1)
    assert len(listed.collections) == 1 and listed.next_cursor
    whole = call("listCollectionResults", m("ResultsPage"), collection_id=batch.id)
    assert {result.status for result in whole.results} == {"succeeded", "failed"}
    assert all(isinstance(result, m("Result")) for result in whole.results)
    picked = call("listCollectionResults", m("ResultsPage"), collection_id=batch.id,
                  fields="url,data.title", status=m("ListCollectionResultsStatus")("succeeded"))
    assert [type(result) for result in picked.results] == [m("SelectedResult")]
    assert picked.results[0].data.additional_properties == {
        "title": "Tide tables of the Thames estuary"}
    call("listCollectionResults", m("ResultsPage"), collection_id=crawl.id, limit=1)
    skipped = call("listCollectionSkipped", m("SkippedPage"), collection_id=crawl.id,
                   reason=m("ListCollectionSkippedReason")("limit"))
    assert skipped.skipped and {url.reason for url in skipped.skipped} == {"limit"}
    exports(call, batch.id, crawl.id)
    changes(call, site, tag, crawl.id)

    slow = call("createCollection", m("Collection"), 202, body=m("CollectionRequest")(
        mode=m("CollectionRequestMode")("batch"),
        urls=[f"{site}/slow/generated-{tag}-{n}?ms=3000" for n in range(6)]))
    call("cancelCollection", m("Collection"), collection_id=slow.id)
    assert final(call, slow.id).status == "cancelled"
    refused = call("cancelCollection", m("Error"), 409, collection_id=batch.id)
    assert refused.error == "conflict"


def changes(call: Caller, site: str, tag: str, untracked_id: str) -> None:
    """The tag's next batch: a page new, the article removed (not in the batch); its changes,
    and its export with the removed pages."""
    m = call.model
    again = call("createCollection", m("Collection"), 202, body=m("CollectionRequest")(
        mode=m("CollectionRequestMode")("batch"), urls=[f"{site}/contact"],
        change_tracking=m("ChangeTracking")(tag=tag)))
    assert final(call, again.id).progress.changes.removed == 1
    listed = call("listCollectionChanges", m("ChangesPage"), collection_id=again.id)
    assert sorted(change.status for change in listed.changes) == ["new", "removed"]
    call("listCollectionChanges", m("ChangesPage"), collection_id=again.id, status="same,new",
         limit=1)
    refused = call("listCollectionChanges", m("Error"), 409, collection_id=untracked_id)
    assert refused.error == "conflict"
    form = m("ExportCollectionResultsFormat")
    as_json = call("exportCollectionResults", str, collection_id=again.id, format_=form("json"),
                   include="removed")
    assert [type(row).__name__ for row in rows(call, json.loads(as_json))] == [
        "Result", "ExportedRemoved"]


def exports(call: Caller, batch_id: str, crawl_id: str) -> None:
    """Every format is a text the generated client hands over; its JSON items are what the
    document's ``application/json`` body says (``anyOf`` a whole result, a skipped URL, a
    removed page, a result with the keys ``fields`` named)."""
    form = call.model("ExportCollectionResultsFormat")
    as_json = call("exportCollectionResults", str, collection_id=batch_id, format_=form("json"))
    assert [type(row) for row in rows(call, json.loads(as_json))] == [call.model("Result")] * 2
    as_lines = call("exportCollectionResults", str, collection_id=crawl_id,
                    format_=form("jsonl"), fields="url,status", include="skipped")
    kinds = {type(row).__name__ for row in rows(call, [
        json.loads(line) for line in as_lines.splitlines()])}
    assert kinds == {"SelectedResult", "ExportedSkipped"}
    as_csv = call("exportCollectionResults", str, collection_id=crawl_id, format_=form("csv"),
                  include="skipped")
    table = list(csv.DictReader(io.StringIO(as_csv)))
    assert "skipped" in {row["status"] for row in table} and "reason" in table[0]


def rows(call: Caller, items: list[dict[str, Any]]) -> list[Any]:
    """Each item of a JSON export parsed as the first model of its ``anyOf`` that reads it,
    as generated code reads an ``anyOf``."""
    parsed = []
    for item in items:
        for name in ("Result", "ExportedSkipped", "ExportedRemoved", "SelectedResult"):
            try:
                row = call.model(name).from_dict(item)
            except (KeyError, TypeError, ValueError, AttributeError):
                continue
            assert_parsed(row, item, call.package, f"export: {name}")
            parsed.append(row)
            break
        else:
            raise AssertionError(f"no model of the export reads {item}")
    return parsed


def monitors(call: Caller, stack: Stack, site: str) -> None:
    """A monitor created, run once (the scheduler's job called at its due time), listed,
    changed, paused and deleted."""
    m = call.model
    created = call("createMonitor", m("Monitor"), 201, body=m("MonitorRequest")(
        name="Generated", schedule=m("Schedule")(every=300),
        collection=m("CollectionRequest")(mode=m("CollectionRequestMode")("batch"),
                                          urls=[f"{site}/article"])))
    assert created.runs == [] and created.status == "active"
    due = datetime.fromisoformat(created.next_run_at.replace("Z", "+00:00"))
    report = run_due(stack.app.extensions["webdata.db"], Redis.from_url(stack.redis_url),
                     stack.config, now=due)
    assert report.get(created.id) == "started"
    final(call, call("getMonitor", m("Monitor"), monitor_id=created.id).runs[0].collection_id)
    shown = call("getMonitor", m("Monitor"), monitor_id=created.id)
    assert shown.runs[0].status == "completed" and shown.runs[0].changes.new == 1
    listed = call("listMonitors", m("MonitorList"))
    assert [monitor.id for monitor in listed.monitors] == [created.id]
    paused = call("updateMonitor", m("Monitor"), monitor_id=created.id, body=m("MonitorUpdate")(
        status=m("MonitorUpdateStatus")("paused"), schedule=m("Schedule")(cron="0 6 * * 1")))
    assert paused.status == "paused" and paused.next_run_at is None
    assert call("deleteMonitor", m("MonitorDeleted"), monitor_id=created.id).deleted is True
    call("getMonitor", m("Error"), 404, monitor_id=created.id)


def errors(call: Caller, generated: types.ModuleType, service: str, stack: Stack,
           who: Customer) -> None:
    """Errors of several layers (authentication, validation, source policy, credits, a
    lookup, a deployment without search) parse as the one Error model."""
    m = call.model
    missing = call("getCollection", m("Error"), 404, collection_id="col_nothing")
    assert missing.error == "not_found" and missing.code == 404
    invalid = call("scrape", m("Error"), 422, body=m("ScrapeRequest")(url="not a URL"))
    assert invalid.error == "validation_error" and invalid.errors.additional_properties["url"]
    refused = call("scrape", m("Error"), 403, body=m("ScrapeRequest")(
        url="http://169.254.169.254/latest/meta-data/"))
    assert refused.error == "source_policy" and refused.details.target_status is None
    broke = caller(generated, service, new_customer(stack.app, credits=0, plan="standard"))
    poor = call("findContacts", m("Error"), 402, client=broke.client,
                body=m("UrlRequest")(url="https://example.com/"))
    assert poor.error == "insufficient_credits"
    stranger = generated.AuthenticatedClient(base_url=service, token="wdp_" + "0" * 43,
                                             raise_on_unexpected_status=True)
    assert call("getAccount", m("Error"), 401, client=stranger).error == "unauthorized"
    with served(create_app(make_config(stack.database_url, stack.redis_url))) as plain:
        unconfigured = call("searchNews", m("Error"), 503, client=caller(
            generated, plain, who).client, body=m("SearchRequest")(query="tides"))
    assert unconfigured.error == "search_not_configured"


def the_documented_snippet(generated: types.ModuleType, service: str, site: str,
                           who: Customer) -> None:
    """docs/api.md's example of the generated client, as written but for its addresses, run
    beside the package (as after the documented command)."""
    code = doc_code("docs/api.md", "Generated clients", "python")
    assert DOCUMENTED_URL in code and '"https://example.com/"' in code
    code = code.replace(DOCUMENTED_URL, service).replace('"https://example.com/"',
                                                         json.dumps(f"{site}/article"))
    run = subprocess.run([sys.executable, "-c", code], cwd=Path(generated.__file__).parent.parent,
                         env={**os.environ, "WEBDATA_API_KEY": who.key}, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "Tide tables of the Thames estuary\n"


def final(call: Caller, collection_id: str) -> Any:
    """The collection once it is final, read through the generated client."""
    found: list[Any] = []

    def ended() -> bool:
        found[:] = [call("getCollection", call.model("Collection"),
                         collection_id=collection_id)]
        return found[0].status in FINAL

    wait_until(ended, f"collection {collection_id} to end", timeout=120, pause=0.2)
    return found[0]
