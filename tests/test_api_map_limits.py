"""POST /map's caps and fallbacks end to end (API → RQ → warm worker → loopback sites): the entry
cap, the deadline, sitemaps past 50 MB, ``/sitemap_index.xml`` when robots.txt names no sitemap,
``include_subdomains`` on real host names, and sitemaps of other hosts and private addresses,
never fetched. The sites' sitemaps are tests/support/site/map_limits.py.

The module runs its own Redis and one worker (tests/support/fakes/map_worker.py), configured for
what the session's pool cannot show:

- ``CRAWLER_CRAWL_TIMEOUT`` 5 s (the map's deadline: 4 s) under a 10 s download timeout, so only
  the deadline can cut a slow sitemap short;
- the entry cap lowered to :data:`CAP` (1,000,000 in production: see the worker's module);
- a scripted DNS: :data:`SITE_NAME`, its subdomains and :data:`OTHER_HOST` resolve to the test
  site's address, ``private-map.test`` to 127.0.0.1 and 127.0.0.2 (where the hit counter
  listens: a connection to the allowed address shows the name was asked for).

Each case gets a site of its own (its robots.txt names the sitemaps it is about, and its
request counts are its own).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask import Flask

from api import create_app
from launcher.embedded import start_redis
from tests.conftest import (
    SITE_HOST,
    WORKER_ENV,
    Customer,
    _start_workers,
    _stop,
    make_config,
    new_customer,
)
from tests.support.fakes.map_worker import MAX_LOCS_ENV
from tests.support.fakes.resolver import SCRIPT_ENV
from tests.support.site.map_limits import (
    EARLY,
    FALLBACK,
    LATE,
    OTHER_HOST,
    PADDED,
    SITE_NAME,
    SUB_OTHERS,
    SUB_OWN,
    SUB_SUBDOMAINS,
    VIA_OTHER,
)
from tests.support.site.server import HitCounter, Server, serve

pytestmark = pytest.mark.stack  # starts processes (tests/conftest.py)

#: The worker's cap on sitemap entries.
CAP = 1000
PRIVATE_NAME = "private-map.test"
SCRIPT = {**{host: [[SITE_HOST]] for host, _ in SUB_OWN + SUB_SUBDOMAINS + SUB_OTHERS},
          PRIVATE_NAME: [["127.0.0.1", SITE_HOST]]}
ENV = {**WORKER_ENV, "CRAWLER_CRAWL_TIMEOUT": "5", "CRAWLER_DOWNLOAD_TIMEOUT": "10",
       MAX_LOCS_ENV: str(CAP), SCRIPT_ENV: json.dumps(SCRIPT)}


@pytest.fixture(scope="module")
def pool(tmp_path_factory) -> Iterator[tuple[str, list[Any]]]:
    """The module's Redis URL and its one worker process."""
    directory = tmp_path_factory.mktemp("map-limits")
    redis_proc, redis_url = start_redis(directory)
    procs = _start_workers(redis_url, 1, ENV, directory / "workers.log",
                           module="tests.support.fakes.map_worker")
    yield redis_url, procs
    _stop(procs)
    redis_proc.terminate()
    redis_proc.wait(timeout=10)


@pytest.fixture(scope="module")
def hit_counter() -> HitCounter:
    """The module's own: its hits here are expected, and the session's counter must stay at
    zero for the SSRF tests that run after it in the same process."""
    return HitCounter()


@pytest.fixture(scope="module")
def map_app(pool, sqlite_url) -> Flask:
    return create_app(make_config(sqlite_url, pool[0]))


@pytest.fixture
def customer(map_app) -> Customer:
    return new_customer(map_app)


