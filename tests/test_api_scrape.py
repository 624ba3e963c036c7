"""POST /scrape end to end: API → RQ → warm worker → real crawl of the loopback site."""

from __future__ import annotations

import pytest

from tests.conftest import SITE_HOST
from tests.support.site.server import serve


def test_success_costs_one_credit_and_is_in_the_history(customer, site):
    response = customer.post("/scrape", {"url": f"{site}/article"})
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["credits_used"] == 1
    assert body["request_id"] == response.headers["X-Request-Id"]
    assert body["url"] == f"{site}/article"
    assert body["final_url"] == f"{site}/article"
    assert body["status_code"] == 200
    assert body["fetched_at"].endswith("Z")
    assert body["title"] == "Tide tables of the Thames estuary"
    assert "harmonic constants" in body["text"]
    assert "\n\n" in body["text"]
    assert body["language"] == "en"
    assert body["metadata"]["author"] == "Ada Marsh"
    assert body["metadata"]["canonical_url"] == f"{site}/article"
    assert body["metadata"]["published_at"] == "2026-03-04T08:30:00Z"
    assert body["metadata"]["json_ld"][0]["@type"] == "NewsArticle"
    links = {link["url"]: link for link in body["links"]}
    assert links[f"{site}/about"]["internal"] is True
    assert links["https://example.org/elsewhere"] == {
        "url": "https://example.org/elsewhere", "text": "Elsewhere", "rel": "nofollow",
        "internal": False,
    }
    assert response.headers["X-Credits-Used"] == "1"
    assert response.headers["X-Credits-Remaining"] == "99"
    assert customer.balance() == 99
    latest = customer.activity()[0]
    assert latest["operation"] == "scrape"
    assert latest["credits"] == 1
    assert latest["status"] == "succeeded"
    assert latest["request_id"] == body["request_id"]
    assert latest["url"] == f"{site}/article"


def test_options_drop_links_and_metadata(customer, site):
    body = customer.post("/scrape", {"url": f"{site}/article", "include_links": False,
                                     "include_metadata": False}).get_json()
    assert body["links"] == []
    assert body["metadata"] is None
    assert body["title"] == "Tide tables of the Thames estuary"


def test_redirect_is_followed_and_reported(customer, site):
    body = customer.post("/scrape", {"url": f"{site}/redirect-to-article"}).get_json()
    assert body["url"] == f"{site}/redirect-to-article"
    assert body["final_url"] == f"{site}/article"


@pytest.mark.parametrize(
    ("path", "status", "error", "target_status"),
    [
        ("/private", 403, "robots_disallowed", None),
        ("/missing", 502, "target_http_error", 404),
        ("/broken", 502, "target_http_error", 500),
        ("/doc.pdf", 415, "unsupported_content", None),
        ("/data.json", 415, "unsupported_content", None),
        ("/gzip-bomb", 502, "page_too_large", None),
        ("/endless", 502, "page_too_large", None),
        ("/drip", 504, "timeout", None),
        ("/loop", 502, "fetch_failed", None),
    ],
)
def test_failures_cost_nothing_and_say_why(customer, site, path, status, error, target_status):
    response = customer.post("/scrape", {"url": f"{site}{path}"})
    body = response.get_json()
    assert response.status_code == status, body
    assert body["error"] == error
    assert body["code"] == status
    assert body["request_id"] == response.headers["X-Request-Id"]
    assert body["errors"] == {}
    assert body["message"]
    if target_status:
        assert body["details"]["target_status"] == target_status
    assert "X-Credits-Used" not in response.headers
    assert customer.balance() == 100
    latest = customer.activity()[0]
    assert (latest["status"], latest["credits"], latest["request_id"]) == (
        "failed", 0, body["request_id"])


def test_unresolvable_host_and_refused_connection_are_fetch_failed(customer):
    for url in ("http://no-such-host.invalid/", "http://127.0.0.2:9/"):
        response = customer.post("/scrape", {"url": url})
        assert response.status_code == 502, response.get_json()
        assert response.get_json()["error"] == "fetch_failed"
    assert customer.balance() == 100


def test_workers_keep_serving_after_hostile_pages(customer, site):
    for path in ("/gzip-bomb", "/endless", "/loop"):
        customer.post("/scrape", {"url": f"{site}{path}"})
    assert customer.post("/scrape", {"url": f"{site}/article"}).status_code == 200
    assert customer.balance() == 99


def test_api_deadline_answers_504_and_releases_the_credit(sqlite_url, redis_url, workers, site):
    from api import create_app
    from tests.conftest import make_config, new_customer

    impatient = create_app(make_config(sqlite_url, redis_url, job_wait_seconds=1))
    customer = new_customer(impatient)
    response = customer.post("/scrape", {"url": f"{site}/drip"})
    assert response.status_code == 504, response.get_json()
    assert response.get_json()["error"] == "timeout"
    assert customer.balance() == 100
    assert customer.activity()[0]["status"] == "failed"


@pytest.mark.parametrize(("status", "allowed"), [(503, False), (500, False), (429, False),
                                                 (404, True)])
def test_a_robots_txt_the_server_fails_to_give_keeps_us_off_the_site(customer, status, allowed):
    """RFC 9309 (2.3.1.4): a robots.txt that cannot be read because the server fails (5xx;
    429 asks to slow down alike) means "disallow everything", not "no rules"; one that does
    not exist (4xx) allows everything."""
    server = serve(robots_status=status)
    try:
        url = f"http://{SITE_HOST}:{server.server_address[1]}/article"
        response = customer.post("/scrape", {"url": url})
        body = response.get_json()
        if allowed:
            assert response.status_code == 200, body
            return
        assert (response.status_code, body["error"]) == (403, "robots_disallowed"), body
        assert f"answered {status}" in body["message"]
        assert server.requests["/article"] == 0 and server.requests["/robots.txt"] == 1
        assert customer.balance() == 100
    finally:
        server.shutdown()
        server.server_close()
