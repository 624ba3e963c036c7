"""Auth, input validation and the one error shape, on every layer."""

from __future__ import annotations

from core.operations import BY_PATH
from storage import accounts

SCRAPE = "/api/service/v1/scrape"


def assert_error(response, status: int, error: str) -> dict:
    body = response.get_json()
    assert response.status_code == status, body
    assert body["code"] == status
    assert body["error"] == error
    assert body["status"]
    assert body["message"]
    assert body["request_id"].startswith("req_")
    assert body["request_id"] == response.headers["X-Request-Id"]
    assert "Traceback" not in response.get_data(as_text=True)
    return body


def test_missing_and_malformed_authorization(client):
    assert_error(client.post(SCRAPE, json={"url": "https://example.com/"}), 401, "unauthorized")
    response = client.post(SCRAPE, json={"url": "https://example.com/"},
                           headers={"Authorization": "Basic abc"})
    assert_error(response, 401, "unauthorized")
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_unknown_and_revoked_keys(app, customer, client):
    response = client.get("/api/service/v1/account",
                          headers={"Authorization": "Bearer wdp_not-a-real-key"})
    assert_error(response, 401, "unauthorized")
    assert customer.get("/account").status_code == 200
    with app.extensions["webdata.db"].session() as session:
        accounts.revoke_keys(session, customer.key[:12])
    assert_error(customer.get("/account"), 401, "unauthorized")


def test_body_not_json_is_400(customer):
    client, headers = customer.client, customer.headers
    assert_error(client.post(SCRAPE, data="url=x", headers=headers), 400, "bad_request")
    response = client.post(SCRAPE, data="{not json", headers=headers,
                           content_type="application/json")
    assert_error(response, 400, "bad_request")
    assert_error(client.post(SCRAPE, json=["https://example.com/"], headers=headers), 400,
                 "bad_request")


def test_missing_or_invalid_url_is_422_with_field_errors(customer):
    for body, field in (({}, "url"), ({"url": 42}, "url"), ({"url": "not a url"}, "url"),
                        ({"url": "example.com"}, "url"),
                        ({"url": "https://x/" + "a" * 3000}, "url"),
                        ({"url": "https://example.com/", "include_links": "maybe"},
                         "include_links"),
                        ({"url": "https://example.com/", "surprise": 1}, "surprise")):
        error = assert_error(customer.post("/scrape", body), 422, "validation_error")
        assert field in error["errors"], error
    assert customer.balance() == 100
    history = [row for row in customer.activity() if row["operation"] != "credit_grant"]
    assert len(history) == 7  # rejected requests are in the history too, at no cost
    assert {(row["operation"], row["status"], row["credits"]) for row in history} == {
        ("scrape", "failed", 0)}


def test_unknown_path_and_wrong_method(client, customer):
    assert_error(client.get("/api/service/v1/nothing-here"), 404, "not_found")
    response = customer.client.get(SCRAPE, headers=customer.headers)
    assert_error(response, 405, "method_not_allowed")
    assert "POST" in response.headers["Allow"]


def test_insufficient_credits_is_402_and_recorded(app, site):
    from tests.conftest import new_customer

    broke = new_customer(app, credits=0)
    body = assert_error(broke.post("/scrape", {"url": f"{site}/article"}), 402,
                        "insufficient_credits")
    assert "needs 1 credits; the balance is 0" in body["message"]
    assert broke.activity()[0]["status"] == "failed"


