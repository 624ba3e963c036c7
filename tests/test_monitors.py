"""Monitors end to end: a collection re-run on a 5-minute schedule driven by a fake clock
(:func:`collecting.monitors.run_due` called with ``now``), its runs real collections on the
stack's workers, compared run to run; an overlapping slot skipped, a downtime run once, an
empty balance pausing it; the webhook of a run that changed something; the API's refusals."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from datetime import datetime, timedelta
from html import unescape

import pytest
from redis import Redis
from sqlalchemy import select
from standardwebhooks.webhooks import Webhook

from client import Client
from collecting.monitors import run_due
from storage import ledger
from storage.models import WebhookEvent
from tests.conftest import ROOT, _stop
from tests.support.books import assert_books
from tests.support.collection_stack import Stack, wait_final
from tests.support.site import caching
from tests.support.waits import wait_until
from tests.test_collections import customer
from tests.test_console import form_token, signed_in, token

FIVE_MINUTES = timedelta(seconds=300)


def tick(stack: Stack, now: datetime, monitor_id: str) -> str | None:
    """The scheduler's job at ``now``, on the stack's database and Redis: what it did with
    the slot of ``monitor_id`` (``started``, ``skipped``; None: not due)."""
    report = run_due(stack.app.extensions["webdata.db"], Redis.from_url(stack.redis_url),
                     stack.config, now=now)
    return report.get(monitor_id)


def monitor_of(who, monitor_id: str) -> dict:
    answer = who.get(f"/monitors/{monitor_id}")
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()


def last_run(who, monitor_id: str) -> dict:
    """The monitor's last run, once its collection ended (as the monitor shows it)."""
    run = monitor_of(who, monitor_id)["runs"][0]
    if run["collection_id"] is not None:
        wait_final(who, run["collection_id"])
        run = monitor_of(who, monitor_id)["runs"][0]
    return run


def create(who, body: dict) -> dict:
    answer = who.post("/monitors", body)
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()


def test_a_monitor_runs_on_its_schedule_and_says_what_changed(stack, site, receiver):
    who, tag = customer(stack), uuid.uuid4().hex[:8]
    secret = who.post("/account/webhook-secret", None).get_json()["secret"]
    paths = [f"/cache/changing/mon-{tag}-{n}" for n in range(3)]
    created = create(who, {"name": "Prices", "collection": {
        "mode": "batch", "urls": [site + p for p in paths]}, "schedule": {"every": 300},
        "webhook_url": receiver.url})
    monitor_id = created["id"]
    assert created["status"] == "active" and created["runs"] == []
    assert created["notify"] == "changes" and created["schedule"] == {"every": 300}
    assert created["collection"]["urls"] == [site + p for p in paths]
    start = datetime.fromisoformat(created["next_run_at"].replace("Z", "+00:00"))

    assert tick(stack, start, monitor_id) == "started"
    first = last_run(who, monitor_id)
    assert first["status"] == "completed" and first["pages"] == 3
    assert first["changes"] == {"new": 3, "same": 0, "changed": 0, "removed": 0}
    collection = who.get(f"/collections/{first['collection_id']}").get_json()
    assert collection["monitor_id"] == monitor_id and collection["credits_used"] == 3
    assert tick(stack, start + timedelta(seconds=299), monitor_id) is None

    caching.TEXTS[paths[0]] = "The second version of this page."
    assert tick(stack, start + FIVE_MINUTES, monitor_id) == "started"
    second = last_run(who, monitor_id)
    assert second["changes"] == {"new": 0, "same": 2, "changed": 1, "removed": 0}
    results = who.get(f"/collections/{second['collection_id']}/results").get_json()["results"]
    changed = next(r for r in results if r["url"].endswith(paths[0]))
    assert "The second version" in changed["change"]["diff"]

    assert tick(stack, start + 2 * FIVE_MINUTES, monitor_id) == "started"
    quiet = last_run(who, monitor_id)
    assert quiet["changes"] == {"new": 0, "same": 3, "changed": 0, "removed": 0}

    # the webhook: one event per run that found something new or changed, none for the quiet
    wait_until(lambda: len(receiver.received) >= 2, "two monitor events", timeout=30)
    events = [Webhook(secret).verify(r.body, r.headers) for r in receiver.received]
    assert sorted((e["collection"]["id"], e["event"], e["changes"]["new"],
                   e["changes"]["changed"]) for e in events) == sorted([
        (first["collection_id"], "monitor.run.completed", 3, 0),
        (second["collection_id"], "monitor.run.completed", 0, 1)])
    assert events[0]["monitor"] == {"id": monitor_id, "name": "Prices"}
    db = stack.app.extensions["webdata.db"]
    with db.session() as session:
        assert session.scalar(select(WebhookEvent.id).where(
            WebhookEvent.collection_id == quiet["collection_id"])) is None

    # a downtime of ten slots: one run, and the next slot is the next one to come
    later = start + 12 * FIVE_MINUTES + timedelta(seconds=10)
    assert tick(stack, later, monitor_id) == "started"
    assert tick(stack, later, monitor_id) is None
    shown = monitor_of(who, monitor_id)
    assert shown["next_run_at"] == (start + 13 * FIVE_MINUTES).strftime("%Y-%m-%dT%H:%M:%SZ")
    last_run(who, monitor_id)
    runs = monitor_of(who, monitor_id)["runs"]
    assert len(runs) == 4 and all(run["status"] == "completed" for run in runs)
    assert who.balance() == 100 - 12  # 4 runs of 3 pages
    assert_books(db, who.account_id)


