"""The web console through Flask's test client, on the session's real Redis and SQLite: sign-in
sessions (server-side, cookie flags, lifetime, sign-out, a revoked key), CSRF on every POST,
escaping, the Content-Security-Policy, one account never seeing another's collections or keys,
and the console using the API's own services (history lines, limits, the export)."""

from __future__ import annotations

import csv
import io
import json
import re
import uuid
from datetime import timedelta
from html import unescape

import pytest
from redis import Redis

from api.console import sessions
from core.contract import SKIP_REASONS
from storage import accounts, ledger
from storage.ledger import Charge
from storage.models import Collection, utcnow
from tests.conftest import Customer, new_customer
from tests.support.waits import wait_until

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
#: Every POST route of the console, with a path that exists for any account.
POSTS = ["/console/sign-in", "/console/sign-out", "/console/keys", "/console/keys/1/revoke",
         "/console/webhook-secret", "/console/collections",
         "/console/collections/col_none/cancel", "/console/monitors",
         "/console/monitors/mon_none/pause"]


def token(page: str) -> str:
    match = CSRF.search(page)
    assert match, page[:500]
    return match.group(1)


def signed_in(who: Customer):
    """A browser-like client of the console, signed in as ``who``."""
    browser = who.app.test_client()
    page = browser.get("/console/sign-in").get_data(as_text=True)
    answer = browser.post("/console/sign-in", data={"key": who.key, "csrf_token": token(page)})
    assert answer.status_code == 302 and answer.headers["Location"].endswith("/console/")
    return browser


def form_token(browser, path: str = "/console/keys") -> str:
    return token(browser.get(path).get_data(as_text=True))


def session_keys(app) -> list[bytes]:
    redis: Redis = app.extensions["webdata.redis"]
    return list(redis.scan_iter(f"{sessions.KEY_PREFIX}*"))


def test_signing_in_keeps_only_a_session_id_in_an_httponly_lax_cookie(app):
    who = new_customer(app, credits=7)
    browser = app.test_client()
    page = browser.get("/console/sign-in").get_data(as_text=True)
    answer = browser.post("/console/sign-in", data={"key": who.key, "csrf_token": token(page)})
    assert answer.status_code == 302
    cookie = answer.headers["Set-Cookie"]
    assert cookie.startswith(f"{sessions.COOKIE_NAME}=")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/console" in cookie
    assert "Secure" not in cookie and "Expires=" in cookie  # plain HTTP here
    assert who.key not in cookie
    stored = b"".join(app.extensions["webdata.redis"].get(key) or b""
                      for key in session_keys(app))
    assert who.key.encode() not in stored  # the key itself is nowhere in the session either
    overview = browser.get("/console/").get_data(as_text=True)
    assert 'id="balance">7 <span>credits' in overview


def test_over_https_the_cookie_is_secure(app):
    who = new_customer(app)
    browser = app.test_client()
    page = browser.get("/console/sign-in", base_url="https://localhost").get_data(as_text=True)
    answer = browser.post("/console/sign-in", base_url="https://localhost",
                          data={"key": who.key, "csrf_token": token(page)})
    assert answer.status_code == 302 and "Secure" in answer.headers["Set-Cookie"]


def test_a_wrong_key_is_refused_and_signs_nobody_in(app):
    browser = app.test_client()
    page = browser.get("/console/sign-in").get_data(as_text=True)
    answer = browser.post("/console/sign-in", data={"key": "wdp_nope", "csrf_token": token(page)})
    assert answer.status_code == 401
    assert "unknown or revoked" in answer.get_data(as_text=True)
    assert browser.get("/console/").status_code == 302


def test_an_unknown_console_page_is_the_consoles_404(app):
    browser = signed_in(new_customer(app))
    answer = browser.get("/console/no/such/page")
    assert answer.status_code == 404 and answer.mimetype == "text/html"
    assert "no such page in the console" in answer.get_data(as_text=True)
    assert app.test_client().get("/api/service/v1/nope").mimetype == "application/json"


def test_pages_need_a_sign_in(app):
    browser = app.test_client()
    for path in ("/console/", "/console/activity", "/console/collections", "/console/keys"):
        answer = browser.get(path)
        assert answer.status_code == 302 and answer.headers["Location"].endswith("/sign-in")
    assert browser.get("/console/collections/live.json").status_code == 401


@pytest.mark.parametrize("path", POSTS)
def test_every_post_without_the_csrf_token_is_refused(app, path):
    who = new_customer(app)
    browser = signed_in(who)
    before = who.activity()
    answer = browser.post(path, data={"key": who.key, "mode": "batch",
                                      "urls": "https://example.com/"})
    assert answer.status_code == 400
    assert "did not come from the console" in answer.get_data(as_text=True)
    forged = browser.post(path, data={"csrf_token": "forged", "key": who.key})
    assert forged.status_code == 400
    assert who.activity() == before  # nothing happened
    assert browser.get("/console/").status_code == 200  # still signed in


