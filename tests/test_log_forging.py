"""No log line can be forged: whatever a URL, a page or an exception carries, a worker's log has
no raw control character but the line feeds between lines, and a line at column 0 always
starts a record (the lines of a traceback after its first are indented).

A real worker process logging at DEBUG (ours, RQ's and Scrapy's lines) gets jobs straight
through RQ, as batch code sends them, past any API validation: a URL with CR LF, a redirect
whose Location holds ESC, VT, DEL and NEL raw, and a job whose exception message holds a forged
line (RQ logs it with its traceback, through no escaping of ours)."""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from core.controls import CONTINUATION, LineSafeFormatter, escaped, guard_handlers
from core.logformat import TEXT_FORMAT
from tests.conftest import WORKER_ENV, _redis_db, _start_workers, _stop
from worker import jobs, queues

#: A line an attacker would like to see in the log, as if the API had written it.
FORGED = "1999-12-31 23:59:59,999 ERROR api: forged"
#: Every control character but the line feed, in the UTF-8 bytes of a log.
RAW = re.compile(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9]")
#: How a record of our workers starts (core.logformat.TEXT_FORMAT).
RECORD = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [A-Z]+ \S+: ")


def forged_lines(text: str) -> list[str]:
    """Lines that start as the forged record does: at column 0, outside any record."""
    return [line for line in text.split("\n") if line.startswith(FORGED[:10])]


def test_the_formatter_keeps_every_record_to_its_own_lines():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(LineSafeFormatter(TEXT_FORMAT))
    logger = logging.getLogger("tests.log_forging")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        url = f"http://example.com/a\r\n{FORGED}\x1b[2J\x85\u2028\x0b\x7f?q=é中文"
        logger.warning("Failed %s", url)
        try:
            raise ValueError(f"bad page {url}")
        except ValueError:
            logger.exception("Page failed")
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert not RAW.search(text.encode()), text
    assert not forged_lines(text)
    lines = text.rstrip("\n").split("\n")
    assert all(RECORD.match(line) or line.startswith(CONTINUATION) for line in lines), text
    # without escaped() the line feed stays a line feed, the rest of the URL indented under it
    assert lines[0].endswith(": Failed http://example.com/a\\r")
    assert lines[1] == f"{CONTINUATION}{FORGED}\\x1b[2J\\x85\\u2028\\x0b\\x7f?q=é中文"
    assert lines[3] == CONTINUATION + "Traceback (most recent call last):"
    assert lines[-1] == f"{CONTINUATION}{FORGED}\\x1b[2J\\x85\\u2028\\x0b\\x7f?q=é中文"
    assert escaped(url) == url.encode("unicode_escape").decode().replace(
        "\\xe9\\u4e2d\\u6587", "é中文")


def test_guarding_a_handler_keeps_its_own_format_and_is_done_once():
    handler = logging.StreamHandler(io.StringIO())
    handler.setFormatter(logging.Formatter("<%(levelname)s> %(message)s"))
    logger = logging.getLogger("tests.log_forging.guarded")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        guard_handlers([logger])
        guarded = handler.formatter
        guard_handlers([logger])
        assert handler.formatter is guarded
        logger.error("a\rb")
    finally:
        logger.removeHandler(handler)
    assert handler.stream.getvalue() == "<ERROR> a\\rb\n"


@pytest.fixture(scope="module")
def verbose_worker(redis_url, tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """One worker of this module's own, logging everything: (its Redis, its log)."""
    url = _redis_db(redis_url, 10)
    Redis.from_url(url).flushdb()
    log = tmp_path_factory.mktemp("logs") / "verbose-worker.log"
    env = {**WORKER_ENV, "LOG_LEVEL": "DEBUG", "CRAWLER_LOG_LEVEL": "DEBUG"}
    procs = _start_workers(url, 1, env, log)
    yield url, log
    _stop(procs)


def test_no_job_can_forge_a_line_of_the_workers_log(verbose_worker, site, site_server):
    url, log = verbose_worker
    queue = queues.queue(queues.INTERACTIVE, Redis.from_url(url))
    refused = queue.enqueue(jobs.scrape, f"{site}/article\r\n{FORGED}\x1b[2J")
    redirected = queue.enqueue(jobs.scrape, f"{site}/redirect-hostile")
    crashed = queue.enqueue(jobs.run_single_page,
                            f"crawler.spiders.operations.NoSuch\r\n{FORGED}\x1b[2J\x85",
                            f"{site}/article")
    assert refused.latest_result(timeout=30).return_value["error"]["error"] == \
        "validation_error"
    landed = redirected.latest_result(timeout=30).return_value
    assert landed["status"] == "succeeded" and "%1B" in landed["final_url"]
    assert crashed.latest_result(timeout=30).type.name == "FAILED"
    raw = log.read_bytes()
    assert not RAW.search(raw), [line for line in raw.split(b"\n") if RAW.search(line)]
    text = raw.decode()
    assert not forged_lines(text)
    lines = text.split("\n")
    # each route did reach the log: the spider's line, Scrapy's redirect, RQ's traceback
    assert any(RECORD.match(line) and "Failed" in line and "\\r\\n" + FORGED in line
               for line in lines)
    assert any("Redirecting (302)" in line and "%1B" in line for line in lines)
    assert any(line.startswith(CONTINUATION) and FORGED + "\\x1b[2J\\x85" in line
               for line in lines)
