"""Bearer-key authentication, as a ``before_request`` hook of each authenticated blueprint.

Blueprint-level, not app-level, so unknown paths answer 404 rather than 401.
"""

from __future__ import annotations

from collections.abc import Callable

from flask import current_app, g, request
from flask_smorest import Blueprint

from api import idempotency
from api.errors import ApiError
from api.extensions import db, limiter
from api.schemas.fields import MAX_URL_LENGTH
from core.logformat import bind
from storage import accounts
from storage.accounts import Principal

CHALLENGE = {"WWW-Authenticate": 'Bearer realm="api"'}


#: Set (in the WSGI environ, which no client can reach) on a request the API makes itself for
#: one it counted already: an MCP tool call's (``api.mcp``).
COUNTED = "webdata.counted"


def _authenticate() -> None:
    caller = principal()
    if not request.environ.get(COUNTED):
        limiter().check(caller)


def principal() -> Principal:
    """The caller of the request being served (``g.principal``), by its bearer key; ApiError
    401 without a valid one."""
    header = request.headers.get("Authorization", "")
    scheme, _, key = header.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise ApiError("unauthorized", "Send your API key as 'Authorization: Bearer <key>'.",
                       headers=CHALLENGE)
    with db().connection() as connection:
        caller = accounts.authenticate(connection, key.strip())
    if caller is None:
        raise ApiError("unauthorized", "This API key is unknown or revoked.", headers=CHALLENGE)
    g.principal = caller
    bind(account_id=caller.account_id)
    return caller


def bodyless(view: Callable) -> Callable:
    """Mark a POST that takes no body (a cancel): it may come without one, whatever its
    Content-Type; a body it does get must still be a JSON object."""
    view.bodyless = True  # type: ignore[attr-defined]
    return view


def batch_body(view: Callable) -> Callable:
    """Mark a POST whose body may carry the caller's largest batch of URLs: its plan's
    ``max_batch_urls`` URLs of the longest length accepted. That can be more bytes than
    ``MAX_BODY_BYTES`` (1,000 URLs of 1,500 characters are 1.5 MB), and a batch the plan
    allows must not be refused for its size in bytes; the body's limit grows by that much."""
    view.batch_body = True  # type: ignore[attr-defined]
    return view


def batch_body_limit(max_body_bytes: int, max_batch_urls: int) -> int:
    """Bytes a :func:`batch_body` body may have: ``MAX_BODY_BYTES`` for the rest of it,
    and each URL at its longest, quoted and separated."""
    return max_body_bytes + max_batch_urls * (MAX_URL_LENGTH + len('"", '))


def _require_json_object() -> None:
    """A 400 that says what is wrong, before webargs would report a missing field instead."""
    if request.method not in ("POST", "PUT", "PATCH"):
        return
    view = current_app.view_functions.get(request.endpoint or "")
    if getattr(view, "bodyless", False) and not request.get_data(cache=True):
        return
    if getattr(view, "batch_body", False):  # before anything reads the body
        request.max_content_length = batch_body_limit(
            current_app.config["MAX_CONTENT_LENGTH"], g.principal.max_batch_urls)
    if not request.is_json:
        raise ApiError(
            "bad_request", "Send the body as JSON, with 'Content-Type: application/json'."
        )
    try:  # a body over MAX_BODY_BYTES raises werkzeug's 413 here (answered in our shape)
        body = request.get_json(silent=True)
    except RecursionError:  # the json module's answer to [[[[…]]]] 100k deep
        raise ApiError("bad_request", "The JSON body is nested too deeply.") from None
    if not isinstance(body, dict):
        raise ApiError("bad_request", "The body must be a JSON object.")


def authenticated(blueprint: Blueprint) -> Blueprint:
    """Require a valid key (then a JSON object body) on every route of ``blueprint``; its
    POSTs take an ``Idempotency-Key`` (checked after those, before the operation runs)."""
    blueprint.before_request(_authenticate)
    blueprint.before_request(_require_json_object)
    return idempotency.install(blueprint)
