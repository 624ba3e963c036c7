"""Change tracking end to end on a site that changes between two crawls of one tag
(tests/support/site/changing.py): pages edited, removed (a 404, a 410, unlinked), added, and
unchanged with an ETag (a 304) or without; pages that fail for another reason keep their
version. What each page is, its diff, the removed pages listed by ``/changes`` and the export,
the counts, the credits and the books; and what must list nothing removed: a crawl cut by
``max_pages``, a cancelled collection; another account's tag untouched; expiry."""

from __future__ import annotations

import csv
import io
import json
import uuid
from datetime import timedelta

from sqlalchemy import func, select, update

from storage.models import Collection, utcnow
from storage.page_models import RemovedPage
from tests.support.books import assert_books_balance
from tests.support.collection_stack import all_results, wait_final
from tests.support.site import changing
from tests.support.site.changing import Page, publish
from tests.test_change_tracking import all_changes
from tests.test_collection_cache import kept
from tests.test_collection_skips import exported
from tests.test_collections import customer, path, start
from worker.maintenance import purge_expired_collections

#: The pages of the first crawl, by name ("" the index), and what the second makes of them.
FIRST = {
    "": Page("The index.", ("a", "b", "c", "d", "f", "g", "t", "s")),
    "a": Page("Version one of a.", etag='"a1"'),  # edited: changed
    "b": Page("Unchanged, with a tag.", ("b1",), etag='"b"'),  # a 304: same
    "b1": Page("Linked from b only."),  # same: found through b's cached links
    "c": Page("Gone by a 404."),  # removed
    "d": Page("Unlinked next time."),  # removed: no longer found
    "f": Page("Unchanged, without a tag."),  # same
    "g": Page("Gone by a 410."),  # removed
    "t": Page("A 500 next time."),  # kept: neither removed nor compared
    "s": Page("Too slow next time."),  # kept (a timeout)
}
SECOND = {
    **FIRST,
    "": Page("The index, edited.", ("a", "b", "c", "e", "f", "g", "t", "s")),
    "a": Page("Version two of a.", etag='"a2"'),
    "c": Page(status=404), "g": Page(status=410),
    "t": Page(status=500), "s": Page("Too slow next time.", delay=4.0),  # past the timeout
    "e": Page("A new page."),
}


def crawl(who, site: str, tag: str, pages: dict[str, Page], **body
          ) -> tuple[dict, dict[str, dict]]:
    """Publish ``pages`` and crawl them under ``tag``: the final collection, results by
    page name."""
    paths = publish(tag, pages)
    final = wait_final(who, start(who, {
        "mode": "crawl", "url": f"{site}{paths['']}", "use_sitemap": False,
        "change_tracking": {"tag": tag}, **body})["id"], timeout=90)
    names = {p: name for name, p in paths.items()}
    return final, {names[path(r["url"])]: r for r in all_results(who, final["id"], limit=50)}


def test_a_site_that_changed_between_two_crawls(stack, site):
    who, tag = customer(stack), uuid.uuid4().hex[:10]
    first, before = crawl(who, site, tag, FIRST)
    assert first["status"] == "completed" and set(before) == set(FIRST)
    assert first["progress"]["changes"] == {"new": 10, "same": 0, "changed": 0, "removed": 0}
    kept(stack, [f"{site}/changing/{tag}/{name}" for name in FIRST])
    second, after = crawl(who, site, tag, SECOND)
    assert second["status"] == "completed"
    assert {name: (r["status"], (r["change"] or {}).get("status")) for name, r in
            after.items()} == {
        "": ("succeeded", "changed"), "a": ("succeeded", "changed"),
        "b": ("succeeded", "same"), "b1": ("succeeded", "same"), "f": ("succeeded", "same"),
        "e": ("succeeded", "new"), "c": ("failed", None), "g": ("failed", None),
        "t": ("failed", None), "s": ("failed", None)}
    assert [after[n]["status_code"] for n in "cgt"] == [404, 410, 500]
    assert after["s"]["error"]["error"] == "timeout"
    assert {p: n for p, n in changing.NOT_MODIFIED.items() if tag in p} == {
        f"/changing/{tag}/b": 1}  # a's tag changed: answered whole
    assert second["progress"]["changes"] == {"new": 1, "same": 3, "changed": 2, "removed": 3}
    lines = after["a"]["change"]["diff"].splitlines()
    assert lines[:2] == ["--- previous", "+++ current"]
    assert [line[0] for line in lines if "Version" in line] == ["-", "+"]
    assert "Version one of a." in next(line for line in lines if line.startswith("-V"))
    assert "Version two of a." in next(line for line in lines if line.startswith("+V"))
    for name in ("b", "b1", "f"):
        assert after[name]["change"] == {"status": "same", "diff": None,
                                         "previous_fetched_at": before[name]["fetched_at"]}
    # /changes: the results' changes (not same), then the removed pages in URL order
    listed = all_changes(who, second["id"], limit=3)
    url = f"{site}/changing/{tag}/"
    removed = [{"url": url + n, "status": "removed", "fetched_at": None,
                "previous_fetched_at": before[n]["fetched_at"], "diff": None} for n in "cdg"]
    assert listed[-3:] == removed
    assert sorted((c["url"], c["status"]) for c in listed[:-3]) == [
        (url, "changed"), (url + "a", "changed"), (url + "e", "new")]
    # the export, in every format
    exporting = f"/collections/{second['id']}/export"
    gone = [{k: r[k] for k in ("url", "status", "previous_fetched_at")} for r in removed]
    whole = json.loads(exported(who, exporting, format="json", include="removed")[1])
    assert whole[-3:] == gone and len(whole) == 13
    _, text = exported(who, exporting, format="jsonl", include="skipped,removed")
    assert [json.loads(line) for line in text.splitlines()][-3:] == gone
    _, table = exported(who, exporting, format="csv", include="removed")
    rows = list(csv.DictReader(io.StringIO(table)))
    assert [{k: v for k, v in row.items() if v} for row in rows[-3:]] == gone
    # money: a page stored is a credit, a 304 included; nothing for the failed ones
    assert (first["credits_used"], second["credits_used"]) == (10, 6)
    assert who.balance() == 100 - 16
    assert_books_balance(stack.app, who.account_id)
    # the versions of the pages that failed otherwise were kept, the removed ones deleted
    third, again = crawl(who, site, tag, FIRST)
    assert {n: r["change"]["status"] for n, r in again.items()} == {
        "": "changed", "a": "changed", "b": "same", "b1": "same", "c": "new", "d": "new",
        "f": "same", "g": "new", "t": "same", "s": "same"}
    assert third["progress"]["changes"]["removed"] == 1  # e
    assert_books_balance(stack.app, who.account_id)


