"""Where a buffered request ends (:mod:`api.http_framing`): what the API's gunicorn worker
waits for before a thread serves the connection."""

from __future__ import annotations

import pytest

from api.http_framing import frame, without_expect

LIMITS = {"max_head": 1000, "max_body": 100}
GET = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"


def post(body: bytes, *fields: bytes) -> bytes:
    return b"POST /scrape HTTP/1.1\r\nHost: x\r\n" + b"".join(f + b"\r\n" for f in fields) \
        + b"\r\n" + body


@pytest.mark.parametrize(("data", "complete"), [
    (GET, True),
    (GET[:-2], False),  # the empty line that ends the head is still on its way
    (b"GET /" + b"a" * 2000, True),  # past max_head: gunicorn answers 414
    (post(b'{"u', b"Content-Length: 5"), False),
    (post(b'{"u":', b"Content-Length: 5"), True),
    (post(b"", b"Content-Length: 101"), True),  # over max_body: the app answers 413 unread
    (post(b"", b"Content-Length: 5", b"Content-Length: 6"), True),  # gunicorn refuses it
    (post(b"", b"Content-Length: -5"), True),
    (post(b"4\r\nabcd\r\n", b"Transfer-Encoding: chunked"), False),
    (post(b"4;ext=1\r\nabcd\r\n0\r\n\r\n", b"Transfer-Encoding: chunked"), True),
    (post(b"4\r\nabcd\r\n0\r\nTrailer: 1\r\n", b"Transfer-Encoding: chunked"), False),
    (post(b"4\r\nabcd\r\n0\r\nTrailer: 1\r\n\r\n", b"Transfer-Encoding: chunked"), True),
    (post(b"zz\r\n", b"Transfer-Encoding: chunked"), True),  # malformed: gunicorn's 400
    (post(b"65\r\n", b"Transfer-Encoding: chunked"), True),  # 101 bytes: over max_body
    (post(b"", b"Transfer-Encoding: gzip"), True),  # gunicorn answers 501
])
def test_a_request_is_complete_once_its_head_and_body_are_there(data, complete):
    assert frame(data, **LIMITS).complete is complete


def test_a_body_expected_after_100_continue_is_said_so_and_the_field_taken_out():
    head = post(b"", b"Expect: 100-continue", b"Content-Length: 2")
    framing = frame(head, **LIMITS)
    assert (framing.complete, framing.expects_continue) == (False, True)
    assert framing.head_length == len(head)
    rewritten = without_expect(head, framing.head_length)
    assert b"expect" not in rewritten.lower() and rewritten.endswith(b"\r\n\r\n")
    assert frame(rewritten + b"{}", **LIMITS) == (True, len(rewritten), False)
