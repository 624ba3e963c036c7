"""Change tracking end to end (first increment): collections of one tag compare each page
with its version in the previous one: ``change`` in every result (and export), counts in
``progress.changes``; an account's tags are its own."""

from __future__ import annotations

import csv
import io
import json
import uuid

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
    caching.TEXTS[paths[0]] = "A second version, with other words."
    second, results = batch(who, urls, tag)
    assert second["progress"]["changes"] == {"new": 0, "same": 2, "changed": 1, "removed": 0}
    changed = results[paths[0]]["change"]
    assert changed["status"] == "changed" and changed["previous_fetched_at"]
    assert "-" in changed["diff"] and "+" in changed["diff"]
    assert "A second version" in changed["diff"]
    assert results[paths[1]]["change"] == {"status": "same", "diff": None,
                                            "previous_fetched_at": changed["previous_fetched_at"]}
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