def test_a_token_from_another_session_is_refused(app):
    alice, bob = new_customer(app), new_customer(app)
    alices = signed_in(alice)
    bobs = signed_in(bob)
    answer = bobs.post("/console/keys", data={"csrf_token": form_token(alices)})
    assert answer.status_code == 400


def test_the_session_lasts_its_lifetime_in_redis_and_sign_out_ends_it(app):
    who = new_customer(app)
    keys_before = set(session_keys(app))
    browser = signed_in(who)
    mine = set(session_keys(app)) - keys_before
    assert len(mine) == 1
    redis = app.extensions["webdata.redis"]
    lifetime = app.config["WEBDATA"].api.console_session_seconds
    assert lifetime - 60 < redis.ttl(next(iter(mine))) <= lifetime
    answer = browser.post("/console/sign-out", data={"csrf_token": form_token(browser)})
    assert answer.status_code == 302
    assert not set(session_keys(app)) & mine  # deleted, not just forgotten by the browser
    assert browser.get("/console/").status_code == 302


def test_the_lifetime_counts_from_the_sign_in_and_anonymous_sessions_are_short(app,
                                                                              monkeypatch):
    who = new_customer(app)
    redis = app.extensions["webdata.redis"]
    keys_before = set(session_keys(app))
    browser = app.test_client()
    for _ in range(20):  # a visitor who has not signed in costs the server nothing
        page = browser.get("/console/sign-in").get_data(as_text=True)
    assert set(session_keys(app)) == keys_before
    browser.post("/console/sign-in", data={"key": who.key, "csrf_token": token(page)})
    (mine,) = set(session_keys(app)) - keys_before
    lifetime = app.config["WEBDATA"].api.console_session_seconds
    later = sessions.time.time() + lifetime - 30
    monkeypatch.setattr(sessions.time, "time", lambda: later)
    browser.post("/console/keys", data={"csrf_token": form_token(browser)})  # changes it
    assert redis.ttl(mine) <= 31  # still the sign-in's end, not renewed by the change
    monkeypatch.setattr(sessions.time, "time", lambda: later + 31)
    answer = browser.get("/console/")
    assert answer.status_code == 302 and answer.headers["Location"].endswith("/sign-in")
    assert redis.get(mine) is None
    monkeypatch.undo()
    signed_out = signed_in(who)
    signed_out.post("/console/sign-out", data={"csrf_token": form_token(signed_out)})
    for anonymous in set(session_keys(app)) - keys_before:  # "Signed out." until it is read
        assert 0 < redis.ttl(anonymous) <= sessions.ANONYMOUS_SECONDS


def test_the_sign_in_token_is_bound_to_its_own_cookie(app):
    who = new_customer(app)
    mine, theirs = app.test_client(), app.test_client()
    answer = mine.get("/console/sign-in")
    cookie = next(value for value in answer.headers.getlist("Set-Cookie")
                  if value.startswith(f"{sessions.SIGN_IN_COOKIE}="))
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/console" in cookie
    theirs.get("/console/sign-in")  # a cookie of their own, not matching my token
    stolen = theirs.post("/console/sign-in", data={
        "key": who.key, "csrf_token": token(answer.get_data(as_text=True))})
    assert stolen.status_code == 400


def test_an_expired_session_asks_to_sign_in_again(app):
    who = new_customer(app)
    keys_before = set(session_keys(app))
    browser = signed_in(who)
    for key in set(session_keys(app)) - keys_before:
        app.extensions["webdata.redis"].delete(key)  # what its TTL does
    answer = browser.get("/console/keys")
    assert answer.status_code == 302 and answer.headers["Location"].endswith("/sign-in")


def test_revoking_the_sign_in_key_ends_the_session(app):
    who = new_customer(app)
    browser = signed_in(who)
    page = browser.get("/console/keys").get_data(as_text=True)
    key_id = re.search(r'/console/keys/(\d+)/revoke', page).group(1)
    answer = browser.post(f"/console/keys/{key_id}/revoke", data={"csrf_token": token(page)})
    assert answer.status_code == 302 and answer.headers["Location"].endswith("/sign-in")
    assert browser.get("/console/").status_code == 302
    assert who.get("/account").status_code == 401


def test_keys_are_created_shown_once_and_revoked(app):
    who = new_customer(app)
    browser = signed_in(who)
    answer = browser.post("/console/keys", data={"csrf_token": form_token(browser)})
    assert answer.status_code == 201
    page = answer.get_data(as_text=True)
    new_key = re.search(r'id="new-key" value="(wdp_[^"]+)"', page).group(1)
    other = Customer(app, who.account_id, new_key)
    assert other.get("/account").status_code == 200
    again = browser.get("/console/keys").get_data(as_text=True)
    assert new_key not in again and new_key[:12] + "…" in again  # the prefix only, after
    key_id = re.search(rf'data-prefix="{re.escape(new_key[:12])}">.*?/console/keys/(\d+)/revoke',
                       again, re.S).group(1)
    revoked = browser.post(f"/console/keys/{key_id}/revoke", data={"csrf_token": token(again)})
    assert revoked.status_code == 302
    assert other.get("/account").status_code == 401
    assert who.get("/account").status_code == 200  # the sign-in key is untouched