def test_health_and_openapi(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.get_json()
    assert body == {"status": "ok", "redis": "ok", "database": "ok",
                    "workers": {"interactive": 2, "collections": 0, "maintenance": 0},
                    "cron": 0}  # the session's two workers listen on interactive alone
    spec = client.get("/api/service/v1/openapi.json").get_json()
    assert "/api/service/v1/scrape" in spec["paths"]
    assert "/api/service/v1/account/activity" in spec["paths"]
    assert spec["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    docs = client.get("/api/service/v1/docs")
    assert docs.status_code == 200
    assert b"swagger" in docs.data.lower()


def test_health_reports_a_dead_redis(sqlite_url):
    from api import create_app
    from tests.conftest import make_config

    app = create_app(make_config(sqlite_url, "redis://127.0.0.1:1/0"))
    response = app.test_client().get("/healthz")
    assert response.status_code == 503
    assert response.get_json()["redis"] == "down"


def test_no_redis_is_503_unavailable_and_free(sqlite_url, site):
    from api import create_app
    from tests.conftest import make_config, new_customer

    app = create_app(make_config(sqlite_url, "redis://127.0.0.1:1/0"))
    customer = new_customer(app)
    assert_error(customer.post("/scrape", {"url": f"{site}/article"}), 503, "unavailable")
    assert customer.balance() == 100


def test_account_and_paginated_activity(customer, site):
    account = customer.get("/account").get_json()
    assert account["id"] == customer.account_id
    assert account["plan"]["name"] == "free"
    assert account["credits"] == {"balance": 100}
    for _ in range(3):
        customer.post("/scrape", {"url": f"{site}/missing"})
    first = customer.get("/account/activity?limit=2").get_json()
    assert len(first["activity"]) == 2 and first["next_cursor"]
    rest = customer.get(f"/account/activity?limit=2&cursor={first['next_cursor']}").get_json()
    rows = first["activity"] + rest["activity"]
    assert [row["operation"] for row in rows] == ["scrape"] * 3 + ["credit_grant"]
    assert rows[-1]["credits"] == -100
    assert rest["next_cursor"] is None
    assert -sum(row["credits"] for row in rows) == customer.get("/account").get_json()[
        "credits"]["balance"]
    assert_error(customer.get("/account/activity?cursor=garbage"), 422, "validation_error")
    assert_error(customer.get("/account/activity?limit=0"), 422, "validation_error")


def test_rate_limit_per_account_with_headers(app):
    from tests.conftest import new_customer

    customer = new_customer(app)  # free plan: 60 requests a minute
    statuses = [customer.get("/account") for _ in range(60)]
    assert {r.status_code for r in statuses} == {200}
    assert statuses[0].headers["RateLimit-Limit"] == "60"
    assert statuses[-1].headers["RateLimit-Remaining"] == "0"
    body = assert_error(customer.get("/account"), 429, "rate_limited")
    assert "60 requests per minute" in body["message"]
    limited = customer.get("/account")
    assert int(limited.headers["Retry-After"]) >= 1
    assert limited.headers["RateLimit-Remaining"] == "0"
    other = new_customer(app)  # another account is not affected
    assert other.get("/account").status_code == 200


def test_every_operation_route_has_a_written_out_history_name(app):
    """History's ``operation`` comes from the operations' table (core.operations), not from
    view names: every POST route is in it."""
    posts = {rule.rule.removeprefix("/api/service/v1") for rule in app.url_map.iter_rules()
             if "POST" in (rule.methods or ()) and rule.rule.startswith("/api/service/v1/")}
    # The MCP endpoint has no line of its own: each tool call is a request with its line.
    assert posts - {"/mcp"} == set(BY_PATH)


def test_a_path_parameter_the_database_cannot_store_matches_no_route(app):
    """A NUL in a path parameter is a 404 at routing, before any query (PostgreSQL would
    refuse it with an error)."""
    from tests.conftest import new_customer

    customer = new_customer(app)
    for path in ("/collections/col_%00", "/collections/col_%00/results",
                 "/collections/col_%00/export?format=csv"):
        assert_error(customer.get(path), 404, "not_found")


def test_a_batch_entry_no_crawler_could_request_is_a_422_naming_it(customer):
    """Each entry must be a URL a page could be fetched from: not only http(s), but one that
    parses whole (its brackets, its port) with a host. These were a 500, or a 202 whose page
    then failed as an internal error."""
    urls = ["http://example.com/", "http://[::1/", "https://[v1.x/", "http://[12345::1]/",
            "http://127.0.0.2:99999/", "http://[::1]x/", "http://a:b/", "http://:80/",
            "ftp://example.com/", " https://example.com/ok "]
    body = assert_error(customer.post("/collections", {"mode": "batch", "urls": urls}),
                        422, "validation_error")
    assert sorted(map(int, body["errors"]["urls"])) == [1, 2, 3, 4, 5, 6, 7, 8]
    assert all(len(messages) == 1 for messages in body["errors"]["urls"].values())
    assert customer.balance() == 100


def test_a_boolean_field_takes_json_true_or_false_only(customer):
    """docs/api.md: a field of the wrong type is a 422. marshmallow read "no", "yes", "1", 1 and
    "on" as booleans: "no" was taken for false, whatever the client meant."""
    for value in ("no", "yes", "true", "1", 1, 0, "on", None):
        error = assert_error(customer.post("/scrape", {"url": "https://example.com/",
                                                      "include_metadata": value}),
                             422, "validation_error")
        assert "include_metadata" in error["errors"], (value, error)
    crawl = {"mode": "crawl", "url": "https://example.com/", "use_sitemap": "false"}
    error = assert_error(customer.post("/collections", crawl), 422, "validation_error")
    assert "use_sitemap" in error["errors"]
    assert customer.balance() == 100
