"""The per-host gate on a real Redis: a cap that holds for every caller, one page at a time
until the site's Crawl-delay is known, then the delay between permits."""

from __future__ import annotations

import time
import uuid

import pytest
from redis import Redis

from collecting import host_gate
from collecting.host_gate import HostGate, host_of
from tests.conftest import _redis_db
from tests.test_frontier import DB_OFFSET


@pytest.fixture
def gate(redis_url) -> HostGate:
    return HostGate(Redis.from_url(_redis_db(redis_url, DB_OFFSET)), cap=2, permit_seconds=30)


@pytest.fixture
def host() -> str:
    return f"{uuid.uuid4().hex}.test:8080"


def test_one_page_at_a_time_until_the_crawl_delay_is_known(gate, host):
    assert gate.acquire(host, "a") == 0
    assert gate.acquire(host, "b") > 0  # robots.txt not read yet
    gate.set_delay(host, 0)
    assert gate.acquire(host, "b") == 0
    assert gate.acquire(host, "c") > 0  # the cap: 2
    gate.release((host, "a"))
    assert gate.acquire(host, "c") == 0


def test_permits_given_back_and_asked_for_in_one_call_also_on_a_redis_without_the_script(
        redis_url, host, monkeypatch):
    """A slice's turn (collecting.slice): the pages done give their permits back first, so
    the next page of the same host can have one, in the same round trip. The script runs by
    its SHA; a Redis that lost it (restarted) gets it loaded again."""
    monkeypatch.setattr(host_gate, "_ACQUIRE", host_gate._ACQUIRE + f"-- {uuid.uuid4().hex}\n")
    gate = HostGate(Redis.from_url(_redis_db(redis_url, DB_OFFSET)), cap=2, permit_seconds=30)
    assert not gate.redis.script_exists(gate._acquire.sha)[0]
    gate.set_delay(host, 0)
    answers = gate.exchange([], [(host, "a"), (host, "b"), (host, "c")])
    assert answers[:2] == [0, 0] and answers[2] > 0  # the cap: 2
    assert gate.exchange([(host, "a")], [(host, "c"), (host, "d")])[0] == 0
    assert gate.acquire(host, "d") > 0  # b and c hold the two permits
    assert gate.exchange([], []) == []


def test_the_crawl_delay_spaces_the_permits(gate, host):
    assert gate.acquire(host, "a") == 0
    gate.set_delay(host, 2.0)  # read with page a: the next waits 2 s from now
    gate.release((host, "a"))
    wait_ms = gate.acquire(host, "b")
    assert 1500 < wait_ms <= 2000


def test_a_permit_of_a_dead_worker_expires(redis_url, host):
    gate = HostGate(Redis.from_url(_redis_db(redis_url, DB_OFFSET)), cap=1, permit_seconds=0.2)
    gate.set_delay(host, 0)
    assert gate.acquire(host, "killed") == 0
    assert gate.acquire(host, "b") > 0
    time.sleep(0.3)
    assert gate.acquire(host, "b") == 0


def test_hosts_are_host_and_port():
    assert host_of("HTTP://User@Example.COM:8080/a?b") == "example.com:8080"
    assert host_of("https://example.com/") == "example.com"
