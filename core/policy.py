"""Source policy: which URLs and which addresses we are willing to fetch.

Shared by the API (a fast pre-check of the URL, so obviously bad input gets a 403 without a
round trip to a worker) and by the crawler, where the filtering resolver applies
:meth:`SourcePolicy.host_refusal` to every name before DNS (the pre-check's own rule) and
:meth:`SourcePolicy.address_refusal` to every address a name resolves to — the real control,
because only it sees what is actually connected to (after DNS, on every redirect hop).

Free of Scrapy so the API process can import it: a refused URL raises the plain
:class:`PolicyRefusal`, which the crawler's middleware turns into its Scrapy-aware
:class:`~crawler.exceptions.SourcePolicyError`.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

import idna  # IDNA 2008, as Twisted encodes names (faß.de is xn--fa-hia.de, not fass.de)

from core.contract import ErrorCode

if TYPE_CHECKING:
    from core.config import PolicyConfig


class PolicyRefusal(Exception):
    """The URL may not be fetched; ``message`` says why in words for the client."""

    code = ErrorCode.SOURCE_POLICY

    def __init__(self, message: str, *, url: str | None = None):
        super().__init__(message)
        self.message = message
        self.url = url


IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

ALLOWED_SCHEMES = frozenset({"http", "https"})

#: Ports fetched by default; an operator can widen the list (``CRAWLER_ALLOWED_PORTS``).
DEFAULT_PORTS = frozenset({80, 443, 8080, 8443})

#: NAT64 well-known prefix (RFC 6052): the last 32 bits are an IPv4 address.
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
#: IPv4-compatible addresses (RFC 4291, deprecated): ``::a.b.c.d``, the last 32 bits.
IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")

#: IPv6 transition ranges refused whatever IPv4 address they carry, each with what it is.
#: Named here rather than left to ``ipaddress``, whose "reserved" ``::/8`` covers the first
#: three only by chance and whose private blocks have changed between Python releases.
#: IPv4-compatible addresses are deprecated, and some stacks still tunnel them to their IPv4
#: address; NAT64, with the well-known or the RFC 8215 local-use prefix, is translated by a
#: gateway of the deployment's own network; Teredo reaches its host through relays. 6to4
#: (``2002::/16``) is not here: it is judged by the IPv4 address it carries.
REFUSED_TRANSITION: dict[ipaddress.IPv6Network, str] = {
    IPV4_COMPATIBLE: "an IPv4-compatible address (deprecated)",
    NAT64: "a NAT64 address",
    ipaddress.IPv6Network("64:ff9b:1::/48"): "a local-use NAT64 address",
    ipaddress.IPv6Network("2001::/32"): "a Teredo address",
}

#: Names that resolve to the machine itself whatever DNS says.
LOCAL_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")

#: One label of a host name in ASCII form (underscores occur in real names).
_LABEL = re.compile(r"[a-z0-9_-]{1,63}")
#: A last label like this makes the name an attempted IPv4 address (WHATWG URL: "ends in a
#: number"), which resolvers read in surprising ways.
_NUMERIC_LABEL = re.compile(r"[0-9]+|0x[0-9a-f]*")


def parse_networks(value: str | Iterable[str]) -> tuple[IPNetwork, ...]:
    """``"127.0.0.0/8, 10.0.0.0/8"`` → networks; raises ``ValueError`` on a bad CIDR."""
    items = value.split(",") if isinstance(value, str) else value
    return tuple(ipaddress.ip_network(item.strip(), strict=False) for item in items if item.strip())


def parse_ports(value: str | Iterable[int | str]) -> frozenset[int]:
    """``"80,443"`` → ports; an empty value means the defaults."""
    items = value.split(",") if isinstance(value, str) else value
    ports = frozenset(int(str(item).strip()) for item in items if str(item).strip())
    return ports or DEFAULT_PORTS


def embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address smuggles (v4-mapped, IPv4-compatible, 6to4, Teredo,
    NAT64 with the well-known prefix), if any. Not for the local-use NAT64 prefix: where its
    IPv4 address sits depends on the prefix length its operator chose."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped:
        return ip.ipv4_mapped
    if ip in IPV4_COMPATIBLE and int(ip) > 1:  # "::" and "::1" are not
        return ipaddress.IPv4Address(int(ip))
    if ip.sixtofour:
        return ip.sixtofour
    if ip.teredo:
        return ip.teredo[1]
    if ip in NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _public(ip: IPAddress) -> bool:
    """Globally routable, and neither multicast nor reserved (by ``ipaddress``'s lists)."""
    return ip.is_global and not ip.is_multicast and not ip.is_reserved


def literal_address(host: str) -> IPAddress | None:
    """The address a host names literally, in any form a resolver accepts.

    ``inet_aton`` reads what browsers and libc read: ``0x7f000001``, ``2130706433``,
    ``0177.0.0.1``, ``127.1``, ``0``.
    """
    host = host.strip("[]")
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    host = host.removesuffix(".")  # "127.0.0.1." is that address to every resolver
    if host and all(c in "0123456789abcdefxABCDEFX." for c in host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def host_name(host: str) -> str:
    """The ASCII (punycode), lower-case form of a host name, without the root's trailing dot.

    Raises ``ValueError`` for what no resolver should be asked: empty labels, a label over 63
    bytes or a name over 253, characters outside letters, digits, ``-`` and ``_``, a bad ``xn--``
    label, a last label that is a number (an IPv4 address that is not one).
    """
    name = unicodedata.normalize("NFC", host).lower().removesuffix(".")
    if not name:
        raise ValueError("the host name is empty")
    labels = []
    for label in name.split("."):
        if not label:
            raise ValueError("the host name has an empty label")
        try:
            if not label.isascii():
                label = idna.encode(label).decode("ascii")
            if label.startswith("xn--"):  # a valid A-label, or UnicodeError
                idna.decode(label)
        except UnicodeError:
            raise ValueError(f"the label {label!r} is not a valid international name") from None
        if not _LABEL.fullmatch(label):
            raise ValueError(f"the label {label[:70]!r} is not a valid host name label")
        labels.append(label)
    if _NUMERIC_LABEL.fullmatch(labels[-1]):
        raise ValueError("the host name ends in a number but is not an IP address")
    ascii_name = ".".join(labels)
    if len(ascii_name) > 253:
        raise ValueError("the host name is longer than 253 characters")
    return ascii_name


def ascii_url(url: str) -> str:
    """``url`` with an international host name in its IDNA 2008 form (what the policy judges).

    Scrapy's ``Request`` encodes a non-ASCII host with UTS 46 *transitional* processing, which
    maps ``faß.de`` to ``fass.de``: another domain than the one asked for (and than the one the
    pre-check judged). Given the ASCII form, Scrapy keeps it as it is. A URL whose host is not
    a valid name is returned unchanged, for the policy to refuse.
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if host.isascii():
            return url
        name = host_name(host)
    except ValueError:
        return url
    userinfo, at, _ = parts.netloc.rpartition("@")
    port = f":{parts.port}" if parts.port is not None else ""
    return urlunsplit(parts._replace(netloc=f"{userinfo}{at}{name}{port}"))


@dataclass(frozen=True)
class SourcePolicy:
    """The rules. Empty ``allowed_networks`` (the default) means only global addresses."""

    allowed_networks: tuple[IPNetwork, ...] = ()
    allowed_ports: frozenset[int] = DEFAULT_PORTS
    blocked_domains: tuple[str, ...] = ()

    @classmethod
    def from_lists(
        cls, networks: str | Iterable[str], ports: str | Iterable[int | str],
        blocked_domains: str | Iterable[str],
    ) -> SourcePolicy:
        """From configuration values: comma-separated strings or lists.

        Blocked domains are kept in the form :func:`host_name` gives (``*.`` or a leading dot
        is dropped: subdomains are always included); one that is not a host name raises
        ``ValueError``, as a bad CIDR does, rather than silently never matching.
        """
        domains = (
            blocked_domains.split(",") if isinstance(blocked_domains, str) else blocked_domains
        )
        return cls(
            allowed_networks=parse_networks(networks),
            allowed_ports=parse_ports(ports),
            blocked_domains=tuple(
                host_name(d.strip().removeprefix("*").removeprefix("."))
                for d in domains if d.strip()
            ),
        )

    @classmethod
    def from_config(cls, policy: PolicyConfig) -> SourcePolicy:
        """The deployment's policy: its section of the configuration
        (``CRAWLER_ALLOWED_NETWORKS``, ``_PORTS``, ``CRAWLER_BLOCKED_DOMAINS``)."""
        return cls.from_lists(policy.allowed_networks, policy.allowed_ports,
                              policy.blocked_domains)

    def _trusted(self, ip: IPAddress) -> bool:
        return any(ip.version == net.version and ip in net for net in self.allowed_networks)

    def address_refusal(self, ip: IPAddress | str, port: int | None = None) -> str | None:
        """Why this address (and port) may not be connected to, or ``None`` when it may.

        An address inside an operator-allowed network is trusted entirely (any port); any other
        must be globally routable, and so must the IPv4 address an IPv6 one embeds (named in
        the reason: it is the real target); the transition ranges of
        :data:`REFUSED_TRANSITION` are refused whatever they embed.
        """
        if isinstance(ip, str):
            ip = ipaddress.ip_address(ip.split("%", 1)[0])
        if self._trusted(ip):
            return None
        inner = embedded_ipv4(ip)
        if inner is not None and not _public(inner):
            return f"{inner} is not a public address"
        if not _public(ip):
            return f"{ip} is not a public address"
        for network, what in REFUSED_TRANSITION.items():
            if ip in network:  # whatever ipaddress's lists say of it
                return f"{ip} is {what}, not a public address"
        if port is not None and port not in self.allowed_ports:
            return f"port {port} is not allowed"
        return None

    def host_refusal(self, host: str, port: int | None = None) -> str | None:
        """Why ``host`` may not be fetched, judged from its text alone (no DNS), or ``None``.

        One rule for the URL pre-check and for the filtering resolver, which applies it before
        asking DNS anything: an IP literal (any form :func:`literal_address` reads) is judged as
        that address on ``port``; a name must be a valid host name, not a name of this machine
        and not on the block list. Whether a name's addresses are allowed only DNS can tell.
        """
        ip = literal_address(host)
        if ip is not None:
            return self.address_refusal(ip, port)
        try:
            name = host_name(host)
        except ValueError as exc:
            return f"{host[:80]!r} is not a valid host name: {exc}"
        if name in LOCAL_NAMES or name.endswith(".localhost"):
            return f"{name} is not a public host"
        if any(name == d or name.endswith("." + d) for d in self.blocked_domains):
            return f"{name} is on this deployment's block list"
        return None

    def check_url(self, url: str) -> None:
        """Refuse what can be refused from the URL alone (no DNS); raises PolicyRefusal."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise PolicyRefusal(f"The URL cannot be parsed: {exc}.", url=url) from None
        scheme = parts.scheme.lower()
        if scheme not in ALLOWED_SCHEMES:
            raise PolicyRefusal(
                f"Only http and https URLs are fetched, not {scheme or 'this'}:.", url=url
            )
        host = parts.hostname or ""
        if not host:
            raise PolicyRefusal("The URL has no host.", url=url)
        if port is None:
            port = 443 if scheme == "https" else 80
        reason = self.host_refusal(host, port)
        if reason is None and literal_address(host) is None and not self._port_ok_for_names(port):
            reason = f"port {port} is not allowed"
        if reason:
            raise PolicyRefusal(f"Refused by source policy: {reason}.", url=url)

    def _port_ok_for_names(self, port: int) -> bool:
        # A name may resolve into an allowed network, where every port is fine; only the
        # resolver knows, so names on unusual ports are decided there when networks are allowed.
        return port in self.allowed_ports or bool(self.allowed_networks)