FORM_ID = re.compile(r'name="form_id" value="([^"]+)"')


@pytest.mark.parametrize(("path", "what"), [("/console/keys", "key"),
                                            ("/console/webhook-secret", "secret")])
def test_a_key_or_secret_form_sent_again_does_nothing_again(app, path, what):
    """A reload of the answer to "Create a key" or "Rotate the secret" sends the form again:
    it made another key, rotated again. Each form is sent once; again, it says so."""
    who = new_customer(app)
    browser = signed_in(who)
    page = browser.get("/console/keys").get_data(as_text=True)
    form = {"csrf_token": token(page), "form_id": FORM_ID.search(page).group(1)}
    with app.extensions["webdata.db"].session() as session:
        keys_before = len(accounts.list_keys(session, who.account_id))
    first = browser.post(path, data=form)
    assert first.status_code in (200, 201)
    again = browser.post(path, data=form)
    assert again.status_code == 302
    shown = browser.get(again.headers["Location"]).get_data(as_text=True)
    assert "sent already" in shown
    with app.extensions["webdata.db"].session() as session:
        keys_after = len(accounts.list_keys(session, who.account_id))
    assert keys_after == keys_before + (what == "key")
    rotations = [row for row in who.activity() if row["operation"] != "credit_grant"
                 and "secret" in row["operation"]]
    assert len(rotations) == (what == "secret")


def test_another_accounts_key_or_collection_is_a_404(app):
    alice, bob = new_customer(app), new_customer(app)
    created = bob.post("/collections", {"mode": "batch", "urls": ["https://example.com/"]})
    assert created.status_code == 202
    bobs_collection = created.get_json()["id"]
    bobs_key_id = signed_in(bob).get("/console/keys").get_data(as_text=True)
    bobs_key_id = re.search(r'/console/keys/(\d+)/revoke', bobs_key_id).group(1)
    browser = signed_in(alice)
    csrf = form_token(browser)
    assert browser.post(f"/console/keys/{bobs_key_id}/revoke",
                        data={"csrf_token": csrf}).status_code == 404
    assert browser.post(f"/console/collections/{bobs_collection}/cancel",
                        data={"csrf_token": csrf}).status_code == 404
    assert browser.get(f"/console/collections/{bobs_collection}/export?format=csv"
                       ).status_code == 404
    live = browser.get(f"/console/collections/live.json?ids={bobs_collection}").get_json()
    assert live == {"collections": []}
    assert bobs_collection not in browser.get("/console/collections").get_data(as_text=True)
    assert bob.get("/account").status_code == 200


def test_user_text_is_escaped_and_scripts_are_only_our_own(app):
    who = new_customer(app)
    db = app.extensions["webdata.db"]
    hostile = ['https://example.com/<script>alert(1)</script>',
               'https://example.com/"><img src=x onerror=alert(2)>']
    for n, url in enumerate(hostile):
        ledger.record_failure(db, Charge(who.account_id, f"x:{uuid.uuid4()}", 0, "scrape",
                                         request_id=f'req_<b>{n}</b>', url=url), "<i>bad</i>")
    answer = signed_in(who).get("/console/activity")
    page = answer.get_data(as_text=True)
    for url in hostile:
        assert url not in page  # never as markup
        assert unescape(url) in unescape(page)  # but shown, as text
    assert "<script>alert" not in page and "<img src=x" not in page and "<i>bad" not in page
    assert re.findall(r"<script[^>]*>", page) == [
        '<script src="/console/static/console.js" defer>']  # ours alone; the chart's too on
    # the overview, where its figures are a JSON block no browser runs
    overview = signed_in(who).get("/console/").get_data(as_text=True)
    assert re.findall(r"<script[^>]*>", overview) == [
        '<script src="/console/static/vendor/chart.umd.min.js" defer>',
        '<script src="/console/static/console.js" defer>',
        '<script type="application/json" id="usage-data">']
    policy = answer.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy
    assert "unsafe-inline" not in policy and answer.headers["Cache-Control"] == "no-store"


