"""Operator CLI (``flask --app api …``) and the spiders run with ``scrapy crawl``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest

from api import create_app
from core.config import variables
from tests.conftest import ROOT, make_config
from tests.support.docs import doc_code

pytestmark = pytest.mark.stack  # starts processes (tests/conftest.py)


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


def test_credits_are_taken_back_with_a_negative_amount(sqlite_url):
    app = create_app(make_config(sqlite_url, "redis://127.0.0.1:1/0"))
    runner = app.test_cli_runner()
    name = f"cli-{uuid.uuid4().hex[:8]}"
    assert runner.invoke(args=["accounts", "create", name, "--credits", "620"]).exit_code == 0
    taken = runner.invoke(args=["accounts", "credit", name, "-500"])
    assert taken.exit_code == 0, taken.output
    assert taken.output == f"{name}: balance 120.\n"
    refused = runner.invoke(args=["accounts", "credit", name, "-500"])
    assert refused.exit_code == 1
    assert refused.output == f"Error: Cannot take back 500 credits: {name} has 120.\n"
    shown = runner.invoke(args=["accounts", "show", name]).output
    assert "balance  120" in shown


def test_amounts_and_names_the_books_cannot_hold_are_refused_in_words(sqlite_url):
    """An amount past what a balance may hold (it overflowed SQLite's integers into floats,
    PostgreSQL's into a traceback), and names no database stores, are a one-line error;
    nothing is created or granted."""
    app = create_app(make_config(sqlite_url, "redis://127.0.0.1:1/0"))
    runner = app.test_cli_runner()
    name = f"cli-{uuid.uuid4().hex[:8]}"
    assert runner.invoke(args=["accounts", "create", name, "--credits", "5"]).exit_code == 0
    huge = str(2**63 - 1)
    for args in (["accounts", "credit", name, huge], ["accounts", "credit", name, "-" + huge],
                 ["accounts", "create", "x" + name, "--credits", str(2**63)],
                 ["accounts", "credit", name, str(10**15)],
                 ["accounts", "create", "bad\x00name"], ["accounts", "create", "bad\udc80"],
                 ["accounts", "create", ""]):
        result = runner.invoke(args=args)
        assert result.exit_code != 0, (args, result.output)
        assert "Error" in result.output, (args, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit), args
    shown = runner.invoke(args=["accounts", "show", name]).output
    assert "balance  5" in shown
    assert "No account" in runner.invoke(args=["accounts", "show", "x" + name]).output
    close_to_the_top = runner.invoke(args=["accounts", "credit", name, str(10**12 - 5)])
    assert close_to_the_top.exit_code == 0 and f"balance {10**12}" in close_to_the_top.output
    assert runner.invoke(args=["accounts", "credit", name, "1"]).exit_code != 0


def test_the_documented_operator_lines_run_as_written(tmp_path):
    """docs/operators.md, "The operator CLI: accounts, keys, credits", from ``db upgrade`` to
    the take-back, verbatim (the export of DATABASE_URL is replaced by a database of the
    test's own)."""
    block = doc_code("docs/operators.md", "The operator CLI: accounts, keys, credits", "sh")
    lines = [line.split("#", 1)[0].strip() for line in block.splitlines()]
    wanted = [line for line in lines if " db upgrade" in line or " accounts c" in line]
    assert wanted[-1] == ".venv/bin/flask --app api accounts credit acme -500", wanted
    env = {k: v for k, v in os.environ.items() if k not in variables()}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'operators.db'}", VAR_DIR=str(tmp_path))
    outputs = [subprocess.run(line, shell=True, cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=60, check=True).stdout for line in wanted]
    assert outputs[-2:] == ["acme: balance 6000.\n", "acme: balance 5500.\n"], outputs


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


def test_scrapy_crawl_page_takes_formats_and_selectors(tmp_path, site):
    out = tmp_path / "page.jsonl"
    env = {**os.environ, "CRAWLER_ALLOWED_NETWORKS": "127.0.0.2/32", "CRAWLER_LOG_LEVEL": "ERROR"}
    subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "page", "-a", f"url={site}/article",
         "-a", "formats=markdown,html", "-a", 'include_selectors=["h1, p"]', "-O", str(out)],
        cwd=ROOT, env=env, check=True, timeout=120, capture_output=True,
    )
    data = json.loads(out.read_text())["data"]
    assert data["text"] is None and data["markdown"].startswith("# Tide tables")
    assert data["html"].startswith("<h1>Tide tables")


def test_scrapy_crawl_answers_a_bad_option_value_with_a_failed_page(tmp_path, site):
    env = {**os.environ, "CRAWLER_ALLOWED_NETWORKS": "127.0.0.2/32", "CRAWLER_LOG_LEVEL": "ERROR"}
    out = tmp_path / "page.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "page", "-a", f"url={site}/article",
         "-a", "formats=markdown,pdf", "-O", str(out)],
        cwd=ROOT, env=env, timeout=120, capture_output=True, text=True,
    )
    assert "Traceback" not in done.stderr and "ValueError" not in done.stderr
    error = json.loads(out.read_text())["error"]
    assert error["error"] == "validation_error"
    assert error["message"].startswith("Invalid option: formats: Unknown format. [1] Unknown "
                                       "format 'pdf'")


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
