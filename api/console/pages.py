"""The console's pages: sign-in and out, the overview (balance, plan, usage chart), the
activity history, keys and the webhook secret."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from flask import (
    flash,
    g,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)
from werkzeug.wrappers import Response

from api.console import blp, forms, sessions
from api.cursors import MAX_ROW_ID
from api.errors import ApiError
from api.extensions import db, limiter
from api.schemas.fields import UNSTORABLE
from core.operations import OPERATIONS
from storage import accounts, activity, ledger, usage, webhooks
from storage.models import Outcome

#: Endpoints open without signing in (neither counted against a plan's rate: static files are
#: the same for everyone and no account is known yet on the sign-in page).
PUBLIC = {"console.sign_in", "console.static"}
#: The one signed-in request not counted against the plan's rate: signing out always works.
UNCOUNTED = {"console.sign_out"}
#: Rows of history a page shows.
ACTIVITY_PAGE = 50
#: The activity page's filters, kept in its "older" link.
FILTERS = ("operation", "status", "from", "to", "request_id")
#: Every operation a line of history can name, for the filter (the API's, and grants).
HISTORY_OPERATIONS = (*(operation.name for operation in OPERATIONS), ledger.GRANT_OPERATION)


@blp.before_request
def _guard() -> Response | None:
    """Every console request: its session readable, a POST's CSRF token, and (except the
    sign-in page and static files) a live key behind the session, as ``g.principal``, counted
    against its plan's requests per minute like an API request (the same window: over it,
    the console's 429 page and the API's 429 alike), signing out excepted."""
    if g.get("console_sessions_down"):
        raise ApiError("unavailable", "Sign-ins cannot be read right now; try again shortly.")
    if request.method == "POST":
        sessions.check_csrf()
    if request.endpoint in PUBLIC:
        return None
    found = sessions.signed_in()
    if found is None:
        if request.endpoint == "console.live":
            raise ApiError("unauthorized", "Signed out.")
        return redirect(url_for("console.sign_in"))
    g.account, g.principal = found
    if request.endpoint not in UNCOUNTED:
        limiter().check(g.principal)
    return None


@blp.route("/<path:unknown>", methods=["GET", "POST"])
def no_such_page(unknown: str) -> Response:
    """Any other path under /console: the console's own 404 page, not the API's JSON."""
    raise ApiError("not_found", "There is no such page in the console.")


@blp.route("/sign-in", methods=["GET", "POST"])
def sign_in() -> Response:
    problem, status = None, 200
    if request.method == "POST":
        if sessions.sign_in(request.form.get("key", "")) is not None:
            return redirect(url_for("console.overview"))
        problem, status = "This API key is unknown or revoked.", 401
    elif sessions.signed_in() is not None:
        return redirect(url_for("console.overview"))
    response = make_response("", status)
    token = sessions.sign_in_token(response)
    response.set_data(render_template("console/sign_in.html", token=token, problem=problem))
    return response


@blp.route("/sign-out", methods=["POST"])
def sign_out() -> Response:
    sessions.sign_out("Signed out.")
    return redirect(url_for("console.sign_in"))


@blp.route("/")
def overview() -> str:
    used = usage.daily(db(), g.principal.account_id)
    chart = {"days": [day.isoformat() for day in used.days], "series": used.credits}
    return render_template("console/overview.html", account=g.account, plan=g.account.plan,
                           usage=used, chart=chart)


@blp.route("/activity")
def activity_page() -> str:
    filters, problems = _filters(request.args)
    for problem in problems:
        flash(problem, "error")
    before = request.args.get("before", type=int)
    if before is not None and not 0 < before < MAX_ROW_ID:
        before = None
    rows, next_id = activity.page(db(), g.principal.account_id, before=before,
                                  limit=ACTIVITY_PAGE, filters=filters)
    kept = {name: request.args[name] for name in FILTERS if request.args.get(name)}
    return render_template("console/activity.html", rows=rows, next_id=next_id, kept=kept,
                           operations=HISTORY_OPERATIONS, statuses=[o.value for o in Outcome],
                           args=request.args)


def _filters(args: Any) -> tuple[activity.Filters, list[str]]:
    """The history filters of the query string, and what was wrong with it (ignored)."""
    problems = []
    operation = args.get("operation") or ""
    if operation and operation not in HISTORY_OPERATIONS:
        problems.append(f"Unknown operation {operation!r}.")
        operation = ""
    status = args.get("status") or None
    if status and status not in {o.value for o in Outcome}:
        problems.append(f"Unknown status {status!r}.")
        status = None
    bounds: dict[str, datetime | None] = {}
    for name, after in (("from", 0), ("to", 1)):  # "to" is the whole of that day
        try:
            day = date.fromisoformat(args[name]) if args.get(name) else None
            bounds[name] = (datetime.combine(day + timedelta(days=after), time(), tzinfo=UTC)
                            if day else None)
        except ValueError:
            problems.append(f"'{name}' is not a date (YYYY-MM-DD).")
            bounds[name] = None
        except OverflowError:  # the last day there is: no bound
            bounds[name] = None
    request_id = (args.get("request_id") or "").strip() or None
    if request_id and UNSTORABLE.search(request_id):
        problems.append("That request id cannot exist.")
        request_id = None
    return activity.Filters(operations=(operation,) if operation else (), status=status,
                            since=bounds["from"], until=bounds["to"],
                            request_id=request_id), problems


@blp.route("/keys")
def keys() -> str:
    return _keys_page()


def _keys_page(new_key: str | None = None, new_secret: str | None = None,
               status: int = 200) -> Any:
    with db().session() as session:
        rows = accounts.list_keys(session, g.principal.account_id, newest_first=True)
    return render_template("console/keys.html", keys=rows, new_key=new_key,
                           new_secret=new_secret, form_id=forms.new_form_id()), status


def _sent_already(what: str) -> Response:
    flash(f"This form was sent already: no other {what} was made (it is shown once, when "
          "it is made).", "info")
    return redirect(url_for("console.keys"))


@blp.route("/keys", methods=["POST"])
def create_key() -> Any:
    """A new key, shown once in the answer; the form sent again (a reload) makes no other."""
    claimed = forms.claim(request.form.get("form_id", ""))
    if forms.sent_already(claimed):
        return _sent_already("key")
    with forms.once(claimed, "a key"), db().write() as session:
        key = accounts.create_key(session, g.account)
    return _keys_page(new_key=key, status=201)


@blp.route(f"/keys/<int(max={MAX_ROW_ID - 1}):key_id>/revoke", methods=["POST"])
def revoke_key(key_id: int) -> Response:
    with db().write() as session:
        found = accounts.revoke_own_key(session, g.principal.account_id, key_id)
    if not found:
        raise ApiError("not_found", "No such key.")
    if key_id == g.principal.key_id:
        sessions.sign_out("You revoked the key this sign-in used; sign in with another key.")
        return redirect(url_for("console.sign_in"))
    flash("The key is revoked: requests made with it now answer 401.", "info")
    return redirect(url_for("console.keys"))


@blp.route("/webhook-secret", methods=["POST"])
def rotate_webhook_secret() -> Any:
    """A new signing secret, shown once; the form sent again (a reload) rotates no more."""
    claimed = forms.claim(request.form.get("form_id", ""))
    if forms.sent_already(claimed):
        return _sent_already("secret")
    with forms.once(claimed, "a secret"):
        secret, _until = webhooks.rotate_secret(db(), g.principal.account_id,
                                                request_id=g.request_id)
    return _keys_page(new_secret=secret)
