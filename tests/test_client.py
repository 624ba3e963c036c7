"""The Python client and the ``webdata`` command against a fake of the collections API
(tests/support/fakes/collections_api.py, with canned ``/scrape`` answers): retries and their
Idempotency-Key, errors as one line on stderr, the export file, the plain progress lines of a
run without a terminal, the page options sent and ``scrape``'s output."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from client import ApiError, Client, ConfigurationError, Unreachable, WebdataError
from client import http as client_http
from client.cli import main
from client.progress import RateMeter, summary
from tests.conftest import ROOT
from tests.support.fakes.collections_api import ID, Canned, FakeCollectionsApi, error

RATE_LIMITED = error(429, "rate_limited", "Over 60 requests a minute.")
UNAVAILABLE = error(503, "unavailable", "The job queue is unreachable; nothing was charged.")


@pytest.fixture
def api() -> Iterator[FakeCollectionsApi]:
    server = FakeCollectionsApi()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def client(api, sleeps) -> Client:
    return Client("wdp_test", api.url, sleep=sleeps.append)


@pytest.fixture
def cli_env(api, monkeypatch) -> FakeCollectionsApi:
    """``webdata`` run in this process against the fake, polling fast."""
    monkeypatch.setenv("WEBDATA_API_KEY", "wdp_test")
    monkeypatch.setenv("WEBDATA_API_URL", api.url)
    monkeypatch.setattr(client_http, "POLL_INTERVAL", 0.01)
    return api


def test_a_429_is_retried_after_its_retry_after_with_the_same_idempotency_key(api, client,
                                                                              sleeps):
    api.script.append(Canned("POST", "/collections", 429, RATE_LIMITED, {"Retry-After": "2"}))
    created = client.collect(["https://example.com/"], extract="contacts")
    assert created["id"] == ID
    posts = api.requests("POST", "/collections")
    assert len(posts) == 2 and sleeps == [2.0]
    keys = {post.headers["idempotency-key"] for post in posts}
    assert len(keys) == 1 and keys.pop().startswith("webdata-client-")
    assert posts[0].body == posts[1].body == {"mode": "batch", "urls": ["https://example.com/"],
                                              "extract": "contacts", "webhook_url": None}
    assert posts[0].headers["authorization"] == "Bearer wdp_test"


def test_a_503_is_retried_with_backoff_and_the_same_key(api, client, sleeps):
    api.script += [Canned("POST", "/collections", 503, UNAVAILABLE),
                   Canned("POST", "/collections", 503, UNAVAILABLE, {"Retry-After": "1"})]
    client.crawl("https://site.example/", max_pages=500, use_sitemap=False)
    posts = api.requests("POST", "/collections")
    assert len(posts) == 3 and sleeps == [0.5, 1.0]
    assert len({post.headers["idempotency-key"] for post in posts}) == 1
    assert posts[-1].body == {"mode": "crawl", "url": "https://site.example/", "extract": "page",
                              "webhook_url": None, "max_pages": 500, "use_sitemap": False}


def test_each_create_has_a_key_of_its_own_and_a_given_key_is_used(api, client):
    client.collect(["https://example.com/a"])
    client.collect(["https://example.com/a"])
    client.collect(["https://example.com/a"], idempotency_key="order-1234")
    keys = [post.headers["idempotency-key"] for post in api.requests("POST", "/collections")]
    assert len(set(keys)) == 3 and keys[2] == "order-1234"


def test_reads_are_retried_and_only_creates_carry_a_key(api, client, sleeps):
    api.script.append(Canned("GET", f"/collections/{ID}", 429, RATE_LIMITED,
                             {"Retry-After": format_datetime(datetime.now(UTC)
                                                             + timedelta(seconds=30),
                                                             usegmt=True)}))
    assert client.get(ID)["id"] == ID
    assert len(sleeps) == 1 and 25 <= sleeps[0] <= 30  # an HTTP date is honoured too
    assert all("idempotency-key" not in seen.headers for seen in api.seen)


def test_retries_end_with_the_error(api, sleeps):
    client = Client("wdp_test", api.url, retries=2, sleep=sleeps.append)
    api.script += [Canned("GET", f"/collections/{ID}", 503, UNAVAILABLE)] * 3
    with pytest.raises(ApiError) as caught:
        client.get(ID)
    assert (caught.value.status, caught.value.code) == (503, "unavailable")
    assert len(api.requests("GET", f"/collections/{ID}")) == 3 and sleeps == [0.5, 1.0]


@pytest.mark.parametrize(("canned", "why"), [
    (Canned("POST", "/collections", 429, error(429, "collection_limit", "Too many running.")),
     "a collection limit waits on other collections, not on time"),
    (Canned("POST", "/collections", 429, RATE_LIMITED, {"Retry-After": "3600"}),
     "longer than max_retry_wait"),
    (Canned("POST", "/collections", 402, error(402, "insufficient_credits", "Balance 0.")),
     "not a transient error"),
])
def test_what_is_not_retried(api, client, sleeps, canned, why):
    api.script.append(canned)
    with pytest.raises(ApiError) as caught:
        client.collect(["https://example.com/"])
    assert caught.value.code == canned.body["error"], why
    assert len(api.requests("POST", "/collections")) == 1 and sleeps == []


def test_an_unreachable_service_is_retried_then_reported(sleeps):
    client = Client("wdp_test", "http://127.0.0.1:9", retries=3, sleep=sleeps.append)
    with pytest.raises(Unreachable, match=r"Cannot reach the service at http://127\.0\.0\.1:9"):
        client.get(ID)
    assert sleeps == [0.5, 1.0, 2.0]


def test_configuration_errors(monkeypatch, tmp_path):
    monkeypatch.delenv("WEBDATA_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="WEBDATA_API_KEY"):
        Client()
    monkeypatch.setenv("WEBDATA_API_KEY", "k")
    monkeypatch.delenv("WEBDATA_API_URL", raising=False)
    assert Client().url == "http://127.0.0.1:8000/api/service/v1"
    assert Client(url="https://api.example/api/service/v1/").url == (
        "https://api.example/api/service/v1")
    with pytest.raises(ConfigurationError):
        Client(url="ftp://x")
    with pytest.raises(ConfigurationError, match="collection id"):
        Client().get("../account")
    with pytest.raises(ConfigurationError, match="format"):
        Client().export(ID, tmp_path / "out.xlsx")


@pytest.mark.parametrize("name", ["out.csv", "out.jsonl", "out.json"])
def test_export_streams_to_the_file_in_the_format_of_its_name(api, client, tmp_path, name):
    final = client.wait(ID, interval=0)
    assert final["status"] == "completed"
    path = client.export(ID, tmp_path / name)
    query = api.requests("GET", f"/collections/{ID}/export")[-1].query
    assert query == {"format": name.split(".")[1]}
    text = path.read_text()
    if name.endswith(".csv"):
        assert text.splitlines() == ["url,status"] + [f"https://example.com/{n},succeeded"
                                                       for n in range(3)]
    elif name.endswith(".jsonl"):
        assert len([json.loads(line) for line in text.splitlines()]) == 3
    else:
        assert len(json.loads(text)) == 3
    assert list(tmp_path.iterdir()) == [path]  # no .part left
    assert "gzip" in api.requests("GET", f"/collections/{ID}/export")[-1].headers[
        "accept-encoding"]  # and the gzipped answer was undone


def test_export_keeps_the_fields_asked(api, client, cli_env, tmp_path):
    client.wait(ID, interval=0)
    path = client.export(ID, tmp_path / "out.csv", fields=["url"], status="succeeded")
    query = api.requests("GET", f"/collections/{ID}/export")[-1].query
    assert query == {"format": "csv", "fields": "url", "status": "succeeded"}
    assert path.read_text().splitlines() == ["url"] + [f"https://example.com/{n}"
                                                       for n in range(3)]
    out = tmp_path / "cli.jsonl"
    assert main(["export", ID, "-o", str(out), "--fields", "status,url"]) == 0
    assert api.requests("GET", f"/collections/{ID}/export")[-1].query["fields"] == "status,url"
    assert [list(json.loads(line)) for line in out.read_text().splitlines()] == [
        ["status", "url"]] * 3


def test_an_expired_export_is_an_error_and_leaves_no_file(api, client, tmp_path):
    api.script.append(Canned("GET", f"/collections/{ID}/export", 410,
                             error(410, "expired", "Past their download window.")))
    with pytest.raises(ApiError, match="expired"):
        client.export(ID, tmp_path / "out.csv")
    assert list(tmp_path.iterdir()) == []


def test_wait_reports_every_poll_and_results_follow_the_cursor(api, client):
    seen: list[int] = []
    final = client.wait(ID, on_progress=lambda c: seen.append(c["progress"]["done"]),
                        interval=0)
    assert seen == [1, 2, 3] and final["status"] == "completed"
    api.script += [Canned("GET", f"/collections/{ID}/results", 200,
                          {"results": [{"url": "a"}], "next_cursor": "c1"}),
                   Canned("GET", f"/collections/{ID}/results", 200,
                          {"results": [{"url": "b"}], "next_cursor": None})]
    assert [r["url"] for r in client.results(ID)] == ["a", "b"]
    assert api.requests("GET", f"/collections/{ID}/results")[1].query["cursor"] == "c1"


# -- the command ---------------------------------------------------------------------------


def test_collect_without_a_terminal_prints_plain_progress_and_saves_the_file(
        cli_env, tmp_path, capsys):
    urls = tmp_path / "urls.txt"
    urls.write_text("# the shop\nhttps://example.com/a\n\nhttps://example.com/b\n"
                    "https://example.com/c\n")
    out = tmp_path / "out.csv"
    assert main(["collect", str(urls), "--extract", "contacts", "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""  # stdout stays for what scripts read
    assert f"{ID} running: 1/3 pages" in captured.err  # a line, not a bar
    assert f"{ID} completed: 3/3 pages (3 succeeded, 0 failed), 3 credits used." in (
        captured.err)
    assert f"Saved {out}." in captured.err
    assert out.read_text().count("\n") == 4
    assert cli_env.requests("POST", "/collections")[0].body["urls"] == [
        "https://example.com/a", "https://example.com/b", "https://example.com/c"]


def test_a_url_file_is_cut_at_line_ends_only(cli_env, tmp_path, capsys):
    """A NEL or a U+2028 inside a line stays in its URL, for the service to refuse naming it;
    str.splitlines would have sent the pieces as URLs of their own."""
    urls = tmp_path / "urls.txt"
    urls.write_bytes(" https://example.com/a\t\r\nhttps://example.com/b\u2028https://x/\x85c\r\n"
                     .encode())
    assert main(["collect", str(urls), "--no-wait"]) == 0
    assert cli_env.requests("POST", "/collections")[0].body["urls"] == [
        "https://example.com/a", "https://example.com/b\u2028https://x/\x85c"]


def test_no_wait_prints_the_id_alone(cli_env, tmp_path, capsys):
    urls = tmp_path / "urls.txt"
    urls.write_text("https://example.com/a\n")
    assert main(["collect", str(urls), "--no-wait"]) == 0
    assert capsys.readouterr().out == f"{ID}\n"
    assert not cli_env.requests("GET", f"/collections/{ID}")


def test_status_and_cancel(cli_env, capsys):
    assert main(["status", ID]) == 0
    out = capsys.readouterr().out
    assert f"id        {ID}" in out and "status    running" in out
    assert main(["status", ID, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["id"] == ID
    assert main(["cancel", ID]) == 0
    assert f"{ID} cancelled" in capsys.readouterr().out
    assert len(cli_env.requests("POST", f"/collections/{ID}/cancel")) == 1


@pytest.mark.parametrize(("canned", "expected"), [
    (Canned("POST", "/collections", 402, error(402, "insufficient_credits",
                                               "A collection needs at least 1 credit.")),
     "webdata: A collection needs at least 1 credit. (insufficient_credits, HTTP 402)"),
    (Canned("POST", "/collections", 422, error(
        422, "validation_error", "Invalid request: check urls.",
        errors={"urls": {"1": ["Not a valid URL."]}})),
     "webdata: Invalid request: check urls. (validation_error, HTTP 422) urls.1: Not a valid "
     "URL."),
    (Canned("POST", "/collections", 502, b"<html>Bad Gateway</html>",
            {"Content-Type": "text/html"}),
     "webdata: The service answered HTTP 502 Bad Gateway: <html>Bad Gateway</html>"),
])
def test_api_errors_are_one_line_on_stderr(cli_env, tmp_path, capsys, canned, expected):
    cli_env.script.append(canned)
    urls = tmp_path / "urls.txt"
    urls.write_text("https://example.com/a\nnope\n")
    assert main(["--retries", "0", "collect", str(urls)]) == 1
    captured = capsys.readouterr()
    assert captured.err.strip() == expected and captured.out == ""


def test_not_found(cli_env, capsys):
    assert main(["status", "col_nope"]) == 1
    assert capsys.readouterr().err == "webdata: No such collection. (not_found, HTTP 404)\n"


def _webdata(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "client", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)


def test_local_failures_are_one_line_and_no_traceback(tmp_path):
    """In a process of its own, as a user meets them: no key, no file, nobody listening."""
    base = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    no_key = _webdata("status", ID, env=base)
    assert (no_key.returncode, no_key.stderr) == (1, "webdata: No API key: set WEBDATA_API_KEY"
                                                     " (make run prints one on its 'API key:'"
                                                     " line).\n")
    env = {**base, "WEBDATA_API_KEY": "wdp_x", "WEBDATA_API_URL": "http://127.0.0.1:9"}
    no_file = _webdata("collect", str(tmp_path / "missing.txt"), env=env)
    assert no_file.returncode == 1
    assert no_file.stderr == (f"webdata: cannot read {tmp_path / 'missing.txt'}: "
                              "No such file or directory\n")
    nobody = _webdata("--retries", "0", "status", ID, env=env)
    assert nobody.returncode == 1
    assert nobody.stderr == ("webdata: Cannot reach the service at "
                             "http://127.0.0.1:9/api/service/v1: Connection refused\n")
    bad_format = _webdata("crawl", "https://example.com/", "-o", "site.xlsx", env=env)
    assert bad_format.returncode == 1 and "Cannot tell the format" in bad_format.stderr
    for run in (no_key, no_file, nobody, bad_format):
        assert "Traceback" not in run.stderr and run.stdout == ""


def test_the_client_imports_nothing_of_the_platform():
    """It must run where only the service's URL is known: no api, crawler, worker, storage."""
    code = ("import sys, client.cli; print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'api', 'crawler', 'worker', 'storage', 'scrapy', 'flask', 'sqlalchemy', 'rq'}))")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=60, check=True)
    assert run.stdout.strip() == "[]"


