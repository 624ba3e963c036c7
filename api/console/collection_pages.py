"""The console's collections: the list with live progress, the form that starts a batch or a
crawl (with the page options of extract page: formats, the whole page, CSS selectors), cancel
and downloads, each through the API's own code for it. A collection's results are shown by
:mod:`.result_pages`."""

from __future__ import annotations

import json
from typing import Any

from flask import flash, g, jsonify, redirect, render_template, request, url_for
from marshmallow import ValidationError
from werkzeug.wrappers import Response

from api.console import blp, forms
from api.errors import ApiError
from api.exports import FORMATS
from api.extensions import db
from api.operations import refuse
from api.resources import collection_routes as api_collections
from api.resources import exports as api_exports
from api.schemas.collection_lists import ExportQuerySchema
from api.schemas.collections import CollectionRequestSchema
from api.schemas.fields import UNSTORABLE
from core.contract import DEFAULT_MAX_DEPTH, MAX_DEPTH
from core.controls import url_lines
from core.operations import COLLECTION_EXTRACTS, EXTRACTIONS
from core.options import FORMATS as CONTENT_FORMATS
from storage import collections
from storage import idempotency as records
from storage.models import LIVE_STATUSES

#: Collections a page lists.
PAGE = 20
#: Largest URL file the batch form reads (a plan's batch is far smaller).
MAX_URL_FILE = 512 * 1024
#: The form's fields that show their own problems (collections.html).
FIELDS = ("urls", "urls_file", "url", "max_pages", "max_depth", "include_paths",
          "exclude_paths", "extract", "formats", "only_main_content", "include_selectors",
          "exclude_selectors", "schema", "change_tracking")
#: The fields of patterns (``include_paths``, ``exclude_paths``), one a line.
PATTERN_FIELDS = ("include_paths", "exclude_paths")
#: The fields of CSS selectors, one a line.
SELECTOR_FIELDS = ("include_selectors", "exclude_selectors")
#: Fields whose refused entries the API names by index: the form names them by themselves.
LISTED_FIELDS = (*PATTERN_FIELDS, *SELECTOR_FIELDS, "formats")
#: The content formats as the form names them.
FORMAT_LABELS = {"text": "Text", "markdown": "Markdown", "html": "Clean HTML",
                 "raw_html": "Raw HTML (as fetched)"}
#: What a new form asks for: a page's content options at the API's defaults.
NEW_FORM = {"mode": "batch", "extract": "page", "use_sitemap": True,
            "max_depth": DEFAULT_MAX_DEPTH, "formats": ["text"], "whole_page": False}
#: The history's name of the collection operation.
OPERATION = api_collections.OPERATION


@blp.route("/collections")
def collections_page() -> Any:
    return _page()


def _page(form: dict[str, Any] | None = None, problems: dict[str, Any] | None = None,
          status: int = 200) -> Any:
    before = api_collections.parse_position(_storable(request.args.get("before")) or "")
    rows, position = collections.page(db(), g.principal.account_id, before=before, limit=PAGE)
    older = api_collections.position_text(position) if position else None
    return render_template(
        "console/collections.html", collections=api_collections.bodies(rows), older=older,
        plan=g.account.plan,
        form=form or NEW_FORM, problems=problems or {}, extracts=COLLECTION_EXTRACTS,
        max_depth=MAX_DEPTH, form_id=forms.new_form_id(), export_formats=list(FORMATS),
        content_formats=CONTENT_FORMATS, format_labels=FORMAT_LABELS,
        live=LIVE_STATUSES), status


@blp.route("/collections", methods=["POST"])
def start_collection() -> Any:
    """Start a batch or a crawl from the form: the API's schema validates it, the API's
    :func:`~api.resources.collection_routes.start` creates it (limits, credits, history). A form
    sent again (a double click, a reload) starts no second collection (:mod:`.forms`)."""
    form = request.form
    claimed = forms.claim(form.get("form_id", ""))
    if isinstance(claimed, records.Replay):
        flash(f"This form was sent already: it started {claimed.response.body}, below.",
              "info")
        return redirect(url_for("console.collections_page"))
    if claimed is not None and not isinstance(claimed, records.Claimed):
        flash("This form is being sent already; its collection appears below.", "info")
        return redirect(url_for("console.collections_page"))
    started, wanted = None, {}
    try:
        try:
            wanted = _request(form)
            args = CollectionRequestSchema().load(wanted)
        except ValidationError as exc:
            messages = (exc.messages if isinstance(exc.messages, dict)
                        else {"form": exc.messages})
            refuse(OPERATION, ApiError("validation_error", "Invalid request from the console.",
                                       errors=messages), url=form.get("url"))
            return _page(form=_echo(form), problems=_placed(messages, wanted), status=422)
        try:
            started = api_collections.start(args).id
        except ApiError as exc:
            return _page(form=_echo(form), problems={"form": [exc.message]}, status=exc.status)
    finally:
        if started:
            forms.done(claimed, started)  # a sending again names it (the Replay's body)
        else:  # refused (a 422, no credits): sent again once mended, reload included
            forms.release(claimed)
    flash(f"Collection {started} started.", "info")
    return redirect(url_for("console.collections_page"))