@pytest.fixture(scope="module")
def site() -> Iterator[Callable[..., Server]]:
    """Starts a site whose robots.txt names the given sitemaps (``{port}``, ``{hit}``: its port,
    the hit counter's) and no other; all stopped at the module's end."""
    started: list[Server] = []

    def start(*sitemaps: str, hit: int = 9, missing: tuple[str, ...] = ()) -> Server:
        server = serve(SITE_HOST, 0, missing=missing, robots_sitemap=False)
        port = server.server_address[1]
        server.RequestHandlerClass.robots_extra = "".join(  # type: ignore[attr-defined]
            f"Sitemap: {one.format(port=port, hit=hit)}\n" for one in sitemaps)
        started.append(server)
        return server

    yield start
    for server in started:
        server.shutdown()
        server.server_close()


def base(server: Server, host: str = SITE_HOST) -> str:
    return f"http://{host}:{server.server_address[1]}"


def mapped(customer: Customer, start: str, **options: Any) -> dict[str, Any]:
    """The map of ``start`` (only its sitemaps, unless ``options`` say otherwise)."""
    response = customer.post("/map", {"url": start, "sitemap": "only", **options})
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def listed(body: dict[str, Any]) -> set[str]:
    return {link["url"] for link in body["links"]}


@pytest.mark.parametrize("sitemap", ["many.xml", "many.txt"])
def test_the_entry_cap_is_exact(customer, site, sitemap):
    """Exactly the cap's entries: all read, not truncated; one more: the cap's read, the map
    says ``truncated`` and ``total_found`` counts what was read (XML and text sitemaps)."""
    at_cap = site(f"http://{SITE_HOST}:{{port}}/map/{sitemap}?from=0&n={CAP}")
    body = mapped(customer, f"{base(at_cap)}/map/start")
    assert (len(body["links"]), body["total_found"], body["truncated"]) == (CAP, CAP, False)

    past = site(f"http://{SITE_HOST}:{{port}}/map/{sitemap}?from=0&n={CAP + 1}")
    body = mapped(customer, f"{base(past)}/map/start")
    assert (len(body["links"]), body["total_found"], body["truncated"]) == (CAP, CAP, True)
    assert listed(body) == {f"{base(past)}/map/many/{n}" for n in range(CAP)}
    assert customer.balance() == 98  # a capped map is a map: one credit each


def test_the_cap_counts_entries_of_every_sitemap_and_the_worker_lives_on(customer, site, pool):
    """Two sitemaps of 60 % of the cap each: reading stops within the second, whichever came
    first; the limit cuts the list, not the count. The worker then maps another site."""
    part = CAP * 6 // 10
    server = site(*(f"http://{SITE_HOST}:{{port}}/map/many.xml?from={first}&n={part}"
                    for first in (0, part)))
    body = mapped(customer, f"{base(server)}/map/start", limit=10)
    assert (len(body["links"]), body["total_found"], body["truncated"]) == (10, CAP, True)
    assert listed(body) <= {f"{base(server)}/map/many/{n}" for n in range(2 * part)}
    assert not any(path.startswith("/map/many/") for path in server.requests)  # listed only
    assert server.requests["/sitemap.xml"] == server.requests["/sitemap_index.xml"] == 0

    assert all(proc.poll() is None for proc in pool[1])
    other = site(f"http://{SITE_HOST}:{{port}}/map/early.xml")
    after = mapped(customer, f"{base(other)}/map/start")
    assert listed(after) == {base(other) + path for path in EARLY}
    assert after["truncated"] is False


def test_at_the_deadline_the_map_answers_with_what_was_read(customer, site):
    """A sitemap that would answer after the map's deadline (and within the download timeout):
    the map answers at the deadline, 200 and one credit, with the sitemap read before it, and
    says ``truncated``. Had a download outlasted the deadline, the job would have outlasted its
    crawl budget (5 s) and failed. The worker then maps again at once."""
    server = site(f"http://{SITE_HOST}:{{port}}/map/early.xml",
                  f"http://{SITE_HOST}:{{port}}/map/late.xml?ms=8000")
    body = mapped(customer, f"{base(server)}/map/start")
    assert listed(body) == {base(server) + path for path in EARLY}
    assert body["truncated"] is True and body["total_found"] == len(EARLY)
    assert body["sitemaps"] == [f"{base(server)}/map/early.xml"]
    assert server.requests["/map/late.xml"] == 1  # asked, not waited for
    assert body["credits_used"] == 1 and customer.balance() == 99
    assert not set(listed(body)) & {base(server) + path for path in LATE}

    again = mapped(customer, f"{base(server)}/map/start", sitemap="skip")
    assert again["truncated"] is False and again["sitemaps"] == []