def test_the_clients_own_lists_are_the_services():
    """The client imports nothing of the platform, so it spells out what the service accepts:
    the same values, in the same order, as the declarations it cannot import."""
    from api.exports import FORMATS
    from core.changes import STATUSES
    from core.contract import SKIP_REASONS
    from core.operations import FORMAT_FIELDS

    assert client_http.SKIP_REASONS == SKIP_REASONS
    assert client_http.CHANGE_STATUSES == STATUSES
    assert tuple(FORMAT_FIELDS) == client_http.CONTENT_FORMATS
    assert tuple(FORMATS) == client_http.FORMATS


def test_the_console_script_is_declared():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'webdata = "client.cli:main"' in text and '"client*"' in text


# -- the display ---------------------------------------------------------------------------


def test_the_rate_and_eta_come_from_the_polls():
    now = [0.0]
    meter = RateMeter(window=10, clock=lambda: now[0])
    assert meter.rate is None and meter.eta(5) is None
    for done in (0, 2, 4, 4, 4):  # 2 pages/s, then a stall
        meter.add(done)
        now[0] += 1
    assert meter.rate == pytest.approx(1.0)  # 4 pages in 4 s: the stall shows
    assert meter.eta(6) == pytest.approx(6.0) and meter.eta(0) == 0.0
    now[0] += 20
    meter.add(4)
    meter.add(4)
    assert meter.rate == 0 and meter.eta(6) is None  # the old samples left the window


