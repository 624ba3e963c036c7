"""Source policy: which URLs and which addresses we are willing to fetch.

Shared by the API (a fast pre-check of the URL, so obviously bad input gets a 403 without a
round trip to a worker) and by the crawler, where the filtering resolver applies
:meth:`SourcePolicy.check_address` to every address a hostname resolves to — the real control,
because only it sees what is actually connected to (after DNS, on every redirect hop).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from crawler.exceptions import SourcePolicyError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

ALLOWED_SCHEMES = frozenset({"http", "https"})

#: Ports fetched by default; an operator can widen the list (``CRAWLER_ALLOWED_PORTS``).
DEFAULT_PORTS = frozenset({80, 443, 8080, 8443})

#: NAT64 well-known prefix (RFC 6052): the last 32 bits are an IPv4 address.
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")

#: Names that resolve to the machine itself whatever DNS says.
LOCAL_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")


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
    """The IPv4 address an IPv6 address smuggles (v4-mapped, 6to4, Teredo, NAT64), if any."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped:
        return ip.ipv4_mapped
    if ip.sixtofour:
        return ip.sixtofour
    if ip.teredo:
        return ip.teredo[1]
    if ip in NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


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
    if host and all(c in "0123456789abcdefxABCDEFX." for c in host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


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
        """From configuration values: comma-separated strings or lists."""
        domains = (
            blocked_domains.split(",") if isinstance(blocked_domains, str) else blocked_domains
        )
        return cls(
            allowed_networks=parse_networks(networks),
            allowed_ports=parse_ports(ports),
            blocked_domains=tuple(d.strip().lower() for d in domains if d.strip()),
        )

    def _trusted(self, ip: IPAddress) -> bool:
        return any(ip.version == net.version and ip in net for net in self.allowed_networks)

    def address_refusal(self, ip: IPAddress | str, port: int | None = None) -> str | None:
        """Why this address (and port) may not be connected to, or ``None`` when it may.

        An address inside an operator-allowed network is trusted entirely (any port); any other
        must be globally routable, after unwrapping the IPv4 address an IPv6 one may embed.
        """
        if isinstance(ip, str):
            ip = ipaddress.ip_address(ip.split("%", 1)[0])
        if self._trusted(ip):
            return None
        inner = embedded_ipv4(ip)
        for candidate in (ip, inner) if inner else (ip,):
            if not candidate.is_global or candidate.is_multicast or candidate.is_reserved:
                return f"{candidate} is not a public address"
        if port is not None and port not in self.allowed_ports:
            return f"port {port} is not allowed"
        return None

    def check_url(self, url: str) -> None:
        """Refuse what can be refused from the URL alone (no DNS); raises SourcePolicyError."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise SourcePolicyError(f"The URL cannot be parsed: {exc}.", url=url) from None
        scheme = parts.scheme.lower()
        if scheme not in ALLOWED_SCHEMES:
            raise SourcePolicyError(
                f"Only http and https URLs are fetched, not {scheme or 'this'}:.", url=url
            )
        host = (parts.hostname or "").rstrip(".").lower()
        if not host:
            raise SourcePolicyError("The URL has no host.", url=url)
        if port is None:
            port = 443 if scheme == "https" else 80
        if host in LOCAL_NAMES or host.endswith(".localhost"):
            raise SourcePolicyError(f"{host} is not a public host.", url=url)
        if any(host == d or host.endswith("." + d) for d in self.blocked_domains):
            raise SourcePolicyError(f"{host} is on this deployment's block list.", url=url)
        ip = literal_address(host)
        reason = self.address_refusal(ip, port) if ip else None
        if ip is None and not self._port_ok_for_names(port):
            reason = f"port {port} is not allowed"
        if reason:
            raise SourcePolicyError(f"Refused by source policy: {reason}.", url=url)

    def _port_ok_for_names(self, port: int) -> bool:
        # A name may resolve into an allowed network, where every port is fine; only the
        # resolver knows, so names on unusual ports are decided there when networks are allowed.
        return port in self.allowed_ports or bool(self.allowed_networks)
