"""The filtering resolver in real crawls, where the URL pre-check cannot help.

A warm worker runs over a scripted system resolver (``python -m tests.support.fakes.resolver``):
names like ``loopback.test`` resolve to loopback although nothing in their URL says so, so the API's
pre-check and ``SourcePolicyMiddleware`` both let them through (the pool, like the normal one,
allows the test site's network, so a name may use any port). Only the resolver stands between
the crawl and the loopback listener (``hit_counter``), which tells which local address each
connection came in on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from redis import Redis
from rq import Queue

from api import create_app
from tests.conftest import (
    SITE_HOST,
    WORKER_ENV,
    _redis_db,
    _start_workers,
    _stop,
    make_config,
    new_customer,
)
from tests.support.fakes.resolver import SCRIPT_ENV
from worker import jobs, queues

LOOPBACK = "127.0.0.1"
SCRIPT = {
    "loopback.test": [[LOOPBACK]],
    "mapped.test": [["::ffff:127.0.0.1"]],
    # The refused address first: unfiltered, Twisted would connect to it before the other.
    "mixed.test": [[LOOPBACK, SITE_HOST]],
    # The first lookup (robots.txt) answers the allowed address, every later one loopback.
    "rebind.test": [[SITE_HOST], [LOOPBACK]],
    "site.test": [[SITE_HOST]],
}


@pytest.fixture(scope="session")
def scripted_redis_url(redis_url) -> str:
    return _redis_db(redis_url, 5)


@pytest.fixture(scope="session")
def scripted_workers(scripted_redis_url, tmp_path_factory) -> Iterator[list]:
    log = tmp_path_factory.mktemp("logs") / "scripted-dns-workers.log"
    env = {**WORKER_ENV, SCRIPT_ENV: json.dumps(SCRIPT)}
    procs = _start_workers(scripted_redis_url, 1, env, log, module="tests.support.fakes.resolver")
    yield procs
    _stop(procs)


@pytest.fixture(scope="session")
def scripted_app(sqlite_url, scripted_redis_url, scripted_workers):
    return create_app(make_config(sqlite_url, scripted_redis_url))


@pytest.fixture
def scripted_customer(scripted_app):
    return new_customer(scripted_app)


def enqueue_scrape(redis_url: str, url: str) -> dict:
    """A job straight on the queue, as a batch job or a crawl link would be: no API pre-check."""
    queue = Queue(queues.INTERACTIVE, connection=Redis.from_url(redis_url),
                  serializer=queues.SERIALIZER)
    result = queue.enqueue(jobs.scrape, url).latest_result(timeout=30)
    assert result is not None, url
    return result.return_value


def test_a_name_resolved_by_the_scripted_dns_is_fetched(scripted_customer, site_server):
    """The control for the tests below: the worker really asks the scripted resolver."""
    url = f"http://site.test:{site_server.server_address[1]}/article"
    response = scripted_customer.post("/scrape", {"url": url})
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["title"]


@pytest.mark.parametrize("name", ["loopback.test", "mapped.test"])
def test_a_name_resolving_to_loopback_is_refused_with_no_connection(
    scripted_customer, hit_counter, name
):
    url = f"http://{name}:{hit_counter.port}/"
    before = hit_counter.hits
    response = scripted_customer.post("/scrape", {"url": url})
    body = response.get_json()
    assert response.status_code == 403, body
    assert body["error"] == "source_policy"
    assert "is not a public address" in body["message"]
    assert scripted_customer.balance() == 100
    assert scripted_customer.activity()[0]["status"] == "failed"
    assert hit_counter.hits == before


def test_of_a_mixed_answer_only_the_allowed_address_is_connected_to(
    scripted_redis_url, scripted_workers, hit_counter
):
    on_loopback, on_site = hit_counter.hits_on(LOOPBACK), hit_counter.hits_on(SITE_HOST)
    page = enqueue_scrape(scripted_redis_url, f"http://mixed.test:{hit_counter.port}/")
    assert page["status"] == "failed"  # the listener hangs up without answering
    assert hit_counter.hits_on(SITE_HOST) > on_site
    assert hit_counter.hits_on(LOOPBACK) == on_loopback


def test_a_name_rebinding_to_loopback_after_its_first_lookup_never_reaches_it(
    scripted_redis_url, scripted_workers, hit_counter
):
    """robots.txt is fetched from the first answer; the page's own lookup gets loopback."""
    on_loopback, on_site = hit_counter.hits_on(LOOPBACK), hit_counter.hits_on(SITE_HOST)
    page = enqueue_scrape(scripted_redis_url, f"http://rebind.test:{hit_counter.port}/")
    assert page["status"] == "failed"
    assert page["error"]["error"] == "source_policy", page["error"]
    assert hit_counter.hits_on(SITE_HOST) == on_site + 1  # robots.txt, at the first answer
    assert hit_counter.hits_on(LOOPBACK) == on_loopback
