"""Formats and content options end to end: ``/scrape`` and collections answer markdown, clean
HTML and the raw page as asked, refuse what cannot be used (422 naming it, free), and a
collection's exports have a column per asked format."""

from __future__ import annotations

import csv
import io

import pytest

from tests.conftest import new_customer
from tests.support.collection_stack import all_results, wait_final


def test_scrape_answers_every_asked_format(customer, site):
    response = customer.post("/scrape", {"url": f"{site}/article",
                                         "formats": ["markdown", "html", "raw_html"]})
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["text"] is None  # not asked for: present and null
    assert body["markdown"].startswith("# Tide tables of the Thames estuary\n\n")
    assert "harmonic constants" in body["markdown"]
    assert "<script" not in body["html"] and "harmonic constants" in body["html"]
    assert body["raw_html"].lstrip().lower().startswith("<!doctype html")
    assert body["credits_used"] == 1


def test_scrape_by_default_answers_text_and_null_formats(customer, site):
    body = customer.post("/scrape", {"url": f"{site}/article"}).get_json()
    assert "harmonic constants" in body["text"]
    assert (body["markdown"], body["html"], body["raw_html"]) == (None, None, None)
    keys = list(body)
    assert keys.index("text") < keys.index("markdown") < keys.index("html") < keys.index(
        "raw_html") < keys.index("language")


def test_selectors_and_the_whole_body(customer, site):
    chosen = customer.post("/scrape", {"url": f"{site}/article", "formats": ["markdown"],
                                       "include_selectors": ["h1"]}).get_json()
    assert chosen["markdown"] == "# Tide tables of the Thames estuary"
    whole = customer.post("/scrape", {"url": f"{site}/article", "formats": ["text"],
                                      "only_main_content": False,
                                      "exclude_selectors": ["p"]}).get_json()
    assert "harmonic constants" not in (whole["text"] or "")


@pytest.mark.parametrize(("body", "field", "words"), [
    ({"formats": ["markdown", "pdf"]}, "formats", "Unknown format 'pdf'"),
    ({"formats": []}, "formats", "at least one format"),
    ({"formats": "markdown"}, "formats", "Not a valid list"),
    ({"include_selectors": ["div["]}, "include_selectors", "Not a valid CSS selector"),
    ({"exclude_selectors": ["a:has(b)"]}, "exclude_selectors", ":has() is not supported"),
    ({"exclude_selectors": ["p"] * 21}, "exclude_selectors", "At most 20"),
    ({"include_selectors": ["x" * 501]}, "include_selectors", "at most 500 characters"),
    ({"only_main_content": "no"}, "only_main_content", "Not a valid boolean"),
])
def test_what_cannot_be_used_is_a_free_422_naming_it(customer, site, body, field, words):
    before = customer.balance()
    response = customer.post("/scrape", {"url": f"{site}/article", **body})
    assert response.status_code == 422
    answer = response.get_json()
    assert answer["error"] == "validation_error"
    assert field in answer["errors"] and words in str(answer["errors"][field])
    assert customer.balance() == before


def test_a_batch_with_formats_stores_them_and_exports_their_columns(stack, site):
    who = new_customer(stack.app, credits=10, plan="standard")
    created = who.post("/collections", {"mode": "batch", "urls": [f"{site}/article"],
                                        "formats": ["markdown"],
                                        "exclude_selectors": ["footer"]})
    assert created.status_code == 202, created.get_json()
    collection = created.get_json()["id"]
    assert wait_final(who, collection)["progress"]["succeeded"] == 1
    data = all_results(who, collection)[0]["data"]
    assert data["text"] is None and data["markdown"].startswith("# Tide tables")
    exported = who.get(f"/collections/{collection}/export?format=csv")
    assert exported.status_code == 200
    header, row = list(csv.reader(io.StringIO(exported.get_data(as_text=True))))
    assert "markdown" in header and "text" not in header and "html" not in header
    assert row[header.index("markdown")].startswith("# Tide tables")


def test_a_collection_refuses_options_its_extract_does_not_take(stack, site):
    who = new_customer(stack.app, credits=10, plan="standard")
    response = who.post("/collections", {"mode": "batch", "urls": [f"{site}/article"],
                                         "extract": "contacts", "formats": ["markdown"]})
    assert response.status_code == 422
    assert response.get_json()["errors"]["formats"] == ["Not an option of extract contacts."]


