"""The value types of :mod:`core.config`: how one environment variable's text becomes a
value, what the error line says when it cannot, and how the bad value is echoed there (never a
credential: error lines land on stderr, in logs and CI output).

Standard library only, like the rest of :mod:`core.config` (every process imports it first).
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from core.logformat import FORMATS as LOG_FORMATS

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
SEARCH_PROVIDERS = ("searxng", "brave", "google", "youtube")


@dataclass(frozen=True)
class Kind:
    """How one variable's text becomes a value: ``parse`` raises ValueError(what was wrong)."""

    expected: str
    parse: Callable[[str], Any]
    #: Text: empty is unset (the default). Numbers and levels: empty is an error.
    empty_is_unset: bool = True
    #: Shown in the table of docs/operators.md, Configuration.
    type_name: str = "text"
    #: How a bad value is echoed in the error line (stderr, logs, CI output: places where
    #: credentials must not land): ``None`` never echoes it, only the variable's name.
    shown: Callable[[str], str] | None = repr


def _text(raw: str) -> str:
    return raw.strip()


def _number(kind: type, minimum: float, *, above: bool = False,
            maximum: float | None = None) -> Callable[[str], Any]:
    def parse(raw: str) -> Any:
        try:
            value = kind(raw.strip())
        except ValueError:
            raise ValueError("not a number") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("not a finite number")
        if value < minimum or (above and value == minimum):
            raise ValueError("too small")
        if maximum is not None and value > maximum:
            raise ValueError("too large")
        return value

    return parse


def integer(expected: str, minimum: int, maximum: int | None = None) -> Kind:
    return Kind(expected, _number(int, minimum, maximum=maximum), False, "integer")


def seconds(*, zero_ok: bool = False) -> Kind:
    expected = ("a number of seconds, 0 or more" if zero_ok
                else "a number of seconds greater than 0")
    return Kind(expected, _number(float, 0, above=not zero_ok), False, "seconds")


def _level(raw: str) -> str:
    level = raw.strip().upper()
    if level not in LOG_LEVELS:
        raise ValueError("unknown level")
    return level


def _choice(options: tuple[str, ...]) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        value = raw.strip().lower()
        if value not in options:
            raise ValueError("unknown name")
        return value

    return parse


#: Query parameters that carry credentials (``?password=`` works for psycopg2 and redis-py).
_SECRET_PARAMETER = re.compile(r"(?i)([?&][^=&#]*(?:pass|pwd|secret|token|key)[^=&#]*=)[^&#]*")


def _masked_url(raw: str) -> str:
    """``raw`` quoted, its userinfo's password (if any) and the values of its credential-like
    query parameters replaced by ``***``: a bad ``postgresql://user:secret@db/x`` must not print
    ``secret``. Done on the text, not with ``urlsplit`` (a bad URL may not parse), and up to the
    *last* ``@`` so that a password holding ``/`` or ``@`` is hidden whole; hiding a little too
    much of a bad URL costs nothing."""
    shown = _SECRET_PARAMETER.sub(r"\1***", raw)
    scheme, sep, rest = shown.partition("://")
    if sep and "@" in rest:
        userinfo, _, hostpart = rest.rpartition("@")
        user, colon, _password = userinfo.partition(":")
        if colon:
            shown = f"{scheme}://{user}:***@{hostpart}"
    return repr(shown)


def _secret(raw: str) -> str:
    """A key: headers cannot carry control characters (the provider call would fail later,
    with an error far from the variable)."""
    value = raw.strip()
    if any(ord(char) < 32 or ord(char) == 127 for char in value):
        raise ValueError("contains control characters")
    return value


