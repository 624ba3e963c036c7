"""The Flask app of the HTTP API: :func:`create_app` (``api:create_app()``, ``flask --app api``)."""

from __future__ import annotations

import logging
from urllib.parse import urlsplit, urlunsplit

from flask import Flask, current_app, g, request
from flask_smorest import Api
from werkzeug.exceptions import HTTPException

from api import errors, idempotency, openapi, swagger_ui
from api.gunicorn_logger import ACCOUNT_ENVIRON
from api.headers import NOSNIFF, REQUEST_ID, new_request_id
from api.limits import AccountRateLimiter, rate_limit_headers
from api.openapi import BASE_PATH
from api.operations import history_claimed, request_charge
from api.schemas.errors import ErrorSchema
from api.schemas.fields import StorableText
from api.search import Search
from core.agent_tools import CHANNEL_HEADER
from core.config import Config, ConfigError, exit_with, load_or_exit
from core.logformat import LOG_CONTEXT
from core.operations import BY_PATH
from core.policy import SourcePolicy
from storage import ledger
from storage.db import Database
from storage.models import CHANNEL
from worker.queues import redis_connection

logger = logging.getLogger(__name__)

class WebdataApi(Api):
    """flask-smorest's Api, its documented error hook answering with ``api.errors``' shape.

    ``handle_http_exception`` is the method flask-smorest registers for HTTPException (its API
    reference documents overriding it); our other handlers are added by ``errors.register``.
    No catch-all ``default`` response is documented: each operation lists its own statuses,
    so a client (and schemathesis) can tell an undocumented answer.
    """

    ERROR_SCHEMA = ErrorSchema
    DEFAULT_ERROR_RESPONSE_NAME = None

    def handle_http_exception(self, error):
        return errors.http_error_response(error)


def _begin_request() -> None:
    g.request_id = new_request_id()
    g.channel = CHANNEL.set(_channel())
    g.log_context = LOG_CONTEXT.set({"request_id": g.request_id})


def _channel() -> str:
    """How the request came: ``mcp`` (a tool call of the MCP server: ``api.mcp``,
    ``webdata mcp``), ``console``, else ``api``."""
    if request.headers.get(CHANNEL_HEADER, "").strip().lower() == "mcp":
        return "mcp"
    return "console" if request.blueprint == "console" else "api"


def _end_request(_: BaseException | None) -> None:
    for variable, name in ((CHANNEL, "channel"), (LOG_CONTEXT, "log_context")):
        token = g.pop(name, None)
        if token is not None:
            variable.reset(token)


def _finish_request(response):
    response.headers[REQUEST_ID] = g.get("request_id", "")
    if "principal" in g:  # for the access log's line (api.gunicorn_logger)
        request.environ[ACCOUNT_ENVIRON] = g.principal.account_id
    response.headers.update(NOSNIFF)
    for name, value in rate_limit_headers().items():
        response.headers.setdefault(name, value)
    _record_rejected_operation(response)
    return response


def _record_rejected_operation(response) -> None:
    """Put operation requests refused before they ran (400, 422…) in the history too.

    Requests over the rate limit are not written: a client hammering the API must not be able
    to grow the database with each refusal.
    """
    rule = request.url_rule.rule.removeprefix(BASE_PATH) if request.url_rule else None
    operation = BY_PATH.get(rule or "")
    if (request.method != "POST" or operation is None or "principal" not in g
            or history_claimed() or idempotency.replayed()
            or response.status_code < 400 or response.status_code == 429):
        return
    body = _json_body()
    url = redact_url(body.get("url")) if isinstance(body, dict) else None
    charge = request_charge(operation, url, 0)  # the URL as the history may keep it
    error = (response.get_json(silent=True) or {}).get("error") or str(response.status_code)
    try:
        ledger.record_failure(current_app.extensions["webdata.db"], charge, error)
    except Exception:
        logger.exception("Could not record rejected request %s", g.request_id)


def redact_url(url: object) -> str | None:
    """``url`` for the history, without any ``user:password@`` (such URLs are refused, 422,
    but the refusal is recorded with the URL asked for)."""
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL: nothing to find a password in, but nothing to show either
        return None
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def _json_body() -> object:
    """The request's JSON, or None when it cannot be read: this runs after the answer, also
    for a body that was refused for its size (werkzeug raises 413 again) or its depth."""
    try:
        return request.get_json(silent=True)
    except (HTTPException, RecursionError):
        return None


def create_app(config: Config | None = None) -> Flask:
    from_environment = config is None
    config = config or load_or_exit()
    app = Flask("api")  # its logger's name, as before the factory had a module of its own
    app.json.sort_keys = False  # keep the contract's field order (request_id first)
    app.config.update(
        WEBDATA=config,
        MAX_CONTENT_LENGTH=config.api.max_body_bytes,
        API_TITLE="Web data platform",
        API_VERSION="v1",
        OPENAPI_VERSION="3.1.0",
        OPENAPI_URL_PREFIX=BASE_PATH,
        OPENAPI_JSON_PATH="openapi.json",  # the docs page is ours: api/swagger_ui.py
        API_SPEC_OPTIONS={
            "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
            "security": [{"bearer": []}],
            "info": {"description": "Public web pages to clean data. The contract: docs/api.md "
                                    "in the repository."},
        },
    )
    storage = config.storage
    app.extensions["webdata.db"] = Database(storage.database_url, storage.database_timeout)
    app.extensions["webdata.redis"] = redis_connection(storage.redis_url, storage.redis_timeout)
    app.extensions["webdata.limiter"] = AccountRateLimiter(storage.redis_url,
                                                           storage.redis_timeout)
    app.extensions["webdata.policy"] = SourcePolicy.from_config(config.policy)
    # Built once: each provider keeps a connection pool for every request thread to share.
    try:
        app.extensions["webdata.search"] = Search.from_config(config.search, config.video)
    except ConfigError as exc:  # a provider named but not configured: a variable's fault
        if from_environment:
            exit_with(exc)
        raise
    # every path parameter refuses what the database cannot store, before any rule exists
    app.url_map.converters["default"] = app.url_map.converters["string"] = StorableText
    app.before_request(_begin_request)
    app.after_request(_finish_request)
    app.teardown_request(_end_request)

    api = WebdataApi(app, spec_kwargs={"extra_plugins": [idempotency.IdempotencyDocs(),
                                                         openapi.QueryParameters()]})
    errors.register(app)
    swagger_ui.register(app, BASE_PATH)
    openapi.register_components(api.spec)
    from api.resources import (
        account,
        collection_routes,
        exports,
        extraction,
        health,
        monitors,
        search,
    )

    for blueprint in (health.blp, account.blp, extraction.blp, search.blp, collection_routes.blp,
                      exports.blp, monitors.blp):
        api.register_blueprint(blueprint)
    openapi.drop_framework_schemas(api.spec)
    from api import console, mcp, metrics

    console.register(app)
    mcp.register(app)
    metrics.register(app)

    from api.cli import register_cli

    register_cli(app)
    return app