def test_a_slot_due_while_the_run_before_still_goes_is_skipped(stack, site):
    who, tag = customer(stack), uuid.uuid4().hex[:8]
    created = create(who, {"collection": {"mode": "batch",
                                          "urls": [f"{site}/slow/mon-{tag}?ms=60000"]},
                           "schedule": {"cron": "*/5 * * * *"}})
    start = datetime.fromisoformat(created["next_run_at"].replace("Z", "+00:00"))
    assert tick(stack, start, created["id"]) == "started"
    running = monitor_of(who, created["id"])
    assert running["runs"][0]["status"] == "running"
    due = datetime.fromisoformat(running["next_run_at"].replace("Z", "+00:00"))
    assert due.minute % 5 == 0 and due.second == 0 and due > start
    assert tick(stack, due, created["id"]) == "skipped"
    skipped, going = monitor_of(who, created["id"])["runs"][:2]
    assert skipped["status"] == "skipped" and skipped["reason"] == "overlap"
    assert skipped["collection_id"] is None and going["collection_id"] in skipped["message"]
    assert who.post(f"/collections/{going['collection_id']}/cancel", None).status_code == 200
    assert last_run(who, created["id"])["status"] == "skipped"
    assert monitor_of(who, created["id"])["runs"][1]["status"] == "cancelled"


def test_a_monitor_whose_account_cannot_pay_is_paused_until_resumed(stack, site):
    who = customer(stack, credits=1)
    created = create(who, {"collection": {"mode": "batch", "urls": [f"{site}/article"]},
                           "schedule": {"every": 600}})
    start = datetime.fromisoformat(created["next_run_at"].replace("Z", "+00:00"))
    tick(stack, start, created["id"])
    assert last_run(who, created["id"])["pages"] == 1 and who.balance() == 0
    assert tick(stack, start + timedelta(seconds=600), created["id"]) == "skipped"
    paused = monitor_of(who, created["id"])
    assert (paused["status"], paused["paused_reason"]) == ("paused", "insufficient_credits")
    assert paused["runs"][0]["reason"] == "insufficient_credits"
    assert paused["next_run_at"] is None
    assert tick(stack, start + timedelta(seconds=1200), created["id"]) is None
    refused = who.patch(f"/monitors/{created['id']}", {"status": "active"})
    assert (refused.status_code, refused.get_json()["error"]) == (402, "insufficient_credits")
    ledger.grant(stack.app.extensions["webdata.db"], who.account_id, 5, f"g:{uuid.uuid4()}")
    resumed = who.patch(f"/monitors/{created['id']}", {"status": "active"})
    assert resumed.status_code == 200 and resumed.get_json()["paused_reason"] is None
    # its slot passed while it was paused: it runs once, at the next tick
    assert tick(stack, start + timedelta(seconds=1300), created["id"]) == "started"
    assert last_run(who, created["id"])["status"] == "completed"


