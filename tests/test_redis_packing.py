"""How every Redis client writes its commands (``worker.queues.CommandPacker``): the same
protocol as redis-py's own packer, hiredis for small commands, a large argument sent as it is."""

from __future__ import annotations

import pytest
from redis.connection import Encoder, PythonRespSerializer

from worker.queues import LARGE_ARGUMENT, CommandPacker

REDIS_PY = PythonRespSerializer(6000, Encoder("utf-8", "strict", False).encode)


@pytest.mark.parametrize("args", [
    ("SET", "key", "value"),
    ("EXPIRE", "webdata:reply:1", 30),
    ("ZADD", "key", 1.5, b"member"),
    ("XADD", "stream", "*", "value", "é" * 10),
    ("XADD", "stream", "*", "value", "{}" * LARGE_ARGUMENT),
    ("XADD", "stream", "*", "value", b"\x00" * (LARGE_ARGUMENT + 1), "more", "x"),
])
def test_the_protocol_is_redis_pys(args) -> None:
    assert b"".join(CommandPacker().pack(*args)) == b"".join(REDIS_PY.pack(*args))


def test_a_large_bytes_argument_is_sent_as_it_is() -> None:
    large = b"x" * (LARGE_ARGUMENT + 1)
    assert any(chunk is large for chunk in CommandPacker().pack("XADD", "s", "*", "v", large))
