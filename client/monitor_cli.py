"""``webdata monitor …``: create, list, show, pause, resume and delete monitors.

    webdata monitor create https://site.example/ --every 3600 --max-pages 200
    webdata monitor create --urls prices.txt --cron "0 6 * * *" --webhook-url https://…
    webdata monitor list          webdata monitor show mon_…          webdata monitor pause mon_…
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from client.arguments import page_options
from client.bodies import batch_body, crawl_body
from client.http import Client


def run_monitor(args: argparse.Namespace, client: Client, read_urls: Callable[[str], list[str]]
                ) -> str:
    """What the action prints (its answer as JSON with ``--json``)."""
    if args.action == "create":
        answer: Any = client.create_monitor(
            _collection(args, read_urls), every=args.every, cron=args.cron, name=args.name,
            webhook_url=args.webhook_url, notify=args.notify)
    elif args.action == "list":
        answer = client.monitors()
        if not args.json:
            return "\n".join(line(monitor) for monitor in answer) or "No monitor yet."
    else:
        call = {"show": client.monitor, "pause": client.pause_monitor,
                "resume": client.resume_monitor, "delete": client.delete_monitor}
        answer = call[args.action](args.id)
        if args.action == "delete" and not args.json:
            return f"Deleted {answer['id']}."
    return json.dumps(answer, indent=2, ensure_ascii=False) if args.json else describe(answer)


def _collection(args: argparse.Namespace, read_urls: Callable[[str], list[str]]
                ) -> dict[str, Any]:
    """The collection each run starts: a crawl of ``URL`` or a batch of ``--urls`` (the
    command checked that exactly one was given)."""
    common = {"extract": args.extract, "webhook_url": None, "track": None,
              "options": page_options(args)}
    if args.urls_file is not None:
        return batch_body(read_urls(args.urls_file), max_age=None, **common)
    return crawl_body(args.url, max_pages=args.max_pages, max_depth=args.max_depth, **common)


def schedule_text(schedule: dict[str, Any]) -> str:
    if "every" in schedule:
        return f"every {schedule['every']} s"
    return f"cron {schedule['cron']} (UTC)"


def run_text(run: dict[str, Any] | None) -> str:
    """A run in a few words: its status, and its changes or why it was skipped."""
    if run is None:
        return "no run yet"
    if run["status"] == "skipped":
        return f"skipped ({run['reason']}) at {run['due_at']}"
    changes = run.get("changes")
    counts = (", ".join(f"{count} {name}" for name, count in changes.items() if count)
              if changes else "")
    return (f"{run['status']} at {run['started_at']}: {run['pages']} pages"
            + (f" ({counts})" if counts else ""))


def line(monitor: dict[str, Any]) -> str:
    """One monitor, one line (``webdata monitor list``)."""
    status = monitor["status"] + (f" ({monitor['paused_reason']})"
                                  if monitor.get("paused_reason") else "")
    runs = monitor.get("runs") or []
    return (f"{monitor['id']}  {status:<8} {schedule_text(monitor['schedule'])}; "
            f"{monitor.get('name') or _target(monitor)}; last: "
            f"{run_text(runs[0] if runs else None)}")


def _target(monitor: dict[str, Any]) -> str:
    collection = monitor["collection"]
    if collection.get("mode") == "crawl":
        return f"crawl of {collection.get('url')}"
    count = collection["url_count"] if "url_count" in collection else len(
        collection.get("urls") or [])  # a list's summary, or the whole body
    return f"batch of {count} URLs"


def describe(monitor: dict[str, Any]) -> str:
    """The monitor for a person: one field a line, then its runs."""
    rows = [("id", monitor["id"]), ("name", monitor.get("name") or "-"),
            ("watches", _target(monitor)),
            ("status", monitor["status"] + (f" ({monitor['paused_reason']})"
                                             if monitor.get("paused_reason") else "")),
            ("schedule", schedule_text(monitor["schedule"])),
            ("next run", monitor.get("next_run_at") or "-"),
            ("notify", f"{monitor['notify']} -> {monitor.get('webhook_url') or 'no webhook'}")]
    runs = [f"  {run_text(run)}" + (f"  {run['collection_id']}" if run["collection_id"] else "")
            for run in monitor.get("runs") or []]
    return "\n".join([*(f"{name:<9} {value}" for name, value in rows),
                      "runs" + ("" if runs else "      none yet"), *runs])