def test_pausing_changing_and_deleting_a_monitor(stack, site):
    who = customer(stack)
    created = create(who, {"collection": {"mode": "crawl", "url": f"{site}/site/",
                                          "max_pages": 3},
                           "schedule": {"every": 3600}, "notify": "always"})
    path = f"/monitors/{created['id']}"
    paused = who.patch(path, {"status": "paused"}).get_json()
    assert (paused["status"], paused["paused_reason"], paused["next_run_at"]) == (
        "paused", "paused", None)
    changed = who.patch(path, {"schedule": {"cron": "0 6 * * 1"}, "name": "Weekly"}).get_json()
    assert changed["schedule"] == {"cron": "0 6 * * 1"} and changed["name"] == "Weekly"
    assert changed["status"] == "paused"
    listed = who.get("/monitors").get_json()["monitors"]
    assert [m["id"] for m in listed] == [created["id"]]
    assert listed[0]["collection"] == {"mode": "crawl", "extract": "page",  # a summary
                                       "url": f"{site}/site/", "url_count": 0}
    assert customer(stack).get(path).status_code == 404  # another account's
    assert who.delete(path).get_json() == {"id": created["id"], "deleted": True}
    assert who.get(path).status_code == 404 and who.delete(path).status_code == 404
    lines = [line["operation"] for line in who.activity()]
    assert lines[:4] == ["monitor_delete", "monitor_update", "monitor_update", "monitor"]


@pytest.mark.parametrize(("body", "where"), [
    ({"schedule": {"every": 299}}, "schedule"),
    ({"schedule": {"cron": "* * * * *"}}, "schedule"),
    ({"schedule": {"cron": "0 0 30 2 *"}}, "schedule"),
    ({"schedule": {"cron": "*/5 * * * * *"}}, "schedule"),
    ({"schedule": {"every": 600, "cron": "@daily"}}, "schedule"),
    ({"schedule": {}}, "schedule"),
    ({"notify": "sometimes"}, "notify"),
    ({"name": "a\x1bb"}, "name"),
    ({"collection": {"mode": "batch", "urls": ["http://x.test/"],
                     "webhook_url": "http://x.test/hook"}}, "collection"),
    ({"collection": {"mode": "batch", "urls": ["http://x.test/"],
                     "change_tracking": {"tag": "t"}}}, "collection"),
    ({"collection": {"mode": "crawl"}}, "collection"),
])
def test_a_bad_monitor_is_a_422_naming_the_field(stack, body, where):
    who = customer(stack)
    answer = who.post("/monitors", {"collection": {"mode": "batch", "urls": ["http://x.test/"]},
                                    "schedule": {"every": 300}, **body})
    assert answer.status_code == 422, answer.get_json()
    assert where in answer.get_json()["errors"]
    assert who.get("/monitors").get_json()["monitors"] == []


def test_a_monitor_is_refused_as_its_collection_would_be_and_past_the_plan(stack, site):
    who = customer(stack, plan="free")  # 2 monitors, batches of 100 URLs
    every = {"schedule": {"every": 300}}
    private = who.post("/monitors", {"collection": {"mode": "crawl", "url": "http://10.0.0.1/"},
                                     **every})
    assert (private.status_code, private.get_json()["error"]) == (403, "source_policy")
    many = who.post("/monitors", {"collection": {"mode": "batch", "urls": [
        f"{site}/article?n={n}" for n in range(101)]}, **every})
    assert (many.status_code, many.get_json()["error"]) == (413, "too_many_urls")
    hook = who.post("/monitors", {"collection": {"mode": "batch", "urls": [f"{site}/a"]},
                                  "webhook_url": "http://10.0.0.1/hook", **every})
    assert hook.status_code == 422 and "webhook_url" in hook.get_json()["errors"]
    for _ in range(2):
        create(who, {"collection": {"mode": "batch", "urls": [f"{site}/a"]}, **every})
    third = who.post("/monitors", {"collection": {"mode": "batch", "urls": [f"{site}/a"]},
                                   **every})
    assert (third.status_code, third.get_json()["error"]) == (403, "monitor_limit")
    assert who.get("/account").get_json()["plan"]["max_monitors"] == 2
    assert who.patch("/monitors/mon_nope", {"status": "paused"}).status_code == 404
    empty = who.patch(f"/monitors/{who.get('/monitors').get_json()['monitors'][0]['id']}", {})
    assert empty.status_code == 422
    lines = [line["status"] for line in who.activity() if line["operation"] == "monitor"]
    assert sorted(lines) == ["failed"] * 4 + ["succeeded"] * 2  # the refusals too


