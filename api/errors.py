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

from flask import Flask, g, jsonify, request
from werkzeug.exceptions import HTTPException

from core.contract import ErrorCode
from storage.db import unavailable

logger = logging.getLogger(__name__)

#: HTTP status of every stable error code (docs/api.md, Errors); one entry per ErrorCode.
STATUS: dict[ErrorCode, int] = {
    ErrorCode.BAD_REQUEST: 400,
    ErrorCode.UNAUTHORIZED: 401,
    ErrorCode.INSUFFICIENT_CREDITS: 402,
    ErrorCode.SOURCE_POLICY: 403,
    ErrorCode.ROBOTS_DISALLOWED: 403,
    ErrorCode.MONITOR_LIMIT: 403,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.METHOD_NOT_ALLOWED: 405,
    ErrorCode.CONFLICT: 409,
    ErrorCode.EXPIRED: 410,
    ErrorCode.TOO_MANY_URLS: 413,
    ErrorCode.BODY_TOO_LARGE: 413,
    ErrorCode.UNSUPPORTED_CONTENT: 415,
    ErrorCode.VALIDATION_ERROR: 422,
    ErrorCode.IDEMPOTENCY_KEY_REUSED: 422,
    ErrorCode.UNSUPPORTED_VIDEO: 422,
    ErrorCode.VIDEO_UNAVAILABLE: 422,
    ErrorCode.RATE_LIMITED: 429,
    ErrorCode.COLLECTION_LIMIT: 429,
    ErrorCode.INTERNAL_ERROR: 500,
    ErrorCode.FETCH_FAILED: 502,
    ErrorCode.TARGET_HTTP_ERROR: 502,
    ErrorCode.PAGE_TOO_LARGE: 502,
    ErrorCode.SEARCH_PROVIDER_ERROR: 502,
    ErrorCode.SEARCH_NOT_CONFIGURED: 503,
    ErrorCode.UNAVAILABLE: 503,
    ErrorCode.TIMEOUT: 504,
}

#: The code used for an HTTP status raised without one of ours.
DEFAULT_CODE: dict[int, ErrorCode] = {
    400: ErrorCode.BAD_REQUEST,
    401: ErrorCode.UNAUTHORIZED,
    404: ErrorCode.NOT_FOUND,
    405: ErrorCode.METHOD_NOT_ALLOWED,
    409: ErrorCode.CONFLICT,
    413: ErrorCode.BODY_TOO_LARGE,
    415: ErrorCode.UNSUPPORTED_CONTENT,
    422: ErrorCode.VALIDATION_ERROR,
    429: ErrorCode.RATE_LIMITED,
    503: ErrorCode.UNAVAILABLE,
}


class ApiError(Exception):
    """An error answer: ``error`` is an :class:`ErrorCode` (or its string value)."""

    def __init__(
        self,
        error: ErrorCode | str,
        message: str,
        *,
        errors: dict[str, Any] | None = None,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ):
        super().__init__(message)
        self.error = ErrorCode(error)  # ValueError for a code the contract does not have
        self.status = STATUS[self.error]
        self.message = message
        self.errors = errors or {}
        self.details = details
        self.headers = headers or {}

    @classmethod
    def from_result(cls, error: dict[str, Any]) -> ApiError:
        """From the ``error`` object of a failed page result (see crawler.exceptions)."""
        code = error.get("error") or ErrorCode.FETCH_FAILED
        return cls(code if code in STATUS else ErrorCode.FETCH_FAILED,
                   error.get("message") or code, details=error.get("details"))


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
    code = DEFAULT_CODE.get(
        status, ErrorCode.INTERNAL_ERROR if status >= 500 else ErrorCode.BAD_REQUEST)
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
    if status == 413:
        message = (f"The request body is larger than the limit of "
                   f"{request.max_content_length} bytes.")
    api_error = ApiError(code, message, errors=errors)
    api_error.status = status
    if status == 405 and exc.get_headers():
        api_error.headers = {k: v for k, v in exc.get_headers() if k.lower() == "allow"}
    return api_error


def http_error_response(exc: HTTPException):
    """The answer to werkzeug's and webargs' HTTP exceptions (routing, 405, 422 of webargs…);
    flask-smorest's handler for them calls this (see ``api.factory.WebdataApi``)."""
    return error_response(_from_http(exc))


def register(app: Flask) -> None:
    """Install the handlers of our errors and of unexpected exceptions.

    HTTPException is flask-smorest's to handle (its handler answers with
    :func:`http_error_response`); Flask picks the most specific handler, so an HTTPException
    never reaches the catch-all below.
    """
    app.register_error_handler(ApiError, error_response)

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception):
        return error_response(unexpected(exc))


def unexpected(exc: Exception) -> ApiError:
    """The error an unexpected exception is answered with, logged: a database that cannot
    serve is a 503 (not a bug of ours), anything else a 500 with its traceback in the log.
    The API's JSON and the console's pages both answer with it."""
    if unavailable(exc):  # locked, read-only, full or down
        logger.error("Database unavailable in request %s: %s", g.get("request_id"),
                     getattr(exc, "orig", exc))
        return ApiError("unavailable", "The database is unavailable; try again shortly.")
    logger.exception("Unhandled error in request %s", g.get("request_id"))
    return ApiError("internal_error", "Something went wrong on our side; nothing was charged.")
