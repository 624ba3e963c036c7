"""Find and validate e-mail addresses as pages write them: links, text, and obfuscations.

Small pure functions used by :mod:`crawler.extract.contacts`. Every candidate, whatever its
source, goes through :func:`normalise_email`, so what counts as an address is decided once:
the domain must end in a real public suffix (checked against tldextract's bundled snapshot),
which is what rejects ``logo@2x.png``, ``package@1.2.3`` and ``user@localhost`` without a list
of file extensions to maintain.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from urllib.parse import unquote

from crawler.extract.domains import split_host

logger = logging.getLogger(__name__)

_ATOM = r"[\w!#$%&'*+/=?^`{|}~-]+"
_LOCAL_PART = re.compile(rf"{_ATOM}(?:\.{_ATOM})*")
_LABEL = r"[^\W_](?:[\w-]{0,61}[^\W_])?"
_DOMAIN = re.compile(rf"{_LABEL}(?:\.{_LABEL})+")
_STRIP = " \t\r\n\"'<>()[]{}.,;:!?-"
# Plain addresses in text; not after "@" so that a Mastodon "@user@host" is not an address.
_IN_TEXT = re.compile(r"(?<![\w.+%@-])[\w.%+-]+@[\w-]+(?:\.[\w-]+)+")

# Written obfuscations. "[at]"/"(at)"/"{at}"/"<at>" are unambiguous; a bare "AT … DOT" is
# accepted only in capitals and only with a "DOT", so prose ("look at this") never matches.
_TEXT_LOCAL = r"[\w.%+-]+"
_TEXT_LABEL = r"[^\W_][\w-]*"
_AT_BRACKETED = r"\s*[\[({<]\s*(?:at|@)\s*[\])}>]\s*"
_DOT_BRACKETED = r"\s*[\[({<]\s*(?:dot|punkt|point|\.)\s*[\])}>]\s*"
_BRACKETED = re.compile(
    r"(?<![\w.%+-])(" + _TEXT_LOCAL + ")" + _AT_BRACKETED
    + "(" + _TEXT_LABEL + "(?:(?:" + _DOT_BRACKETED + r"|\.)" + _TEXT_LABEL + ")+)",
    re.IGNORECASE,
)
_CAPITALS = re.compile(
    r"(?<![\w.%+-])(" + _TEXT_LOCAL + r")\s+AT\s+"
    + "(" + _TEXT_LABEL + r"(?:\s+DOT\s+" + _TEXT_LABEL + r")+)(?![\w-]|\.\w)"
)
_DOT_WORD = re.compile(_DOT_BRACKETED + r"|\s+DOT\s+", re.IGNORECASE)
_MAILTO = re.compile(r"\s*mailto:", re.IGNORECASE)
_MAILTO_SEPARATORS = re.compile(r"[,;]")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2}){2,}")


def normalise_email(candidate: object) -> str | None:
    """The address with its domain lower-cased, or None when it is not a deliverable-looking
    address. Accepts what pages put in ``email`` fields too: a ``mailto:`` prefix, trailing
    punctuation from the sentence around it."""
    if not isinstance(candidate, str):
        return None
    value = _MAILTO.sub("", candidate, count=1).strip(_STRIP)
    local, at, domain = value.rpartition("@")
    domain = domain.lower()
    if not at or len(local) > 64 or len(domain) > 253:
        return None
    if not _LOCAL_PART.fullmatch(local) or not _DOMAIN.fullmatch(domain):
        return None
    parts = split_host(domain)
    if not parts.suffix or not parts.domain:  # no public suffix: a file name, version, host
        return None
    return f"{local}@{domain}"


def emails_from_mailto(href: str) -> list[str]:
    """Addresses of a ``mailto:`` href: percent-decoded, query dropped, several split."""
    if not _MAILTO.match(href):
        return []
    addresses = unquote(_MAILTO.sub("", href, count=1)).split("?", 1)[0]
    return [e for e in map(normalise_email, _MAILTO_SEPARATORS.split(addresses)) if e]


def emails_in_text(text: str) -> Iterator[tuple[int, int, str]]:
    """Plain addresses written in visible text, in text order, each with the span it was read
    from, so that the caller can merge the matches of several renderings of one page."""
    for match in _IN_TEXT.finditer(text):
        if (email := normalise_email(match.group())) is not None:
            yield match.start(), match.end(), email


def deobfuscated_emails(text: str) -> Iterator[tuple[int, int, str]]:
    """Addresses written as ``name [at] domain [dot] com`` and its variants, bracketed forms
    first (the reliable ones), then the capitalised ``name AT domain DOT com``; with spans."""
    for pattern in (_BRACKETED, _CAPITALS):
        for match in pattern.finditer(text):
            domain = _DOT_WORD.sub(".", match.group(2))
            if (email := normalise_email(f"{match.group(1)}@{domain}")) is not None:
                yield match.start(), match.end(), email


def cloudflare_email(encoded: str | None) -> str | None:
    """Decode Cloudflare's e-mail protection: hex pairs, the first byte XORs the others."""
    encoded = (encoded or "").strip()
    if not _HEX.fullmatch(encoded):
        return None
    data = bytes.fromhex(encoded)
    try:
        decoded = bytes(byte ^ data[0] for byte in data[1:]).decode("utf-8")
    except UnicodeDecodeError:
        logger.debug("undecodable Cloudflare e-mail %r", encoded)
        return None
    return normalise_email(decoded)