def test_activity_filters(app):
    who = new_customer(app, credits=0)
    db = app.extensions["webdata.db"]
    for operation, url in (("scrape", "https://a.example/"), ("contacts", "https://b.example/"),
                           ("scrape", "https://c.example/")):
        ledger.record_failure(db, Charge(who.account_id, f"x:{uuid.uuid4()}", 0, operation,
                                         request_id=f"req_{uuid.uuid4().hex}", url=url), "x")
    browser = signed_in(who)

    def urls(query: str) -> list[str]:
        page = browser.get(f"/console/activity?{query}").get_data(as_text=True)
        return re.findall(r'<td class="url">([^<]*)</td>', page)

    assert urls("") == ["https://c.example/", "https://b.example/", "https://a.example/"]
    assert urls("operation=contacts") == ["https://b.example/"]
    assert urls("status=succeeded") == []
    today = utcnow().date()
    assert len(urls(f"from={today}&to={today}")) == 3
    assert urls(f"to={today - timedelta(days=1)}") == []
    page = browser.get("/console/activity").get_data(as_text=True)
    request_id = re.search(r'request_id=(req_\w+)', page).group(1)
    assert urls(f"request_id={request_id}") == ["https://c.example/"]
    odd = browser.get("/console/activity?operation=nope&from=yesterday")
    assert odd.status_code == 200 and "Unknown operation" in odd.get_data(as_text=True)


def test_a_collection_started_in_the_console_is_the_apis(app, site):
    who = new_customer(app, credits=10, plan="free")
    browser = signed_in(who)
    csrf = form_token(browser, "/console/collections")
    bad = browser.post("/console/collections", data={"csrf_token": csrf, "mode": "crawl",
                                                     "url": "not a url"})
    assert bad.status_code == 422 and "Must be an absolute URL" in bad.get_data(as_text=True)
    refused = browser.post("/console/collections", data={
        "csrf_token": csrf, "mode": "crawl", "url": f"{site}/site/",
        "include_paths": "^/site/\n\n(a)\\1", "exclude_paths": "(?=x)"})
    page = refused.get_data(as_text=True)
    assert refused.status_code == 422  # RE2, which matches, refuses them: named by themselves
    assert "(a)\\1: Not a valid regular expression: invalid escape sequence" in page
    assert "(?=x): Not a valid regular expression" in page and "RE2 syntax is accepted" in page
    too_many = browser.post("/console/collections", data={
        "csrf_token": csrf, "mode": "batch",
        "urls": "\n".join(f"{site}/page/{n}" for n in range(1000))})
    assert too_many.status_code == 413  # the plan's max_batch_urls, as the API says it
    answer = browser.post("/console/collections", data={
        "csrf_token": csrf, "mode": "batch", "extract": "page",
        "urls": f"{site}/article.html\n\n# a comment\n{site}/article.html"})
    assert answer.status_code == 302
    listed = who.get("/collections").get_json()["collections"]
    assert len(listed) == 1 and listed[0]["mode"] == "batch"
    history = [row for row in who.activity() if row["operation"] == "collection"]
    assert [row["collection_id"] for row in history if row["status"] == "succeeded"] == \
        [listed[0]["id"]]
    live = browser.get(f"/console/collections/live.json?ids={listed[0]['id']}").get_json()
    assert live["collections"][0]["id"] == listed[0]["id"]


def test_a_batch_from_an_uploaded_file(app, site):
    who = new_customer(app, credits=10, plan="free")
    browser = signed_in(who)
    csrf = form_token(browser, "/console/collections")
    not_text = browser.post("/console/collections", content_type="multipart/form-data", data={
        "csrf_token": csrf, "mode": "batch",
        "urls_file": (io.BytesIO(b"\xff\xfe\x00bad"), "urls.txt")})
    assert not_text.status_code == 422 and "not UTF-8" in not_text.get_data(as_text=True)
    empty = browser.post("/console/collections", data={"csrf_token": csrf, "mode": "batch"})
    assert empty.status_code == 422 and "at least one URL" in empty.get_data(as_text=True)
    listing = f"# ours\n{site}/article.html\r\n{site}/contact.html\n".encode()
    answer = browser.post("/console/collections", content_type="multipart/form-data", data={
        "csrf_token": csrf, "mode": "batch", "extract": "contacts",
        "urls_file": (io.BytesIO(listing), "urls.txt")})
    assert answer.status_code == 302
    (made,) = who.get("/collections").get_json()["collections"]
    assert made["extract"] == "contacts"
    with app.extensions["webdata.db"].session() as session:  # what the workers will fetch
        spec = json.loads(session.get(Collection, made["id"]).spec)
    assert spec["urls"] == [f"{site}/article.html", f"{site}/contact.html"]


@pytest.mark.parametrize("path", [
    "/console/activity?to=9999-12-31&from=0001-01-01",
    "/console/activity?before=99999999999999999999999",
    "/console/activity?request_id=req_%00x&endpoint=x&_anchor=y",
    "/console/collections?before=2020-01-01|%00",
    "/console/collections/live.json?ids=%00,col_x",
    "/console/collections/col_%00/export?format=csv",
    "/console/collections/col_x/export?format=xml",
])
def test_odd_queries_are_answered_not_failed(app, path):
    who = new_customer(app)
    answer = signed_in(who).get(path)
    assert answer.status_code in (200, 404, 422), answer.get_data(as_text=True)[:300]