def test_summary_names_what_matters():
    collection = {"id": ID, "status": "failed", "stop_reason": "insufficient_credits",
                  "progress": {"total": 9, "done": 4, "succeeded": 3, "failed": 1,
                               "robots_blocked": 1}, "credits_used": 3}
    assert summary(collection) == (f"{ID} failed: 4/9 pages (3 succeeded, 1 failed, 1 blocked "
                                   "by robots.txt), 3 credits used; stopped: "
                                   "insufficient_credits.")


def test_a_key_that_cannot_be_one_is_a_configuration_error(monkeypatch):
    """The docs' placeholder (``wdp_…``) pasted as the key, or a key with a line break:
    said at once, not a traceback from the HTTP library or 15 s of retries."""
    for key in ("wdp_\u2026", "wdp_abc\ndef", "wdp abc"):
        with pytest.raises(ConfigurationError, match="API key"):
            Client(key, "http://127.0.0.1:9")


def test_an_answer_that_is_not_json_is_an_error_not_a_traceback(api, client):
    api.script.append(Canned("GET", f"/collections/{ID}", 200, b"<html>Sign in to the Wi-Fi"))
    with pytest.raises(ApiError, match="not JSON"):
        client.get(ID)


def test_an_output_that_cannot_be_written_is_refused_before_anything_starts(
        cli_env, tmp_path, capsys):
    urls = tmp_path / "urls.txt"
    urls.write_text("https://example.com/a\n")
    folder = tmp_path / "out.csv"
    folder.mkdir()
    assert main(["collect", str(urls), "-o", str(folder)]) == 1
    assert "is a folder" in capsys.readouterr().err
    assert not cli_env.requests("POST", "/collections")  # nothing started, nothing charged


