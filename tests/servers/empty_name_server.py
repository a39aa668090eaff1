"""A misbehaving MCP server (stdio) whose listing has a tool with an empty name beside a good one."""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

_EMPTY = {"type": "object", "properties": {}}
_TOOLS = [types.Tool(name="fine", input_schema=_EMPTY), types.Tool(name="", input_schema=_EMPTY)]


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=_TOOLS)


async def main() -> None:
    server: Server[Any] = Server("empty-name", on_list_tools=list_tools)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
