"""The MCP server, driven by the official SDK's own client over both transports: streamable
HTTP served by the API (``/api/service/v1/mcp``) and stdio (``webdata mcp`` against the stack
over HTTP). Its tools are the operations' (one per operation, made from the OpenAPI document),
a call is the HTTP request (same credits, a history line of channel ``mcp``), and an API error
is a tool error that starts with the API's code."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from client import mcp_server
from core.agent_tools import CHANNEL_HEADER, EXTENSION
from tests.conftest import ROOT, Customer, new_customer
from tests.support.collection_stack import wait_final

TOOLS = {"scrape", "contacts", "products", "video_metadata", "map", "search", "search_news",
         "search_videos", "crawl", "batch", "collection_status", "collection_results"}


def over_http(service: str, key: str | None) -> Any:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return Client(streamable_http_client(f"{service}/api/service/v1/mcp",
                                         http_client=httpx2.AsyncClient(headers=headers,
                                                                        timeout=120)))


def run(session: Any, work: Callable[[Any], Awaitable[Any]]) -> Any:
    """``work(client)`` inside the client's session."""
    async def main() -> Any:
        async with session as client:
            return await work(client)
    return asyncio.run(main())


def text(result: Any) -> str:
    return "".join(part.text for part in result.content)


def test_every_operation_is_a_tool_with_its_request_schema_and_price(stack, service):
    who = new_customer(stack.app, credits=10)
    tools = {tool.name: tool for tool in run(over_http(service, who.key),
                                             lambda client: client.list_tools()).tools}
    assert set(tools) == TOOLS
    scrape = tools["scrape"].input_schema
    assert scrape["required"] == ["url"] and scrape["properties"]["formats"]["default"] == [
        "markdown"]
    assert scrape["properties"]["formats"]["items"]["enum"] == ["text", "markdown", "html",
                                                                "raw_html"]
    assert "Costs 1 credit on success" in tools["scrape"].description
    assert "Costs 5 credits" in tools["search_news"].description
    crawl = tools["crawl"].input_schema
    assert crawl["required"] == ["url"] and "urls" not in crawl["properties"]
    assert "mode" not in crawl["properties"] and "max_pages" in crawl["properties"]
    assert "url" not in tools["batch"].input_schema["properties"]


def test_a_tool_call_is_the_http_request(stack, service, site):
    who = new_customer(stack.app, credits=3)

    async def work(client: Any) -> list[Any]:
        page = await client.call_tool("scrape", {"url": f"{site}/article"})
        refused = await client.call_tool("scrape", {"url": "http://10.0.0.1/"})
        bad = await client.call_tool("scrape", {"url": f"{site}/article",
                                                "formats": ["pdf"]})
        return [page, refused, bad]

    page, refused, bad = run(over_http(service, who.key), work)
    assert not page.is_error
    answer = json.loads(text(page))
    assert answer["markdown"] and answer["text"] is None and answer["credits_used"] == 1
    assert refused.is_error and "source_policy:" in text(refused)
    assert bad.is_error and "validation_error:" in text(bad) and "formats" in text(bad)
    assert who.balance() == 2
    assert who.post("/account/webhook-secret", None).status_code == 200  # plain HTTP: api
    lines = who.activity()[1:]
    assert who.activity()[0]["channel"] == "api"
    assert [(line["operation"], line["status"], line["channel"]) for line in lines[:3]] == [
        ("scrape", "failed", "mcp"), ("scrape", "failed", "mcp"),
        ("scrape", "succeeded", "mcp")]


def test_without_credits_or_without_a_key(stack, service, site):
    broke = new_customer(stack.app, credits=0)
    result = run(over_http(service, broke.key),
                 lambda client: client.call_tool("scrape", {"url": f"{site}/article"}))
    assert result.is_error and text(result).startswith(
        "Error executing tool scrape: insufficient_credits:")
    answer = httpx2.post(f"{service}/api/service/v1/mcp", json={
        "jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers={
        "Accept": "application/json, text/event-stream"})
    assert answer.status_code == 401 and answer.json()["error"] == "unauthorized"
    who = new_customer(stack.app, credits=1)
    auth = {"Authorization": f"Bearer {who.key}",
            "Accept": "application/json, text/event-stream"}
    stream = httpx2.get(f"{service}/api/service/v1/mcp", headers=auth)
    assert stream.status_code == 405  # stateless: no stream held open for anyone
    huge = httpx2.post(f"{service}/api/service/v1/mcp", headers=auth, json={
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "scrape", "arguments": {"url": "x" * 2_000_000}}})
    assert huge.status_code == 413 and huge.json()["error"] == "body_too_large"
    assert who.balance() == 1


def test_a_batch_then_its_status_and_results_as_markdown(stack, service, site):
    """A batch (three pages, whatever the machine's load: a crawl's count depends on its
    site's robots.txt being read in time), read back page by page."""
    who = new_customer(stack.app, credits=20, plan="standard")

    async def start(client: Any) -> Any:
        return await client.call_tool("batch", {"urls": [
            f"{site}/article", f"{site}/contact", f"{site}/product"]})

    started = json.loads(text(run(over_http(service, who.key), start)))
    assert started["status"] in ("queued", "running")
    wait_final(who, started["id"])

    async def read(client: Any) -> list[Any]:
        status = await client.call_tool("collection_status", {"collection_id": started["id"]})
        first = await client.call_tool("collection_results", {"collection_id": started["id"],
                                                              "limit": 2})
        cursor = text(first).rsplit("next_cursor: ", 1)[-1].strip()
        rest = await client.call_tool("collection_results", {"collection_id": started["id"],
                                                             "cursor": cursor})
        missing = await client.call_tool("collection_status", {"collection_id": "col_nope"})
        return [status, first, rest, missing]

    status, first, rest, missing = run(over_http(service, who.key), read)
    assert json.loads(text(status))["progress"]["succeeded"] == 3
    assert text(first).count("\n## ") + text(first).startswith("## ") == 2
    assert "next_cursor: " in text(first)
    assert text(rest).count("## ") == 1 and "No more results" in text(rest)
    assert "# " in text(first)  # markdown of the pages (extract page, markdown by default)
    assert missing.is_error and "not_found:" in text(missing)
    assert who.balance() == 17