def test_an_export_that_cannot_be_written_is_one_line(api, client, tmp_path):
    """The file's folder went away meanwhile: an error of the client's, no traceback."""
    api.done = 3
    with pytest.raises(WebdataError, match="Cannot write"):
        client.export(ID, tmp_path / "gone" / "out.csv")


def test_a_url_file_saved_with_a_byte_order_mark_is_read(cli_env, tmp_path):
    urls = tmp_path / "urls.txt"
    urls.write_bytes(b"\xef\xbb\xbfhttps://example.com/a\r\nhttps://example.com/b\r\n")
    assert main(["collect", str(urls), "--no-wait"]) == 0
    assert cli_env.requests("POST", "/collections")[0].body["urls"] == [
        "https://example.com/a", "https://example.com/b"]


# -- one page: scrape, and the page options of collections ------------------------------------


def scraped(**formats: str | None) -> dict:
    """A ``/scrape`` answer (docs/api.md): every format present, null unless given."""
    return {"request_id": "req_fake", "credits_used": 1, "url": "https://example.com/post",
            "final_url": "https://example.com/post", "status_code": 200,
            "fetched_at": "2026-11-21T08:40:46Z", "title": "Post",
            **{name: formats.get(name) for name in ("text", "markdown", "html", "raw_html")},
            "language": "en", "links": [], "metadata": None}


