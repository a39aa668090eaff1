"""A notes MCP server (stdio) that answers every call with the exact arguments it received, as JSON.

``set_note`` has a nullable ``note`` ("null clears it"); ``search`` an optional, non-nullable
``limit`` with a default. So a test can see what was sent: an argument left out, or ``null``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

_TOOLS = [
    types.Tool(
        name="set_note",
        input_schema={
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "note": {"type": ["string", "null"], "description": "The text; null clears it."},
            },
            "required": ["id"],
        },
    ),
    types.Tool(
        name="search",
        input_schema={
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "default": 10}},
            "required": ["query"],
        },
    ),
]


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=_TOOLS)


async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    received = json.dumps(params.arguments, sort_keys=True)
    return types.CallToolResult(content=[types.TextContent(type="text", text=received)])


async def main() -> None:
    server: Server[Any] = Server("notes", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
