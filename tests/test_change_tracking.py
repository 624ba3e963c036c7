"""Change tracking end to end (first increment): collections of one tag compare each page
with its version in the previous one: ``change`` in every result (and export), counts in
``progress.changes``; an account's tags are its own."""

from __future__ import annotations

import csv
import io
import json
import uuid

import pytest

from client import Client
from client.cli import main as cli
from tests.support.collection_stack import all_results, wait_final
from tests.support.site import caching
from tests.test_collection_skips import exported
from tests.test_collections import customer, path, start


def batch(who, urls: list[str], tag: str) -> tuple[dict, dict[str, dict]]:
    final = wait_final(who, start(who, {"mode": "batch", "urls": urls,
                                        "change_tracking": {"tag": tag}})["id"])
    assert final["status"] == "completed", final
    return final, {path(r["url"]): r for r in all_results(who, final["id"], limit=50)}


def test_a_second_collection_of_a_tag_says_what_is_new_same_and_changed(stack, site):
    who, tag = customer(stack), uuid.uuid4().hex[:8]
    paths = [f"/cache/changing/{tag}-{n}" for n in range(3)]
    urls = [site + p for p in paths]
    first, results = batch(who, urls, tag)
    assert first["progress"]["changes"] == {"new": 3, "same": 0, "changed": 0, "removed": 0}
    assert {r["change"]["status"] for r in results.values()} == {"new"}
    fetched = {name: result["fetched_at"] for name, result in results.items()}
    caching.TEXTS[paths[0]] = "A second version, with other words."
    second, results = batch(who, urls, tag)
    assert second["progress"]["changes"] == {"new": 0, "same": 2, "changed": 1, "removed": 0}
    changed = results[paths[0]]["change"]
    assert changed["status"] == "changed" and changed["previous_fetched_at"] == fetched[paths[0]]
    assert "-" in changed["diff"] and "+" in changed["diff"]
    assert "A second version" in changed["diff"]
    assert results[paths[1]]["change"] == {"status": "same", "diff": None,
                                            "previous_fetched_at": fetched[paths[1]]}
    # the exports carry it too
    _, text = exported(who, f"/collections/{second['id']}/export", format="jsonl")
    assert {json.loads(line)["change"]["status"] for line in text.splitlines()} == {
        "same", "changed"}
    _, table = exported(who, f"/collections/{second['id']}/export", format="csv",
                        fields="url,change")
    rows = list(csv.DictReader(io.StringIO(table)))
    assert list(rows[0]) == ["url", "change", "previous_fetched_at", "change_diff"]
    assert sorted(row["change"] for row in rows) == ["changed", "same", "same"]
    # another account's pages, or another tag, are new
    other, _ = batch(customer(stack), urls, tag)
    assert other["progress"]["changes"]["new"] == 3
    untagged = wait_final(who, start(who, {"mode": "batch", "urls": urls})["id"])
    assert untagged["progress"]["changes"] is None
    assert all_results(who, untagged["id"])[0]["change"] is None


def test_a_tag_with_a_control_character_is_a_422(stack, site):
    who = customer(stack)
    answer = who.post("/collections", {"mode": "batch", "urls": [f"{site}/article"],
                                       "change_tracking": {"tag": "a\x1bb"}})
    assert answer.status_code == 422 and "change_tracking" in answer.get_json()["errors"]


def all_changes(who, collection_id: str, limit: int = 2, **query) -> list[dict]:
    """Every change of a collection, page by page, following ``next_cursor`` until null."""
    changes, cursor = [], None
    for _ in range(1000):
        answer = who.get(f"/collections/{collection_id}/changes", query_string={
            "limit": str(limit), **query, **({"cursor": cursor} if cursor else {})})
        assert answer.status_code == 200, answer.get_json()
        changes += answer.get_json()["changes"]
        cursor = answer.get_json()["next_cursor"]
        if cursor is None:
            return changes
    raise AssertionError("the changes never ended")


def edited_and_dropped(who, site: str) -> tuple[list[str], dict, dict, dict]:
    """Two batches of a tag: the second has the first's first page edited, its fourth
    dropped and a fifth; the paths, the second collection, and both's results by path."""
    tag = uuid.uuid4().hex[:8]
    paths = [f"/cache/changing/{tag}-{n}" for n in range(5)]
    _, before = batch(who, [site + p for p in paths[:4]], tag)
    caching.TEXTS[paths[0]] = "Edited since."
    second, after = batch(who, [site + p for p in (*paths[:3], paths[4])], tag)
    return paths, second, before, after


