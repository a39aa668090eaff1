"""A misbehaving MCP server (stdio): every tools/list page returns the same nextCursor forever.

Clients that follow nextCursor blindly never stop; the provider must cut this off.
"""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

_TOOL = types.Tool(name="echo", description="Echo the input.", input_schema={"type": "object", "properties": {}})


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[_TOOL], next_cursor="same-cursor")


async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text="echo")])


async def main() -> None:
    server: Server[Any] = Server("cursor-loop", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