def _request(form: Any) -> dict[str, Any]:
    """The ``POST /collections`` body the form describes (a batch's URLs pasted, one a
    line, and/or from an uploaded .txt file; the page options when its extract takes them)."""
    mode = form.get("mode", "batch")
    wanted: dict[str, Any] = {"mode": mode, "extract": form.get("extract", "page"),
                              **_page_options(form)}
    if form.get("track") == "on":  # its tag, or the API's default (the site)
        tag = form.get("change_tag", "").strip()
        wanted["change_tracking"] = {"tag": tag} if tag else {}
    if mode == "batch":
        listed = url_lines(form.get("urls", ""))
        upload = request.files.get("urls_file")
        if upload and upload.filename:
            data = upload.stream.read(MAX_URL_FILE + 1)
            if len(data) > MAX_URL_FILE:
                raise ValidationError({"urls_file": ["The file is over 512 KB."]})
            try:
                listed += url_lines(data.decode("utf-8-sig"))
            except UnicodeDecodeError:
                raise ValidationError({"urls_file": ["The file is not UTF-8 text."]}) from None
        # a control character inside a line stays in its URL: the schema refuses it (422)
        wanted["urls"] = [url for _, url in listed]
        if not wanted["urls"]:
            raise ValidationError({"urls": ["Paste at least one URL or choose a file."]})
        return wanted
    wanted["url"] = form.get("url", "")  # checked as sent, stripped by the schema
    wanted.update(forms.whole_numbers(form, ("max_pages", "max_depth")))
    for name in PATTERN_FIELDS:
        wanted[name] = [line.strip() for line in form.get(name, "").splitlines()
                        if line.strip()]
    wanted["use_sitemap"] = form.get("use_sitemap") == "on"
    return wanted


def _page_options(form: Any) -> dict[str, Any]:
    """The page options of the form (formats, the whole page, selectors one a line), of those
    its extract takes; none for a form without them (made by hand, or by an older page: the
    API's defaults). No format ticked is sent as such: the API's 422 says to tick one."""
    taken = {option.name for option in getattr(EXTRACTIONS.get(form.get("extract", "page")),
                                               "options", ())}
    if "schema" in taken and "formats" not in taken:  # extract schema: its JSON, as typed
        return {"schema": _json_schema(form.get("schema", ""))}
    if form.get("page_options") != "shown" or "formats" not in taken:
        return {}
    options: dict[str, Any] = {"formats": form.getlist("formats"),
                               "only_main_content": form.get("whole_page") != "on"}
    for name in SELECTOR_FIELDS:
        selectors = [line.strip() for line in form.get(name, "").splitlines() if line.strip()]
        if selectors:
            options[name] = selectors
    return {name: value for name, value in options.items() if name in taken}


def _json_schema(text: str) -> Any:
    """The schema box's JSON (None when empty: the API says it is required)."""
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ValidationError({"schema": [f"Not valid JSON: {exc}."]}) from None


def _placed(messages: dict[str, Any], wanted: dict[str, Any]) -> dict[str, Any]:
    """The problems by the form field that shows them; those of no field (``mode``, a stray
    key) shown above the form. A refused pattern, selector or format is named by itself: the
    form has one a line (or a box each), not the API's indexes."""
    placed = {name: value for name, value in messages.items() if name in FIELDS}
    for name in LISTED_FIELDS:
        if isinstance(placed.get(name), dict):
            entries = wanted.get(name, [])
            placed[name] = [
                f"{entries[i] if isinstance(i, int) and i < len(entries) else i}: "
                + (problems if isinstance(problems, str) else " ".join(problems))
                for i, problems in placed[name].items()]
    stray = [f"{name}: {value}" for name, value in messages.items() if name not in FIELDS]
    if stray:
        placed["form"] = stray
    return placed


def _storable(value: str | None) -> str | None:
    """``value``, or None when it is empty or holds what the database cannot store."""
    return value if value and not UNSTORABLE.search(value) else None


def _echo(form: Any) -> dict[str, Any]:
    """The form as sent, to show it again with its problems."""
    shown = form.get("page_options") == "shown"
    return {**form.to_dict(), "use_sitemap": form.get("use_sitemap") == "on",
            "formats": form.getlist("formats") if shown else NEW_FORM["formats"],
            "whole_page": form.get("whole_page") == "on"}


@blp.route("/collections/<collection_id>/cancel", methods=["POST"])
def cancel_collection(collection_id: str) -> Response:
    row = api_collections.stop(collection_id)
    flash(f"Collection {row.id} is cancelled: nothing more is fetched or charged.", "info")
    return redirect(url_for("console.collections_page"))


@blp.route("/collections/live.json")
def live() -> Response:
    """The progress of the collections asked (``ids``), for the page's live bars."""
    ids = [value for value in request.args.get("ids", "").split(",") if _storable(value)][:PAGE]
    found = collections.of_account(db(), g.principal.account_id, ids)
    return jsonify({"collections": api_collections.bodies(found)})


@blp.route("/collections/<collection_id>/export")
def export(collection_id: str) -> Response:
    """The API's export stream, with the console's session as the account."""
    try:
        args = ExportQuerySchema().load(request.args)
    except ValidationError as exc:
        raise ApiError("validation_error", f"Invalid download: {exc.messages}") from None
    return api_exports.stream(collection_id, args)
