"""An MCP server of the web-data API, built on the official ``mcp`` SDK's ``MCPServer``.

Its tools come from the deployment's OpenAPI document: every operation that carries
``x-mcp-tools`` (declared with the operation, :mod:`core.agent_tools`) is one tool per entry,
whose input schema is the operation's request schema (less the fields the tool sets), and
whose description is the operation's with its price; ``collection_status`` and
``collection_results`` read a collection back. A call is the same HTTP request a client would
make (:class:`Caller`): same credits, history line (channel ``mcp``), limits and
``Idempotency-Key`` rules. An API error is a tool error starting with the API's ``error``
code, so an agent can tell ``insufficient_credits`` from ``robots_disallowed``.

Two transports use it: stdio (``webdata mcp``, :func:`serve_stdio`, for desktop agents: it
talks to a running deployment over HTTP) and streamable HTTP, served by the API itself at
``/api/service/v1/mcp`` (:mod:`api.mcp`).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool

#: The header that marks a request as an MCP tool call (its line of history says ``mcp``).
CHANNEL_HEADER = "Webdata-Channel"
#: Characters of a tool's answer at most, by default (``MCP_MAX_RESULT_CHARS``).
MAX_RESULT_CHARS = 100_000
#: Results a ``collection_results`` call reads at most.
RESULTS_LIMIT = 20
#: The OpenAPI extension an operation's tools are declared in (as ``core.agent_tools``
#: names it: the client imports nothing of the platform).
EXTENSION = "x-mcp-tools"


@dataclass(frozen=True)
class Answer:
    """An API answer: its HTTP status and its JSON."""

    status: int
    body: Any


#: Sends one API request: method, path under the base path, JSON body, query, the caller's
#: ``Authorization`` (None: the caller's own), ``Idempotency-Key``.
Caller = Callable[[str, str, Any, dict[str, Any] | None, str | None, str | None], Answer]
#: A caller awaited (:func:`_threaded`).
AsyncCaller = Callable[[str, str, Any, dict[str, Any] | None, str | None, str | None],
                       Awaitable[Answer]]


def _threaded(call: Caller, threads: int | None) -> AsyncCaller:
    """``call`` on a thread of a pool of ``threads`` (made in the server's event loop, at
    the first call)."""
    limiter: list[anyio.CapacityLimiter] = []

    async def threaded(*arguments: Any) -> Answer:
        if threads and not limiter:
            limiter.append(anyio.CapacityLimiter(threads))
        return await anyio.to_thread.run_sync(call, *arguments,
                                              limiter=limiter[0] if limiter else None)

    return threaded


def build(spec: dict[str, Any], call: Caller, *, base_path: str,
          max_chars: int = MAX_RESULT_CHARS, name: str = "webdata",
          threads: int | None = None) -> MCPServer:
    """The MCP server of the API that ``spec`` documents, sending its calls with ``call``
    (blocking: on at most ``threads`` threads at once; None: anyio's default, 40)."""
    call = _threaded(call, threads)
    tools = [_operation_tool(spec, path.removeprefix(base_path), operation, entry, call,
                             max_chars)
             for path, methods in spec["paths"].items() for operation in methods.values()
             if isinstance(operation, dict) for entry in operation.get(EXTENSION, ())]
    tools += _collection_tools(call, max_chars)
    return MCPServer(name, instructions=(
        "Web pages as clean data: scrape a page (markdown), map a site's URLs, search the "
        "web, news and videos, read contacts, products and video metadata, and crawl a site "
        "or fetch a batch of URLs in the background (then collection_status, "
        "collection_results). Each tool says what it costs in credits."), tools=tools)


def _operation_tool(spec: dict[str, Any], path: str, operation: dict[str, Any],
                    entry: dict[str, Any], call: AsyncCaller, max_chars: int) -> Tool:
    """The tool ``entry`` (of its ``x-mcp-tools``) of the POST ``operation`` at ``path``."""
    schema = _request_schema(spec, operation)
    hidden = set(entry.get("hidden") or ()) | set(entry.get("fixed") or {})
    properties = {name: value for name, value in schema.get("properties", {}).items()
                  if name not in hidden}
    for name, value in (entry.get("defaults") or {}).items():
        if name in properties:
            properties[name] = {**properties[name], "default": value}
    properties["idempotency_key"] = {
        "type": "string", "maxLength": 255, "description":
        "Optional: the same key and arguments within 24 hours run once (a retry after a lost "
        "answer gets the first answer, nothing charged twice)."}
    required = [name for name in (*schema.get("required", ()), *(entry.get("required") or ()))
                if name in properties]

    async def run(ctx: Context, **arguments: Any) -> str:
        key = arguments.pop("idempotency_key", None)
        body = {name: value for name, value in arguments.items() if value is not None}
        if all(body.get(name, value) == value
               for name, value in (entry.get("defaults_with") or {}).items()):
            body = {**(entry.get("defaults") or {}), **body}
        answer = await _sent(call, "POST", path, {**body, **(entry.get("fixed") or {})},
                             None, _authorization(ctx), key)
        return _fit(answer, max_chars)

    description = (f"{operation.get('summary') or operation.get('operationId')} "
                   f"Costs {entry.get('price')}.\n\n{operation.get('description') or ''}")
    return _tool(entry["name"], description.strip(), run, properties, required)


def _collection_tools(call: AsyncCaller, max_chars: int) -> list[Tool]:
    """``collection_status`` and ``collection_results``: free reads of a collection."""

    async def status(ctx: Context, collection_id: str) -> str:
        return _fit(await _sent(call, "GET", f"/collections/{_segment(collection_id)}", None,
                                None, _authorization(ctx), None), max_chars)

    async def results(ctx: Context, collection_id: str, cursor: str | None = None,
                      limit: int = 5) -> str:
        query = {"limit": max(1, min(int(limit), RESULTS_LIMIT)),
                 **({"cursor": cursor} if cursor else {})}
        page = await _sent(call, "GET", f"/collections/{_segment(collection_id)}/results",
                           None, query, _authorization(ctx), None)
        return _markdown(page, max_chars)

    identifier = {"type": "string", "description": "The collection's id (col_…), as crawl "
                                                   "or batch answered."}
    return [
        _tool("collection_status", "A collection's status and progress (free): queued, "
              "running, completed, cancelled or failed; pages done, succeeded, failed and "
              "skipped; credits used.", status, {"collection_id": identifier},
              ["collection_id"]),
        _tool("collection_results", "A collection's page results as markdown (free), in the "
              "order they were stored, `limit` at a time (at most 20): pass the `cursor` the "
              "answer ends with for the next ones.", results, {
                  "collection_id": identifier,
                  "cursor": {"type": "string", "description": "From the previous answer."},
                  "limit": {"type": "integer", "minimum": 1, "maximum": RESULTS_LIMIT,
                            "default": 5}}, ["collection_id"]),
    ]


def _tool(name: str, description: str, run: Callable[..., Awaitable[str]],
          properties: dict[str, Any], required: list[str]) -> Tool:
    """A tool whose input schema is ``properties`` as given (the API checks the values and
    answers what is wrong): the function takes each as a keyword argument."""
    names = [param for param in inspect.signature(run).parameters if param != "ctx"]
    if names == ["arguments"]:  # an operation's: one keyword argument per property
        parameters = [inspect.Parameter(prop, inspect.Parameter.KEYWORD_ONLY,
                                        default=inspect.Parameter.empty if prop in required
                                        else None, annotation=Any) for prop in properties]
        run.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
            inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                              annotation=Context), *parameters])
        run.__annotations__ = {"ctx": Context, **{prop: Any for prop in properties},
                               "return": str}
    tool = Tool.from_function(run, name=name, description=description)
    schema = {"type": "object", "properties": properties, "additionalProperties": False,
              **({"required": required} if required else {})}
    return tool.model_copy(update={"parameters": schema})


