"""Clean answers under faults: every fault is answered in the one error shape, and the books
balance afterwards (balance == -Σ history credits, nothing left reserved).

The faults are real: oversized and deeply nested bodies, huge cursors. The ones that need
processes (a locked database, a paused Redis, a killed worker) are in ``test_faults_*.py``.
"""

from __future__ import annotations

import base64
import json

from storage import accounts
from tests.conftest import new_customer
from tests.support.books import assert_books_balance

BASE = "/api/service/v1"


def _error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.get_data(as_text=True)[:500]
    body = response.get_json()
    assert body["code"] == status and body["error"] == code, body
    assert body["request_id"] and body["request_id"] == response.headers["X-Request-Id"]
    return body


def test_a_body_over_the_limit_is_413_in_the_error_shape(app, customer):
    limit = app.config["WEBDATA"].api.max_body_bytes
    padding = "x" * (limit + 1)
    response = customer.post("/scrape", {"url": "http://example.com/", "pad": padding})
    body = _error(response, 413, "body_too_large")
    assert str(limit) in body["message"]
    assert customer.balance() == 100
    rows = customer.activity()
    assert rows[0]["operation"] == "scrape" and rows[0]["status"] == "failed"
    assert rows[0]["credits"] == 0 and rows[0]["url"] is None  # the body was never read
    assert_books_balance(app, customer.account_id)


def test_a_batch_as_large_as_the_plan_allows_is_read_whatever_max_body_bytes(app):
    """The plan's ``max_batch_urls`` long URLs are more bytes than ``MAX_BODY_BYTES``: a
    ``POST /collections`` body may hold them (here answered 402: no credits, so nothing
    starts), one URL more is ``too_many_urls``; only a body beyond that room is
    ``body_too_large``, and it names its own limit."""
    who = new_customer(app, credits=0, plan="standard")
    with app.extensions["webdata.db"].session() as session:
        allowed = accounts.get_plan(session, "standard").max_batch_urls
    long_urls = [f"http://example.com/{n}?q={'x' * 1500}" for n in range(allowed + 1)]
    assert len(json.dumps(long_urls[:allowed])) > app.config["WEBDATA"].api.max_body_bytes

    fits = who.post("/collections", {"mode": "batch", "urls": long_urls[:allowed]})
    _error(fits, 402, "insufficient_credits")
    one_more = who.post("/collections", {"mode": "batch", "urls": long_urls})
    _error(one_more, 413, "too_many_urls")
    padded = who.post("/collections", {"mode": "batch", "urls": long_urls[:1],
                                       "pad": "x" * (allowed * 2100 + 2 * 1024 * 1024)})
    body = _error(padded, 413, "body_too_large")
    limit = int(body["message"].split("limit of ")[1].split()[0])
    assert limit > app.config["WEBDATA"].api.max_body_bytes
    assert who.balance() == 0
    assert_books_balance(app, who.account_id)


def test_json_nested_100k_deep_is_400_bad_request(app, customer):
    deep = "[" * 100_000 + "]" * 100_000
    response = customer.client.post(
        f"{BASE}/scrape", data=deep,
        headers={**customer.headers, "Content-Type": "application/json"})
    body = _error(response, 400, "bad_request")
    assert "nested" in body["message"]
    deep_object = '{"url": ' + '{"a": ' * 50_000 + "1" + "}" * 50_000 + "}"
    response = customer.client.post(
        f"{BASE}/contacts", data=deep_object,
        headers={**customer.headers, "Content-Type": "application/json"})
    _error(response, 400, "bad_request")
    assert customer.balance() == 100
    assert_books_balance(app, customer.account_id)


def test_a_huge_activity_cursor_is_422(app, customer):
    for value in ("9" * 40, "-5", "0", str(2**63)):
        cursor = base64.urlsafe_b64encode(f"a:{value}".encode()).decode()
        response = customer.get(f"/account/activity?cursor={cursor}")
        body = _error(response, 422, "validation_error")
        assert "cursor" in body["errors"]
    assert customer.get("/account/activity?limit=5").status_code == 200


def test_credentials_in_a_url_are_refused_and_never_stored(app, customer, caplog):
    for path, url in (("/scrape", "http://user:s3cret-pw@example.com/"),
                      ("/contacts", "https://admin:s3cret-pw@127.0.0.2:8443/x"),
                      ("/products", "http://user@example.com/")):
        body = _error(customer.post(path, {"url": url}), 422, "validation_error")
        assert "url" in body["errors"] and "credentials" in str(body["errors"]["url"])
    rows = [row for row in customer.activity() if row["operation"] != "credit_grant"]
    assert [row["url"] for row in rows] == [
        "http://example.com/", "https://127.0.0.2:8443/x", "http://example.com/"][::-1]
    assert "s3cret" not in caplog.text
    assert customer.balance() == 100
    assert_books_balance(app, customer.account_id)


def test_redirects_to_other_schemes_are_source_policy(app, customer, site):
    for target in ("file", "gopher"):
        body = _error(customer.post("/scrape", {"url": f"{site}/redirect-to-{target}"}),
                      403, "source_policy")
        assert "<" not in body["message"] and "Failure" not in body["message"], body
    assert customer.balance() == 100
    assert_books_balance(app, customer.account_id)


def test_a_target_that_hangs_up_is_explained_in_words(app, customer, site):
    body = _error(customer.post("/scrape", {"url": f"{site}/hangup"}), 502, "fetch_failed")
    assert body["message"] == "The target closed the connection without answering."
    assert customer.balance() == 100
    assert_books_balance(app, customer.account_id)
