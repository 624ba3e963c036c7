"""``/monitors`` as Python calls, part of :class:`client.http.Client`: a collection re-run on a
schedule, each run compared with the one before (docs/api.md, Monitors).

    api = Client()
    monitor = api.create_monitor({"mode": "crawl", "url": "https://example.com/"},
                                 cron="0 6 * * *", webhook_url="https://example.com/hooks")
    api.pause_monitor(monitor["id"])
"""

from __future__ import annotations

import uuid
from typing import Any

import requests

from client.errors import ConfigurationError


class MonitorCalls:
    """The monitors' calls; :meth:`_call` sends a request and reads its JSON answer."""

    def _call(self, method: str, path: str, *, json: Any = None,
              idempotency_key: str | None = None) -> Any:
        raise NotImplementedError

    def create_monitor(self, collection: dict[str, Any], *, every: int | None = None,
                       cron: str | None = None, name: str | None = None,
                       webhook_url: str | None = None, notify: str | None = None,
                       idempotency_key: str | None = None) -> dict[str, Any]:
        """A monitor of ``collection`` (a ``POST /collections`` body, without
        ``webhook_url`` and ``change_tracking``), run ``every`` seconds (at least 300) or on
        ``cron`` (UTC); its first run starts at once. ``notify``: ``changes`` (default: the
        webhook is called for a run that found something new, changed or removed) or
        ``always``."""
        if (every is None) == (cron is None):
            raise ConfigurationError("Give a monitor either every (seconds) or cron.")
        body = {"collection": collection,
                "schedule": {"every": every} if every is not None else {"cron": cron},
                **{name_: value for name_, value in (("name", name),
                                                      ("webhook_url", webhook_url),
                                                      ("notify", notify)) if value is not None}}
        return self._call("POST", "/monitors", json=body,
                          idempotency_key=idempotency_key or f"webdata-client-{uuid.uuid4()}")

    def monitors(self) -> list[dict[str, Any]]:
        """The account's monitors, newest first, each with its last run."""
        return list(self._call("GET", "/monitors")["monitors"])

    def monitor(self, monitor_id: str) -> dict[str, Any]:
        """The monitor with its last 20 runs (newest first)."""
        return self._call("GET", f"/monitors/{_monitor_id(monitor_id)}")

    def update_monitor(self, monitor_id: str, **changes: Any) -> dict[str, Any]:
        """Change any of ``status`` (``paused``, ``active``), ``schedule``, ``webhook_url``,
        ``notify``, ``name``; the monitor after."""
        return self._call("PATCH", f"/monitors/{_monitor_id(monitor_id)}", json=changes)

    def pause_monitor(self, monitor_id: str) -> dict[str, Any]:
        return self.update_monitor(monitor_id, status="paused")

    def resume_monitor(self, monitor_id: str) -> dict[str, Any]:
        """Resume it (:class:`~client.errors.ApiError` ``insufficient_credits`` when the
        balance cannot pay for a page); a slot missed meanwhile runs once, at once."""
        return self.update_monitor(monitor_id, status="active")

    def delete_monitor(self, monitor_id: str) -> dict[str, Any]:
        return self._call("DELETE", f"/monitors/{_monitor_id(monitor_id)}")


def _monitor_id(monitor_id: str) -> str:
    """The id as a single path segment: never a way to another path of the API."""
    monitor_id = monitor_id.strip()
    if not monitor_id or "/" in monitor_id or monitor_id in (".", ".."):
        raise ConfigurationError(f"{monitor_id!r} is not a monitor id (mon_…).")
    return requests.utils.quote(monitor_id, safe="")
