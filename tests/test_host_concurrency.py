"""Politeness across concurrent jobs (``CRAWLER_HOST_CONCURRENCY``).

A warm worker runs many jobs at once, each its own Scrapy crawler; Scrapy's per-domain limit
is per crawler, so the per-host cap lives in the process's one download handler. The crawls
here run in a real warm crawler (``python -m tests.support.crawl_many``) against two instances
of the test site on two loopback addresses (two hosts); ``/slow/<tag>`` tells how many of a tag's
requests were open at once. The slot bookkeeping itself (cancelled waiters, idle hosts
dropped) is checked directly on :class:`crawler.host_slots.HostSlots`.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from crawler.host_slots import HostSlots, host_key
from tests.conftest import ROOT, WORKER_ENV
from tests.support.site.server import Server, serve
from tests.support.waits import wait_until

pytestmark = pytest.mark.stack  # starts processes (tests/conftest.py)

CAP = 3
HOST_A, HOST_B = "127.0.0.2", "127.0.0.3"
ENV = {
    **WORKER_ENV,
    "CRAWLER_ALLOWED_NETWORKS": f"{HOST_A}/32,{HOST_B}/32",
    "CRAWLER_HOST_CONCURRENCY": str(CAP),
    # Host A's slow pages must not time out, nor a crawl waiting for one of A's slots.
    "CRAWLER_DOWNLOAD_TIMEOUT": "15",
    "CRAWLER_CRAWL_TIMEOUT": "30",
}


@pytest.fixture(scope="module")
def hosts() -> Iterator[tuple[Server, Server]]:
    servers = serve(HOST_A, 0), serve(HOST_B, 0)
    yield servers
    for server in servers:
        server.shutdown()
        server.server_close()


def base(server: Server) -> str:
    host, port = server.server_address[:2]
    return f"http://{host}:{port}"


class Crawls:
    """A ``tests.support.crawl_many`` process: :meth:`start` crawls, :meth:`results` in end
    order."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.crawl_many"], cwd=ROOT, env={**os.environ, **ENV},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )

    def start(self, *urls: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("".join(f"{url}\n" for url in urls))
        self.proc.stdin.flush()

    def results(self) -> list[dict]:
        """Every crawl's line, once all have ended (stdin closed)."""
        out, _ = self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0
        return [json.loads(line) for line in out.splitlines()]

    def kill(self) -> None:
        with self.proc:  # closes its pipes, waits for it
            if self.proc.poll() is None:
                self.proc.kill()


@pytest.fixture
def crawls() -> Iterator[Crawls]:
    runner = Crawls()
    yield runner
    runner.kill()


def test_many_jobs_to_one_host_share_the_cap(hosts, crawls):
    a, _ = hosts
    tag = uuid.uuid4().hex
    crawls.start(*[f"{base(a)}/slow/{tag}?ms=600"] * 8)
    results = crawls.results()
    assert [r["status"] for r in results] == ["succeeded"] * 8, results
    # Not more than the cap, and the cap is used: 8 crawls at once kept 3 requests open.
    assert a.open_peak[tag] == CAP


def test_a_full_host_does_not_hold_up_jobs_to_another(hosts, crawls):
    a, b = hosts
    tag, other = uuid.uuid4().hex, uuid.uuid4().hex
    slow = f"{base(a)}/slow/{tag}?ms=2000"
    # One more than the cap: host A is full and has a crawl waiting for a slot.
    crawls.start(*[slow] * (CAP + 1))
    wait_until(lambda: a.open_now[tag] >= CAP, f"{CAP} open requests to host A")
    fast = f"{base(b)}/slow/{other}?ms=0"
    crawls.start(fast)
    results = crawls.results()
    assert [r["status"] for r in results] == ["succeeded"] * (CAP + 2), results
    # Host B's crawl, started last, ended first: it never waited for host A's slots.
    assert results[0]["url"] == fast
    assert a.open_peak[tag] == CAP


def test_a_job_given_up_on_while_it_waits_for_a_slot_never_fetches_its_page(hosts, crawls):
    a, _ = hosts
    busy, late = uuid.uuid4().hex, uuid.uuid4().hex
    crawls.start(*[f"{base(a)}/slow/{busy}?ms=2500"] * CAP)
    wait_until(lambda: a.open_now[busy] >= CAP, f"{CAP} open requests to host A")
    crawls.start(f"{base(a)}/slow/{late} 0.5")  # waits for a slot, given up on after 0.5 s
    results = crawls.results()
    assert [r["status"] for r in results[:1]] == ["raised"], results  # the late one, first
    assert "CrawlTimeout" in results[0]["error"]
    assert [r["status"] for r in results[1:]] == ["succeeded"] * CAP
    # Slots came free after it was given up on: its page was still never asked for.
    assert a.requests[f"/slow/{late}"] == 0


# --- the slots themselves ----------------------------------------------------------------------


def test_host_key_is_host_and_port_without_scheme():
    def key(url: str) -> str:
        return host_key(urlsplit(url))

    assert key("http://Example.COM/a") == key("http://example.com:80/b") == "example.com:80"
    assert key("https://example.com/") == "example.com:443"
    assert key("http://example.com:8080/") == "example.com:8080"
    assert key("http://[::1]:8000/") == "[::1]:8000"


async def _holder(slots: HostSlots, key: str, events: list[str], name: str,
                  release: asyncio.Event) -> None:
    async with slots.hold(key):
        events.append(f"{name} got it")
        await release.wait()


def test_a_waiter_cancelled_in_the_queue_leaves_it():
    async def scenario() -> None:
        slots, events = HostSlots(1), []
        release = asyncio.Event()
        first = asyncio.create_task(_holder(slots, "h:80", events, "first", release))
        second = asyncio.create_task(_holder(slots, "h:80", events, "second", release))
        await asyncio.sleep(0)
        assert events == ["first got it"] and slots.holders("h:80") == 1
        second.cancel()
        await asyncio.gather(second, return_exceptions=True)
        release.set()
        await first
        assert events == ["first got it"]
        # Nobody holds or waits: the host's entry is gone, and its slot is free again.
        assert len(slots) == 0
        third = asyncio.create_task(_holder(slots, "h:80", events, "third", release))
        await third
        assert events[-1] == "third got it"

    asyncio.run(scenario())


def test_a_waiter_cancelled_just_after_the_grant_hands_the_slot_on():
    """The semaphore hands the slot to the waiter at once; the waiter's task resumes later.
    Cancelled in between, the waiter must give the slot back, not keep it forever."""

    async def scenario() -> None:
        slots, events = HostSlots(1), []
        held = slots.hold("h:80")
        await held.__aenter__()
        second = asyncio.create_task(_holder(slots, "h:80", events, "second", asyncio.Event()))
        third = asyncio.create_task(_holder(slots, "h:80", events, "third", asyncio.Event()))
        await asyncio.sleep(0)
        assert slots.holders("h:80") == 1 and events == []  # held; second and third wait
        await held.__aexit__(None, None, None)  # the slot goes to second, not yet resumed
        second.cancel()
        await asyncio.gather(second, return_exceptions=True)
        await asyncio.sleep(0)
        assert events == ["third got it"]
        third.cancel()
        await asyncio.gather(third, return_exceptions=True)
        assert slots.holders("h:80") == 0 and len(slots) == 0

    asyncio.run(scenario())


def test_an_error_gives_the_slot_back_and_other_hosts_do_not_wait():
    async def scenario() -> None:
        slots, events = HostSlots(1), []
        release = asyncio.Event()
        holder = asyncio.create_task(_holder(slots, "a:80", events, "a", release))
        await asyncio.sleep(0)
        async with slots.hold("b:80"):  # host a is full; b is not held up
            events.append("b got it")
        with pytest.raises(RuntimeError):
            async with slots.hold("c:80"):
                raise RuntimeError("download failed")
        assert slots.holders("c:80") == 0
        release.set()
        await holder
        assert events == ["a got it", "b got it"] and len(slots) == 0

    asyncio.run(scenario())