SCHEMA = {"fields": [{"name": "title", "selector": "h1"},
                     {"name": "first_link", "selector": "a", "type": "url"},
                     {"name": "missing", "selector": ".no-such-thing", "default": "n/a"}]}


def test_scrape_reads_records_by_a_schema(customer, site):
    body = customer.post("/scrape", {"url": f"{site}/article", "schema": SCHEMA}).get_json()
    assert body["records"] == [{"title": "Tide tables of the Thames estuary",
                                "first_link": body["records"][0]["first_link"],
                                "missing": "n/a"}]
    assert body["records"][0]["first_link"].startswith(site)
    assert body["credits_used"] == 1
    assert customer.post("/scrape", {"url": f"{site}/article"}).get_json()["records"] is None


@pytest.mark.parametrize(("schema", "words"), [
    ({"fields": []}, "schema.fields: "),
    ({"fields": [{"name": "a", "selector": "div["}]}, "schema.fields[0].selector: "),
    ({"fields": [{"name": "a", "type": "colour"}]}, "schema.fields[0].type: "),
    ({"baseSelector": "li", "fields": [{"name": "a"}]}, "write base_selector"),
    ({"selector_type": "xpath", "fields": [{"name": "a", "selector": "./following::p"}]},
     "schema.fields[0].selector: "),
    ({"fields": [{"name": f"f{i}", "selector": "p" * 700} for i in range(100)]}, "65,536 bytes"),
    ("not an object", "schema"),
])
def test_a_bad_schema_is_a_free_422_saying_where(customer, site, schema, words):
    before = customer.balance()
    response = customer.post("/scrape", {"url": f"{site}/article", "schema": schema})
    assert response.status_code == 422, response.get_json()
    assert words in str(response.get_json()["errors"]["schema"])
    assert customer.balance() == before


def test_a_schema_collection_stores_records_and_needs_its_schema(stack, site):
    who = new_customer(stack.app, credits=10, plan="standard")
    missing = who.post("/collections", {"mode": "batch", "urls": [f"{site}/article"],
                                        "extract": "schema"})
    assert missing.status_code == 422
    assert missing.get_json()["errors"]["schema"] == ["Missing data for required field."]
    created = who.post("/collections", {"mode": "batch", "urls": [f"{site}/article"],
                                        "extract": "schema", "schema": SCHEMA})
    assert created.status_code == 202, created.get_json()
    collection = created.get_json()["id"]
    assert wait_final(who, collection)["progress"]["succeeded"] == 1
    [result] = all_results(who, collection)
    assert result["data"] == {"records": [{"title": "Tide tables of the Thames estuary",
                                           "first_link": result["data"]["records"][0][
                                               "first_link"], "missing": "n/a"}]}
    exported = who.get(f"/collections/{collection}/export?format=csv")
    header, row = list(csv.reader(io.StringIO(exported.get_data(as_text=True))))
    assert header[-1] == "records" and "Tide tables" in row[-1]


def test_batch_code_jobs_take_the_same_options(redis_url, workers, site):
    """``worker.jobs.scrape`` enqueued by batch code: the options as the API takes them; a
    value the API would refuse fails the page (validation_error) and fetches nothing."""
    from redis import Redis
    from rq import Queue

    from worker import jobs, queues

    queue = Queue(queues.INTERACTIVE, connection=Redis.from_url(redis_url),
                  serializer=queues.SERIALIZER)
    done = queue.enqueue(jobs.scrape, f"{site}/article", formats=["markdown"],
                         exclude_selectors=["footer"]).latest_result(timeout=60)
    assert done is not None
    page = done.return_value
    assert page["status"] == "succeeded" and page["data"]["markdown"].startswith("# Tide")
    refused = queue.enqueue(jobs.scrape, f"{site}/article",
                            include_selectors=["a:hover"]).latest_result(timeout=60)
    assert refused is not None
    error = refused.return_value["error"]
    assert error["error"] == "validation_error" and "include_selectors" in error["message"]
