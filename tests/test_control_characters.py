"""URLs with control characters (CR LF, ESC, NEL, LS, VT, DEL…) are refused in every field that
takes one: the API's 422 naming the field, nothing charged, no job, the history keeping the URL
percent-encoded; the console's forms, batch code, the spiders and the jobs alike. Percent-encoded
control characters and international characters are ordinary URLs, still accepted."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from redis import Redis
from rq.job import Job

from api import create_app
from collecting import python_api
from core.controls import CONTROL_CHARACTERS, control_character_error, url_lines
from core.scope import page_url_error
from crawler.spiders.base import as_http_url
from crawler.spiders.batch import BatchSpider
from crawler.spiders.operations import spider_class
from crawler.spiders.site import SiteSpider
from crawler.spiders.video import VideoSpider
from tests.conftest import make_config, new_customer
from tests.support.books import assert_books_balance
from tests.test_api_errors import assert_error
from tests.test_console import form_token, signed_in
from worker import jobs, queues

PageSpider = spider_class("page")

#: What a hostile client sends, by name: the report's characters.
CONTROLS = {"crlf": "\r\n", "esc": "\x1b", "nel": "\x85", "ls": "\u2028", "vt": "\x0b",
            "del": "\x7f"}
#: Where in the URL: each part of it, the last character included (str.strip() would drop
#: a trailing CR LF, NEL, LS or VT).
PLACES = {"path": "{base}/a{c}b", "query": "{base}/a?q={c}", "fragment": "{base}/a#top{c}"}
#: The single-page operations and the URL each takes (the video one on the platform's host).
SINGLE_PAGE = {"/scrape": None, "/contacts": None, "/products": None,
               "/video-platform": "https://www.youtube.com/watch?v=pUbLiC_vid1&x="}
FORGED = "2026-01-01 00:00:00,000 ERROR api: forged"


def hostile(base: str, control: str, place: str) -> str:
    return PLACES[place].format(base=base, c=control) + FORGED


@pytest.mark.parametrize("name", CONTROLS)
def test_a_single_page_operation_refuses_a_url_with_a_control_character(
        app, customer, site, site_server, name):
    """422 naming ``url``, before anything is held: no credit, no job, no fetch."""
    prefix = f"/never-{uuid.uuid4().hex[:8]}"
    redis = Redis.from_url(app.config["WEBDATA"].storage.redis_url)
    refused = []
    for path, video in SINGLE_PAGE.items():
        for place in PLACES:
            url = (video + CONTROLS[name] + FORGED if video
                   else hostile(site + prefix, CONTROLS[name], place))
            body = assert_error(customer.post(path, {"url": url}), 422, "validation_error")
            assert list(body["errors"]) == ["url"], body
            assert "control characters" in body["errors"]["url"][0]
            assert not Job.exists(body["request_id"], connection=redis)  # never enqueued
            refused.append(url)
            if video:
                break
    assert not [path for path in site_server.requests if path.startswith(prefix)]
    assert customer.balance() == 100
    assert_books_balance(app, customer.account_id)
    history = [row for row in customer.activity() if row["operation"] != "credit_grant"]
    assert len(history) == len(refused)
    assert all(row["status"] == "failed" and row["credits"] == 0 for row in history)
    # the history lists each URL asked for, its control characters percent-encoded
    assert all(not CONTROL_CHARACTERS.search(row["url"]) for row in history), history
    assert history[-1]["url"] == refused[0].replace(
        CONTROLS[name], "".join(f"%{b:02X}" for b in CONTROLS[name].encode()))


def test_the_history_keeps_a_refused_url_percent_encoded_on_both_engines(database_url,
                                                                         redis_url):
    """A line of history is written for each refusal (SQLite and PostgreSQL), its URL without
    a raw control character: a NUL, which no column holds, still leaves it empty."""
    who = new_customer(create_app(make_config(database_url, redis_url)), credits=5)
    for url in ("https://example.com/a\r\nb\x1b\x85\u2028", "https://example.com/\x00\r"):
        assert_error(who.post("/scrape", {"url": url}), 422, "validation_error")
    rows = [row["url"] for row in who.activity() if row["operation"] == "scrape"]
    assert rows == [None, "https://example.com/a%0D%0Ab%1B%C2%85%E2%80%A8"]
    assert who.balance() == 5


def test_a_collection_refuses_control_characters_in_each_url_field(app, site):
    """Batch entries by index, the crawl's ``url``, ``webhook_url``: each named, nothing
    created."""
    who = new_customer(app, credits=10)
    urls = [f"{site}/article", hostile(site, "\x1b", "path"), f"{site}/contact",
            hostile(site, "\u2028", "query"), hostile(site, "\r\n", "fragment")]
    body = assert_error(who.post("/collections", {"mode": "batch", "urls": urls}), 422,
                        "validation_error")
    assert sorted(map(int, body["errors"]["urls"])) == [1, 3, 4]
    assert all("control characters" in messages[0]
               for messages in body["errors"]["urls"].values())
    crawl = {"mode": "crawl", "url": hostile(site, "\x85", "path"),
             "webhook_url": "https://hooks.example/x\x7f"}
    body = assert_error(who.post("/collections", crawl), 422, "validation_error")
    assert set(body["errors"]) == {"url", "webhook_url"}
    body = assert_error(who.post("/collections", {"mode": "batch", "urls": [f"{site}/a"],
                                                 "webhook_url": "https://hooks.example/\x0b"}),
                        422, "validation_error")
    assert list(body["errors"]) == ["webhook_url"]
    assert who.get("/collections").get_json()["collections"] == []
    assert who.balance() == 10
    history = [row for row in who.activity() if row["operation"] == "collection"]
    assert [row["status"] for row in history] == ["failed"] * 3
    assert all(row["url"] is None or not CONTROL_CHARACTERS.search(row["url"])
               for row in history)


def test_percent_encoded_and_international_urls_are_still_accepted(app, site):
    """``%0D%0A`` is what a browser sends for a line break in a URL: an ordinary URL. So are
    é and 中文, in the path or the query."""
    who = new_customer(app, credits=10)
    answer = who.post("/scrape", {"url": f"{site}/article?note=%0D%0A%1B&q=é中文"})
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["url"] == f"{site}/article?note=%0D%0A%1B&q=é中文"
    missing = assert_error(who.post("/contacts", {"url": f"{site}/café/中文%0D%0A"}), 502,
                           "target_http_error")  # fetched: the page does not exist
    assert missing["details"]["target_status"] == 404
    created = who.post("/collections", {"mode": "batch", "urls": [
        f"{site}/a%0D%0Ab", f"{site}/é中文", f" {site}/spaces-around "]})
    assert created.status_code == 202, created.get_json()
    assert who.balance() == 9


def test_the_consoles_forms_refuse_them_and_keep_pasted_lists_working(app, site):
    who = new_customer(app, credits=10)
    browser = signed_in(who)
    csrf = form_token(browser, "/console/collections")
    crawl = browser.post("/console/collections", data={
        "csrf_token": csrf, "mode": "crawl", "url": hostile(site, "\x1b", "path")})
    assert crawl.status_code == 422 and "control characters" in crawl.get_data(as_text=True)
    # NEL and LS inside a pasted line stay in it (str.splitlines would have cut it in two)
    pasted = browser.post("/console/collections", data={
        "csrf_token": csrf, "mode": "batch",
        "urls": f"{site}/article\r\n{site}/a\x85{site}/b\r\n{site}/c\u2028d\r\n"})
    page = pasted.get_data(as_text=True)
    assert pasted.status_code == 422 and page.count("control characters") == 2, page
    assert who.get("/collections").get_json()["collections"] == []
    history = [row for row in who.activity() if row["operation"] == "collection"]
    assert [row["status"] for row in history] == ["failed", "failed"]
    assert history[-1]["url"] == hostile(site, "%1B", "path")  # the crawl's, percent-encoded
    assert url_lines(" a \r\n\r\n# no\rb\t\nc\x85d\n") == [(1, "a"), (4, "b"), (5, "c\x85d")]


def test_batch_code_refuses_them_by_the_same_rule():
    """``run_collection``/``start_collection`` check the API's rule before anything is
    made (``ValueError``, as the API's 422)."""
    for control in CONTROLS.values():
        with pytest.raises(ValueError, match=r"urls: \[1\] Must not contain control"):
            python_api.start_collection("acct_x", urls=["https://example.com/",
                                                        f"https://example.com/a{control}"])
        with pytest.raises(ValueError, match="Must not contain control characters"):
            python_api.start_collection("acct_x", mode="crawl",
                                        url=f"https://example.com/{control}")
    assert page_url_error("https://example.com/a%0D%0A?q=é中文") is None
    assert "U+000D at position 21" in page_url_error("https://example.com/a\r\n")
    assert control_character_error(" https://example.com/ ") is None


@pytest.mark.parametrize("name", CONTROLS)
@pytest.mark.parametrize("spider", [PageSpider, VideoSpider])
def test_a_single_page_spider_gives_one_failed_result_saying_why(spider, name):
    """``scrapy crawl page -a url=…`` (and a job enqueued by batch code): one failed result,
    ``validation_error``, no request made."""
    url = f"https://www.youtube.com/watch?v=pUbLiC_vid1#{CONTROLS[name]}{FORGED}"

    async def results() -> list:
        return [output async for output in spider(url=url).start()]

    [result] = asyncio.run(results())
    assert result.status == "failed" and result.url == url
    assert result.error["error"] == "validation_error"
    assert "control characters" in result.error["message"]


def test_the_multi_page_spiders_stop_at_once_naming_the_url_escaped():
    url = f"https://example.com/\x1b[2J{FORGED}"
    with pytest.raises(ValueError, match=r"site: 'https://example.com/\\x1b\[2J") as raised:
        SiteSpider(url=url)
    assert "\x1b" not in str(raised.value)
    with pytest.raises(ValueError, match=r"urls\[1\]: .*\\r\\n.*\(a control character\)"):
        BatchSpider(urls=["https://example.com/", f"https://example.com/\r\n{FORGED}"])
    with pytest.raises(ValueError, match="control characters"):
        as_http_url("sitemap", "https://example.com/\u2028")


def test_a_job_enqueued_with_one_fails_without_a_fetch(redis_url, workers, site, site_server):
    prefix = f"/never-{uuid.uuid4().hex[:8]}"
    queue = queues.queue(queues.INTERACTIVE, Redis.from_url(redis_url))
    job = queue.enqueue(jobs.scrape, hostile(site + prefix, "\r\n", "path"))
    page = job.latest_result(timeout=30).return_value
    assert page["status"] == "failed" and page["error"]["error"] == "validation_error"
    assert not [path for path in site_server.requests if path.startswith(prefix)]
