"""``webdata`` in a real pseudo-terminal against the fake API: the bar is drawn, and Ctrl-C
asks before cancelling (y cancels, n goes on waiting, a second Ctrl-C, or no terminal
to ask on, leaves it running)."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator

import pytest

from tests.conftest import ROOT
from tests.support.fakes.collections_api import ID, FakeCollectionsApi
from tests.support.terminal import CTRL_C, Terminal

pytestmark = pytest.mark.stack  # starts processes (tests/conftest.py)

PROMPT = re.escape(f"Cancel collection {ID}? [y/N] ")


@pytest.fixture
def endless() -> Iterator[FakeCollectionsApi]:
    """A collection that runs until cancelled."""
    server = FakeCollectionsApi(total=50, endless=True)
    yield server
    server.shutdown()
    server.server_close()


def environment(api: FakeCollectionsApi, home) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), "TERM": "xterm-256color",
            "PYTHONPATH": str(ROOT), "WEBDATA_API_KEY": "wdp_test", "WEBDATA_API_URL": api.url}


def webdata(api: FakeCollectionsApi, tmp_path, *args: str) -> Terminal:
    (tmp_path / "urls.txt").write_text("https://example.com/a\n")
    return Terminal([sys.executable, "-m", "client", *args], environment(api, tmp_path),
                    cwd=str(tmp_path))


def polls(api: FakeCollectionsApi) -> int:
    return len(api.requests("GET", f"/collections/{ID}"))


def test_no_goes_on_waiting_and_yes_cancels(endless, tmp_path):
    term = webdata(endless, tmp_path, "collect", "urls.txt")
    try:
        term.expect(r"0/50 .*credits")  # the bar
        term.type(CTRL_C)
        term.expect(PROMPT)
        asked = len(term.text)
        term.type(b"n\n")
        before = polls(endless)
        term.until(lambda: polls(endless) >= before + 2, "the polls to go on")
        term.expect(r"0/50 .*credits", start=asked)  # the bar is back
        assert not endless.requests("POST", f"/collections/{ID}/cancel")
        term.type(CTRL_C)
        term.expect(PROMPT, start=asked)
        term.type(b"y\n")
        assert term.wait() == 130
    finally:
        term.close()
    assert len(endless.requests("POST", f"/collections/{ID}/cancel")) == 1
    assert f"{ID} cancelled: 0/50 pages" in term.text
    assert "Traceback" not in term.text


def test_a_second_ctrl_c_leaves_it_running(endless, tmp_path):
    term = webdata(endless, tmp_path, "collect", "urls.txt", "-o", "out.csv")
    try:
        term.expect(r"0/50 .*credits")
        term.type(CTRL_C)
        term.expect(PROMPT)
        term.type(CTRL_C)
        assert term.wait() == 130
    finally:
        term.close()
    assert f"Not cancelled: collection {ID} goes on (webdata status {ID})." in term.text
    assert not endless.requests("POST", f"/collections/{ID}/cancel")
    assert not (tmp_path / "out.csv").exists() and "Traceback" not in term.text


def test_without_a_terminal_to_ask_on_ctrl_c_leaves_it_running(endless, tmp_path):
    """stdin is not a terminal (a script's): nobody to ask, so nothing is cancelled."""
    (tmp_path / "urls.txt").write_text("https://example.com/a\n")
    term = Terminal(["/bin/sh", "-c", f"exec {sys.executable} -m client collect urls.txt "
                     "</dev/null"], environment(endless, tmp_path), cwd=str(tmp_path))
    try:
        term.expect(r"0/50 .*credits")
        term.type(CTRL_C)
        assert term.wait() == 130
    finally:
        term.close()
    assert f"Not cancelled: collection {ID} goes on" in term.text
    assert "Cancel collection" not in term.text
    assert not endless.requests("POST", f"/collections/{ID}/cancel")
