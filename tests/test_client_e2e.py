"""``webdata`` end to end: the command in a pseudo-terminal against a real stack (the API over
real HTTP, workers on its Redis fetching the loopback test site, the database), as a person
runs it: the bar advances, the file it leaves has one row per URL; Ctrl-C then y cancels;
``scrape`` prints a page's markdown, collections hold the asked formats, refusals are one line
and free."""

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


def run_webdata(service: str, who: Customer, tmp_path: Path, *args: str
                ) -> subprocess.CompletedProcess:
    """``webdata ARGS`` without a terminal, as a script or a pipe runs it."""
    return subprocess.run([sys.executable, "-m", "client", *args], cwd=tmp_path,
                          env=environment(service, who, tmp_path), capture_output=True,
                          text=True, timeout=120)


def test_scrape_prints_the_pages_markdown_ready_for_a_file(stack, service, site, tmp_path):
    who = new_customer(stack.app, credits=10, plan="standard")
    article = f"{site}/article"
    markdown = run_webdata(service, who, tmp_path, "scrape", article, "--format", "markdown")
    assert markdown.returncode == 0 and markdown.stderr == ""
    assert markdown.stdout.startswith("# Tide tables of the Thames estuary\n\n")
    assert "harmonic constants" in markdown.stdout and markdown.stdout.endswith("\n")
    heading = run_webdata(service, who, tmp_path, "scrape", article, "--format", "markdown",
                          "--include-selector", "h1")
    assert heading.stdout == "# Tide tables of the Thames estuary\n"
    text = run_webdata(service, who, tmp_path, "scrape", article)  # text by default
    assert text.returncode == 0 and "harmonic constants" in text.stdout
    assert not text.stdout.startswith("#")
    both = run_webdata(service, who, tmp_path, "scrape", article, "--format", "html",
                       "--format", "markdown", "--whole-page", "--exclude-selector", "p")
    answer = json.loads(both.stdout)  # several formats: the API's answer
    assert answer["text"] is None and answer["raw_html"] is None
    assert answer["markdown"] and answer["html"].startswith("<")
    assert "harmonic constants" not in answer["markdown"]  # its paragraphs were removed
    assert answer["credits_used"] == 1 and answer["url"] == article
    assert who.balance() == 10 - 4


def test_scrape_and_collect_read_records_by_a_schema_file(stack, service, site, tmp_path):
    who = new_customer(stack.app, credits=10, plan="standard")
    (tmp_path / "schema.json").write_text(json.dumps(
        {"fields": [{"name": "title", "selector": "h1"}]}))
    records = run_webdata(service, who, tmp_path, "scrape", f"{site}/article",
                          "--schema", str(tmp_path / "schema.json"))
    assert records.returncode == 0, records.stderr
    assert json.loads(records.stdout) == [{"title": "Tide tables of the Thames estuary"}]
    (tmp_path / "urls.txt").write_text(f"{site}/article\n")
    batch = run_webdata(service, who, tmp_path, "collect", str(tmp_path / "urls.txt"),
                        "--extract", "schema", "--schema", str(tmp_path / "schema.json"),
                        "-o", str(tmp_path / "records.jsonl"))
    assert batch.returncode == 0, batch.stderr
    [page] = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    assert page["data"] == {"records": [{"title": "Tide tables of the Thames estuary"}]}
    (tmp_path / "bad.json").write_text("{not json")
    bad = run_webdata(service, who, tmp_path, "scrape", f"{site}/article",
                      "--schema", str(tmp_path / "bad.json"))
    assert bad.returncode == 2 and "cannot read a JSON schema" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_map_lists_urls_one_a_line_for_collect(stack, service, site, tmp_path):
    who = new_customer(stack.app, credits=10, plan="standard")
    listed = run_webdata(service, who, tmp_path, "map", f"{site}/article", "--limit", "3")
    assert listed.returncode == 0, listed.stderr
    urls = listed.stdout.splitlines()
    assert 1 <= len(urls) <= 3 and all(url.startswith("http://") for url in urls)
    answer = json.loads(run_webdata(service, who, tmp_path, "map", f"{site}/article",
                                    "--json").stdout)
    assert {"links", "sitemaps", "feeds", "total_found", "truncated"} <= set(answer)
    refused = run_webdata(service, who, tmp_path, "map", f"{site}/article", "--limit", "0")
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1
    assert "limit" in refused.stderr and "Traceback" not in refused.stderr
    assert who.balance() == 10 - 2


