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
# A spaced " @ " or " . " is how a harvester is kept off too ("name @ example . com"); a spaced
# "@" counts only with a written-out dot as well, since prose writes "follow us @ twitter.com".
_TEXT_LOCAL = r"(?<![\w.%+@-])([\w.%+-]+)"
_TEXT_LABEL = r"[^\W_][\w-]*"
_END = r"(?![\w-]|\.\w|/)"  # the whole domain, not a prefix of it or of a URL
_AT_BRACKETED = r"\s*[\[({<]\s*(?:at|@|arobase)\s*[\])}>]\s*"
_DOT_BRACKETED = r"\s*[\[({<]\s*(?:dot|punkt|point|punto|\.)\s*[\])}>]\s*"
_SPACE = r"[^\S\r\n]"  # a space, never a line break: a line ends an address
_DOT_WRITTEN = _DOT_BRACKETED + rf"|{_SPACE}+\.{_SPACE}+"
_BRACKETED = re.compile(
    _TEXT_LOCAL + _AT_BRACKETED
    + "(" + _TEXT_LABEL + "(?:(?:" + _DOT_WRITTEN + r"|\.)" + _TEXT_LABEL + ")+)" + _END,
    re.IGNORECASE,
)
_SPACED_AT = re.compile(
    _TEXT_LOCAL + rf"(?:{_SPACE}+@{_SPACE}*|{_SPACE}*@{_SPACE}+)"
    + "(" + _TEXT_LABEL + "(?:(?:" + _DOT_WRITTEN + r"|\.)" + _TEXT_LABEL + ")+)" + _END,
    re.IGNORECASE,
)
_PLAIN_AT = re.compile(  # "name@example(dot)com"; not " . ": "a@b.com . In" is a sentence
    _TEXT_LOCAL + "@(" + _TEXT_LABEL + "(?:" + _DOT_BRACKETED + _TEXT_LABEL + ")+)" + _END,
    re.IGNORECASE,
)
_CAPITALS = re.compile(
    _TEXT_LOCAL + r"\s+AT\s+"
    + "(" + _TEXT_LABEL + r"(?:\s+DOT\s+" + _TEXT_LABEL + r")+)" + _END
)
# The separators of a written domain, captured: the plain dot too, so that labels and the
# separators between them alternate (a spaced "@" needs one that is not a plain dot).
_SEPARATOR = re.compile(rf"({_DOT_WRITTEN}|\s+DOT\s+|\.)", re.IGNORECASE)
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
    """Addresses written as ``name [at] domain [dot] com``, ``name @ domain . com``,
    ``name@domain(dot)com`` and the capitalised ``name AT domain DOT com``; with spans.
    Bracketed forms first (the reliable ones); a spaced "@" needs a written-out dot too."""
    for pattern in (_BRACKETED, _SPACED_AT, _PLAIN_AT, _CAPITALS):
        for match in pattern.finditer(text):
            email = _written_address(match.group(1), match.group(2),
                                     needs_written_dot=pattern is _SPACED_AT)
            if email is not None:
                yield match.start(), match.end(), email


def _written_address(local: str, written: str, needs_written_dot: bool) -> str | None:
    """The address with the longest valid prefix of the written domain: a written-out dot
    may also end the sentence ("name [at] example [dot] de . Weiter"). With
    ``needs_written_dot``, a prefix whose separators are all plain dots does not count
    ("follow us @ twitter.com" is prose)."""
    parts = _SEPARATOR.split(written)
    labels, separators = parts[0::2], parts[1::2]
    for count in range(len(labels), 1, -1):
        if needs_written_dot and all(sep == "." for sep in separators[:count - 1]):
            return None
        email = normalise_email(f"{local}@{'.'.join(labels[:count])}")
        if email is not None:
            return email
    return None


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
