"""The SSRF battery: every forbidden target is refused with 403 source_policy, costs nothing,
and never reaches the loopback listener — through the API, and straight through a worker
(bypassing the API's pre-check) to show the resolver is the control that holds.
"""

from __future__ import annotations

import socket

import pytest
from rq import Queue

from tests.test_resolver import TRANSITION_REFUSALS
from worker import jobs, queues

TARGETS = [
    "http://0x7f000001:{port}/",
    "http://2130706433:{port}/",
    "http://0177.0.0.1:{port}/",
    "http://127.1:{port}/",
    "http://0:{port}/",
    "http://0.0.0.0:{port}/",
    "http://[::]:{port}/",
    "http://[::1]:{port}/",
    "http://[::ffff:127.0.0.1]:{port}/",
    "http://[64:ff9b::7f00:1]:{port}/",
    "http://[2002:7f00:1::]:{port}/",
    "http://[::127.0.0.1]:{port}/",
    "http://[::169.254.169.254]/latest/meta-data/",
    "http://[64:ff9b:1::7f00:1]:{port}/",
    "http://[64:ff9b:1::a9fe:a9fe]/latest/meta-data/",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.64.0.1/",
    "http://LOCALHOST:{port}/",
    "http://localhost.:{port}/",
    "file:///etc/passwd",
    "ftp://127.0.0.1:{port}/",
    "gopher://127.0.0.1:{port}/_x",
    "data:text/html,<title>x</title>",
    "http://a@127.0.0.1:{port}/",
    "http://user:pass@127.0.0.1:{port}/",
]


def _hostname_resolving_to_loopback() -> str | None:
    """A name that is not 'localhost' but resolves to this machine, when there is one."""
    for name in (socket.gethostname(), "ip6-localhost"):
        try:
            addresses = {info[4][0] for info in socket.getaddrinfo(name, 80)}
        except OSError:
            continue
        if addresses and all(a.startswith("127.") or a == "::1" for a in addresses):
            return name
    return None


@pytest.mark.parametrize("template", TARGETS)
def test_api_refuses_with_403_and_no_connection(strict_customer, hit_counter, template):
    url = template.format(port=hit_counter.port)
    before = hit_counter.hits
    response = strict_customer.post("/scrape", {"url": url})
    body = response.get_json()
    # Credentials in a URL are refused before the policy looks at the host (test_faults.py).
    expected = (422, "validation_error") if "@" in template else (403, "source_policy")
    assert (response.status_code, body["error"]) == expected, body
    assert strict_customer.balance() == 100
    assert strict_customer.activity()[0]["status"] == "failed"
    assert hit_counter.hits == before


def test_worker_resolver_refuses_even_without_the_api_precheck(
    strict_redis_url, strict_workers, hit_counter
):
    """Jobs enqueued directly (as a batch job would) get no help from the API's pre-check."""
    from redis import Redis

    queue = Queue(queues.INTERACTIVE, connection=Redis.from_url(strict_redis_url),
                  serializer=queues.SERIALIZER)
    targets = [t.format(port=hit_counter.port) for t in TARGETS]
    name = _hostname_resolving_to_loopback()
    if name:
        targets.append(f"http://{name}:{hit_counter.port}/")
    before = hit_counter.hits
    for url in targets:
        job = queue.enqueue(jobs.scrape, url)
        result = job.latest_result(timeout=30)
        assert result is not None, url
        page = result.return_value
        assert page["status"] == "failed", url
        assert page["error"]["error"] == "source_policy", (url, page["error"])
    assert hit_counter.hits == before


@pytest.mark.parametrize("path", ["/redirect-to-loopback", "/refresh-to-loopback"])
def test_hop_to_loopback_is_refused_at_that_hop(customer, site, hit_counter, path):
    before = hit_counter.hits
    response = customer.post("/scrape", {"url": f"{site}{path}"})
    body = response.get_json()
    assert response.status_code == 403, body
    assert body["error"] == "source_policy"
    assert str(hit_counter.port) in body["details"]["url"]
    assert customer.balance() == 100
    assert hit_counter.hits == before


@pytest.mark.parametrize(("address", "reason"), TRANSITION_REFUSALS.items())
def test_transition_forms_are_refused_by_the_api_naming_why(
        strict_customer, hit_counter, lenient_ipaddress, address, reason):
    """IPv4-compatible, NAT64 (local-use prefix too), 6to4, Teredo: refused by the policy's
    own rule, with ``ipaddress``'s lists as lenient as on a Python that judged them public."""
    before = hit_counter.hits
    response = strict_customer.post("/scrape", {"url": f"http://[{address}]:{hit_counter.port}/"})
    body = response.get_json()
    assert (response.status_code, body["error"]) == (403, "source_policy"), body
    assert body["message"] == f"Refused by source policy: {reason}."
    assert strict_customer.balance() == 100 and hit_counter.hits == before