def test_scrape_refusals_are_one_line_and_free(stack, service, site, tmp_path):
    who = new_customer(stack.app, credits=10, plan="standard")
    article = f"{site}/article"
    for selector, words in (("div[", "Not a valid CSS selector"),
                            ("article:has(p)", ":has() is not supported")):
        refused = run_webdata(service, who, tmp_path, "scrape", article,
                              "--include-selector", "h1", "--include-selector", selector)
        assert refused.returncode == 1 and refused.stdout == ""
        line = refused.stderr
        assert line.count("\n") == 1 and line.startswith("webdata: ")
        assert "(validation_error, HTTP 422)" in line and "include_selectors.1: " in line
        assert words in line, line
    unknown = run_webdata(service, who, tmp_path, "scrape", article, "--format", "pdf")
    assert unknown.returncode == 2 and "invalid choice: 'pdf'" in unknown.stderr
    policy = run_webdata(service, who, tmp_path, "scrape", "http://127.0.0.1:9/")
    assert policy.returncode == 1 and policy.stderr.count("\n") == 1
    assert "(source_policy, HTTP 403)" in policy.stderr
    for run in (unknown, policy):
        assert "Traceback" not in run.stderr and run.stdout == ""
    assert who.balance() == 10  # nothing charged


def test_a_crawl_asks_for_markdown_and_a_batch_for_two_formats(stack, service, site,
                                                              tmp_path):
    who = new_customer(stack.app, credits=20, plan="standard")
    crawl = run_webdata(service, who, tmp_path, "crawl", f"{site}/site/", "--max-pages", "3",
                        "--no-sitemap", "--format", "markdown", "-o", "site.jsonl")
    assert crawl.returncode == 0, crawl.stderr
    pages = [json.loads(line) for line in (tmp_path / "site.jsonl").read_text().splitlines()]
    assert len(pages) == 3
    assert all(page["data"]["markdown"] and page["data"]["text"] is None for page in pages)
    (tmp_path / "urls.txt").write_text(f"{site}/article\n")
    batch = run_webdata(service, who, tmp_path, "collect", "urls.txt", "--format", "markdown",
                        "--format", "html", "--exclude-selector", "footer", "--format", "csv",
                        "-o", "out.data")
    assert batch.returncode == 0, batch.stderr
    with (tmp_path / "out.data").open(newline="") as file:
        (row,) = list(csv.DictReader(file))
    assert row["markdown"].startswith("# Tide tables") and row["html"].startswith("<")
    assert "text" not in row and "raw_html" not in row  # a column per asked format


def test_page_options_the_api_refuses_start_nothing(stack, service, site, tmp_path):
    who = new_customer(stack.app, credits=20, plan="standard")
    (tmp_path / "urls.txt").write_text(f"{site}/contact\n")
    contacts = run_webdata(service, who, tmp_path, "collect", "urls.txt", "--extract",
                           "contacts", "--format", "markdown", "--whole-page", "-o", "out.csv")
    assert contacts.returncode == 1 and contacts.stdout == ""
    assert contacts.stderr.count("\n") == 1 and "(validation_error, HTTP 422)" in contacts.stderr
    assert "formats: Not an option of extract contacts." in contacts.stderr
    assert "only_main_content: Not an option of extract contacts." in contacts.stderr
    selector = run_webdata(service, who, tmp_path, "crawl", f"{site}/site/",
                           "--exclude-selector", "a:hover")
    assert selector.returncode == 1 and selector.stderr.count("\n") == 1
    assert "exclude_selectors.0: " in selector.stderr
    assert who.get("/collections").get_json()["collections"] == []  # nothing started
    assert who.balance() == 20 and not (tmp_path / "out.csv").exists()