def _request_schema(spec: dict[str, Any], operation: dict[str, Any]) -> dict[str, Any]:
    """The operation's JSON body schema, its references resolved."""
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    return _resolved(spec, body, depth=0)


def _resolved(spec: dict[str, Any], schema: Any, depth: int) -> Any:
    if depth > 8:  # a recursive schema: an object, as far as the tool's input says
        return {"type": "object"}
    if isinstance(schema, dict):
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[-1]
            return _resolved(spec, spec["components"]["schemas"][name], depth + 1)
        return {key: _resolved(spec, value, depth) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_resolved(spec, value, depth) for value in schema]
    return schema


def _authorization(ctx: Context) -> str | None:
    """The ``Authorization`` of the HTTP request carrying the call (None over stdio)."""
    try:
        request = ctx.request_context.request
    except ValueError:
        return None
    headers = getattr(request, "headers", None)
    return headers.get("authorization") if headers is not None else None


async def _sent(call: AsyncCaller, method: str, path: str, body: Any,
                query: dict[str, Any] | None, authorization: str | None, key: str | None
                ) -> Any:
    """The API's answer, or a tool error ``<error code>: <message>``."""
    answer = await call(method, path, body, query, authorization, key)
    if answer.status >= 400:
        error = answer.body if isinstance(answer.body, dict) else {}
        details = {name: error[name] for name in ("errors", "details") if error.get(name)}
        raise ToolError(f"{error.get('error', answer.status)}: {error.get('message', '')}"
                        + (f" {json.dumps(details, ensure_ascii=False)}" if details else ""))
    return answer.body