def test_sitemaps_past_50_mb_give_nothing(customer, site):
    """A gzip sitemap over 50 MB once decompressed, and a plain one over 50 MB: neither gives
    any of its entries (those before the padding included); the small one named beside them
    still counts."""
    server = site(*(f"http://{SITE_HOST}:{{port}}/map/{name}"
                    for name in ("padded.xml.gz", "padded.xml", "early.xml")))
    body = mapped(customer, f"{base(server)}/map/start")
    assert listed(body) == {base(server) + path for path in EARLY}
    assert not listed(body) & {base(server) + path for path in PADDED}
    assert server.requests["/map/padded.xml.gz"] == server.requests["/map/padded.xml"] == 1


def test_without_a_sitemap_in_robots_txt_the_index_at_sitemap_index_xml_is_read(
        customer, site):
    """robots.txt names no sitemap, ``/sitemap.xml`` is a 404: ``/sitemap_index.xml`` and the
    sitemap it names are read, and listed in ``sitemaps``."""
    server = site(missing=("/sitemap.xml",))
    body = mapped(customer, f"{base(server)}/map/start")
    assert listed(body) == {base(server) + path for path in FALLBACK}
    assert body["sitemaps"] == [f"{base(server)}/sitemap_index.xml",
                                f"{base(server)}/map/fallback.xml"]
    assert body["truncated"] is False
    assert server.requests["/sitemap.xml"] == server.requests["/sitemap_index.xml"] == 1


@pytest.mark.parametrize("include_subdomains", [False, True])
def test_subdomains_only_when_asked_other_hosts_never(
        customer, site, hit_counter: HitCounter, include_subdomains):
    """The site ``mapsite.test`` (its robots.txt names its sitemap index, and a sitemap of a
    name that resolves to 127.0.0.1 and the site's address): its own URLs (``www.`` is the
    site), its subdomains' with ``include_subdomains``, never another host's or a look-alike's.
    The index's entry on another host and the listed pages are never fetched; the private
    name's sitemap is asked for, and 127.0.0.1 never connected to."""
    on_loopback, on_site = hit_counter.hits_on("127.0.0.1"), hit_counter.hits_on(SITE_HOST)
    server = site(f"http://{SITE_NAME}:{{port}}/map/sub-index.xml",
                  f"http://{PRIVATE_NAME}:{{hit}}/sitemap.xml", hit=hit_counter.port)
    port = server.server_address[1]
    body = mapped(customer, f"http://{SITE_NAME}:{port}/map/start",
                  include_subdomains=include_subdomains)
    expected = SUB_OWN + (SUB_SUBDOMAINS if include_subdomains else ())
    assert listed(body) == {f"http://{host}:{port}{path}" for host, path in expected}
    assert body["total_found"] == len(expected) and body["truncated"] is False
    assert body["sitemaps"] == [f"http://{SITE_NAME}:{port}/map/sub-index.xml",
                                f"http://{SITE_NAME}:{port}/map/sub.xml"]
    assert server.requests["/map/sub-index.xml"] == 1  # though it names itself
    assert server.requests["/map/other-sitemap.xml"] == 0  # an index entry of another host
    assert not any(server.requests[path] for _, path in SUB_OWN + SUB_SUBDOMAINS + SUB_OTHERS)
    assert server.requests[VIA_OTHER] == 0
    assert hit_counter.hits_on(SITE_HOST) > on_site  # the private name was looked up…
    assert hit_counter.hits_on("127.0.0.1") == on_loopback  # …and its private address refused
    assert OTHER_HOST not in json.dumps(body)
