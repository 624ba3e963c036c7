"""``LOG_FORMAT=json``: every line of the API's gunicorn and of a worker is one JSON object,
with the request, account and job ids where they apply; a hostile text stays inside its line."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import time
import urllib.request

from rq import Queue

from core.config import ROOT, ApiConfig, LaunchConfig
from core.logformat import JsonFormatter, bound
from launcher.embedded import free_port
from launcher.serve import gunicorn_command
from tests.conftest import new_customer
from tests.support.waits import wait_until
from worker.queues import MAINTENANCE, queue


def lines_of(text: str) -> list[dict]:
    """Every line of ``text``, parsed (a line that is not JSON fails the test)."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_a_record_is_one_json_line_with_its_context():
    record = logging.LogRecord("api.x", logging.WARNING, __file__, 1,
                               "forged\n2026-01-01 INFO admin logged in \x1b[2J\u2028%s",
                               ("arg",), None)
    with bound(request_id="req_1", account_id="acct_2", absent=None):
        line = JsonFormatter().format(record)
    assert "\n" not in line and "\x1b" not in line and "\u2028" not in line
    entry = json.loads(line)
    assert entry["message"].startswith("forged\n2026") and entry["message"].endswith("arg")
    assert (entry["level"], entry["logger"], entry["request_id"], entry["account_id"]) == (
        "WARNING", "api.x", "req_1", "acct_2")
    assert "absent" not in entry and entry["time"].endswith("Z")
    assert "request_id" not in json.loads(JsonFormatter().format(record))  # unbound after


def test_gunicorn_writes_json_lines_with_request_and_account(sqlite_url, redis_url, workers,
                                                             app, tmp_path):
    port = free_port()
    launch = LaunchConfig(port=port, api_processes=1, api_threads=2)
    env = {**os.environ, "DATABASE_URL": sqlite_url, "REDIS_URL": redis_url,
           "HOME": str(tmp_path), "LOG_FORMAT": "json"}
    env.pop("XDG_RUNTIME_DIR", None)
    log = tmp_path / "gunicorn.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(gunicorn_command(launch, ApiConfig()), cwd=ROOT, env=env,
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.1)
        who = new_customer(app)
        request = urllib.request.Request(f"http://127.0.0.1:{port}/api/service/v1/account",
                                         headers={"Authorization": f"Bearer {who.key}",
                                                  "User-Agent": "ua \"quoted\" \\"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            request_id = answer.headers["X-Request-Id"]
        # the access line is written once the answer is sent
        wait_until(lambda: request_id in log.read_text(), "the access line", proc=proc)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    entries = lines_of(log.read_text())
    access = [e for e in entries if e.get("path") == "/api/service/v1/account"]
    assert len(access) == 1, entries
    assert access[0]["request_id"] == request_id and access[0]["account_id"] == who.account_id
    assert access[0]["status"] == 200 and access[0]["user_agent"] == "ua \"quoted\" \\"
    assert any(e["logger"].startswith("gunicorn") for e in entries)  # its own lines too


def test_a_worker_writes_json_lines_with_its_job(redis_url, sqlite_url, tmp_path):
    connection_queue: Queue = queue(MAINTENANCE, _redis(redis_url))
    name = f"json-{time.monotonic_ns()}"
    job = connection_queue.enqueue("worker.maintenance.release_abandoned_reservations")
    env = {**os.environ, "REDIS_URL": redis_url, "DATABASE_URL": sqlite_url,
           "LOG_FORMAT": "json", "LOG_LEVEL": "INFO"}
    done = subprocess.run([sys.executable, "-m", "worker", "--burst", "--name", name,
                           MAINTENANCE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    entries = lines_of(done.stderr)
    assert entries and all({"time", "level", "logger", "message"} <= set(e) for e in entries)
    assert any(e.get("job_id") == job.id for e in entries), entries


def _redis(url: str):
    from redis import Redis

    return Redis.from_url(url)
