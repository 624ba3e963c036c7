"""gunicorn's own refusals (a malformed request, a request line or headers over its limits)
come in the API's JSON error shape too, from the real ``make run`` gunicorn command; and no
client forges a line of its logs."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
import uuid

import pytest

from core.config import ROOT, ApiConfig, LaunchConfig
from launcher.embedded import free_port
from launcher.serve import gunicorn_command


@pytest.fixture(scope="module")
def api_port(sqlite_url, redis_url, workers, tmp_path_factory):
    port = free_port()
    launch = LaunchConfig(port=port, api_processes=1, api_threads=2)
    log = tmp_path_factory.mktemp("gunicorn") / "gunicorn.log"
    home = tmp_path_factory.mktemp("home")  # where gunicorn's default control socket would go
    env = {**os.environ, "DATABASE_URL": sqlite_url, "REDIS_URL": redis_url, "HOME": str(home)}
    env.pop("XDG_RUNTIME_DIR", None)
    with log.open("wb") as out:  # gunicorn writes to its own copy of it
        proc = subprocess.Popen(gunicorn_command(launch, ApiConfig()), cwd=ROOT, env=env,
                                stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"gunicorn did not start; see {log}") from None
            time.sleep(0.1)
    yield port, home, log
    proc.terminate()
    proc.wait(timeout=30)


def raw(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, body


@pytest.mark.parametrize(("request_bytes", "status"), [
    (b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 10_000 + b"\r\n\r\n", 431),
    (b"GET /" + b"a" * 5_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
    (b"NOT-A-REQUEST\r\n\r\n", 400),
    (b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n", 400),
])
def test_gunicorns_own_errors_are_in_the_error_shape(api_port, request_bytes, status):
    code, headers, body = raw(api_port[0], request_bytes)
    assert code == status, body[:300]
    assert headers["content-type"] == "application/json"
    error = json.loads(body)
    assert set(error) == {"code", "status", "error", "message", "request_id", "errors"}
    assert error["code"] == status and error["error"] == "bad_request" and error["errors"] == {}
    assert error["request_id"] == headers["x-request-id"]
    assert headers["x-content-type-options"] == "nosniff"


def test_an_ordinary_request_is_served_and_no_control_socket_is_shared(api_port):
    port, home, _ = api_port
    code, headers, body = raw(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
                                        b"Connection: close\r\n\r\n")
    assert code == 200 and json.loads(body)["status"] == "ok"
    assert headers["x-content-type-options"] == "nosniff"
    # gunicorn's default control socket is one path per user, shared by every gunicorn.
    assert not (home / ".gunicorn").exists()


def test_no_client_can_forge_a_line_of_its_logs(api_port):
    """The access log writes the User-Agent as sent. gunicorn refuses C0 controls and DEL in a
    header (400), not the C1 ones: a NEL or an 8-bit CSI (``\\x9b``, ESC [ to many terminals)
    reached the operator's terminal raw. Now each is escaped."""
    port, _, log = api_port
    marker = f"forged-{uuid.uuid4().hex[:8]}"
    hostile = f"{marker}\x85\x9b2J 1999-12-31 ERROR api: forged".encode("latin1")
    code, _, _ = raw(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nUser-Agent: " + hostile
                     + b"\r\nConnection: close\r\n\r\n")
    assert code == 200
    deadline = time.monotonic() + 10
    while marker.encode() not in log.read_bytes():
        assert time.monotonic() < deadline, log.read_text(errors="replace")[-2000:]
        time.sleep(0.1)
    text = log.read_bytes()
    assert not re.search(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", text), text[-2000:]
    (line,) = [line for line in text.decode().split("\n") if marker in line]
    assert f'"{marker}\\x85\\x9b2J 1999-12-31 ERROR api: forged"' in line
