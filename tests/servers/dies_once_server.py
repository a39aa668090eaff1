"""A misbehaving MCP server (stdio) that dies in the middle of its first call, to test retries.

``--marker PATH``: the first ``tools/call`` that finds no file at PATH creates it and kills the
process before answering (the client sees the transport close: ``unavailable``). Every later call,
in this process or in the one the client reconnects to, answers normally. The file is how the
"first" survives the restart.

Tools: ``lookup`` (read-only and idempotent: safe to retry) and ``append`` (not idempotent).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

_OBJECT = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}
_OUTPUT = {
    "type": "object",
    "properties": {"key": {"type": "string"}, "pid": {"type": "integer"}},
    "required": ["key", "pid"],
}
_TOOLS = [
    types.Tool(
        name="lookup",
        description="Looks a key up.",
        input_schema=_OBJECT,
        output_schema=_OUTPUT,
        annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True),
    ),
    types.Tool(
        name="append",
        description="Appends a key.",
        input_schema=_OBJECT,
        output_schema=_OUTPUT,
        annotations=types.ToolAnnotations(read_only_hint=False, idempotent_hint=False, destructive_hint=False),
    ),
]


def _marker() -> Path:
    args = sys.argv[1:]
    return Path(args[args.index("--marker") + 1])


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=_TOOLS)


async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    marker = _marker()
    if not marker.exists():
        marker.write_text("died once\n", encoding="utf-8")
        os._exit(3)  # no answer, no clean shutdown: as a crash looks to the client
    data = {"key": str((params.arguments or {}).get("key")), "pid": os.getpid()}
    return types.CallToolResult(content=[types.TextContent(type="text", text=str(data))], structured_content=data)


async def main() -> None:
    server: Server[Any] = Server("dies-once", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
