"""The MCP server over streamable HTTP, served by the API at ``/api/service/v1/mcp``.

The caller's ``Authorization: Bearer`` key is the account: no key, no tools (401, as any
route). Every MCP message counts once against the account's rate limit, at the door
(:func:`_authenticate`). The server is :func:`client.mcp_server.build`'s, its tools made from
this app's OpenAPI document; a tool call is one request through this very app, in-process
(:func:`_caller`), with the caller's key and ``Webdata-Channel: mcp``: its credits, history
line, requests in flight and ``Idempotency-Key`` are an HTTP request's (its rate was counted
at the door: ``api.auth.COUNTED``). Tool calls run on up to ``API_THREADS`` threads of this
process, as many as its requests: one account's calls never wait for another's.

The SDK's transport is an ASGI app; it runs (stateless, JSON answers) on an event loop thread
of this process, started at the first MCP request (a process that never serves one never
imports the SDK), and each request reaches it through ``a2wsgi``.
"""

from __future__ import annotations

import asyncio
import io
import json
import threading
from typing import Any

from flask import Blueprint, Flask, Response, current_app, request
from werkzeug.test import Client

from api import auth
from api.extensions import limiter
from api.openapi import BASE_PATH
from core.agent_tools import CHANNEL_HEADER

#: Where it is served.
PATH = f"{BASE_PATH}/mcp"

blp = Blueprint("mcp", __name__)


@blp.before_request
def _authenticate() -> None:
    """The key and the rate limit, as every route checks them."""
    limiter().check(auth.principal())


@blp.route(PATH, methods=["POST"])
def mcp() -> Response:
    """One MCP message, answered as JSON. Stateless: no ``GET`` stream (it would hold one of
    the API's threads for as long as a client keeps it open) and no session to ``DELETE``:
    both are 405."""
    body = request.get_data()
    environ = {**request.environ, "wsgi.input": io.BytesIO(body),
               "CONTENT_LENGTH": str(len(body))}
    return Response.from_app(_transport(current_app._get_current_object()), environ)


_lock = threading.Lock()


def _transport(app: Flask) -> Any:
    """This process's transport (a WSGI app), made at the first call."""
    with _lock:
        transport = app.extensions.get("webdata.mcp")
        if transport is None:
            transport = app.extensions["webdata.mcp"] = _start(app)
    return transport


def _start(app: Flask) -> Any:
    """Build the server from the app's OpenAPI document, run its transport's lifespan on a
    loop thread of its own, and wrap it for WSGI."""
    from a2wsgi import ASGIMiddleware
    from mcp.server.transport_security import TransportSecuritySettings

    from client.mcp_server import build

    config = app.config["WEBDATA"]
    spec = json.loads(Client(app).get(f"{BASE_PATH}/openapi.json").get_data())
    server = build(spec, _caller(app), base_path=BASE_PATH,
                   max_chars=config.api.mcp_max_result_chars,
                   threads=config.launch.api_threads)
    asgi = server.streamable_http_app(
        streamable_http_path=PATH, stateless_http=True, json_response=True,
        max_request_body_size=config.api.max_body_bytes,
        # keys, not the browser's origin, decide who calls: no DNS-rebinding guard needed
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    loop = asyncio.new_event_loop()
    started = threading.Event()

    async def lifespan() -> None:
        async with asgi.router.lifespan_context(asgi):
            started.set()
            await asyncio.Event().wait()  # as long as the process

    threading.Thread(target=loop.run_forever, name="mcp-transport", daemon=True).start()
    asyncio.run_coroutine_threadsafe(lifespan(), loop)
    started.wait(timeout=30)
    return ASGIMiddleware(asgi, loop=loop)


def _caller(app: Flask) -> Any:
    """A tool call's request: through ``app`` in-process, as its caller's."""
    from client.mcp_server import Answer

    def call(method: str, path: str, body: Any, query: dict[str, Any] | None,
             authorization: str | None, key: str | None) -> Answer:
        headers = {CHANNEL_HEADER: "mcp", "Authorization": authorization or "",
                   **({"Idempotency-Key": key} if key else {})}
        answer = Client(app).open(BASE_PATH + path, method=method, json=body,
                                  query_string=query, headers=headers,
                                  environ_overrides={auth.COUNTED: True})
        try:
            return Answer(answer.status_code, json.loads(answer.get_data()))
        finally:
            answer.close()

    return call


def register(app: Flask) -> None:
    app.register_blueprint(blp)