def _segment(value: str) -> str:
    if not value or "/" in value or "?" in value or "#" in value or value in (".", ".."):
        raise ToolError("validation_error: not a collection id (col_…).")
    return value


def _fit(answer: Any, max_chars: int) -> str:
    """``answer`` as JSON of at most ``max_chars`` characters: its longest texts and lists cut
    first (to what fits, found by halving), with ``truncated`` saying what was cut and how to
    get the rest."""
    text = _json(answer)
    if len(text) <= max_chars or not isinstance(answer, dict):
        return text if len(text) <= max_chars else _json({"truncated": (
            f"The answer ({len(text)} characters) does not fit in {max_chars}.")})
    cut: dict[str, Any] = {"truncated": ""}
    cut.update(answer)
    notes: list[str] = []
    room = max_chars - 600  # the note's own length
    largest = [name for name in sorted(answer, key=lambda key: -len(_json(answer[key])))
               if isinstance(answer[name], str | list) and answer[name]]
    for place, name in enumerate(largest):
        if len(_json(cut)) <= room:
            break
        value = answer[name]
        if len(_json({**cut, name: value[:0]})) <= room:  # the others fit: this one takes the rest
            keep = _most(lambda size, value=value, name=name: len(_json(
                {**cut, name: value[:size]})) <= room, len(value))
        else:  # the others are too large too: an equal share each of what is left
            share = room // (len(largest) - place)
            keep = _most(lambda size, value=value, share=share: len(_json(value[:size])) <= share,
                         len(value))
        cut[name] = value[:keep]
        unit = "characters" if isinstance(value, str) else "entries"
        notes.append(f"{name}: the first {keep} of {len(value)} {unit}")
    cut["truncated"] = ("This answer was cut to fit: " + "; ".join(notes) + ". Ask for less "
                        "(include_selectors, a smaller limit) or run a collection and page "
                        "through collection_results.")
    return _json(cut)


def _most(fits: Callable[[int], bool], size: int) -> int:
    """The largest ``n`` in ``0..size`` with ``fits(n)`` (``fits`` true up to some point)."""
    low, high = 0, size
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if fits(middle) else (low, middle - 1)
    return low


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1)


def _markdown(page: dict[str, Any], max_chars: int) -> str:
    """A results page for a reader: each page's URL, status and content, then the cursor."""
    results = page.get("results") or []
    share = max(500, max_chars // max(1, len(results)) - 200)
    parts = []
    for result in results:
        data = result.get("data") or {}
        content = (data.get("markdown") or data.get("text")
                   or (json.dumps(data, ensure_ascii=False, indent=1) if data else ""))
        if result.get("status") != "succeeded":
            content = json.dumps(result.get("error"), ensure_ascii=False)
        if len(content) > share:
            content = (content[:share] + f"\n\n[cut: the first {share} of {len(content)} "
                       "characters; scrape the page for all of it]")
        title = data.get("title") if isinstance(data, dict) else None
        parts.append(f"## {title or result.get('url')}\n\n{result.get('url')} · "
                     f"{result.get('status')}\n\n{content}")
    cursor = page.get("next_cursor")
    parts.append(f"next_cursor: {cursor}" if cursor else
                 "No more results (the collection is final and every result was read).")
    return "\n\n".join(parts)[:max_chars] if results else parts[-1]


def serve_stdio(api_url: str, api_key: str, *, max_chars: int = MAX_RESULT_CHARS) -> None:
    """``webdata mcp``: the tools of the deployment at ``api_url``, over stdio, as the
    account of ``api_key``."""
    import requests

    from client.http import BASE_PATH

    root = api_url.rstrip("/")
    root = root if root.endswith(BASE_PATH) else root + BASE_PATH
    session = requests.Session()
    session.headers.update({"Authorization": f"Bearer {api_key}", CHANNEL_HEADER: "mcp",
                            "User-Agent": "webdata-mcp/0.1"})

    def call(method: str, path: str, body: Any, query: dict[str, Any] | None,
             authorization: str | None, key: str | None) -> Answer:
        headers = {"Idempotency-Key": key} if key else {}
        response = session.request(method, root + path, json=body, params=query,
                                   headers=headers, timeout=(10, 180))
        try:
            return Answer(response.status_code, response.json())
        except ValueError:
            return Answer(response.status_code, {"error": "not_the_api", "message":
                                                 response.text[:200]})

    spec = session.get(root + "/openapi.json", timeout=(10, 60))
    spec.raise_for_status()
    build(spec.json(), call, base_path=BASE_PATH, max_chars=max_chars).run("stdio")
