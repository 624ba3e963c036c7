"""What the generated OpenAPI document says beyond the schemas: the base path, the response
headers, the error answers of each operation and its ``operationId``.

Generated clients are built from the document, so it must list every answer a client can get
(status, body and headers), not only the happy path. The resources declare, per operation,
which error statuses apply (:func:`documented`); the body of every error is ``ErrorSchema``,
the one shape :mod:`api.errors` produces.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from apispec import APISpec
from flask_smorest import Blueprint
from marshmallow import Schema

from api.schemas.errors import ErrorSchema
from core.agent_tools import EXTENSION as AGENT_TOOLS
from core.contract import BASE_PATH  # noqa: F401  (re-exported: its users import it here)
from core.operations import Operation

logger = logging.getLogger(__name__)

_STRING = {"type": "string"}
_INTEGER = {"type": "integer", "minimum": 0}

#: Response headers, registered once as components and referenced by name.
HEADERS: dict[str, dict[str, Any]] = {
    "X-Request-Id": {
        "description": "Id of this request (also `request_id` in JSON bodies).",
        "required": True, "schema": _STRING},
    "X-Credits-Used": {
        "description": "Credits this request cost.", "required": True, "schema": _INTEGER},
    "X-Credits-Remaining": {
        "description": "The account's balance after this request.", "required": True,
        "schema": {"type": "integer"}},
    "RateLimit-Limit": {
        "description": "Requests allowed per minute on the account's plan.",
        "schema": _INTEGER},
    "RateLimit-Remaining": {
        "description": "Requests left in the current window.", "schema": _INTEGER},
    "RateLimit-Reset": {
        "description": "Seconds until the window frees a request.", "schema": _INTEGER},
    "Retry-After": {
        "description": "Seconds to wait before retrying.", "required": True,
        "schema": _INTEGER},
    "WWW-Authenticate": {
        "description": "The Bearer challenge.", "required": True, "schema": _STRING},
    "Content-Disposition": {
        "description": "`attachment` and the file's name, e.g. "
                       "`attachment; filename=\"col_….csv\"`.",
        "required": True, "schema": _STRING},
    "Content-Encoding": {
        "description": "`gzip` when the request's `Accept-Encoding` accepts it (the body is "
                       "compressed as it streams); absent otherwise.",
        "schema": {"type": "string", "enum": ["gzip"]}},
}
_RATE_LIMIT = ("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset")

#: What each error status means, with the stable codes it carries (docs/api.md, Errors).
ERRORS: dict[int, str] = {
    400: "bad_request: the body is not JSON, or not a JSON object.",
    401: "unauthorized: the Authorization header is missing or malformed, or the key is "
         "unknown or revoked.",
    402: "insufficient_credits: the balance cannot cover the cost; nothing was charged.",
    403: "source_policy or robots_disallowed: the URL may not be fetched.",
    404: "not_found: no such collection on this account.",
    409: "conflict: the collection is finished already, or an Idempotency-Key is in flight.",
    410: "expired: the collection's results are past their download window (`expires_at`).",
    413: "body_too_large: the request body is over the deployment's `MAX_BODY_BYTES` "
         "(1 MiB by default; a collection's body has room for its plan's largest batch "
         "on top); nothing was charged.",
    415: "unsupported_content: the target is not HTML.",
    422: "validation_error: a field is missing, of the wrong type, out of range or not "
         "valid, such as a URL with credentials or with a control character (`errors` says "
         "which).",
    429: "rate_limited: over the plan's requests per minute, or the account already has its "
         "plan's `max_concurrent_requests` single-page requests in flight; nothing was "
         "charged; retry after `Retry-After` seconds.",
    502: "fetch_failed, target_http_error or page_too_large: the target could not be read "
         "(`details` holds the URL and the target's status).",
    503: "unavailable: Redis, the database or the workers cannot be reached; nothing was "
         "charged.",
    504: "timeout: the target or the worker did not answer in time; nothing was charged.",
}

#: The errors of every operation that needs a key; POST adds 400 and 422.
AUTHENTICATED = (401, 429, 503)
#: The errors of a billable operation that fetches one page.
PAGE = (*AUTHENTICATED, 400, 402, 403, 413, 415, 422, 502, 504)


def headers_of(status: int, *, authenticated: bool = True, billed: bool = False) -> dict:
    """The documented headers of an answer (names resolved to the header components)."""
    names = ["X-Request-Id"]
    if authenticated and status != 401:
        names += _RATE_LIMIT
    if status == 401:
        names.append("WWW-Authenticate")
    if status == 429:
        names.append("Retry-After")
    if billed and status == 200:
        names += ["X-Credits-Used", "X-Credits-Remaining"]
    return {name: name for name in names}


def documented(
    blp: Blueprint,
    operation_id: str,
    schema: type[Schema],
    errors: Iterable[int],
    *,
    authenticated: bool = True,
    billed: bool = False,
    descriptions: dict[int, str] | None = None,
    error_schema: type[Schema] = ErrorSchema,
    success: int = 200,
    media_types: dict[str, dict[str, Any]] | None = None,
    headers: Iterable[str] = (),
    operation: Operation | None = None,
) -> Callable:
    """Document a view: its ``operationId``, its ``success`` answer (``schema`` and headers;
    200 unless given), and each error
    status of ``errors`` with the error body and headers. Put it under ``@blp.route``.

    ``media_types``: other bodies the success answer may have besides ``schema``'s JSON
    (media type → its OpenAPI schema), e.g. an export's CSV; ``headers``: names of
    :data:`HEADERS` the success answer carries besides the usual ones; ``operation``: the
    operation of the table it serves, whose tools for agents it documents."""
    descriptions = {**ERRORS, **(descriptions or {})}
    success_headers = {**headers_of(success, authenticated=authenticated, billed=billed),
                       **{name: name for name in headers}}

    def decorate(view: Callable) -> Callable:
        # Applied innermost first, so the document lists 200 (JSON, then the other media
        # types in order), then the errors ascending.
        for media_type, body in reversed((media_types or {}).items()):  # merged into the 200
            view = blp.alt_response(success, schema=body, content_type=media_type,
                                    headers=success_headers, success=True)(view)
        view = blp.response(success, schema, headers=success_headers)(view)
        for status in sorted(set(errors)):
            view = blp.alt_response(
                status, schema=error_schema, description=descriptions[status],
                headers=headers_of(status, authenticated=authenticated),
            )(view)
        extra: dict[str, Any] = {"operationId": operation_id}
        if not authenticated:
            extra["security"] = []
        if operation is not None and operation.agent_tools:  # for agents: client.mcp_server
            extra[AGENT_TOOLS] = [tool.document(operation.price)
                                  for tool in operation.agent_tools]
        return blp.doc(**extra)(view)

    return decorate


def register_components(spec: APISpec) -> None:
    """The header components the operations refer to; call before registering blueprints."""
    for name, header in HEADERS.items():
        spec.components.header(name, header)


def drop_framework_schemas(spec: APISpec) -> None:
    """flask-smorest always registers ``PaginationMetadata`` (for its pagination header);
    nothing here paginates that way, so the document would carry a schema nothing uses."""
    spec.components.schemas.pop("PaginationMetadata", None)
