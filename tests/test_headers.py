"""The security headers of each kind of answer: ``nosniff`` on all of them (API JSON, errors,
exports, openapi.json, the docs page and its files, the console), and on the two HTML faces
(the docs page, the console) a Content-Security-Policy that runs scripts from this server
only, none inline, and forbids framing."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from storage import collections
from storage.models import CollectionStatus
from tests.conftest import new_customer
from tests.test_console import signed_in

BASE = "/api/service/v1"
#: The console's headers, as they were before they were declared with the docs page's.
CONSOLE = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"),
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
}
#: A script element: its attributes and what it holds.
SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script>", re.S | re.I)


def _exported_collection(app, who) -> str:
    """A finished, empty collection of ``who``'s (written through storage, no crawl)."""
    db = app.extensions["webdata.db"]
    made = collections.create(db, account_id=who.account_id, mode="batch", extract="page",
                              spec={"urls": []}, max_running=5)
    collections.finish(db, made.id, CollectionStatus.COMPLETED, retention=timedelta(days=1))
    return made.id


def test_every_kind_of_api_answer_says_nosniff(app):
    who = new_customer(app)
    client = app.test_client()
    collection_id = _exported_collection(app, who)
    answers = {
        "json": who.get("/account"),
        "401": client.get(f"{BASE}/account"),
        "404": client.get(f"{BASE}/no-such-thing"),
        "405": client.put(f"{BASE}/scrape"),
        "422": who.post("/scrape", {"url": 3}),
        "export csv": who.get(f"/collections/{collection_id}/export?format=csv"),
        "export json": who.get(f"/collections/{collection_id}/export?format=json"),
        "openapi.json": client.get(f"{BASE}/openapi.json"),
        "healthz": client.get("/healthz"),
        "docs": client.get(f"{BASE}/docs"),
        # buffered: a file's answer is read and closed (it holds the file open until then)
        "docs asset": client.get(f"{BASE}/docs/assets/swagger-ui.css", buffered=True),
        "docs script": client.get(f"{BASE}/docs/init.js", buffered=True),
        "docs asset 404": client.get(f"{BASE}/docs/assets/nope.js"),
    }
    for kind, answer in answers.items():
        assert answer.headers.get("X-Content-Type-Options") == "nosniff", (kind, answer.status)
    assert answers["export csv"].mimetype == "text/csv"
    assert answers["docs asset"].mimetype == "text/css"
    assert answers["docs script"].mimetype == "text/javascript"


def test_the_docs_page_runs_only_this_servers_scripts_and_cannot_be_framed(app):
    client = app.test_client()
    answer = client.get(f"{BASE}/docs")
    assert answer.status_code == 200 and answer.mimetype == "text/html"
    policy = answer.headers["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["default-src"] == "'none'" and directives["script-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'" and "unsafe" not in policy
    assert answer.headers["X-Frame-Options"] == "DENY"
    scripts = SCRIPT.findall(answer.get_data(as_text=True))
    assert len(scripts) == 2  # Swagger UI, and the file that starts it
    for attributes, body in scripts:
        assert not body.strip(), body  # nothing inline
        source = re.search(r'\bsrc="(/[^/"][^"]*)"', attributes).group(1)  # a path of ours
        loaded = client.get(source, buffered=True)
        assert loaded.status_code == 200 and loaded.mimetype == "text/javascript", source
    assert not re.search(r"\son\w+=", answer.get_data(as_text=True))  # no inline handlers


@pytest.mark.parametrize("path", ["/console/", "/console/keys", "/console/no/such/page"])
def test_the_consoles_headers_are_as_they_were(app, path):
    answer = signed_in(new_customer(app)).get(path)
    assert {name: answer.headers.get(name) for name in CONSOLE} == CONSOLE
    static = app.test_client().get("/console/static/console.js", buffered=True)
    assert static.headers["X-Content-Type-Options"] == "nosniff"
