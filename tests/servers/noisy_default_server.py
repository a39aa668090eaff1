"""A server whose listing changes at every start, as mcp-atlassian's does: it rebuilds a default
value (a list) in another order, and its ``required`` too. ``python noisy_default_server.py N``
serves the N-th order (N = 0, 1, ...), so a test can start it "again" deterministically.

``search(query, fields, limit)``: ``fields`` defaults to a list whose order is the noise;
``required`` lists ``query`` and ``limit`` in another order from N = 4 on (4: only ``required`` moved).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

START = int(sys.argv[1]) if len(sys.argv) > 1 else 0
FIELDS = ["summary", "status", "assignee", "labels"]
_DEFAULT = FIELDS[START % len(FIELDS) :] + FIELDS[: START % len(FIELDS)]  # rotated: same set, other order
_REQUIRED = ["query", "limit"] if START // 4 % 2 == 0 else ["limit", "query"]  # 4: same default
_TOOL = types.Tool(
    name="search",
    description="Search issues.",
    input_schema={
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer"},
            "fields": {"type": "array", "items": {"type": "string"}, "default": _DEFAULT},
        },
        "required": _REQUIRED,
    },
)


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[_TOOL])


async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"searched (start {START})")])


async def main() -> None:
    server: Server[Any] = Server("noisy", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