def test_the_changes_endpoint_lists_new_changed_and_removed_pages(stack, site):
    who = customer(stack)
    paths, second, before, after = edited_and_dropped(who, site)
    assert second["progress"]["changes"] == {"new": 1, "same": 2, "changed": 1, "removed": 1}
    listed = all_changes(who, second["id"], limit=1)
    assert listed == all_changes(who, second["id"], limit=100)
    assert [(path(c["url"]), c["status"]) for c in listed[-1:]] == [(paths[3], "removed")]
    assert sorted((path(c["url"]), c["status"]) for c in listed[:-1]) == [
        (paths[0], "changed"), (paths[4], "new")]
    edited, removed = (next(c for c in listed if path(c["url"]) == p) for p in paths[::3])
    assert edited == {"url": site + paths[0], "status": "changed",
                      "fetched_at": after[paths[0]]["fetched_at"],
                      "previous_fetched_at": before[paths[0]]["fetched_at"],
                      "diff": after[paths[0]]["change"]["diff"]}
    assert "+" in edited["diff"] and "Edited since." in edited["diff"]
    assert removed == {"url": site + paths[3], "status": "removed", "fetched_at": None,
                       "previous_fetched_at": before[paths[3]]["fetched_at"], "diff": None}
    same = all_changes(who, second["id"], status="same")
    assert sorted(path(c["url"]) for c in same) == paths[1:3]
    assert all(c["diff"] is None and c["previous_fetched_at"] for c in same)
    both = all_changes(who, second["id"], status="new,removed")
    assert both == all_changes(who, second["id"], status=["new", "removed"])  # repeated
    assert [c["status"] for c in both] == ["new", "removed"]


def test_the_export_can_include_the_removed_pages(stack, site):
    who = customer(stack)
    paths, second, before, _ = edited_and_dropped(who, site)
    url = f"/collections/{second['id']}/export"
    gone = {"url": site + paths[3], "status": "removed",
            "previous_fetched_at": before[paths[3]]["fetched_at"]}
    whole = json.loads(exported(who, url, format="json", include="removed")[1])
    assert len(whole) == 5 and whole[-1] == gone
    assert {path(r["url"]) for r in whole[:4]} == {*paths[:3], paths[4]}
    _, lines = exported(who, url, format="jsonl", include="skipped,removed", fields="url")
    assert [json.loads(line) for line in lines.splitlines()][-1] == gone
    _, table = exported(who, url, format="csv", include="removed")
    rows = list(csv.DictReader(io.StringIO(table)))
    assert list(rows[0])[-3:] == ["change", "previous_fetched_at", "change_diff"]
    assert {k: v for k, v in rows[-1].items() if v} == gone
    _, table = exported(who, url, format="csv", include="removed", fields="url,status")
    assert list(csv.reader(io.StringIO(table)))[-1] == [
        site + paths[3], "removed", gone["previous_fetched_at"]]


def test_the_changes_endpoint_refuses_what_it_cannot_list(stack, site):
    who = customer(stack)
    tracked, _ = batch(who, [f"{site}/article"], uuid.uuid4().hex[:8])
    url = f"/collections/{tracked['id']}/changes"
    for query in ({"status": "gone"}, {"status": "new,gone"}, {"status": ","},
                  {"limit": "0"}, {"limit": "1001"}, {"cursor": "nope"}):
        answer = who.get(url, query_string=query)
        assert answer.status_code == 422, query
    assert "status" in who.get(url, query_string={"status": "gone"}).get_json()["errors"]
    results_cursor = who.get(f"/collections/{tracked['id']}/results",
                             query_string={"limit": "1"}).get_json()["next_cursor"]
    assert who.get(url, query_string={"cursor": results_cursor or "cg=="}).status_code == 422
    untracked = wait_final(who, start(who, {"mode": "batch", "urls": [f"{site}/article"]})["id"])
    answer = who.get(f"/collections/{untracked['id']}/changes")
    assert (answer.status_code, answer.get_json()["error"]) == (409, "conflict")
    assert "change_tracking" in answer.get_json()["message"]
    assert customer(stack).get(url).status_code == 404
    assert who.get("/collections/col_nope/changes").status_code == 404


def test_the_client_lists_and_exports_the_changes(stack, service, site, tmp_path, monkeypatch,
                                                  capsys):
    who = customer(stack)
    paths, second, *_ = edited_and_dropped(who, site)
    client = Client(who.key, service)
    listed = all_changes(who, second["id"], limit=100)
    assert list(client.changes(second["id"], limit=1)) == listed
    assert [c["status"] for c in client.changes(second["id"], status=["same", "removed"])
            ] == ["same", "same", "removed"]
    out = client.export(second["id"], tmp_path / "all.jsonl", skipped=True, removed=True)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 5 and rows[-1]["status"] == "removed"
    monkeypatch.setenv("WEBDATA_API_KEY", who.key)
    monkeypatch.setenv("WEBDATA_API_URL", service)
    assert cli(["changes", second["id"], "--status", "removed"]) == 0
    assert capsys.readouterr().out == f"removed  {site}{paths[3]}\n"
    assert cli(["changes", second["id"], "--json"]) == 0
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == listed
    assert cli(["export", second["id"], "-o", str(tmp_path / "gone.csv"), "--removed"]) == 0
    table = list(csv.DictReader(io.StringIO((tmp_path / "gone.csv").read_text())))
    assert (table[-1]["url"], table[-1]["status"]) == (site + paths[3], "removed")
    with pytest.raises(SystemExit) as exited:  # not a status: a bad command line
        cli(["changes", second["id"], "--status", "gone"])
    assert exited.value.code == 2