def test_scrape_sends_only_the_options_given_under_one_key_for_every_retry(api, client, sleeps):
    api.script += [Canned("POST", "/scrape", 503, UNAVAILABLE),
                   Canned("POST", "/scrape", 200, scraped(markdown="# Post"))]
    answer = client.scrape("https://example.com/post", formats=("markdown",),
                           exclude_selectors=["nav", "footer"], only_main_content=False)
    assert answer["markdown"] == "# Post" and answer["text"] is None
    posts = api.requests("POST", "/scrape")
    assert len(posts) == 2 and sleeps == [0.5]
    assert posts[0].body == posts[1].body == {
        "url": "https://example.com/post", "formats": ["markdown"],
        "only_main_content": False, "exclude_selectors": ["nav", "footer"]}
    assert len({post.headers["idempotency-key"] for post in posts}) == 1
    api.script.append(Canned("POST", "/scrape", 200, scraped(text="Post")))
    client.scrape("https://example.com/post")
    assert api.requests("POST", "/scrape")[-1].body == {"url": "https://example.com/post"}
    api.script.append(Canned("POST", "/scrape", 200, scraped(text="Post")))
    client.scrape("https://example.com/post", max_age=3600)
    assert api.requests("POST", "/scrape")[-1].body == {"url": "https://example.com/post",
                                                        "max_age": 3600}


def test_webdata_scrape_and_map_send_max_age(cli_env, capsys):
    cli_env.script += [Canned("POST", "/scrape", 200, scraped(text="Post")),
                       Canned("POST", "/map", 200, {"links": [], "total_found": 0,
                                                    "truncated": False})]
    assert main(["scrape", "https://example.com/", "--max-age", "600"]) == 0
    assert main(["map", "https://example.com/", "--max-age", "60"]) == 0
    assert cli_env.requests("POST", "/scrape")[-1].body["max_age"] == 600
    assert cli_env.requests("POST", "/map")[-1].body["max_age"] == 60


