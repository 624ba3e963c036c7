"""Where the first HTTP/1.1 request in a buffer ends: what the API's gunicorn worker reads
before it gives a connection to a thread (:mod:`api.gunicorn_worker`).

Pure and strict only where it must be: it finds the end of the head (the first empty line)
and of the body (``Content-Length``, or the chunks of ``Transfer-Encoding: chunked``); any
request it cannot frame (a malformed length, an unknown transfer coding, a head or body past
the limits) is handed to gunicorn's own parser as it is, which answers 400, 413, 414 or 431.
"""

from __future__ import annotations

from typing import NamedTuple

HEAD_END = b"\r\n\r\n"
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


class Framing(NamedTuple):
    """What a buffer holds so far.

    ``complete``: the request (head and body) is all there, or will never be framed here
    (gunicorn is to answer it). ``head_length``: bytes of the head with its empty line, once it
    is there (else 0). ``expects_continue``: the head asks for ``100 Continue`` before the
    client sends its body.
    """

    complete: bool
    head_length: int = 0
    expects_continue: bool = False


def _headers(head: bytes) -> dict[bytes, list[bytes]]:
    fields: dict[bytes, list[bytes]] = {}
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        fields.setdefault(name.strip().lower(), []).append(value.strip())
    return fields


def _chunked_end(data: bytes, start: int, max_body: int) -> int | None:
    """Where a chunked body starting at ``start`` ends (after its trailers); None while more
    is needed; -1 when it is malformed or over ``max_body`` (gunicorn is to answer)."""
    position, size = start, 0
    while True:
        line_end = data.find(b"\r\n", position)
        if line_end < 0:
            return -1 if len(data) - position > 1024 else None  # a size line is short
        digits = data[position:line_end].split(b";", 1)[0].strip()
        try:
            chunk = int(digits, 16)
        except ValueError:
            return -1
        size += chunk
        if size > max_body:
            return -1
        if chunk == 0:  # then trailer fields, if any, and an empty line
            trailers = data.find(b"\r\n\r\n", line_end)
            return None if trailers < 0 else trailers + 4
        position = line_end + 2 + chunk + 2
        if position > len(data):
            return None


def frame(data: bytes, *, max_head: int, max_body: int) -> Framing:
    """How far the first request in ``data`` has arrived (see :class:`Framing`).

    ``max_head``: bytes a head may take before it is handed over unfinished (gunicorn answers
    414 or 431); ``max_body``: the largest body read here (a larger one is handed over at
    once, for the application to refuse with 413 without reading it).
    """
    head_end = data.find(HEAD_END)
    if head_end < 0:
        return Framing(len(data) > max_head)
    head_length = head_end + len(HEAD_END)
    fields = _headers(data[:head_end])
    continues = any(value.lower() == b"100-continue" for value in fields.get(b"expect", []))
    codings = b",".join(fields.get(b"transfer-encoding", [])).lower()
    if codings:
        if codings.rsplit(b",", 1)[-1].strip() != b"chunked":
            return Framing(True, head_length)
        end = _chunked_end(data, head_length, max_body)
        return Framing(end is not None, head_length, continues and end is None)
    length = _content_length(fields)
    if length is None or length > max_body:  # none (no body), or gunicorn's to answer
        return Framing(True, head_length)
    arrived = len(data) - head_length >= length
    return Framing(arrived, head_length, continues and not arrived)


def _content_length(fields: dict[bytes, list[bytes]]) -> int | None:
    """The body's length the head gives: one value, digits only; None for none or a malformed
    one."""
    lengths = fields.get(b"content-length", [])
    if len(set(lengths)) != 1 or not lengths[0].isdigit():
        return None
    return int(lengths[0])


def request_length(head: bytes) -> int:
    """Bytes of the whole request of ``head`` (its request line and fields, with the empty
    line), when it gives its body's ``Content-Length`` and no transfer coding; else 0. Until
    that many have arrived there is nothing to frame again."""
    fields = _headers(head[:-len(HEAD_END)])
    length = _content_length(fields)
    if length is None or b"transfer-encoding" in fields:
        return 0
    return len(head) + length


def without_expect(data: bytes, head_length: int) -> bytes:
    """``data`` with its head's ``Expect`` field taken out: the worker has answered
    ``100 Continue`` itself, and gunicorn would send a second one."""
    lines = data[:head_length - len(HEAD_END)].split(b"\r\n")
    kept = [lines[0], *(line for line in lines[1:]
                        if line.partition(b":")[0].strip().lower() != b"expect")]
    return b"\r\n".join(kept) + HEAD_END + data[head_length:]
