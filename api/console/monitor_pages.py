"""The console's monitors: the account's monitors with their last run and its changes, a form
that creates one (a crawl or a batch, every N minutes or on a cron schedule), and pause,
resume and delete — each through the API's own code for it
(:func:`api.resources.monitors.create_monitor`, :func:`~api.resources.monitors.change_monitor`).
"""

from __future__ import annotations

from typing import Any

from flask import flash, g, redirect, render_template, request, url_for
from marshmallow import ValidationError
from werkzeug.wrappers import Response

from api.console import blp, forms
from api.errors import ApiError
from api.extensions import db
from api.operations import refuse
from api.resources import monitors as api_monitors
from api.schemas.monitors import NOTIFY, MonitorRequestSchema
from core.controls import url_lines
from core.operations import MONITOR
from storage import monitors

#: What a new form asks for.
NEW_FORM = {"mode": "crawl", "when": "every", "every_minutes": "60", "notify": "changes"}


@blp.route("/monitors")
def monitors_page() -> Any:
    return _page()


def _page(form: dict[str, Any] | None = None, problems: list[str] | None = None,
          status: int = 200) -> Any:
    rows = monitors.of_account(db(), g.principal.account_id)
    runs = monitors.latest_runs(db(), [row.id for row in rows], 1)
    return render_template(
        "console/monitors.html", plan=g.account.plan, form=form or NEW_FORM,
        problems=problems or [], form_id=forms.new_form_id(), notify=NOTIFY,
        monitors=[monitors.monitor_body(row, runs[row.id], full=False) for row in rows]), status


@blp.route("/monitors", methods=["POST"])
def create_monitor() -> Any:
    """Create a monitor from the form: the API's schema validates it, the API's
    :func:`~api.resources.monitors.create_monitor` creates it. A form sent again creates no
    second monitor (:mod:`.forms`)."""
    form = request.form
    claimed = forms.claim(form.get("form_id", ""))
    if forms.sent_already(claimed):
        flash("This form was sent already: its monitor is below.", "info")
        return redirect(url_for("console.monitors_page"))
    try:
        args = MonitorRequestSchema().load(_request(form))
    except ValidationError as exc:
        forms.release(claimed)
        messages = exc.messages if isinstance(exc.messages, dict) else {"form": exc.messages}
        refuse(MONITOR.name, ApiError("validation_error", "Invalid request from the console.",
                                      errors=messages), url=form.get("url"))
        return _page(form=form.to_dict(), problems=_flat(messages), status=422)
    try:
        with forms.once(claimed, "monitor"):
            row = api_monitors.create_monitor(args)
    except ApiError as exc:
        problems = _flat(exc.errors) if exc.errors else [exc.message]
        return _page(form=form.to_dict(), problems=problems, status=exc.status)
    flash(f"Monitor {row.id} created: its first run starts within a minute.", "info")
    return redirect(url_for("console.monitors_page"))


def _request(form: Any) -> dict[str, Any]:
    """The ``POST /monitors`` body the form describes."""
    if form.get("mode") == "batch":
        collection: dict[str, Any] = {"mode": "batch", "urls": [
            url for _, url in url_lines(form.get("urls", ""))]}
    else:
        collection = {"mode": "crawl", "url": form.get("url", ""),
                      **forms.whole_numbers(form, ("max_pages",))}
    if form.get("when") == "cron":
        schedule: dict[str, Any] = {"cron": form.get("cron", "")}
    else:
        minutes = forms.whole_numbers(form, ("every_minutes",)).get("every_minutes")
        if minutes is None:
            raise ValidationError({"schedule": ["Say how many minutes apart."]})
        schedule = {"every": minutes * 60}
    body = {"collection": collection, "schedule": schedule,
            "notify": form.get("notify", "changes")}
    for name in ("name", "webhook_url"):
        if form.get(name, "").strip():
            body[name] = form[name].strip()
    return body


def _flat(messages: Any, where: str = "") -> list[str]:
    """The API's nested ``errors`` as lines ``collection.url: …``."""
    if isinstance(messages, dict):
        return [line for name, value in messages.items()
                for line in _flat(value, f"{where}.{name}" if where else str(name))]
    if isinstance(messages, list) and all(isinstance(item, str) for item in messages):
        return [f"{where}: {' '.join(messages)}" if where else " ".join(messages)]
    return [f"{where}: {messages}"]


@blp.route("/monitors/<monitor_id>/<action>", methods=["POST"])
def change_monitor(monitor_id: str, action: str) -> Response:
    """Pause, resume or delete a monitor, as ``PATCH``/``DELETE`` would."""
    if action == "delete":
        if not monitors.delete_monitor(db(), monitor_id, g.principal.account_id,
                                       request_id=g.request_id):
            raise ApiError("not_found", "No such monitor.")
        flash(f"Monitor {monitor_id} deleted; its runs' collections stay until they expire.",
              "info")
    elif action in ("pause", "resume"):
        try:
            api_monitors.change_monitor(monitor_id, {
                "status": "paused" if action == "pause" else "active"})
        except ApiError as exc:
            if exc.status == 404:
                raise
            flash(exc.message, "error")  # resuming without credits: said above the list
        else:
            flash(f"Monitor {monitor_id} {'paused' if action == 'pause' else 'resumed'}.",
                  "info")
    else:
        raise ApiError("not_found", "No such action.")
    return redirect(url_for("console.monitors_page"))
