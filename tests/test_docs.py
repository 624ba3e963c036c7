"""The documentation holds together: every relative link of ``README.md``, ``bench/README.md``
and ``docs/*.md`` points to a file that exists (and to a heading of it, for a ``#`` anchor), and
the contract's error table lists exactly the codes the API answers with."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from api.errors import STATUS
from tests.conftest import ROOT
from tests.support.docs import anchor, anchors, pages, prose_lines, section

#: ``[text](target)`` and ``![alt](target)``, outside inline code.
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
_CODE_SPAN = re.compile(r"`[^`]*`")


def links(path: Path) -> list[str]:
    """The link targets of a page's prose (not of its code blocks or code spans)."""
    found = []
    for line, prose in prose_lines(path.read_text(encoding="utf-8")):
        if prose:
            found.extend(_LINK.findall(_CODE_SPAN.sub("", line)))
    return found


def test_the_anchor_rule_is_githubs():
    assert anchor("The `webdata` command and `client.Client`") == (
        "the-webdata-command-and-clientclient")
    assert anchor("POST /scrape — extraction") == "post-scrape--extraction"
    assert anchor("Running it: `make run`") == "running-it-make-run"


@pytest.mark.parametrize("page", pages(), ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_points_to_a_file_and_heading_that_exist(page: Path):
    assert links(page), f"{page} has no links at all: is the link pattern still right?"
    broken = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:…: not ours to check
            continue
        file_part, _, fragment = target.partition("#")
        linked = (page.parent / file_part).resolve() if file_part else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif (fragment and linked.suffix == ".md"
              and fragment not in anchors(linked.read_text(encoding="utf-8"))):
            broken.append(f"{target}: no such heading in {linked.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_error_table_of_the_contract_is_the_apis():
    """docs/api.md's Errors table lists each code with its status, as ``api.errors.STATUS``."""
    rows = re.findall(r"^\| (\d{3}) \| `(\w+)` \|", section("docs/api.md", "Errors"), re.M)
    assert len(rows) == len({code for _, code in rows}), "a code listed twice"
    assert {code: int(status) for status, code in rows} == {
        str(code): status for code, status in STATUS.items()}
