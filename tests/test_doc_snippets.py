"""The documentation's examples, run as written (the client's and run_collection's are run by
tests/test_client_e2e.py and tests/test_collections_python_api.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta

from core.config import variables
from launcher.serve import write_private
from storage import webhooks
from tests.conftest import ROOT
from tests.support.docs import doc_code
from worker.webhooks import signed_headers


def test_the_rq_snippet_finds_make_runs_redis(tmp_path, redis_url, workers, site):
    """docs/python.md, "Jobs from batch code": the snippet, verbatim but for two things: its URL
    (example.com is out of reach here) becomes the test site's article, and a ``print`` of
    ``page`` is appended so the test can read it. It runs as after ``make run``: no
    ``REDIS_URL`` in its environment, the Redis URL in ``VAR_DIR/redis-url`` (the session's
    Redis, where the test workers listen, written as ``make run`` writes it)."""
    code = doc_code("docs/python.md", "Jobs from batch code", "python")
    assert '"https://example.com/"' in code
    code = code.replace('"https://example.com/"', json.dumps(f"{site}/article"))
    code += "\nimport json; print(json.dumps(page))\n"
    write_private(tmp_path / "redis-url", redis_url)
    assert (tmp_path / "redis-url").stat().st_mode & 0o777 == 0o600
    env = {k: v for k, v in os.environ.items() if k not in variables()}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={**env, "VAR_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    page = json.loads(done.stdout.strip().splitlines()[-1])
    assert page["status"] == "succeeded", page
    assert page["data"]["title"] == "Tide tables of the Thames estuary"


def test_the_webhook_receiver_verifies_and_refuses_replays():
    """docs/api.md, "Webhooks": the receiver as written, with a real secret, given a delivery
    signed as the workers sign them; a replay older than 5 minutes and a tampered body are
    refused."""
    code = doc_code("docs/api.md", "Webhooks", "python")
    secret = webhooks.new_secret()
    assert '"whsec_…"' in code
    scope: dict = {"__name__": "__main__"}  # as `python receiver.py` runs it
    exec(compile(code.replace('"whsec_…"', json.dumps(secret)), "docs/api.md", "exec"), scope)
    receiver = scope["app"].test_client()
    payload = json.dumps({"id": "evt_1", "event": "collection.completed",
                          "collection": {"id": "col_1"}})

    def deliver(body: str, at: datetime) -> int:
        headers = signed_headers("evt_1", payload, (secret,), at)
        return receiver.post("/hooks", data=body, headers=headers).status_code

    now = datetime.now(UTC)
    assert deliver(payload, now) == 204
    assert deliver(payload, now - timedelta(minutes=6)) == 400  # a replay
    assert deliver(payload.replace("col_1", "col_2"), now) == 400  # tampered
