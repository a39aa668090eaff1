"""An MCP server (stdio) that answers every call with the arguments and ``_meta`` it received.

``--log PATH`` appends one JSON line per ``tools/call`` that reached it, so a test can prove that
a refused call never left the client. Tool: ``echo`` (any object).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

_TOOLS = [types.Tool(name="echo", description="Echoes its arguments.", input_schema={"type": "object"})]


def _log() -> Path | None:
    args = sys.argv[1:]
    return Path(args[args.index("--log") + 1]) if "--log" in args else None


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=_TOOLS)


async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    # The SDK's own keys (a progress token, io.modelcontextprotocol/...) are left out: only what the caller gave.
    meta = {k: v for k, v in dict(params.meta or {}).items() if k != "progressToken" and "/" not in k}
    received = {"arguments": params.arguments, "meta": meta or None}
    text = json.dumps(received, sort_keys=True)
    log = _log()
    if log is not None:
        with log.open("a", encoding="utf-8") as handle:
            handle.write(text + "\n")
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def main() -> None:
    server: Server[Any] = Server("echo-arguments", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
