"""Collections from batch code (``collecting.python_api``): started without the API, run by real
workers on a private Redis, waited on, read back — the snippet of docs/python.md as written, and the
API's rules (plan limits, balance, credits, history) holding for it too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from collecting.python_api import (
    CollectionTimeout,
    run_collection,
    start_collection,
    wait_collection,
)
from collecting.start import TooManyPages, TooManyUrls
from core.config import variables
from core.policy import PolicyRefusal
from storage import collections
from storage.collections import CollectionLimit
from storage.ledger import InsufficientCredits
from tests.conftest import ROOT, Customer, new_customer
from tests.support.collection_stack import Stack
from tests.support.docs import doc_code
from tests.support.site import crawlsite


@pytest.fixture(scope="module")
def stack(tmp_path_factory, sqlite_url, site) -> Iterator[Stack]:
    stack = Stack(tmp_path_factory.mktemp("batch-collections"), sqlite_url, site, workers=1)
    yield stack
    stack.close()


def customer(stack: Stack, credits: int = 100, plan: str = "standard") -> Customer:
    return new_customer(stack.app, credits=credits, plan=plan)


def path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def test_the_documented_snippet_runs_a_batch_and_reads_its_results(stack, site):
    """docs/python.md, "Collections from batch code", verbatim but for the account and the URLs
    (the test site's), run as batch code runs: its own process, the deployment's variables."""
    who = customer(stack, credits=10)
    code = doc_code("docs/python.md", "Collections from batch code", "python")
    for old, new in (('"acct_0123456789abcdef"', who.account_id),
                     ('"https://example.com/"', f"{site}/article"),
                     ('"https://example.com/about"', f"{site}/missing")):
        assert old in code
        code = code.replace(old, json.dumps(new))
    env = {k: v for k, v in os.environ.items() if k not in variables()}
    env.update({**stack.env, "REDIS_URL": stack.redis_url})
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0] == "completed 1 1"
    assert sorted(lines[1:]) == [
        f"failed {site}/missing {{'error': 'target_http_error', 'message': "
        "'The target answered HTTP 404.'}",
        f"succeeded {site}/article Tide tables of the Thames estuary"]
    assert who.balance() == 9
    line = next(a for a in who.activity() if a["operation"] == "collection")
    assert line["credits"] == 1 and line["collection_id"]


def test_a_crawl_from_batch_code_stores_and_bills_as_the_api(stack, site):
    who = customer(stack)
    run = run_collection(who.account_id, mode="crawl", url=f"{site}/site/", max_depth=1,
                         use_sitemap=False, wait=120, config=stack.config)
    assert (run.collection.status, run.collection.stop_reason) == ("completed", None)
    results = list(run.results)
    same = {"/site/moved": "/site/a", "/site/canon": "/site/c"}
    assert sorted(same.get(path(r["url"]), path(r["url"])) for r in results) == sorted(
        crawlsite.STORED[1])
    assert run.collection.robots_blocked == 0 and run.collection.succeeded == len(results)
    assert run.collection.credits_used == len(results) == 100 - who.balance()
    # the API shows the same collection and the same results
    body = who.get(f"/collections/{run.collection.id}/results?limit=100").get_json()
    assert body["results"] == results


def test_waiting_is_bounded_and_can_resume(stack, site):
    who = customer(stack)
    row = start_collection(who.account_id, urls=[f"{site}/slow/batch-wait?ms=1500"],
                           config=stack.config)
    assert row.status == "queued"
    with pytest.raises(CollectionTimeout) as timeout:
        wait_collection(row.id, wait=0, config=stack.config)
    assert timeout.value.collection_id == row.id
    run = wait_collection(row.id, wait=120, config=stack.config)
    assert run.collection.status == "completed"
    assert [r["status"] for r in run.results] == ["succeeded"]


SITE, PAGE = "https://example.com/", "https://example.com/a"


@pytest.mark.parametrize("options", [
    dict(mode="crawl", url=SITE, use_sitemap="no"),  # a string: it was taken as yes
    dict(mode="crawl", url=SITE, max_pages=True),
    dict(mode="crawl", url=SITE, max_depth=True),
    dict(mode="crawl", url=SITE, include_paths=[""]),
    dict(mode="crawl", url=SITE, exclude_paths=["ok", "(?=x)"]),  # RE2, which matches, refuses it
    dict(mode="crawl", url=SITE, exclude_paths=[f"^/p{n}" for n in range(51)]),
    dict(mode="crawl", url=SITE, urls=[PAGE]),
    dict(mode="crawl", url="https://user:secret@example.com/"),
    dict(mode="batch", urls=[PAGE], url=SITE),
    dict(mode="batch", urls=[PAGE], max_pages=5),
    dict(mode="batch", urls=["https://user:secret@example.com/"]),
    dict(mode="batch", urls=["http://[::1/"]),
    dict(mode="batch", urls=["http://example.com:99999/"]),
], ids=lambda options: "-".join(options))
def test_batch_code_refuses_what_the_api_refuses(stack, options):
    """``start_collection`` takes the API's fields with the API's rules (docs/python.md): a value
    the API answers 422 raises ValueError, before anything is created."""
    who = customer(stack)
    with pytest.raises(ValueError):
        start_collection(who.account_id, config=stack.config, **options)
    rows, _ = collections.page(stack.app.extensions["webdata.db"], who.account_id)
    assert rows == []


def test_batch_code_strips_urls_as_the_api_does(stack, site):
    """Surrounding spaces go; a control character anywhere, a line end read with the URL from
    a file included, is refused (ValueError, the API's 422)."""
    who = customer(stack)
    with pytest.raises(ValueError, match=r"\[0\] Must not contain control characters: U\+000A"):
        start_collection(who.account_id, urls=[f"  {site}/article \n"], config=stack.config)
    row = start_collection(who.account_id, urls=[f"  {site}/article "], config=stack.config)
    run = wait_collection(row.id, wait=120, config=stack.config)
    assert [r["url"] for r in run.results] == [f"{site}/article"]


def test_batch_code_meets_the_plans_limits_and_the_balance(stack, site):
    free = customer(stack, plan="free")
    refusals = {
        TooManyUrls: dict(urls=[f"{site}/p{n}" for n in range(101)]),
        TooManyPages: dict(mode="crawl", url=f"{site}/", max_pages=101),
        PolicyRefusal: dict(mode="crawl", url="http://127.0.0.1:9/"),
        ValueError: dict(urls=["https://example.com/", "ftp://example.com/"]),
    }
    for error, options in refusals.items():
        with pytest.raises(error):
            start_collection(free.account_id, config=stack.config, **options)
    with pytest.raises(ValueError, match="include_paths"):
        start_collection(free.account_id, mode="crawl", url=f"{site}/",
                         include_paths=["("], config=stack.config)
    with pytest.raises(ValueError, match=r"include_paths: \[1\] Not a valid regular expression: "
                                         r"invalid escape sequence: \\1\. RE2 syntax is accepted"):
        start_collection(free.account_id, mode="crawl", url=f"{site}/",
                         include_paths=["^/ok/", r"(a)\1"], config=stack.config)
    with pytest.raises(InsufficientCredits):
        start_collection(customer(stack, credits=0).account_id, urls=[f"{site}/article"],
                         config=stack.config)
    first = start_collection(free.account_id, urls=[f"{site}/slow/batch-limit?ms=1500"],
                             config=stack.config)
    with pytest.raises(CollectionLimit):  # free: one collection at a time
        start_collection(free.account_id, urls=[f"{site}/article"], config=stack.config)
    assert wait_collection(first.id, wait=120, config=stack.config).collection.succeeded == 1
    rows, _ = collections.page(stack.app.extensions["webdata.db"], free.account_id)
    assert [row.id for row in rows] == [first.id]  # the refused ones left nothing behind
