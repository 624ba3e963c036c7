"""A scripted system resolver: chosen names answer chosen addresses, lookup after lookup.

It stands where the reactor's own resolver (``getaddrinfo``) stands, *under* the crawler's
:class:`~crawler.resolver.FilteringResolver`, so tests can make a name resolve to loopback, to
a private network or to a v4-mapped address without touching the hosts file or real DNS.

A script is ``{name: [answer, answer, …]}``, each answer a list of addresses; lookup *n* of a
name gets answer *n*, the last one repeats (``[["127.0.0.2"], ["127.0.0.1"]]`` rebinds from
the test site's address to loopback after the first lookup). Names not in the script go to the
``fallback`` resolver, or resolve to nothing without one.

``python -m tests.support.fakes.resolver QUEUE…`` runs a warm worker whose reactor has this resolver
installed, the script read as JSON from ``SCRIPTED_DNS``; the crawler then wraps it exactly as
it wraps the system's resolver in production.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from typing import Any

from twisted.internet.address import IPv4Address, IPv6Address
from twisted.internet.interfaces import IHostnameResolver, IHostResolution, IResolutionReceiver
from zope.interface import implementer

logger = logging.getLogger(__name__)

#: Environment variable holding the worker's script, as JSON.
SCRIPT_ENV = "SCRIPTED_DNS"


@implementer(IHostResolution)
class _Resolution:
    def __init__(self, name: str):
        self.name = name

    def cancel(self) -> None:
        """Answers are given synchronously; nothing to cancel."""


@implementer(IHostnameResolver)
class ScriptedResolver:
    """An ``IHostnameResolver`` answering from a script; records every name it was asked."""

    def __init__(self, script: dict[str, list[list[str]]], fallback: Any = None):
        self._script = {name.lower(): [list(a) for a in answers]
                        for name, answers in script.items()}
        self._fallback = fallback
        self.asked: list[str] = []

    def resolveHostName(
        self,
        resolutionReceiver: IResolutionReceiver,
        hostName: str,
        portNumber: int = 0,
        addressTypes: Sequence[type] | None = None,
        transportSemantics: str = "TCP",
    ) -> IHostResolution:
        self.asked.append(hostName)
        answers = self._script.get(hostName.lower())
        if answers is None and self._fallback is not None:
            return self._fallback.resolveHostName(
                resolutionReceiver, hostName, portNumber, addressTypes, transportSemantics
            )
        answer = (answers.pop(0) if len(answers) > 1 else answers[0]) if answers else []
        logger.info("Scripted DNS: %s -> %s", hostName, answer)
        resolution = _Resolution(hostName)
        resolutionReceiver.resolutionBegan(resolution)
        for host in answer:
            kind = IPv6Address if ":" in host else IPv4Address
            resolutionReceiver.addressResolved(kind("TCP", host, portNumber))
        resolutionReceiver.resolutionComplete()
        return resolution


def main() -> None:
    """A warm worker (``python -m worker``'s arguments) over the scripted resolver."""
    from scrapy.utils.reactor import install_reactor

    from crawler.runner import crawler_settings

    settings = crawler_settings()
    install_reactor(settings["TWISTED_REACTOR"], settings["ASYNCIO_EVENT_LOOP"])
    from twisted.internet import reactor

    script = json.loads(os.environ[SCRIPT_ENV])
    reactor.installNameResolver(ScriptedResolver(script, fallback=reactor.nameResolver))

    from worker.__main__ import main as worker_main

    worker_main()


if __name__ == "__main__":
    main()
