"""The console counts against the plan's requests per minute as the API does: one window per
account for both, the console answering its own 429 page over it, other accounts untouched."""

from __future__ import annotations

from tests.conftest import new_customer
from tests.test_console import form_token, signed_in, token

#: A free plan's requests per minute.
FREE_RATE = 60


def test_a_free_account_over_its_rate_through_the_console_is_refused_there_and_at_the_api(app):
    who, other = new_customer(app, plan="free"), new_customer(app, plan="free")
    browser, others_browser = signed_in(who), signed_in(other)  # each sign-in counts
    csrf = form_token(browser)
    loaded = 2
    # Up to a few over the rate: a window that turns during the test weighs the last one less.
    while (answer := browser.get("/console/activity")).status_code == 200:
        loaded += 1
        assert loaded < FREE_RATE + 5, "the console is not counted against the plan's rate"
    assert loaded >= FREE_RATE - 5
    assert answer.status_code == 429 and answer.mimetype == "text/html"  # the console's page
    assert f"Over {FREE_RATE} requests per minute for the free plan" in answer.get_data(
        as_text=True)
    assert 1 <= int(answer.headers["Retry-After"]) <= 60
    assert answer.headers["RateLimit-Remaining"] == "0"
    assert "default-src 'none'" in answer.headers["Content-Security-Policy"]
    for path in ("/console/", "/console/collections", "/console/keys",
                 "/console/collections/live.json?ids=col_x", "/console/no/such/page"):
        assert browser.get(path).status_code == 429, path
    made = browser.post("/console/keys", data={"csrf_token": csrf})
    assert made.status_code == 429 and "wdp_" not in made.get_data(as_text=True)
    refused = who.get("/account")  # the API's window is the same one
    assert refused.status_code == 429 and refused.get_json()["error"] == "rate_limited"
    # Static files are not counted, nor refused; another account is not held back.
    assert browser.get("/console/static/console.css", buffered=True).status_code == 200
    assert others_browser.get("/console/").status_code == 200
    assert other.get("/account").status_code == 200
    # Signing out always works; signing in again is a request of the account: refused.
    out = browser.post("/console/sign-out", data={"csrf_token": csrf})
    assert out.status_code == 302 and out.headers["Location"].endswith("/console/sign-in")
    page = browser.get("/console/sign-in").get_data(as_text=True)
    again = browser.post("/console/sign-in", data={"key": who.key, "csrf_token": token(page)})
    assert again.status_code == 429 and "Retry-After" in again.headers
    assert browser.get("/console/").status_code == 302  # no session was made
