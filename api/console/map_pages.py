"""The console's Map page: a site's URLs (``POST /map``, 1 credit) listed, and a batch
started from them with the collection form's own POST.

The map runs as the API runs it (:func:`api.resources.extraction.answer`: the plan's cap on
``limit``, the billed job, the history); a refusal is shown by its field. A form sent again (a
reload of the answer) maps nothing twice (:mod:`.forms`); it says so instead.
"""

from __future__ import annotations

from typing import Any

from flask import g, render_template, request
from marshmallow import ValidationError

from api.console import blp, forms
from api.errors import ApiError
from api.operations import refuse
from api.resources.extraction import answer
from api.schemas.pages import page_request_schema
from core.operations import MAP

#: The Map form's fields, as a new form has them.
NEW_FORM = {"url": "", "limit": "", "search": "", "sitemap": "include", "discover_links": "1",
            "max_age": ""}
#: Its fields that show their own problems.
FIELDS = ("url", "limit", "search", "sitemap", "discover_links", "max_age")
SITEMAP_CHOICES = ("include", "only", "skip")


@blp.route("/map")
def map_page() -> Any:
    return _page()


@blp.route("/map", methods=["POST"])
def map_site() -> Any:
    """Map the site of the form's URL; the URLs listed, ready to start a batch with."""
    form = request.form
    claimed = forms.claim(form.get("form_id", ""))
    if forms.sent_already(claimed):
        return _page(form=_echo(form), problems={"form": [
            "This form was sent already (and charged); map again from a new form."]},
            status=409)
    try:
        wanted = _request(form)
        args = page_request_schema(MAP.extraction)().load(wanted)
    except ValidationError as exc:
        forms.release(claimed)
        messages = exc.messages if isinstance(exc.messages, dict) else {"form": exc.messages}
        refuse(MAP.name, ApiError("validation_error", "Invalid request from the console.",
                                  errors=messages), url=form.get("url"))
        return _page(form=_echo(form), problems=_placed(messages), status=422)
    try:
        with forms.once(claimed, "map"):
            body, _, _ = answer(MAP, args)
    except ApiError as exc:
        problems = _placed(exc.errors) if exc.errors else {"form": [exc.message]}
        return _page(form=_echo(form), problems=problems, status=exc.status)
    return _page(form=_echo(form), result=body)


def _request(form: Any) -> dict[str, Any]:
    """The ``POST /map`` body the form describes (empty fields: the API's defaults)."""
    wanted: dict[str, Any] = {"url": form.get("url", ""),
                              **forms.whole_numbers(form, ("limit", "discover_links",
                                                           "max_age"))}
    if form.get("search", "").strip():
        wanted["search"] = form["search"].strip()
    if form.get("sitemap"):
        wanted["sitemap"] = form["sitemap"]
    return wanted


def _placed(messages: dict[str, Any]) -> dict[str, Any]:
    placed = {name: value for name, value in messages.items() if name in FIELDS}
    rest = [f"{name}: {value}" for name, value in messages.items() if name not in FIELDS]
    if rest:
        placed["form"] = rest
    return placed


def _echo(form: Any) -> dict[str, str]:
    return {name: form.get(name, default) for name, default in NEW_FORM.items()}


def _page(form: dict[str, str] | None = None, problems: dict[str, Any] | None = None,
          result: dict[str, Any] | None = None, status: int = 200) -> Any:
    return render_template(
        "console/map.html", form=form or NEW_FORM, problems=problems or {}, result=result,
        plan=g.account.plan, sitemap_choices=SITEMAP_CHOICES, form_id=forms.new_form_id(),
        batch_form_id=forms.new_form_id(),
        urls="\n".join(link["url"] for link in (result or {}).get("links", []))), status
