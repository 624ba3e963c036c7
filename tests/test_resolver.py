"""The filtering resolver on its own: what reaches the caller for each answer DNS could give.

``FilteringResolver`` is installed, as in the worker, on a reactor whose own resolver is a
scripted one (``tests.support.fakes.resolver``) answering what each test chooses; Twisted's
``MemoryReactor`` is that reactor, so nothing runs and nothing is connected to. What the
outer receiver gets is what Twisted's ``HostnameEndpoint`` would connect to.
"""

from __future__ import annotations

import pytest
from twisted.internet.testing import MemoryReactor

from core.policy import PolicyRefusal, SourcePolicy
from crawler import resolver as resolver_module
from crawler.resolver import FilteringResolver
from tests.support.fakes.resolver import ScriptedResolver

PUBLIC_V4 = "93.184.216.34"
PUBLIC_V6 = "2606:2800:220:1:248:1893:25c8:1946"


class Receiver:
    """What Twisted's endpoint would see: the addresses it would connect to."""

    def __init__(self):
        self.began = False
        self.addresses: list[tuple[str, int]] = []
        self.completed = False

    def resolutionBegan(self, resolution) -> None:
        self.began = True

    def addressResolved(self, address) -> None:
        self.addresses.append((address.host, address.port))

    def resolutionComplete(self) -> None:
        self.completed = True


def filtering(script: dict[str, list[list[str]]], policy: SourcePolicy | None = None):
    """(filtering resolver, scripted inner resolver), installed on a memory reactor."""
    reactor = MemoryReactor()
    inner = ScriptedResolver(script)
    reactor.installNameResolver(inner)
    outer = FilteringResolver(reactor, policy or SourcePolicy())
    outer.install_on_reactor()
    assert reactor.nameResolver is outer
    return outer, inner


def resolve(resolver: FilteringResolver, name: str, port: int = 443) -> list[str]:
    receiver = Receiver()
    resolver.resolveHostName(receiver, name, port)
    assert receiver.began and receiver.completed
    return [host for host, _ in receiver.addresses]


REFUSED_ANSWERS = [
    "127.0.0.1", "127.8.9.10", "10.1.2.3", "172.16.0.1", "172.31.255.254", "192.168.1.1",
    "169.254.169.254", "100.64.0.1", "100.127.255.254", "0.0.0.0", "255.255.255.255",
    "224.0.0.1", "239.255.255.250", "240.0.0.1",
    "::", "::1", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1", "ff0e::1",
    "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254",
    # 6to4 of 127.0.0.1, of 192.168.1.1: global prefixes, refused for the IPv4 they carry.
    "2002:7f00:1::", "2002:c0a8:101::1",
    "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo, client 10.0.0.1
    "64:ff9b::a00:1", "64:ff9b::7f00:1",  # NAT64 of 10.0.0.1, of 127.0.0.1
    "::127.0.0.1", "::169.254.169.254",  # IPv4-compatible (deprecated)
    "64:ff9b:1::7f00:1", "64:ff9b:1::a9fe:a9fe",  # the local-use NAT64 prefix (RFC 8215)
]
#: IPv6 transition forms refused whatever IPv4 address they carry, with the reason given.
TRANSITION_REFUSALS = {
    "::127.0.0.1": "127.0.0.1 is not a public address",
    "::169.254.169.254": "169.254.169.254 is not a public address",
    "::8.8.8.8": "::808:808 is an IPv4-compatible address (deprecated), not a public address",
    "64:ff9b:1::7f00:1": "64:ff9b:1::7f00:1 is a local-use NAT64 address, not a public address",
    "64:ff9b:1::808:808": "64:ff9b:1::808:808 is a local-use NAT64 address, not a public address",
    "64:ff9b::808:808": "64:ff9b::808:808 is a NAT64 address, not a public address",
    "64:ff9b::a9fe:a9fe": "169.254.169.254 is not a public address",
    "2002:a9fe:a9fe::1": "169.254.169.254 is not a public address",  # 6to4: its IPv4 judged
    "2001:0:4136:e378:8000:63bf:f7f7:f7f7":  # Teredo, client 8.8.8.8
        "2001:0:4136:e378:8000:63bf:f7f7:f7f7 is a Teredo address, not a public address",
}


@pytest.mark.parametrize(("address", "reason"), TRANSITION_REFUSALS.items())
def test_transition_forms_are_refused_by_the_policys_own_rule(lenient_ipaddress, address,
                                                              reason):
    resolver, _ = filtering({"evil.example": [[address]]})
    assert resolve(resolver, "evil.example", 80) == []
    assert resolver.refusal("evil.example") == reason


