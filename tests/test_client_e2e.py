"""``webdata`` end to end: the command in a pseudo-terminal against a real stack (the API over
real HTTP, workers on its Redis fetching the loopback test site, the database), as a person
runs it: the bar advances, the file it leaves has one row per URL; Ctrl-C then y cancels."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, Customer, new_customer
from tests.support.docs import doc_code
from tests.support.terminal import CTRL_C, Terminal


def environment(service: str, who: Customer, home: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), "TERM": "xterm-256color",
            "PYTHONPATH": str(ROOT), "WEBDATA_API_KEY": who.key, "WEBDATA_API_URL": service}


def webdata(service: str, who: Customer, tmp_path: Path, *args: str) -> Terminal:
    """``webdata ARGS`` in an 80x24 terminal (``python -m client``: the code of this tree,
    whatever console script the environment has)."""
    return Terminal([sys.executable, "-m", "client", *args],
                    environment(service, who, tmp_path), cwd=str(tmp_path), rows=24, columns=80)


def test_collect_shows_the_bar_advancing_and_saves_one_row_per_url(stack, service, site,
                                                                   tmp_path):
    who = new_customer(stack.app, credits=100, plan="standard")
    # Slow pages, at most HOST_CAP at once: the collection takes a few polls.
    urls = [f"{site}/slow/client{n}?ms=600" for n in range(12)]
    (tmp_path / "urls.txt").write_text("\n".join(urls) + "\n")
    term = webdata(service, who, tmp_path, "collect", "urls.txt", "-o", "out.csv")
    try:
        status = term.wait(timeout=120)
    finally:
        term.close()
    assert status == 0, term.text
    seen = [int(done) for done in re.findall(r"[━╸╺] +(\d+)/12 ", term.text)]
    assert seen == sorted(seen), seen  # never backwards
    assert seen[-1] == 12 and len({n for n in seen if 0 < n < 12}) >= 1, seen
    assert re.search(r"\d+\.\d pages/s +\d+ credits? +ETA", term.text)
    final = re.search(r"(col_\w+) completed: 12/12 pages \(12 succeeded, 0 failed\), "
                      r"12 credits used\.", term.text)
    assert final and "Saved out.csv." in term.text and "Traceback" not in term.text
    with (tmp_path / "out.csv").open(newline="") as file:
        rows = list(csv.DictReader(file))
    assert sorted(row["url"] for row in rows) == sorted(urls)  # one row per URL, a header
    assert {row["status"] for row in rows} == {"succeeded"}
    assert who.balance() == 100 - 12


def test_crawl_without_a_terminal_writes_json_lines_and_status_reads_it(stack, service, site,
                                                                        tmp_path):
    who = new_customer(stack.app, credits=100, plan="standard")
    env = environment(service, who, tmp_path)
    run = subprocess.run([sys.executable, "-m", "client", "crawl", f"{site}/site/",
                          "--max-pages", "4", "--no-sitemap", "-o", "site.jsonl"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "" and "━" not in run.stderr  # lines for a log, no bar
    collection_id = re.search(r"(col_\w+) completed: 4/4 pages", run.stderr).group(1)
    lines = (tmp_path / "site.jsonl").read_text().splitlines()
    assert len(lines) == 4 and all(json.loads(line)["url"].startswith(site) for line in lines)
    status = subprocess.run([sys.executable, "-m", "client", "status", collection_id, "--json"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert json.loads(status.stdout)["progress"]["done"] == 4


def test_ctrl_c_then_yes_cancels_the_collection(stack, service, site, tmp_path):
    who = new_customer(stack.app, credits=100, plan="standard")
    urls = [f"{site}/slow/client-cancel{n}?ms=1500" for n in range(30)]
    (tmp_path / "urls.txt").write_text("\n".join(urls) + "\n")
    term = webdata(service, who, tmp_path, "collect", "urls.txt", "-o", "out.csv")
    try:
        collection_id = term.expect(r"Collection (col_\w+) started").group(1)
        term.expect(r"running .*/30 ")
        term.type(CTRL_C)
        term.expect(re.escape(f"Cancel collection {collection_id}? [y/N] "))
        term.type(b"y\n")
        assert term.wait(timeout=60) == 130
    finally:
        term.close()
    assert re.search(rf"{collection_id} cancelled: \d+/30 pages", term.text), term.text
    answer = who.get(f"/collections/{collection_id}").get_json()
    assert answer["status"] == "cancelled" and answer["progress"]["done"] < 30
    assert not (tmp_path / "out.csv").exists()


def test_the_documented_snippet_runs_as_written(stack, service, site, tmp_path):
    """docs/python.md, "The `webdata` command and `client.Client`": the Python snippet
    verbatim, but for its two URLs (out of reach here), which become two pages of the test
    site."""
    code = doc_code("docs/python.md", "The `webdata` command and `client.Client`", "python")
    example = '["https://example.com/", "https://example.org/"]'
    assert example in code
    code = code.replace(example, json.dumps([f"{site}/contact", f"{site}/article"]))
    who = new_customer(stack.app, credits=10, plan="standard")
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path,
                         env=environment(service, who, tmp_path), capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["completed", "2", "2"]
    with (tmp_path / "contacts.csv").open(newline="") as file:
        rows = {row["url"]: row for row in csv.DictReader(file)}
    assert set(rows) == {f"{site}/contact", f"{site}/article"}
    assert "Sales@harbour-tide.co.uk" in rows[f"{site}/contact"]["emails"]