#: The forms ``DATABASE_URL`` takes, each with the SQLAlchemy dialect+driver it stands for:
#: ``storage.db`` handles SQLite and psycopg2 (its connect timeout, its "server unavailable"
#: errors). SQLAlchemy 2.x reads a bare ``postgresql://`` as psycopg 3, which is not installed
#: (and would wait forever for a dead server: a 500 instead of a 503), and refuses the
#: ``postgres://`` that Heroku-style platforms hand out; here both mean psycopg2.
DATABASE_SCHEMES = {
    "sqlite": "sqlite",
    "postgresql": "postgresql+psycopg2",
    "postgres": "postgresql+psycopg2",
    "postgresql+psycopg2": "postgresql+psycopg2",
}


def database_url(raw: str) -> str:
    """``raw`` as the SQLAlchemy URL of the driver this platform uses (see
    :data:`DATABASE_SCHEMES`); ValueError for any other form."""
    value = raw.strip()
    scheme, separator, rest = value.partition("://")
    driver = DATABASE_SCHEMES.get(scheme.lower()) if separator else None
    if driver is None:
        raise ValueError("only sqlite:///…, postgresql://… (or postgres://…, "
                         "postgresql+psycopg2://…) are supported")
    return f"{driver}://{rest}"


def _url(schemes: tuple[str, ...], *, host: bool = True) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        value = raw.strip()
        parts = urlsplit(value)
        scheme = parts.scheme.split("+", 1)[0].lower()
        if scheme not in schemes or "://" not in value or (host and not parts.hostname):
            raise ValueError("not such a URL")
        return value

    return parse


def _items(raw: str) -> list[str]:
    return [item.strip() for item in raw.split(",") if item.strip()]


def _networks(raw: str) -> str:
    for item in _items(raw):
        try:
            ipaddress.ip_network(item, strict=False)
        except ValueError:
            raise ValueError(f"{item!r} is not a network") from None
    return ",".join(_items(raw))


def _ports(raw: str) -> str:
    for item in _items(raw):
        if not item.isdigit() or not 1 <= int(item) <= 65535:
            raise ValueError(f"{item!r} is not a port")
    return ",".join(_items(raw))


_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


def _domains(raw: str) -> str:
    domains = [item.lower().rstrip(".") for item in _items(raw)]
    for domain in domains:
        if not all(_LABEL.match(label) for label in domain.encode("idna").decode().split(".")):
            raise ValueError(f"{domain!r} is not a domain name")
    return ",".join(domains)


def _idna_safe(parse: Callable[[str], str]) -> Callable[[str], str]:
    def wrapped(raw: str) -> str:
        try:
            return parse(raw)
        except UnicodeError:
            raise ValueError("not a domain name") from None

    return wrapped


def _path(raw: str) -> Path:
    return Path(raw.strip()).expanduser().resolve()


TEXT = Kind("text", _text)
#: A credential: its value is never echoed.
SECRET = Kind("text without control characters", _secret, shown=None)
PATH = Kind("a directory path", _path, type_name="path")
HTTP_URL = Kind("an http(s) URL with a host", _url(("http", "https")), type_name="URL",
                shown=_masked_url)
LEVEL = Kind(f"a log level ({', '.join(LOG_LEVELS)})", _level, False, "log level")
LOG_FORMAT = Kind(f"one of {', '.join(LOG_FORMATS)}", _choice(LOG_FORMATS), type_name="name")
PROVIDER = Kind(f"empty or one of {', '.join(SEARCH_PROVIDERS)}", _choice(SEARCH_PROVIDERS),
                type_name="name")
NETWORKS = Kind("comma-separated networks in CIDR form, e.g. 10.0.0.0/8,127.0.0.1/32",
                _networks, type_name="CIDR list")
PORTS = Kind("comma-separated ports, each 1-65535", _ports, type_name="port list")
DOMAINS = Kind("comma-separated domain names, e.g. example.com,tracker.example",
               _idna_safe(_domains), type_name="domain list")
DATABASE = Kind("a database URL: sqlite:///path/webdata.db or postgresql://user@host/db",
                database_url, type_name="URL",
                shown=_masked_url)
REDIS = Kind("a Redis URL (redis://, rediss:// or unix://)",
             _url(("redis", "rediss", "unix"), host=False), type_name="URL", shown=_masked_url)