@pytest.mark.parametrize("address", REFUSED_ANSWERS)
def test_a_non_public_answer_never_reaches_the_caller(address):
    resolver, inner = filtering({"evil.example": [[address]]})
    assert resolve(resolver, "evil.example", 80) == []
    assert inner.asked == ["evil.example"]
    assert "is not a public address" in resolver.refusal("evil.example")


@pytest.mark.parametrize("address", [PUBLIC_V4, PUBLIC_V6, "2002:5db8:d822::1", "8.8.8.8"])
def test_a_public_answer_reaches_the_caller_with_its_port(address):
    resolver, _ = filtering({"good.example": [[address]]})
    receiver = Receiver()
    resolver.resolveHostName(receiver, "good.example", 443)
    assert receiver.addresses == [(address, 443)]
    assert resolver.refusal("good.example") is None


def test_a_mixed_answer_passes_only_its_public_addresses():
    answer = ["127.0.0.1", PUBLIC_V4, "10.0.0.1", "::ffff:192.168.0.1", PUBLIC_V6, "fe80::1"]
    resolver, _ = filtering({"mixed.example": [answer]})
    assert resolve(resolver, "mixed.example") == [PUBLIC_V4, PUBLIC_V6]
    # Something was allowed: a failure to connect later is not the policy's doing.
    assert resolver.refusal("mixed.example") is None


def test_public_addresses_only_on_allowed_ports():
    resolver, _ = filtering({"ssh.example": [[PUBLIC_V4, PUBLIC_V6]]})
    assert resolve(resolver, "ssh.example", 22) == []
    assert resolver.refusal("ssh.example") == "port 22 is not allowed"
    assert resolve(resolver, "ssh.example", 443) == [PUBLIC_V4, PUBLIC_V6]
    assert resolve(resolver, "ssh.example", 8080) == [PUBLIC_V4, PUBLIC_V6]


def test_an_operator_port_list_replaces_the_default():
    policy = SourcePolicy.from_lists("", "443,2222", "")
    resolver, _ = filtering({"ssh.example": [[PUBLIC_V4]]}, policy)
    assert resolve(resolver, "ssh.example", 2222) == [PUBLIC_V4]
    assert resolve(resolver, "ssh.example", 80) == []


def test_inside_an_allowed_network_any_port_but_nothing_beyond_it():
    policy = SourcePolicy.from_lists("10.0.0.0/8, fd00::/8", "", "")
    answer = ["10.1.2.3", "fd00::5", "192.168.1.1", "127.0.0.1", "fc00::1"]
    resolver, _ = filtering({"intranet.example": [answer]}, policy)
    assert resolve(resolver, "intranet.example", 22) == ["10.1.2.3", "fd00::5"]
    assert resolve(resolver, "intranet.example", 6379) == ["10.1.2.3", "fd00::5"]


def test_a_rebinding_name_is_judged_at_every_lookup():
    resolver, inner = filtering({"rebind.example": [[PUBLIC_V4], ["127.0.0.1"], [PUBLIC_V4]]})
    assert resolve(resolver, "rebind.example") == [PUBLIC_V4]
    assert resolve(resolver, "rebind.example") == []
    assert resolver.refusal("rebind.example") == "127.0.0.1 is not a public address"
    # Public again: the old reason must not explain a later, genuine DNS failure.
    assert resolve(resolver, "rebind.example") == [PUBLIC_V4]
    assert resolver.refusal("rebind.example") is None
    assert inner.asked == ["rebind.example"] * 3


def test_the_refusal_is_found_under_the_spelling_the_url_has():
    """Twisted asks for an IDN in Unicode; the error handler looks it up by the URL's host."""
    resolver, inner = filtering({"xn--bcher-kva.example": [["10.0.0.1"]]})
    assert resolve(resolver, "Bücher.example") == []
    assert inner.asked == ["xn--bcher-kva.example"]
    assert "10.0.0.1" in resolver.refusal("xn--bcher-kva.example")
    assert "10.0.0.1" in resolver.refusal("bücher.example.")


def test_an_idn_is_asked_for_as_twisted_encodes_it():
    """IDNA 2008: faß is xn--fa-hia, a different domain from fass (what IDNA 2003 makes)."""
    resolver, inner = filtering({"xn--fa-hia.example": [[PUBLIC_V4]]})
    assert resolve(resolver, "faß.example") == [PUBLIC_V4]
    assert inner.asked == ["xn--fa-hia.example"]


def test_the_refusal_memory_is_bounded(monkeypatch):
    monkeypatch.setattr(resolver_module, "REFUSALS_KEPT", 50)
    names = [f"host{i}.example" for i in range(60)]
    resolver, _ = filtering({name: [["10.0.0.1"]] for name in names})
    for name in names:
        assert resolve(resolver, name) == []
    assert [resolver.refusal(name) for name in names[:10]] == [None] * 10
    assert all(resolver.refusal(name) for name in names[10:])


