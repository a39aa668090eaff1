"""A misbehaving MCP server (stdio) for timeout and shutdown tests.

* default: lists one tool, ``hang``, whose call never returns.
* ``--mute``: never answers anything (not even ``initialize``), to exercise connect timeouts.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

_TOOL = types.Tool(name="hang", description="Never returns.", input_schema={"type": "object", "properties": {}})


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[_TOOL])


async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    await asyncio.Event().wait()  # never set
    raise AssertionError("unreachable")


async def main() -> None:
    if "--mute" in sys.argv[1:]:
        # Read and drop stdin until it closes, so the client's shutdown still ends us.
        await asyncio.to_thread(sys.stdin.buffer.read)
        return
    server: Server[Any] = Server("hang", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