def test_odd_forms_are_answered_not_failed(app):
    who = new_customer(app)
    browser = signed_in(who)
    csrf = form_token(browser, "/console/collections")
    huge = browser.post("/console/keys/99999999999999999999/revoke", data={"csrf_token": csrf})
    assert huge.status_code == 404
    nul = browser.post("/console/collections/col_%00/cancel", data={"csrf_token": csrf})
    assert nul.status_code == 404
    odd_mode = browser.post("/console/collections", data={"csrf_token": csrf, "mode": "foo"})
    page = odd_mode.get_data(as_text=True)
    assert odd_mode.status_code == 422 and 'id="form-problem"' in page and "mode:" in page
    not_number = browser.post("/console/collections", data={
        "csrf_token": csrf, "mode": "crawl", "url": "https://example.com/", "max_pages": "ten"})
    assert not_number.status_code == 422 and "Not a whole number" in not_number.get_data(
        as_text=True)
    refused = [row for row in who.activity() if row["operation"] == "collection"]
    assert [row["status"] for row in refused] == ["failed", "failed"]  # in the history, free


def test_with_redis_down_the_console_says_so(sqlite_url):
    from api import create_app
    from tests.conftest import make_config

    app = create_app(make_config(sqlite_url, "redis://127.0.0.1:1/0", redis_timeout=0.5))
    answer = app.test_client().get("/console/sign-in")
    assert answer.status_code == 503 and answer.mimetype == "text/html"
    assert "cannot sign its forms right now" in answer.get_data(as_text=True)


def test_a_start_form_sent_twice_starts_one_collection(app, site):
    who = new_customer(app, credits=10, plan="free")
    browser = signed_in(who)
    page = browser.get("/console/collections").get_data(as_text=True)
    form_id = re.search(r'name="form_id" value="([^"]+)"', page).group(1)
    sent = {"csrf_token": token(page), "form_id": form_id, "mode": "batch",
            "urls": f"{site}/article.html"}
    refused = browser.post("/console/collections", data={**sent, "urls": "not a url"})
    assert refused.status_code == 422  # refused: the same form may be sent again, mended
    assert browser.post("/console/collections", data=sent).status_code == 302
    again = browser.post("/console/collections", data=sent, follow_redirects=True)
    (made,) = who.get("/collections").get_json()["collections"]
    assert f"This form was sent already: it started {made['id']}" in again.get_data(
        as_text=True)
    fresh = re.search(r'name="form_id" value="([^"]+)"', again.get_data(as_text=True)).group(1)
    assert fresh != form_id  # each page its own form


def test_an_unexpected_error_is_the_consoles_500_page(app, monkeypatch):
    browser = signed_in(new_customer(app))

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr("api.console.pages.usage.daily", broken)
    answer = browser.get("/console/")
    page = answer.get_data(as_text=True)
    assert answer.status_code == 500 and answer.mimetype == "text/html"
    assert "Something went wrong on our side" in page and "req_" in page
    assert "Traceback" not in page and "a bug" not in page


# -- the page options of a collection (formats, the whole page, selectors) and its results -----

PRE = re.compile(r'<pre class="content" id="result-(\d+)-(\w+)" data-format="\w+" '
                 r'tabindex="0">\n(.*?)</pre>', re.S)


def checked(page: str, name: str) -> list[str]:
    """The values of the ticked checkboxes ``name`` of the page."""
    return re.findall(rf'<input type="checkbox" name="{name}" value="(\w+)" checked>', page)


def test_the_collection_form_offers_formats_the_whole_page_and_selectors(app):
    page = signed_in(new_customer(app)).get("/console/collections").get_data(as_text=True)
    boxes = re.findall(r'<input type="checkbox" name="formats" value="(\w+)"', page)
    assert boxes == ["text", "markdown", "html", "raw_html"]
    assert checked(page, "formats") == ["text"]  # the API's default
    assert 'name="whole_page" id="whole_page" >' in page  # not ticked: the main content
    assert 'name="include_selectors"' in page and 'name="exclude_selectors"' in page
    assert '<input type="hidden" name="page_options" value="shown">' in page


