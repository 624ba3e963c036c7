"""Operator CLI (``flask --app api …``) and the spiders run with ``scrapy crawl``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

from api import create_app
from tests.conftest import ROOT, make_config


def test_accounts_and_keys_commands(sqlite_url):
    app = create_app(make_config(sqlite_url, "redis://127.0.0.1:1/0"))
    runner = app.test_cli_runner()
    name = f"cli-{uuid.uuid4().hex[:8]}"
    created = runner.invoke(args=["accounts", "create", name, "--credits", "25",
                                  "--plan", "standard"])
    assert created.exit_code == 0, created.output
    key = created.output.strip().splitlines()[-1]
    assert key.startswith("wdp_") and len(key) >= 40
    client = app.test_client()
    account = client.get("/api/service/v1/account",
                         headers={"Authorization": f"Bearer {key}"}).get_json()
    assert account["credits"]["balance"] == 25
    assert account["plan"]["name"] == "standard"

    credited = runner.invoke(args=["accounts", "credit", name, "10"])
    assert "balance 35" in credited.output
    second = runner.invoke(args=["keys", "create", name]).output.strip().splitlines()[-1]
    shown = runner.invoke(args=["accounts", "show", name]).output
    assert "balance  35" in shown and shown.count("live") == 2
    assert key not in shown  # only prefixes are ever shown

    revoked = runner.invoke(args=["keys", "revoke", key[:12]])
    assert revoked.exit_code == 0, revoked.output
    assert client.get("/api/service/v1/account",
                      headers={"Authorization": f"Bearer {key}"}).status_code == 401
    assert client.get("/api/service/v1/account",
                      headers={"Authorization": f"Bearer {second}"}).status_code == 200

    for args in (["accounts", "create", name], ["accounts", "credit", "nobody", "5"],
                 ["accounts", "create", "x" + name, "--plan", "gold"],
                 ["keys", "revoke", "wdp_"], ["accounts", "credit", name, "-1000"]):
        result = runner.invoke(args=args)
        assert result.exit_code != 0, args
        assert "Error" in result.output and "Traceback" not in result.output


def test_scrapy_crawl_page_writes_the_same_extraction(tmp_path, site):
    out = tmp_path / "page.jsonl"
    env = {**os.environ, "CRAWLER_ALLOWED_NETWORKS": "127.0.0.2/32", "CRAWLER_LOG_LEVEL": "ERROR"}
    subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "page", "-a", f"url={site}/article",
         "-O", str(out)],
        cwd=ROOT, env=env, check=True, timeout=120, capture_output=True,
    )
    (line,) = out.read_text().splitlines()
    page = json.loads(line)
    assert page["status"] == "succeeded"
    assert page["final_url"] == f"{site}/article"
    assert page["data"]["title"] == "Tide tables of the Thames estuary"
    assert page["data"]["metadata"]["author"] == "Ada Marsh"


def test_scrapy_crawl_obeys_the_source_policy(tmp_path, hit_counter):
    out = tmp_path / "page.jsonl"
    env = {**os.environ, "CRAWLER_ALLOWED_NETWORKS": "", "CRAWLER_LOG_LEVEL": "ERROR"}
    subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "page", "-a",
         f"url=http://2130706433:{hit_counter.port}/", "-O", str(out)],
        cwd=ROOT, env=env, check=True, timeout=120, capture_output=True,
    )
    page = json.loads(out.read_text())
    assert page["error"]["error"] == "source_policy"
    assert hit_counter.hits == 0