def test_scrape_waits_longer_than_the_service_waits_for_its_page(api, client, monkeypatch):
    """The service answers 504 after JOB_WAIT_SECONDS (60 s): the client must not give up
    first, and retry a scrape still running."""
    seen = []
    send = client.session.request
    monkeypatch.setattr(client.session, "request",
                        lambda *a, **k: seen.append(k["timeout"]) or send(*a, **k))
    api.script.append(Canned("POST", "/scrape", 200, scraped(text="Post")))
    client.scrape("https://example.com/post")
    assert seen == [(10.0, client_http.SCRAPE_READ_TIMEOUT)] and seen[0][1] > 60


def test_collections_send_the_page_options_given(api, client):
    client.collect(["https://example.com/a"], formats=["markdown", "html"],
                   include_selectors=("article",))
    client.crawl("https://example.com/", max_pages=3, only_main_content=False)
    batch, crawl = (post.body for post in api.requests("POST", "/collections"))
    assert batch == {"mode": "batch", "urls": ["https://example.com/a"], "extract": "page",
                     "webhook_url": None, "formats": ["markdown", "html"],
                     "include_selectors": ["article"]}
    assert crawl == {"mode": "crawl", "url": "https://example.com/", "extract": "page",
                     "webhook_url": None, "max_pages": 3, "only_main_content": False}
    with pytest.raises(TypeError, match="format"):
        client.collect(["https://example.com/a"], format=["markdown"])  # a typo is no option
    assert len(api.requests("POST", "/collections")) == 2
    client.collect(["https://example.com/a"], max_age=600)
    client.crawl("https://example.com/", max_age=60)
    assert [post.body["max_age"] for post in api.requests("POST", "/collections")[2:]] == [
        600, 60]


def test_webdata_scrape_prints_the_format_asked_as_it_is(cli_env, capsys):
    markdown = "# Post\n\nSome *text* and <script>x</script>, as written."
    cli_env.script.append(Canned("POST", "/scrape", 200, scraped(markdown=markdown)))
    assert main(["scrape", "https://example.com/post", "--format", "markdown",
                 "--format", "markdown", "--include-selector", "article"]) == 0
    assert capsys.readouterr().out == markdown + "\n"  # the markdown itself, for a pipe
    assert cli_env.requests("POST", "/scrape")[0].body == {
        "url": "https://example.com/post", "formats": ["markdown"],
        "include_selectors": ["article"]}
    cli_env.script.append(Canned("POST", "/scrape", 200, scraped(text="Post\n")))
    assert main(["scrape", "https://example.com/post"]) == 0  # text by default
    assert capsys.readouterr().out == "Post\n"
    assert cli_env.requests("POST", "/scrape")[1].body == {"url": "https://example.com/post"}


@pytest.mark.parametrize("args", [["--format", "markdown", "--format", "html"],
                                  ["--format", "markdown", "--json"], ["--json"]])