def test_the_form_sends_the_page_options_of_extract_page_only(app, site):
    who = new_customer(app, credits=10, plan="standard")  # three running at once
    browser = signed_in(who)
    csrf = form_token(browser, "/console/collections")
    common = {"csrf_token": csrf, "mode": "batch", "urls": f"{site}/article",
              "page_options": "shown", "formats": ["markdown", "raw_html"],
              "whole_page": "on", "include_selectors": "article\r\n\r\n  main > p  \n",
              "exclude_selectors": "nav"}
    assert browser.post("/console/collections", data=common).status_code == 302
    contacts = browser.post("/console/collections", data={**common, "extract": "contacts"})
    assert contacts.status_code == 302  # the hidden fields of extract page are not its
    made = {row["extract"]: row["id"] for row in who.get("/collections").get_json()[
        "collections"]}
    with app.extensions["webdata.db"].session() as session:
        specs = {extract: json.loads(session.get(Collection, made[extract]).spec)
                 for extract in made}
    assert specs["page"]["options"] == {
        "formats": ["markdown", "raw_html"], "only_main_content": False,
        "include_selectors": ["article", "main > p"], "exclude_selectors": ["nav"]}
    assert "options" not in specs["contacts"]
    by_hand = browser.post("/console/collections", data={  # an older page, a script
        "csrf_token": csrf, "mode": "batch", "urls": f"{site}/article"})
    assert by_hand.status_code == 302
    (newest, *_) = who.get("/collections").get_json()["collections"]
    with app.extensions["webdata.db"].session() as session:
        assert "options" not in json.loads(session.get(Collection, newest["id"]).spec)


def test_refused_page_options_are_shown_by_their_fields_and_cost_nothing(app, site):
    who = new_customer(app, credits=10, plan="free")
    browser = signed_in(who)
    csrf = form_token(browser, "/console/collections")
    sent = {"csrf_token": csrf, "mode": "batch", "urls": f"{site}/article",
            "page_options": "shown", "formats": ["markdown", "html"]}
    none_ticked = browser.post("/console/collections", data={**sent, "formats": []})
    page = unescape(none_ticked.get_data(as_text=True))
    assert none_ticked.status_code == 422
    assert "Ask for at least one format: text, markdown, html, raw_html." in page
    selectors = browser.post("/console/collections", data={
        **sent, "include_selectors": "article\ndiv[", "exclude_selectors": "a:has(b)\nnav"})
    page = selectors.get_data(as_text=True)
    assert selectors.status_code == 422
    problems = dict(re.findall(r'<textarea id="(\w+_selectors)".*?</textarea>\s*'
                               r'<span class="problem" role="alert">([^<]*)</span>', page, re.S))
    assert unescape(problems["include_selectors"]).startswith("div[: Not a valid CSS selector")
    assert unescape(problems["exclude_selectors"]) == (
        "a:has(b): :has() is not supported: it cannot be matched in linear time.")
    assert checked(page, "formats") == ["markdown", "html"]  # the form as it was sent
    assert ">article\ndiv[</textarea>" in page
    unknown = browser.post("/console/collections", data={**sent, "formats": ["pdf", "text"]})
    assert unknown.status_code == 422  # a hand-made value, named by itself
    assert "pdf: Unknown format &#39;pdf&#39;" in unknown.get_data(as_text=True)
    assert who.get("/collections").get_json()["collections"] == []
    assert who.balance() == 10
    assert {row["status"] for row in who.activity() if row["operation"] == "collection"} == {
        "failed"}


def test_the_results_show_each_asked_format_as_text_never_as_markup(stack, site, monkeypatch):
    """A page whose markdown holds ``<script>`` and ``<img onerror>`` (as code and text a
    page may well show), and whose raw HTML has a real script: all shown as text."""
    from api.console import result_pages
    from tests.support.collection_stack import all_results, wait_final

    who = new_customer(stack.app, credits=10, plan="standard")
    browser = signed_in(who)
    started = browser.post("/console/collections", data={
        "csrf_token": form_token(browser, "/console/collections"), "mode": "batch",
        "urls": f"{site}/escaping\n{site}/missing", "page_options": "shown",
        "formats": ["markdown", "html", "raw_html"], "exclude_selectors": "footer"})
    assert started.status_code == 302
    (made,) = who.get("/collections").get_json()["collections"]
    assert wait_final(who, made["id"])["progress"] == {
        "total": 2, "done": 2, "succeeded": 1, "failed": 1, "robots_blocked": 0,
        "skipped": dict.fromkeys(SKIP_REASONS, 0), "changes": None}
    (stored,) = [r["data"] for r in all_results(who, made["id"]) if r["status"] == "succeeded"]
    assert "<script>document.title = 'pwned'</script>" in stored["markdown"]

    listing = browser.get("/console/collections").get_data(as_text=True)
    assert f'href="/console/collections/{made["id"]}">Results</a>' in listing
    answer = browser.get(f"/console/collections/{made['id']}")
    page = answer.get_data(as_text=True)
    assert answer.status_code == 200 and answer.headers["Cache-Control"] == "no-store"
    shown = {name: unescape(text) for _, name, text in PRE.findall(page)}
    assert shown == {"markdown": stored["markdown"], "html": stored["html"],
                     "raw_html": stored["raw_html"]}  # each asked format, whole, as text
    assert re.findall(r"<script[^>]*>", page) == [
        '<script src="/console/static/console.js" defer>']  # ours alone
    assert "<img" not in page and "onerror=\"document" not in page
    assert "&lt;script&gt;document.title = &#39;pwned&#39;&lt;/script&gt;" in page
    assert "&lt;footer&gt;" in page  # the raw HTML has it; the formats not
    assert "Notes on web security" not in shown["markdown"]
    assert re.findall(r'data-copy="result-\d-(\w+)">Copy</button>', page) == [
        "markdown", "html", "raw_html"]  # each its Copy button
    options = " ".join(re.search(r'<p class="muted" id="asked-options">(.*?)</p>', page,
                                 re.S).group(1).split())
    assert options == ("Formats: Markdown, Clean HTML, Raw HTML (as fetched) · the main "
                       "content · without <code>footer</code>")
    assert "fetch_failed" in page or "target_http_error" in page  # the missing page's error
    assert answer.headers["Content-Security-Policy"].count("unsafe-inline") == 0

    monkeypatch.setattr(result_pages, "SHOWN_CHARACTERS", 40)
    cut = browser.get(f"/console/collections/{made['id']}").get_data(as_text=True)
    markdown = {name: unescape(text) for _, name, text in PRE.findall(cut)}["markdown"]
    assert markdown == stored["markdown"][:40]
    assert f"{len(stored['markdown']):,} characters, the first 40 shown" in cut


