"""The one error shape of the HTTP contract, produced by one handler for every layer.

    {"code": 402, "status": "Payment Required", "error": "insufficient_credits",
     "message": "…", "request_id": "req_…", "errors": {}}

Code raises :class:`ApiError` (or lets werkzeug/webargs raise their HTTP exceptions);
:func:`register` turns all of them — and any unexpected exception, without its traceback —
into that JSON.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from flask import Flask, g, jsonify
from werkzeug.exceptions import HTTPException

logger = logging.getLogger(__name__)

#: HTTP status of every stable error code (API.md's table).
STATUS = {
    "bad_request": 400,
    "unauthorized": 401,
    "insufficient_credits": 402,
    "source_policy": 403,
    "robots_disallowed": 403,
    "not_found": 404,
    "method_not_allowed": 405,
    "conflict": 409,
    "expired": 410,
    "too_many_urls": 413,
    "unsupported_content": 415,
    "validation_error": 422,
    "idempotency_key_reused": 422,
    "unsupported_video": 422,
    "video_unavailable": 422,
    "rate_limited": 429,
    "collection_limit": 429,
    "internal_error": 500,
    "fetch_failed": 502,
    "target_http_error": 502,
    "page_too_large": 502,
    "search_provider_error": 502,
    "search_not_configured": 503,
    "unavailable": 503,
    "timeout": 504,
}

#: The code used for an HTTP status raised without one of ours.
DEFAULT_CODE = {
    400: "bad_request",
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "bad_request",
    415: "unsupported_content",
    422: "validation_error",
    429: "rate_limited",
    503: "unavailable",
}


class ApiError(Exception):
    """An error answer: ``error`` is a code of :data:`STATUS`."""

    def __init__(
        self,
        error: str,
        message: str,
        *,
        errors: dict[str, Any] | None = None,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ):
        super().__init__(message)
        self.error = error
        self.status = STATUS[error]
        self.message = message
        self.errors = errors or {}
        self.details = details
        self.headers = headers or {}

    @classmethod
    def from_result(cls, error: dict[str, Any]) -> ApiError:
        """From the ``error`` object of a failed page result (see crawler.exceptions)."""
        code = error.get("error") or "fetch_failed"
        return cls(code if code in STATUS else "fetch_failed", error.get("message") or code,
                   details=error.get("details"))


def error_response(exc: ApiError):
    body: dict[str, Any] = {
        "code": exc.status,
        "status": HTTPStatus(exc.status).phrase,
        "error": exc.error,
        "message": exc.message,
        "request_id": g.get("request_id"),
        "errors": exc.errors,
    }
    if exc.details is not None:
        body["details"] = exc.details
    response = jsonify(body)
    response.status_code = exc.status
    response.headers.update(exc.headers)
    return response


def _from_http(exc: HTTPException) -> ApiError:
    status = exc.code or 500
    code = DEFAULT_CODE.get(status, "internal_error" if status >= 500 else "bad_request")
    data = getattr(exc, "data", None) or {}
    messages = data.get("messages") or {}
    errors: dict[str, Any] = {}
    for location in messages.values():  # webargs: {"json": {"url": ["…"]}}
        if isinstance(location, dict):
            errors.update(location)
    message = exc.description or HTTPStatus(status).phrase
    if status == 422:
        fields = ", ".join(sorted(errors)) or "the body"
        message = f"Invalid request: check {fields}."
    if status == 400 and messages:
        message = "The body must be a JSON object."
    api_error = ApiError(code, message, errors=errors)
    api_error.status = status
    if status == 405 and exc.get_headers():
        api_error.headers = {k: v for k, v in exc.get_headers() if k.lower() == "allow"}
    return api_error


def register(app: Flask) -> None:
    """Install the handlers; flask-smorest's own HTTP handler is replaced (see ``api.Api``)."""
    app.register_error_handler(ApiError, error_response)
    app.register_error_handler(HTTPException, lambda exc: error_response(_from_http(exc)))

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception):
        logger.exception("Unhandled error in request %s", g.get("request_id"))
        return error_response(ApiError(
            "internal_error", "Something went wrong on our side; nothing was charged."
        ))