def test_a_crawl_cut_by_max_pages_lists_nothing_removed(stack, site):
    who, tag = customer(stack), uuid.uuid4().hex[:10]
    pages = {"": Page("Index.", ("p1", "p2", "p3")), "p1": Page("One."), "p2": Page("Two."),
             "p3": Page("Three.")}
    crawl(who, site, tag, pages)
    cut, results = crawl(who, site, tag, pages, max_pages=2)
    assert len(results) == 2 and cut["progress"]["skipped"]["limit"] == 2
    assert cut["progress"]["changes"] == {"new": 0, "same": 2, "changed": 0, "removed": 0}
    assert all_changes(who, cut["id"], status="removed") == []
    whole, _ = crawl(who, site, tag, pages)  # every version was kept
    assert whole["progress"]["changes"] == {"new": 0, "same": 4, "changed": 0, "removed": 0}


def test_a_crawl_whose_start_page_failed_lists_nothing_removed(stack, site):
    """The site down (its start page a 500) is not every page removed: the next run that
    reaches it finds them the same."""
    who, tag = customer(stack), uuid.uuid4().hex[:10]
    pages = {"": Page("Index.", ("p1", "p2")), "p1": Page("One."), "p2": Page("Two.")}
    crawl(who, site, tag, pages)
    down, results = crawl(who, site, tag, {**pages, "": Page("Down.", status=500)})
    assert [r["status"] for r in results.values()] == ["failed"]
    assert down["progress"]["changes"]["removed"] == 0
    back, _ = crawl(who, site, tag, pages)
    assert back["progress"]["changes"] == {"new": 0, "same": 3, "changed": 0, "removed": 0}


def test_a_cancelled_collection_lists_nothing_removed(stack, site):
    who, tag = customer(stack), uuid.uuid4().hex[:10]
    pages = {"": Page("Index.", tuple(f"p{n}" for n in range(8))),
             **{f"p{n}": Page(f"Page {n}.") for n in range(8)}}
    crawl(who, site, tag, pages)
    slow = {name: Page(page.text, page.links, delay=0.5) for name, page in pages.items()}
    paths = publish(tag, slow)
    created = start(who, {"mode": "crawl", "url": f"{site}{paths['']}", "use_sitemap": False,
                          "change_tracking": {"tag": tag}})
    assert who.post(f"/collections/{created['id']}/cancel", None).status_code == 200
    final = wait_final(who, created["id"])
    assert final["status"] == "cancelled" and final["progress"]["changes"]["removed"] == 0
    assert all_changes(who, created["id"], status="removed") == []
    whole, _ = crawl(who, site, tag, pages)
    assert whole["progress"]["changes"] == {"new": 0, "same": 9, "changed": 0, "removed": 0}


def test_another_account_s_tag_is_its_own(stack, site):
    who, other, tag = customer(stack), customer(stack), uuid.uuid4().hex[:10]
    pages = {"": Page("Index.", ("p1", "p2")), "p1": Page("One."), "p2": Page("Two.")}
    crawl(who, site, tag, pages)
    crawl(other, site, tag, pages)
    fewer, _ = crawl(who, site, tag, {"": Page("Index.", ("p1",)), "p1": Page("One.")})
    assert fewer["progress"]["changes"]["removed"] == 1
    theirs, _ = crawl(other, site, tag, pages)
    assert theirs["progress"]["changes"] == {"new": 0, "same": 3, "changed": 0, "removed": 0}


def test_expired_changes_answer_410_and_are_purged(stack, site):
    who, tag = customer(stack), uuid.uuid4().hex[:10]
    crawl(who, site, tag, {"": Page("Index.", ("p1",)), "p1": Page("One.")})
    final, _ = crawl(who, site, tag, {"": Page("Index.")})
    assert final["progress"]["changes"]["removed"] == 1
    db = stack.app.extensions["webdata.db"]
    with db.session() as session:  # as if the retention had passed
        session.execute(update(Collection).where(Collection.id == final["id"])
                        .values(expires_at=utcnow() - timedelta(seconds=1)))
    for answer in (who.get(f"/collections/{final['id']}/changes"),
                   who.get(f"/collections/{final['id']}/export",
                           query_string={"format": "json", "include": "removed"})):
        assert (answer.status_code, answer.get_json()["error"]) == (410, "expired")
        answer.close()
    purge_expired_collections(stack.config)
    with db.session() as session:
        assert session.scalar(select(func.count()).select_from(RemovedPage).where(
            RemovedPage.collection_id == final["id"])) == 0
    shown = who.get(f"/collections/{final['id']}").get_json()
    assert shown["status"] == "expired" and shown["progress"]["changes"]["removed"] == 1