def test_the_results_page_is_the_accounts_own_and_answers_odd_queries(stack, site):
    from tests.support.collection_stack import wait_final

    alice, bob = new_customer(stack.app, credits=10), new_customer(stack.app, credits=10)
    created = bob.post("/collections", {"mode": "batch", "extract": "contacts",
                                        "urls": [f"{site}/contact"]})
    bobs = created.get_json()["id"]
    wait_final(bob, bobs)
    assert signed_in(alice).get(f"/console/collections/{bobs}").status_code == 404
    assert stack.app.test_client().get(f"/console/collections/{bobs}").status_code == 302
    browser = signed_in(bob)
    page = browser.get(f"/console/collections/{bobs}").get_data(as_text=True)
    data = {name: unescape(text) for _, name, text in PRE.findall(page)}["data"]
    assert "Sales@harbour-tide.co.uk" in str(json.loads(data)["emails"])  # as JSON
    assert "Formats:" not in page
    for query in ("after=-1", "after=99999999999999999999999", "after=x", "after=1"):
        answer = browser.get(f"/console/collections/{bobs}?{query}")
        assert answer.status_code == 200, query
    assert "No more results." in browser.get(f"/console/collections/{bobs}?after=1"
                                             ).get_data(as_text=True)
    assert browser.get("/console/collections/col_%00").status_code == 404


def test_the_form_starts_a_schema_collection_and_says_what_is_wrong_with_a_schema(app, site):
    who = new_customer(app, credits=10, plan="standard")
    browser = signed_in(who)
    csrf = form_token(browser, "/console/collections")
    sent = {"csrf_token": csrf, "mode": "batch", "urls": f"{site}/article",
            "extract": "schema"}
    for schema, words in (("", "Missing data for required field."),
                          ("{not json", "Not valid JSON"),
                          ('{"fields": [{"name": "a", "type": "colour"}]}',
                           "schema.fields[0].type: ")):
        refused = browser.post("/console/collections", data={**sent, "schema": schema})
        assert refused.status_code == 422
        page = unescape(refused.get_data(as_text=True))
        problem = re.search(r'<textarea id="schema".*?</textarea>\s*'
                            r'<span class="problem" role="alert">([^<]*)</span>', page, re.S)
        assert problem is not None and words in problem.group(1), page
    schema = {"fields": [{"name": "title", "selector": "h1"}]}
    started = browser.post("/console/collections", data={**sent, "schema": json.dumps(schema)})
    assert started.status_code == 302
    [made] = who.get("/collections").get_json()["collections"]
    with app.extensions["webdata.db"].session() as session:
        assert json.loads(session.get(Collection, made["id"]).spec)["options"] == {
            "schema": schema}


def test_the_map_page_lists_a_sites_urls_and_starts_a_batch_from_them(app, site):
    who = new_customer(app, credits=10, plan="standard")
    browser = signed_in(who)
    page = browser.get("/console/map").get_data(as_text=True)
    assert 'id="map-form"' in page and 'aria-current="page">Map</a>' in page
    form_id = re.search(r'name="form_id" value="([^"]+)"', page).group(1)
    sent = {"csrf_token": token(page), "form_id": form_id, "url": f"{site}/article",
            "limit": "3", "sitemap": "include", "discover_links": "1"}
    mapped = browser.post("/console/map", data=sent)
    assert mapped.status_code == 200
    page = mapped.get_data(as_text=True)
    urls = unescape(re.search(r'<textarea id="urls" name="urls"[^>]*>(.*?)</textarea>', page,
                              re.S).group(1)).splitlines()
    assert 1 <= len(urls) <= 3 and all(url.startswith("http://") for url in urls)
    assert who.balance() == 9
    again = browser.post("/console/map", data=sent)  # a reload of the answer
    assert again.status_code == 409 and who.balance() == 9
    batch_id = re.search(r'id="batch-from-map".*?name="form_id" value="([^"]+)"', page,
                         re.S).group(1)
    started = browser.post("/console/collections", data={
        "csrf_token": token(page), "form_id": batch_id, "mode": "batch", "extract": "page",
        "urls": "\n".join(urls)})
    assert started.status_code == 302
    [made] = who.get("/collections").get_json()["collections"]
    assert made["mode"] == "batch"


