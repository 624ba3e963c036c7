"""A hostname resolver that hands Twisted only addresses the source policy allows.

Twisted's ``HostnameEndpoint`` (what Scrapy's HTTP handler connects through) asks the reactor's
``nameResolver`` even for IP literals, and connects to exactly the addresses it is given. So
filtering here checks the very address that is connected to — no rebinding window — on every
hop: redirects, meta refresh, robots.txt. Before any lookup the name itself goes through
:meth:`SourcePolicy.host_refusal`, the URL pre-check's rule: a blocked domain, a name of this
machine or a syntactically invalid name is never handed to the system resolver, whichever
request asked (one that skipped the middleware included), and an IP literal is judged as that
address. A hostname refused, or whose addresses were all refused, fails with a
``DNSLookupError``; :meth:`FilteringResolver.refusal` remembers why, so the failure can be
reported as ``source_policy`` rather than as a DNS error.
"""

from __future__ import annotations

import functools
import logging
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from twisted.internet.interfaces import (
    IHostnameResolver,
    IHostResolution,
    IResolutionReceiver,
)
from zope.interface import implementer

from core.controls import escaped
from core.policy import SourcePolicy, host_name, literal_address

if TYPE_CHECKING:
    from collections.abc import Sequence

    from twisted.internet.interfaces import IAddress

logger = logging.getLogger(__name__)

#: How many refused hostnames are remembered for error reporting.
REFUSALS_KEPT = 4096


def refusal_key(host: str) -> str:
    """One spelling per host: Twisted asks for the Unicode form of an IDN, the URL holds
    punycode; ``127.0.0.1.`` and ``0x7f000001`` are ``127.0.0.1``."""
    ip = literal_address(host)
    if ip is not None:
        return str(ip)
    try:
        return host_name(host)
    except ValueError:
        return host.lower()


@implementer(IHostResolution)
class _RefusedResolution:
    """The resolution handed to a receiver when the name was refused before any lookup."""

    def __init__(self, name: str):
        self.name = name

    def cancel(self) -> None:
        """Nothing is in flight."""


@implementer(IResolutionReceiver)
class _FilteringReceiver:
    def __init__(self, receiver: Any, resolver: FilteringResolver, host: str, port: int):
        self._receiver = receiver
        self._resolver = resolver
        self._host = host
        self._port = port
        self._allowed = 0
        self._refused: str | None = None

    def resolutionBegan(self, resolution: IHostResolution) -> None:
        self._receiver.resolutionBegan(resolution)

    def addressResolved(self, address: IAddress) -> None:
        reason = self._resolver.policy.address_refusal(address.host, self._port)  # type: ignore[attr-defined]
        if reason is None:
            self._allowed += 1
            self._receiver.addressResolved(address)
        else:
            self._refused = reason

    def resolutionComplete(self) -> None:
        if self._refused and not self._allowed:
            logger.info("Refused %s:%s by source policy: %s", escaped(self._host), self._port,
                        escaped(self._refused))
            self._resolver.remember_refusal(self._host, self._refused)
        elif self._allowed:
            self._resolver.forget_refusal(self._host)  # a later DNS failure is DNS's
        self._receiver.resolutionComplete()


@implementer(IHostnameResolver)
class FilteringResolver:
    """Wraps the reactor's resolver; installs itself with :meth:`install_on_reactor`.

    Usable as Scrapy's ``TWISTED_DNS_RESOLVER`` (what ``scrapy crawl`` installs) and installed
    by hand on the worker's warm reactor, where that setting is not read.
    """

    def __init__(self, reactor: Any, policy: SourcePolicy):
        self.reactor = reactor
        self.policy = policy
        self._wrapped: IHostnameResolver | None = None
        self._refusals: OrderedDict[str, str] = OrderedDict()

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any) -> FilteringResolver:
        return cls(reactor, policy_from_settings(crawler.settings))

    def install_on_reactor(self) -> None:
        current = self.reactor.nameResolver
        if isinstance(current, FilteringResolver):
            current.policy = self.policy
            return
        self._wrapped = current
        self.reactor.installNameResolver(self)

    def resolveHostName(
        self,
        resolutionReceiver: IResolutionReceiver,
        hostName: str,
        portNumber: int = 0,
        addressTypes: Sequence[type[IAddress]] | None = None,
        transportSemantics: str = "TCP",
    ) -> IHostResolution:
        assert self._wrapped is not None, "install_on_reactor() first"
        # One canonical spelling, worked out once: judged, remembered, and the only form that
        # goes on to DNS (the literal's plain spelling, the name's punycode).
        name = refusal_key(hostName)
        reason = self.policy.host_refusal(name, portNumber)
        if reason is not None:
            logger.info("Refused %s:%s by source policy: %s", escaped(hostName), portNumber,
                        escaped(reason))
            self.remember_refusal(name, reason)
            resolution = _RefusedResolution(hostName)
            resolutionReceiver.resolutionBegan(resolution)
            resolutionReceiver.resolutionComplete()
            return resolution
        receiver = _FilteringReceiver(resolutionReceiver, self, name, portNumber)
        return self._wrapped.resolveHostName(
            receiver, name, portNumber, addressTypes, transportSemantics
        )

    def remember_refusal(self, key: str, reason: str) -> None:
        """Remember why ``key`` (a :func:`refusal_key`) was refused, for the crawl's error."""
        self._refusals[key] = reason
        self._refusals.move_to_end(key)
        while len(self._refusals) > REFUSALS_KEPT:
            self._refusals.popitem(last=False)

    def forget_refusal(self, key: str) -> None:
        self._refusals.pop(key, None)

    def refusal(self, host: str) -> str | None:
        """Why the last resolution of ``host`` was refused, if it was."""
        return self._refusals.get(refusal_key(host))


def policy_from_settings(settings: Any) -> SourcePolicy:
    """The crawler settings' view of the source policy (one place for both installers and for
    every page of a crawl: parsed once per distinct setting)."""
    return _policy(tuple(settings.getlist("CRAWLER_ALLOWED_NETWORKS")),
                   tuple(settings.getlist("CRAWLER_ALLOWED_PORTS")),
                   tuple(settings.getlist("CRAWLER_BLOCKED_DOMAINS")))


@functools.lru_cache(maxsize=8)
def _policy(networks: tuple[str, ...], ports: tuple[str, ...], blocked: tuple[str, ...]
            ) -> SourcePolicy:
    return SourcePolicy.from_lists(networks, ports, blocked)


def installed_resolver() -> FilteringResolver | None:
    """The filtering resolver on the running reactor, if one is installed."""
    from twisted.internet import reactor

    resolver = getattr(reactor, "nameResolver", None)
    return resolver if isinstance(resolver, FilteringResolver) else None