def test_webdata_scrape_prints_json_for_several_formats_or_when_asked(cli_env, capsys, args):
    cli_env.script.append(Canned("POST", "/scrape", 200, scraped(markdown="# Post",
                                                                 html="<h1>Post</h1>")))
    assert main(["scrape", "https://example.com/post", *args]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["markdown"] == "# Post" and answer["title"] == "Post"


def test_webdata_scrape_of_empty_content_says_so_on_stderr(cli_env, capsys):
    cli_env.script.append(Canned("POST", "/scrape", 200, scraped()))
    assert main(["scrape", "https://example.com/post", "--include-selector", "#none"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("webdata: the page gave no text (do the selectors match "
                            "anything?); 1 credit used.\n")
    cli_env.script.append(Canned("POST", "/scrape", 200, scraped()))
    assert main(["scrape", "https://example.com/empty", "--format", "markdown"]) == 0
    assert capsys.readouterr().err == ("webdata: the page gave no markdown (--whole-page takes "
                                       "all of its body); 1 credit used.\n")


def test_webdata_scrape_refused_is_one_line(cli_env, capsys):
    cli_env.script.append(Canned("POST", "/scrape", 422, error(
        422, "validation_error", "Invalid request: check include_selectors.",
        errors={"include_selectors": {"0": "Not a valid CSS selector: expected a name."}})))
    assert main(["scrape", "https://example.com/post", "--include-selector", "div["]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == (
        "webdata: Invalid request: check include_selectors. (validation_error, HTTP 422) "
        "include_selectors.0: Not a valid CSS selector: expected a name.\n")


def test_format_of_collect_names_content_and_file_formats(cli_env, tmp_path, capsys):
    urls = tmp_path / "urls.txt"
    urls.write_text("https://example.com/a\n")
    out = tmp_path / "out.data"  # its name does not tell: --format csv does
    assert main(["collect", str(urls), "--format", "markdown", "--format", "csv",
                 "--format", "raw_html", "--whole-page", "--exclude-selector", "nav",
                 "-o", str(out)]) == 0
    assert cli_env.requests("POST", "/collections")[0].body == {
        "mode": "batch", "urls": ["https://example.com/a"], "extract": "page",
        "webhook_url": None, "formats": ["markdown", "raw_html"], "only_main_content": False,
        "exclude_selectors": ["nav"]}
    assert cli_env.requests("GET", f"/collections/{ID}/export")[0].query["format"] == "csv"
    assert out.read_text().startswith("url,status\n")


def test_bad_formats_are_bad_command_lines(cli_env, tmp_path, capsys):
    urls = tmp_path / "urls.txt"
    urls.write_text("https://example.com/a\n")
    for args in (["scrape", "https://example.com/", "--format", "pdf"],
                 ["scrape", "https://example.com/", "--format", "csv"],  # a file's format
                 ["collect", str(urls), "--format", "csv", "--format", "json"]):
        with pytest.raises(SystemExit) as exited:
            main(args)
        assert exited.value.code == 2
        assert "Traceback" not in capsys.readouterr().err
    assert not cli_env.seen  # nothing sent, nothing charged


def test_export_keeps_its_file_format_only(cli_env, tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["export", ID, "-o", str(tmp_path / "out.x"), "--format", "markdown"])
    assert exited.value.code == 2
    assert main(["export", ID, "-o", str(tmp_path / "out.x"), "--format", "jsonl"]) == 0
    assert cli_env.requests("GET", f"/collections/{ID}/export")[0].query["format"] == "jsonl"


def test_a_reader_that_goes_away_ends_scrape_quietly(api, tmp_path):
    """``webdata scrape URL --format raw_html | head -c 10``: a megabyte for a reader that
    reads ten bytes and leaves. No traceback, no "Exception ignored" at exit."""
    api.script.append(Canned("POST", "/scrape", 200,
                             scraped(raw_html="<p>" + "x" * 1_000_000 + "</p>")))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT),
           "WEBDATA_API_KEY": "wdp_test", "WEBDATA_API_URL": api.url}
    with subprocess.Popen([sys.executable, "-m", "client", "scrape", "https://example.com/",
                           "--format", "raw_html"], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as run:
        assert run.stdout.read(10) == b"<p>xxxxxxx"
        run.stdout.close()
        stderr = run.stderr.read().decode()
        status = run.wait(timeout=60)
    assert status == 1 and stderr == ""


def test_collections_can_track_changes(api, client, cli_env):
    client.collect(["https://example.com/a"], track="prices")
    client.crawl("https://example.com/", track="")
    sent = [post.body["change_tracking"] for post in api.requests("POST", "/collections")]
    assert sent == [{"tag": "prices"}, {}]
    assert main(["crawl", "https://example.com/", "--no-wait", "--track", "news"]) == 0
    assert main(["crawl", "https://example.com/", "--no-wait", "--track"]) == 0
    assert [post.body["change_tracking"] for post in
            api.requests("POST", "/collections")[2:]] == [{"tag": "news"}, {}]


def test_webhook_events_are_sent_only_when_chosen():
    from client.arguments import parser
    from client.bodies import batch_body, crawl_body

    plain = batch_body(["https://a.test/"], extract="page", webhook_url="https://h.test/",
                       max_age=None, track=None, options={})
    assert "webhook_events" not in plain
    chosen = crawl_body("https://a.test/", extract="page", webhook_url="https://h.test/",
                        track=None, options={}, webhook_events=["collection.page"])
    assert chosen["webhook_events"] == ["collection.page"]
    args = parser().parse_args(["collect", "urls.txt", "--webhook-url", "https://h.test/",
                                "--webhook-event", "collection.started",
                                "--webhook-event", "collection.page"])
    assert args.webhook_events == ["collection.started", "collection.page"]
    with pytest.raises(SystemExit):
        parser().parse_args(["collect", "urls.txt", "--webhook-event", "collection.paged"])