def test_the_map_page_can_accept_a_cached_map(app, site):
    who = new_customer(app, credits=10, plan="standard")
    browser = signed_in(who)
    url = f"{site}/cache/changing/map-{uuid.uuid4().hex[:8]}"
    said = []
    for _ in range(2):
        page = browser.get("/console/map").get_data(as_text=True)
        form_id = re.search(r'name="form_id" value="([^"]+)"', page).group(1)
        mapped = browser.post("/console/map", data={
            "csrf_token": token(page), "form_id": form_id, "url": url, "max_age": "3600",
            "discover_links": "0"}).get_data(as_text=True)
        said.append("From the page cache" in mapped)
        wait_until(lambda: who.post("/map", {"url": url, "max_age": 3600,
                                             "discover_links": 0}).get_json()["cached"],
                   "the map kept")
    assert said == [False, True]


@pytest.mark.parametrize(("field", "value", "words"), [
    ("limit", "0", "limit"), ("limit", "9999999", "limit"), ("url", "ftp://x", "url"),
    ("sitemap", "sometimes", "sitemap"), ("discover_links", "five", "Not a whole number"),
    ("max_age", "-1", "max_age")])
def test_the_map_page_shows_a_refusal_by_its_field_and_charges_nothing(app, site, field,
                                                                       value, words):
    who = new_customer(app, credits=10, plan="free")
    browser = signed_in(who)
    page = browser.get("/console/map").get_data(as_text=True)
    refused = browser.post("/console/map", data={
        "csrf_token": token(page), "url": f"{site}/article", field: value})
    assert refused.status_code in (403, 422)
    assert words in unescape(refused.get_data(as_text=True))
    assert who.balance() == 10


def test_the_results_page_counts_the_skipped_urls_and_downloads_them(stack, site):
    from tests.support.collection_stack import wait_final

    who = new_customer(stack.app, credits=10, plan="standard")
    crawled = who.post("/collections", {"mode": "crawl", "url": f"{site}/site/",
                                        "max_depth": 1, "use_sitemap": False}).get_json()["id"]
    skipped = wait_final(who, crawled)["progress"]["skipped"]
    browser = signed_in(who)
    page = browser.get(f"/console/collections/{crawled}").get_data(as_text=True)
    counts = " ".join(re.search(r'<p class="muted" id="skipped-counts">(.*?)</p>', page,
                                re.S).group(1).split())
    # most first, ties in the API's order
    assert counts == ("URLs seen and not fetched: 4 depth · 2 duplicate · 1 robots · "
                      "1 off site") == "URLs seen and not fetched: " + " · ".join(
        f"{n} {reason.replace('_', ' ')}" for reason, n in sorted(
            skipped.items(), key=lambda item: -item[1]) if n)
    link = re.search(r'id="skipped-downloads">.*?href="([^"]+format=csv[^"]*)"', page,
                     re.S).group(1)
    download = browser.get(unescape(link))
    rows = list(csv.DictReader(io.StringIO(download.get_data(as_text=True))))
    download.close()
    assert sum(row["status"] == "skipped" for row in rows) == sum(skipped.values())
    batch = who.post("/collections", {"mode": "batch", "urls": [f"{site}/article"]})
    wait_final(who, batch.get_json()["id"])
    quiet = browser.get(f"/console/collections/{batch.get_json()['id']}").get_data(as_text=True)
    assert "skipped-counts" not in quiet and "skipped-downloads" not in quiet


def test_a_collection_started_in_the_console_can_track_changes(app, site):
    from core.canonical import site_key

    who = new_customer(app, credits=10, plan="standard")
    browser = signed_in(who)
    for fields, tag in (({"track": "on", "change_tag": "prices"}, "prices"),
                        ({"track": "on"}, site_key(f"{site}/article"))):  # the site's
        sent = browser.post("/console/collections", data={
            "csrf_token": form_token(browser, "/console/collections"), "mode": "batch",
            "urls": f"{site}/article", **fields})
        assert sent.status_code == 302
        made = who.get("/collections").get_json()["collections"][0]
        with app.extensions["webdata.db"].session() as session:
            spec = json.loads(session.get(Collection, made["id"]).spec)
        assert spec["change_tracking"] == {"tag": tag}
        assert made["progress"]["changes"] == {"new": 0, "same": 0, "changed": 0, "removed": 0}
        who.post(f"/collections/{made['id']}/cancel", {})
