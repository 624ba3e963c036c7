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

from apispec import APISpec, BasePlugin
from apispec.ext.marshmallow import MarshmallowPlugin
from flask_smorest import Blueprint
from marshmallow import Schema, fields

from api.schemas.errors import ErrorSchema
from api.schemas.fields import AnyOf
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
    schema: type[Schema] | Schema | dict[str, Any],
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
    200 unless given; a dict is an OpenAPI schema, with marshmallow schemas in it, for a view
    that answers a ``Response`` of its own), and each error
    status of ``errors`` with the error body and headers. Put it under ``@blp.route``.

    ``media_types``: other bodies the success answer may have besides ``schema``'s JSON
    (media type → its OpenAPI schema), e.g. an export's CSV, listed before the JSON: a
    generator that reads one media type per answer takes the first it knows
    (openapi-python-client), and a text one is what it can read whatever the format asked
    (JSON first, its client would parse a CSV as JSON and fail). ``headers``: names of
    :data:`HEADERS` the success answer carries besides the usual ones; ``operation``: the
    operation of the table it serves, whose tools for agents it documents."""
    descriptions = {**ERRORS, **(descriptions or {})}
    success_headers = {**headers_of(success, authenticated=authenticated, billed=billed),
                       **{name: name for name in headers}}

    def decorate(view: Callable) -> Callable:
        # flask-smorest lists the bodies of one status outermost decorator first: the 200
        # has the other media types in order, then the JSON; the errors follow, ascending.
        view = blp.response(success, schema, headers=success_headers)(view)
        for media_type, body in reversed((media_types or {}).items()):  # merged into the 200
            view = blp.alt_response(success, schema=body, content_type=media_type,
                                    headers=success_headers, success=True)(view)
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


def any_of(converter: Any, field: fields.Field, **kwargs: Any) -> dict[str, Any]:
    """An attribute function of apispec's converter: an :class:`AnyOf` field is ``anyOf``
    the properties of its shapes."""
    if isinstance(field, AnyOf):
        return {"anyOf": [converter.field2property(choice) for choice in field.choices]}
    return {}


def register_components(spec: APISpec) -> None:
    """The header components the operations refer to, and the converter of :class:`AnyOf`
    fields; call before registering blueprints."""
    for name, header in HEADERS.items():
        spec.components.header(name, header)
    for plugin in spec.plugins:
        if isinstance(plugin, MarshmallowPlugin):
            plugin.converter.add_attribute_function(any_of)


class QueryParameters(BasePlugin):
    """A query string cannot say null, so no query parameter of the document offers it.

    A query field that defaults to None is nullable for marshmallow, so apispec writes
    ``"type": ["string", "null"]``, a null default and a null in its enum: what a generated
    client makes three types of (one per branch it sees) for one optional filter."""

    def operation_helper(self, path: str | None = None,
                         operations: dict[str, Any] | None = None, **kwargs: Any) -> None:
        for operation in (operations or {}).values():
            for parameter in operation.get("parameters", ()):
                if isinstance(parameter, dict) and parameter.get("in") == "query":
                    _not_null(parameter.get("schema", {}))


def _not_null(schema: dict[str, Any]) -> None:
    """``schema`` without null: in its type, its enum and as its default."""
    kinds = schema.get("type")
    if isinstance(kinds, list) and "null" in kinds:
        kinds = [kind for kind in kinds if kind != "null"]
        schema["type"] = kinds[0] if len(kinds) == 1 else kinds
    if "enum" in schema:
        schema["enum"] = [value for value in schema["enum"] if value is not None]
    if "default" in schema and schema["default"] is None:
        del schema["default"]


def drop_framework_schemas(spec: APISpec) -> None:
    """flask-smorest always registers ``PaginationMetadata`` (for its pagination header);
    nothing here paginates that way, so the document would carry a schema nothing uses."""
    spec.components.schemas.pop("PaginationMetadata", None)
