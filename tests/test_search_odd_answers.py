"""Provider answers that are valid JSON of an unexpected shape, or that arrive too slowly:
each is a 502 search_provider_error at no cost, never a 500 and never a stuck request. A bug
in our own adapter code, on the other hand, is a 500 internal_error, not the provider's fault."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from api import create_app
from api.search import SearchQuery
from api.search.base import Page
from api.search.searxng import SearxngProvider
from tests.conftest import make_config, new_customer


class OddProvider(ThreadingHTTPServer):
    """A SearXNG-shaped endpoint answering ``body`` (bytes), optionally one byte at a time."""

    daemon_threads = True

    def __init__(self, body: bytes, drip_seconds: float = 0.0):
        self.body, self.drip_seconds = body, drip_seconds
        super().__init__(("127.0.0.1", 0), _Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        body, drip = self.server.body, self.server.drip_seconds
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            for start in range(0, len(body), 1 if drip else len(body)):
                self.wfile.write(body[start:start + (1 if drip else len(body))])
                self.wfile.flush()
                time.sleep(drip)
        except OSError:
            pass


def answer(results: list) -> bytes:
    return json.dumps({"query": "q", "results": results}).encode()


@pytest.mark.parametrize(("body", "status", "urls"), [
    (answer([{"url": "https://example.com:abc/x"}, {"url": "https://e.com/b"}]), 200,
     ["https://e.com/b"]),  # a result with an unreadable URL is dropped
    (b'{"query": "q", "results": [{"url": "https://e.com/a", "length": NaN}]}', 200,
     ["https://e.com/a"]),  # NaN is JSON to Python: no duration, not a crash
    (answer([{"url": "https://e.com/a", "title": {"not": "text"}}]), 200, ["https://e.com/a"]),
    (answer(["just a string", 42, None]), 200, []),
    (b'{"query": "q", "results": {"url": "https://e.com/a"}}', 502, None),
    # nested past Python's recursion limit: the provider's fault, not a 500 of ours
    (b'{"query": "q", "results": ' + b"[" * 200_000 + b"]" * 200_000 + b"}", 502, None),
    # numbers no duration or date can be: unknown, not a 500
    (b'{"query": "q", "results": [{"url": "https://e.com/a", "length": 1' + b"0" * 400
     + b'}]}', 200, ["https://e.com/a"]),
])
def test_odd_answers_are_provider_errors_or_skipped(sqlite_url, redis_url, body, status, urls):
    provider = OddProvider(body)
    try:
        app = create_app(make_config(sqlite_url, redis_url, searxng_url=provider.url))
        customer = new_customer(app, credits=10)
        response = customer.post("/search/videos", {"query": "q"})
        assert response.status_code == status, response.get_json()
        if status == 502:
            assert response.get_json()["error"] == "search_provider_error"
            assert customer.balance() == 10
        else:
            results = response.get_json()["results"]
            assert [result["url"] for result in results] == urls
            assert all(r["duration_seconds"] is None and r["title"] is None for r in results)
    finally:
        provider.shutdown()
        provider.server_close()


def test_a_dripping_answer_is_cut_at_the_timeout(sqlite_url, redis_url):
    provider = OddProvider(answer([{"url": "https://e.com/a"}] * 20), drip_seconds=0.05)
    try:
        app = create_app(make_config(sqlite_url, redis_url, searxng_url=provider.url,
                                     search_timeout=1.0))
        customer = new_customer(app, credits=10)
        response = customer.post("/search", {"query": "q"})
        assert response.status_code == 502
        assert "no answer within 1 s" in response.get_json()["message"]
        assert customer.balance() == 10
    finally:
        provider.shutdown()
        provider.server_close()


class BuggySearxng(SearxngProvider):
    """SearXNG's adapter with a bug of ours in reading a good answer (an AttributeError)."""

    def fetch(self, kind: str, query: SearchQuery) -> Page:
        page = super().fetch(kind, query)
        page.results = [{"url": result["url"].hostname} for result in page.results]
        return page


def test_a_bug_in_an_adapter_is_a_500_not_a_provider_error(sqlite_url, redis_url, caplog):
    """Only the provider's faults are 502; our own bug is a 500, logged with its traceback."""
    provider = OddProvider(answer([{"url": "https://e.com/a"}]))
    try:
        app = create_app(make_config(sqlite_url, redis_url, searxng_url=provider.url))
        app.extensions["webdata.search"].chosen["web"] = BuggySearxng(provider.url)
        customer = new_customer(app, credits=10)
        response = customer.post("/search", {"query": "q"})
        assert response.status_code == 500, response.get_json()
        assert response.get_json()["error"] == "internal_error"
        assert customer.balance() == 10
        assert any(record.exc_info and record.exc_info[0] is AttributeError
                   for record in caplog.records if record.name == "api.errors")
    finally:
        provider.shutdown()
        provider.server_close()