def test_the_cron_process_starts_a_new_monitor_s_first_run(stack, site, tmp_path):
    """The schedule as deployed: ``python -m worker.cron`` enqueues the job that starts due
    runs (every second here), and the stack's workers run it."""
    env = {**os.environ, **stack.env, "REDIS_URL": stack.redis_url, "SWEEP_INTERVAL": "1"}
    with (tmp_path / "cron.log").open("wb") as log:
        cron = subprocess.Popen([sys.executable, "-m", "worker.cron"], cwd=ROOT, env=env,
                                stdout=log, stderr=subprocess.STDOUT)
    try:
        who = customer(stack)
        created = create(who, {"collection": {"mode": "batch", "urls": [f"{site}/article"]},
                               "schedule": {"every": 86400}})
        wait_until(lambda: monitor_of(who, created["id"])["runs"], "the first run",
                   timeout=60, proc=cron)
        assert last_run(who, created["id"])["status"] == "completed"
        assert monitor_of(who, created["id"])["next_run_at"] > created["next_run_at"]
    finally:
        _stop([cron])


def test_the_client_creates_lists_pauses_and_deletes_monitors(stack, service, site, tmp_path):
    """``webdata monitor …`` and ``Client``'s monitor calls against the stack over HTTP."""
    who = customer(stack)
    (tmp_path / "urls.txt").write_text(f"{site}/article\n{site}/contact\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT),
           "WEBDATA_API_KEY": who.key, "WEBDATA_API_URL": service}

    def webdata(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "client", "monitor", *args], env=env,
                              cwd=tmp_path, capture_output=True, text=True, timeout=60)

    made = webdata("create", "--urls", "urls.txt", "--cron", "0 6 * * *", "--name", "Two",
                   "--format", "markdown", "--json")
    assert made.returncode == 0, made.stderr
    monitor = json.loads(made.stdout)
    assert monitor["collection"]["urls"] == [f"{site}/article", f"{site}/contact"]
    assert monitor["collection"]["formats"] == ["markdown"]
    assert monitor["schedule"] == {"cron": "0 6 * * *"}
    tick(stack, datetime.fromisoformat(monitor["next_run_at"].replace("Z", "+00:00")),
         monitor["id"])
    last_run(who, monitor["id"])
    listed = webdata("list")
    assert listed.returncode == 0 and monitor["id"] in listed.stdout
    assert "cron 0 6 * * * (UTC)" in listed.stdout and "completed" in listed.stdout
    assert "2 pages (2 new)" in listed.stdout
    paused = webdata("pause", monitor["id"])
    assert paused.returncode == 0 and "paused (paused)" in paused.stdout
    shown = webdata("show", monitor["id"])
    assert "next run  -" in shown.stdout and "2 pages (2 new)" in shown.stdout
    both = webdata("create", "https://example.com/", "--urls", "urls.txt", "--every", "300")
    assert both.returncode == 2 and "not both" in both.stderr
    often = webdata("create", f"{site}/site/", "--every", "60")
    assert often.returncode == 1 and "every" in often.stderr and "Traceback" not in often.stderr

    api = Client(who.key, service)
    crawl = api.create_monitor({"mode": "crawl", "url": f"{site}/site/", "max_pages": 2},
                               every=3600, notify="always")
    assert [m["id"] for m in api.monitors()] == [crawl["id"], monitor["id"]]
    assert api.resume_monitor(monitor["id"])["status"] == "active"
    assert api.delete_monitor(crawl["id"]) == {"id": crawl["id"], "deleted": True}
    gone = webdata("delete", crawl["id"])
    assert gone.returncode == 1 and "No such monitor" in gone.stderr