BLOCKED = SourcePolicy.from_lists("", "", "blocked.example, *.tracker.example, Bücher.example")


@pytest.mark.parametrize("name", [
    "blocked.example", "www.blocked.example", "A.B.BLOCKED.EXAMPLE", "blocked.example.",
    "tracker.example", "cdn.tracker.example", "xn--bcher-kva.example", "www.bücher.example",
])
def test_a_blocked_domain_is_refused_without_asking_dns(name):
    resolver, inner = filtering({name: [[PUBLIC_V4]]}, BLOCKED)
    assert resolve(resolver, name) == []
    assert inner.asked == []
    assert "block list" in resolver.refusal(name)


@pytest.mark.parametrize("name", ["notblocked.example", "blocked.example.org", "tracker.exam"])
def test_only_the_blocked_domain_and_its_subdomains_are_blocked(name):
    resolver, inner = filtering({name: [[PUBLIC_V4]]}, BLOCKED)
    assert resolve(resolver, name) == [PUBLIC_V4]
    assert inner.asked == [name]


INVALID_NAMES = [
    "", ".", "a..example", ".a.example", "xn--", "xn--.example", "xn--zz.example",
    "a" * 64 + ".example", ".".join(["a" * 60] * 5), "exa mple.example", "exa%6dple.example",
    "a/b.example", "a@b.example", "1.2.3.4.5", "example.123", "example.0x7f", "256.1.1.1",
]


@pytest.mark.parametrize("name", INVALID_NAMES)
def test_an_invalid_name_is_never_handed_to_the_system_resolver(name):
    resolver, inner = filtering({name: [[PUBLIC_V4]]})
    assert resolve(resolver, name) == []
    assert inner.asked == []
    assert "not a valid host name" in resolver.refusal(name)


@pytest.mark.parametrize("name", ["localhost", "LOCALHOST.", "ip6-localhost", "a.localhost"])
def test_names_of_this_machine_are_refused_without_asking_dns(name):
    resolver, inner = filtering({name: [[PUBLIC_V4]]})
    assert resolve(resolver, name) == []
    assert inner.asked == []


@pytest.mark.parametrize("literal", [
    "127.0.0.1.", "127.0.0.1", "0x7f000001", "2130706433", "0177.0.0.1", "127.1", "0",
    "10.0.0.1.", "::1", "[::1]", "::ffff:127.0.0.1",
])
def test_a_non_public_ip_literal_is_refused_as_that_address_before_any_lookup(literal):
    resolver, inner = filtering({literal: [[PUBLIC_V4]]})
    assert resolve(resolver, literal, 80) == []
    assert inner.asked == []
    assert "is not a public address" in resolver.refusal(literal)


def test_a_public_literal_is_asked_for_in_its_plain_spelling():
    resolver, inner = filtering({PUBLIC_V4: [[PUBLIC_V4]]})
    assert resolve(resolver, PUBLIC_V4 + ".") == [PUBLIC_V4]
    assert inner.asked == [PUBLIC_V4]
    assert resolve(resolver, PUBLIC_V4 + ".", 22) == []
    assert inner.asked == [PUBLIC_V4]


@pytest.mark.parametrize("host", [
    "www.blocked.example", "a..example", "xn--", "127.0.0.1.", "example.123", "localhost.",
    "blocked.example.org", "good.example", "bücher.example", "under_score.example",
])
def test_the_url_precheck_and_the_resolver_apply_one_rule(host):
    """What the resolver refuses before DNS, the URL pre-check refuses too, and vice versa."""
    resolver, inner = filtering({}, BLOCKED)
    resolve(resolver, host)
    refused_by_resolver = not inner.asked
    try:
        BLOCKED.check_url(f"https://{host}/")
    except PolicyRefusal:
        refused_by_url = True
    else:
        refused_by_url = False
    assert refused_by_url == refused_by_resolver


@pytest.mark.parametrize(("url", "fetched"), [
    ("http://faß.de/x?q=1", "http://xn--fa-hia.de/x?q=1"),
    ("https://Bücher.example:8443/ä", "https://xn--bcher-kva.example:8443/%C3%A4"),
    ("http://example.com/", "http://example.com/"),
])
def test_the_spider_fetches_the_international_name_the_policy_judged(url, fetched):
    """Scrapy alone would turn faß.de into fass.de (UTS 46 transitional), another domain."""
    from scrapy import Request

    from core.policy import ascii_url

    assert Request(ascii_url(url)).url == fetched
