"""An operation as an agent's tool (the MCP server's: :mod:`client.mcp_server`), declared with
the operation in :mod:`core.operations` and carried to the server by the OpenAPI document
(``x-mcp-tools`` on the operation), so a new operation becomes a tool without editing the
server, and a server on another machine needs nothing but the deployment's document."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: The OpenAPI extension that carries an operation's tools.
EXTENSION = "x-mcp-tools"
#: The request header that marks a tool call of the MCP server (its line of history says
#: ``channel: "mcp"``).
CHANNEL_HEADER = "Webdata-Channel"


@dataclass(frozen=True)
class AgentTool:
    """One tool of an operation: its ``name``; the body fields it sets itself (``fixed``:
    a crawl's ``mode``) and leaves out of its input (``hidden``: a crawl has no ``urls``);
    ``defaults`` for agents (markdown rather than text), applied only when the arguments given
    match ``defaults_with`` (``{"extract": "page"}``, an absent argument matching);
    ``required``: what its input requires besides what the operation's schema does (a
    crawl's ``url``)."""

    name: str
    fixed: dict[str, Any] = field(default_factory=dict)
    hidden: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    defaults: dict[str, Any] = field(default_factory=dict)
    defaults_with: dict[str, Any] = field(default_factory=dict)

    def document(self, price: str) -> dict[str, Any]:
        """What the OpenAPI document says of it (``price``: the operation's, in words)."""
        return {"name": self.name, "price": price, "fixed": self.fixed,
                "hidden": list(self.hidden), "required": list(self.required),
                "defaults": self.defaults,
                "defaults_with": self.defaults_with}


#: What agents read best: the content as markdown (``formats`` of a page).
MARKDOWN = {"formats": ["markdown"]}