def test_the_console_lists_creates_pauses_and_deletes_monitors(stack, site):
    who = customer(stack)
    browser = signed_in(who)
    page = browser.get("/console/monitors").get_data(as_text=True)
    assert "No monitors yet." in page and "up to 20 monitors" in page
    bad = browser.post("/console/monitors", data={
        "csrf_token": token(page), "form_id": uuid.uuid4().hex, "mode": "crawl",
        "url": f"{site}/site/", "when": "cron", "cron": "* * * * *", "notify": "changes"})
    assert bad.status_code == 422
    assert "closer than 300 seconds" in unescape(bad.get_data(as_text=True))
    made = browser.post("/console/monitors", data={
        "csrf_token": token(page), "form_id": uuid.uuid4().hex, "mode": "batch",
        "urls": f"{site}/article\n{site}/contact\n", "when": "every", "every_minutes": "90",
        "notify": "always", "name": "Two <pages>"})
    assert made.status_code == 302
    [shown] = who.get("/monitors").get_json()["monitors"]
    assert shown["schedule"] == {"every": 5400} and shown["name"] == "Two <pages>"
    tick(stack, datetime.fromisoformat(shown["next_run_at"].replace("Z", "+00:00")),
         shown["id"])
    last_run(who, shown["id"])
    page = browser.get("/console/monitors").get_data(as_text=True)
    assert "Two &lt;pages&gt;" in page and "every 90 min" in page
    run_id = who.get(f"/monitors/{shown['id']}").get_json()["runs"][0]["collection_id"]
    results = browser.get(f"/console/collections/{run_id}").get_data(as_text=True)
    assert re.search(r'id="change-counts">Since the last run of its tag:\s+2 new', results)
    assert results.count('data-change="new"') == 2 and shown["id"] in results
    assert re.search(r"Last run completed [^·]+· 2 pages\s+· 2 new · 0 changed", page)
    action = f"/console/monitors/{shown['id']}"
    assert browser.post(f"{action}/pause", data={"csrf_token": token(page)}).status_code == 302
    assert who.get(f"/monitors/{shown['id']}").get_json()["status"] == "paused"
    stranger = signed_in(customer(stack))
    other = stranger.post(f"{action}/delete", data={"csrf_token": form_token(stranger)})
    assert other.status_code == 404
    assert browser.post(f"{action}/resume", data={"csrf_token": token(page)}).status_code == 302
    assert who.get(f"/monitors/{shown['id']}").get_json()["status"] == "active"
    assert browser.post(f"{action}/delete", data={"csrf_token": token(page)}).status_code == 302
    assert who.get("/monitors").get_json()["monitors"] == []
    lines = [(line["operation"], line["channel"]) for line in who.activity()
             if line["operation"].startswith("monitor")]
    assert lines == [("monitor_delete", "console"), ("monitor_update", "console"),
                     ("monitor_update", "console"), ("monitor", "console"),
                     ("monitor", "console")]  # the refused form too


def test_a_monitor_whose_schedule_cannot_run_is_paused_and_the_others_still_run(stack, site):
    """A stored schedule that has no next run any more (a stricter rule, a library's change)
    pauses its monitor, saying why; it never stops the others' runs."""
    from sqlalchemy import update

    from storage.monitor_models import Monitor

    who = customer(stack)
    broken = create(who, {"collection": {"mode": "batch", "urls": [f"{site}/article"]},
                          "schedule": {"every": 300}})
    fine = create(who, {"collection": {"mode": "batch", "urls": [f"{site}/contact"]},
                        "schedule": {"every": 300}})
    with stack.app.extensions["webdata.db"].session() as session:
        session.execute(update(Monitor).where(Monitor.id == broken["id"]).values(
            schedule=json.dumps({"cron": "0 0 * 2 0#5"})))
    now = datetime.fromisoformat(fine["next_run_at"].replace("Z", "+00:00"))
    report = run_due(stack.app.extensions["webdata.db"], Redis.from_url(stack.redis_url),
                     stack.config, now=now)
    assert (report[broken["id"]], report[fine["id"]]) == ("skipped", "started")
    paused = monitor_of(who, broken["id"])
    assert (paused["status"], paused["paused_reason"]) == ("paused", "invalid_schedule")
    assert paused["runs"][0]["reason"] == "invalid_schedule"
    assert last_run(who, fine["id"])["status"] == "completed"
