"""POST /contacts and POST /products end to end: API → RQ → warm worker → real crawl."""

from __future__ import annotations

import pytest


def test_contacts_of_a_page(customer, site, site_server):
    suggested_before = site_server.requests["/about-us"]
    response = customer.post("/contacts", {"url": f"{site}/contact"})
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["credits_used"] == 1
    assert body["url"] == body["final_url"] == f"{site}/contact"
    assert body["status_code"] == 200
    source = f"{site}/contact"

    emails = {e["value"]: e for e in body["emails"]}
    assert emails["Sales@harbour-tide.co.uk"]["found_in"] == "mailto"
    assert emails["Sales@harbour-tide.co.uk"]["source_url"] == source
    assert emails["support@harbour-tide.co.uk"]["found_in"] == "obfuscated"
    assert emails["press@harbour-tide.co.uk"]["found_in"] == "json_ld"
    assert not [e for e in emails if "logo" in e]  # an image name is not an address
    assert [e.lower() for e in emails].count("sales@harbour-tide.co.uk") == 1

    phones = {p["value"]: p for p in body["phones"]}
    assert phones["+442079460000"]["found_in"] == "tel"
    assert phones["+447400123456"]["type"] == "mobile"
    assert phones["+447400123456"]["raw"] == "07400 123456"
    assert phones["+442079460321"]["found_in"] == "json_ld"
    assert set(phones) == {"+442079460000", "+447400123456", "+442079460321"}  # no order no.

    social = {(s["platform"], s["handle"]) for s in body["social_links"]}
    assert {("linkedin", "harbour-tide"), ("github", "harbour-tide"),
            ("instagram", "harbourtide")} <= social
    assert next(s for s in body["social_links"] if s["platform"] in ("x", "twitter"))[
        "handle"] == "harbourtide"
    assert not [s for s in body["social_links"] if "sharer" in s["url"]]

    assert body["organization"]["name"] == "Harbour & Tide Instruments Ltd"
    assert body["organization"]["logo"] == f"{site}/static/logo.png"  # relative to the page
    assert "London" in body["organization"]["address"]
    assert {f"{site}/about-us", f"{site}/team", f"{site}/support", f"{site}/impressum"} <= set(
        body["suggested_pages"])
    assert f"{site}/shop" not in body["suggested_pages"]
    assert site_server.requests["/about-us"] == suggested_before  # listed, never fetched
    assert customer.balance() == 99
    assert customer.activity()[0]["operation"] == "contacts"


def test_a_page_without_contacts_still_costs_one_credit(customer, site):
    response = customer.post("/contacts", {"url": f"{site}/nothing"})
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert (body["emails"], body["phones"], body["social_links"], body["organization"]) == (
        [], [], [], None)
    assert response.headers["X-Credits-Used"] == "1"
    assert customer.balance() == 99


def test_products_of_a_page(customer, site):
    response = customer.post("/products", {"url": f"{site}/product"})
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["credits_used"] == 1
    assert body["final_url"] == f"{site}/product"
    [product] = body["products"]
    assert product["source"] == "json_ld"
    assert (product["name"], product["sku"], product["mpn"], product["gtin"], product["brand"]) \
        == ("Tide clock, brass", "HT-TC-01", "TC01", "5012345678900", "Harbour & Tide")
    assert product["images"] == [f"{site}/img/tide-clock.jpg"]
    assert product["category"] is None and product["color"] is None
    assert product["aggregate_rating"] is None
    [offer] = product["offers"]
    assert offer["price"] == "1299.00"
    assert offer["currency"] == "GBP"
    assert offer["availability"] == "InStock"
    assert offer["item_condition"] == "NewCondition"
    assert offer["url"] == f"{site}/shop/tide-clock"
    assert offer["seller"] is None and offer["price_valid_until"] is None
    assert customer.balance() == 99
    assert customer.activity()[0]["operation"] == "products"


def test_a_page_without_products_costs_one_credit(customer, site):
    response = customer.post("/products", {"url": f"{site}/nothing"})
    assert response.status_code == 200
    assert response.get_json()["products"] == []
    assert customer.balance() == 99


@pytest.mark.parametrize("operation", ["/contacts", "/products"])
@pytest.mark.parametrize(
    ("path", "status", "error"),
    [
        ("/private", 403, "robots_disallowed"),
        ("/doc.pdf", 415, "unsupported_content"),
        ("/missing", 502, "target_http_error"),
    ],
)
def test_failures_cost_nothing(customer, site, operation, path, status, error):
    response = customer.post(operation, {"url": f"{site}{path}"})
    assert response.status_code == status
    assert response.get_json()["error"] == error
    assert customer.balance() == 100
    latest = customer.activity()[0]
    assert (latest["status"], latest["credits"], latest["operation"]) == (
        "failed", 0, operation.strip("/"))


@pytest.mark.parametrize("operation", ["/contacts", "/products", "/video-platform"])
def test_source_policy_applies(customer, operation):
    response = customer.post(operation, {"url": "http://10.0.0.1/contact"})
    assert response.status_code in (403, 422)
    body = response.get_json()
    assert body["error"] == ("unsupported_video" if operation == "/video-platform"
                             else "source_policy")
    assert customer.balance() == 100


@pytest.mark.parametrize("operation", ["/contacts", "/products", "/video-platform"])
def test_validation(customer, operation):
    response = customer.post(operation, {"url": "not a url", "extra": 1})
    assert response.status_code == 422
    assert set(response.get_json()["errors"]) == {"url", "extra"}
    assert customer.balance() == 100