def test_the_server_spells_the_platforms_names():
    """The client imports nothing of the platform: its copies of the names must agree."""
    assert (mcp_server.CHANNEL_HEADER, mcp_server.EXTENSION) == (CHANNEL_HEADER, EXTENSION)


def test_a_long_answer_is_cut_saying_how_to_get_the_rest():
    fit = mcp_server._fit
    links = {"url": "u", "links": [{"url": f"/é{n}", "text": "ü" * 10} for n in range(5000)]}
    text = fit(links, 100_000)
    cut = json.loads(text)  # valid JSON, whatever its characters
    assert 90_000 < len(text) <= 100_000  # the budget used, not a tenth of it
    assert "links: the first" in cut["truncated"] and 1000 < len(cut["links"]) < 5000
    both = {"url": "u", "markdown": "x" * 500_000,
            "links": [{"url": str(n)} for n in range(20_000)]}
    cut = json.loads(fit(both, 100_000))
    assert cut["markdown"] and cut["links"]  # each keeps a share
    assert "markdown: the first" in cut["truncated"] and "links: the first" in cut["truncated"]
    small = {"url": "u", "markdown": "short"}
    assert json.loads(fit(small, 100_000)) == small  # nothing cut, nothing said


@pytest.mark.parametrize("transport", ["stdio"])
def test_webdata_mcp_over_stdio(stack, service, site, transport, tmp_path):
    who: Customer = new_customer(stack.app, credits=2)
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "client", "mcp"], cwd=str(ROOT),
        env={"PYTHONPATH": str(ROOT), "WEBDATA_API_URL": service, "WEBDATA_API_KEY": who.key,
             "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})

    async def work(client: Any) -> list[Any]:
        tools = await client.list_tools()
        page = await client.call_tool("scrape", {"url": f"{site}/article"})
        broke = await client.call_tool("map", {"url": f"{site}/site/"})
        again = await client.call_tool("scrape", {"url": f"{site}/article"})
        return [tools, page, broke, again]

    tools, page, mapped, again = run(Client(server), work)
    assert {tool.name for tool in tools.tools} == TOOLS
    assert json.loads(text(page))["markdown"]
    assert not mapped.is_error and who.balance() == 0
    assert again.is_error and "insufficient_credits:" in text(again)
    lines = who.activity()
    assert [line["channel"] for line in lines if line["operation"] != "credit_grant"] == [
        "mcp"] * 3
    assert [line["channel"] for line in lines if line["operation"] == "credit_grant"] == [None]


def test_each_tool_answers_as_its_operation(stack, service, site):
    """Every tool called once over HTTP: its operation's answer, or its error code."""
    who = new_customer(stack.app, credits=50, plan="standard")
    calls = {
        "scrape": {"url": f"{site}/article", "formats": ["text"]},
        "contacts": {"url": f"{site}/contact"},
        "products": {"url": f"{site}/product"},
        "video_metadata": {"url": "https://www.youtube.com/watch?v=pUbLiC_vid1"},
        "map": {"url": f"{site}/site/", "limit": 5},
        "search": {"query": "tide tables"},
        "search_news": {"query": "tide tables"},
        "search_videos": {"query": "tide tables"},
        "batch": {"urls": [f"{site}/article"]},
        "crawl": {"url": f"{site}/site/", "max_pages": 1},
    }

    async def work(client: Any) -> dict[str, Any]:
        return {name: await client.call_tool(name, arguments)
                for name, arguments in calls.items()}

    answers = run(over_http(service, who.key), work)
    assert set(answers) | {"collection_status", "collection_results"} == TOOLS
    parsed = {name: json.loads(text(result)) for name, result in answers.items()
              if not result.is_error}
    assert parsed["scrape"]["text"] and parsed["scrape"]["markdown"] is None
    assert parsed["contacts"]["emails"] and parsed["products"]["products"]
    assert parsed["video_metadata"]["video_id"] == "pUbLiC_vid1"
    assert 1 <= len(parsed["map"]["links"]) <= 5
    for search in ("search", "search_news", "search_videos"):  # no provider on this stack
        assert answers[search].is_error and "search_not_configured:" in text(answers[search])
    assert parsed["batch"]["mode"] == "batch" and parsed["crawl"]["mode"] == "crawl"
    for collection in (parsed["batch"], parsed["crawl"]):
        assert wait_final(who, collection["id"])["status"] == "completed"
    assert {line["channel"] for line in who.activity()
            if line["operation"] != "credit_grant"} == {"mcp"}


def test_every_mcp_message_counts_against_the_rate_limit_tool_calls_too(stack, service):
    """A free account has 60 requests a minute: MCP messages are requests, whatever they ask
    (a tool call that fails before any API request included)."""
    who = new_customer(stack.app, credits=1, plan="free")
    headers = {"Authorization": f"Bearer {who.key}",
               "Accept": "application/json, text/event-stream"}
    statuses = []
    with httpx2.Client(headers=headers, timeout=30) as client:
        for number in range(61):
            statuses.append(client.post(f"{service}/api/service/v1/mcp", json={
                "jsonrpc": "2.0", "id": number, "method": "tools/call",
                "params": {"name": "no_such_tool", "arguments": {}}}).status_code)
    assert statuses[:60] == [200] * 60 and statuses[60] == 429
