"""A misbehaving MCP server (stdio) that writes text that is not JSON-RPC to stdout.

* default: prints a start-up banner line, then serves one tool, ``echo``, correctly.
* ``--garbage``: prints the banner and non-JSON lines, and never speaks JSON-RPC at all.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

_TOOL = types.Tool(
    name="echo",
    description="Echo the text.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[_TOOL])


async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    text = str((params.arguments or {}).get("text", ""))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def main() -> None:
    print("Banner Server v1.0 starting... (this line is not JSON-RPC)", flush=True)
    if "--garbage" in sys.argv[1:]:
        print("Listening on stdio. Type 'help' for help.", flush=True)
        await asyncio.to_thread(sys.stdin.buffer.read)  # until the client closes stdin
        return
    server: Server[Any] = Server("banner", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
