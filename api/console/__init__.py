"""The web console at ``/console``: an account holder's balance, usage, history, collections,
keys and webhook secret, as server-rendered pages served by the API's own Flask app.

It is a second face of the same services, not a second path to them: it calls what the API's
views call (the ledger, :func:`api.resources.collection_routes.start`, the export stream, the key
and webhook storage), under the account of the signed-in key (``g.principal``), so history,
plan limits and charges are the API's own. Pages are plain HTML forms (every change a POST with
a CSRF token); one script of ours (``static/console.js``) draws the chart with the vendored
Chart.js and keeps the collections' progress bars live. The Content-Security-Policy
(:mod:`api.headers`) allows scripts, styles and connections from the app itself only.
"""

from __future__ import annotations

from flask import Blueprint, Flask, Response, g, render_template
from werkzeug.exceptions import HTTPException

from api.errors import ApiError, unexpected
from api.headers import PAGE

blp = Blueprint("console", __name__, url_prefix="/console", template_folder="templates",
                static_folder="static", static_url_path="/static")

#: An error page's answer: the page, its status, its headers.
ErrorPage = tuple[str, int, dict[str, str]]


@blp.after_request
def _headers(response: Response) -> Response:
    response.headers.update(PAGE)  # and nosniff, as every answer of the app
    if response.mimetype == "text/html":
        response.headers["Cache-Control"] = "no-store"  # balances, keys shown once
    return response


@blp.context_processor
def _signed_in() -> dict[str, object]:
    return {"principal": g.get("principal")}


@blp.errorhandler(ApiError)
def _api_error(error: ApiError) -> ErrorPage:
    """The API's error as the console's page, with the API's headers (a 429's
    ``Retry-After``)."""
    return _error_page(error.status, error.message, error.headers)


@blp.errorhandler(HTTPException)
def _http_error(error: HTTPException) -> ErrorPage:
    return _error_page(error.code or 500, error.description or error.name)


@blp.errorhandler(Exception)
def _unexpected(error: Exception) -> ErrorPage:
    """What the API answers an unexpected error with (:func:`api.errors.unexpected`: logged,
    503 for a database that cannot serve, else 500), as the console's page."""
    return _api_error(unexpected(error))


def _error_page(status: int, message: str, headers: dict[str, str] | None = None) -> ErrorPage:
    page = render_template("console/error.html", status=status, message=message)
    return page, status, headers or {}


def register(app: Flask) -> None:
    """Serve the console on ``app``: its sessions, then its routes."""
    from api.console import (  # noqa: F401 (routes)
        collection_pages,
        map_pages,
        monitor_pages,
        pages,
        result_pages,
        sessions,
    )

    api = app.config["WEBDATA"].api
    sessions.install(app, app.extensions["webdata.redis"], api.console_session_seconds)
    app.jinja_env.globals["csrf_token"] = sessions.csrf_token
    app.register_blueprint(blp)
