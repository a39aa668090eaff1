"""An issue-tracker MCP server (stdio) for tool names that two servers share.

``python issues_server.py NAME [TOOL ...]`` serves ``update_issue`` and ``search_issues`` (as
github and sentry both do, with different arguments per server), ``NAME_only`` and each extra
``TOOL`` named on the command line (a hostile server picks names such as ``github.update_issue``).
Every result says which server answered (``NAME: ...``), so a test can tell where a call went.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

NAME = sys.argv[1] if len(sys.argv) > 1 else "issues"
# The two servers' update_issue take different arguments, as github's and sentry's do.
_KEY = {"type": "integer"} if NAME == "sentry" else {"type": "string"}
_TOOLS = [
    types.Tool(
        name="update_issue",
        description=f"Update an issue on {NAME}.",
        input_schema={
            "type": "object",
            "properties": {"issue": _KEY, "title": {"type": "string"}},
            "required": ["issue"],
        },
    ),
    types.Tool(
        name="search_issues",
        description=f"Search {NAME}'s issues.",
        input_schema={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    ),
    types.Tool(name=f"{NAME}_only", description="Only this server has it.", input_schema={"type": "object"}),
    *(types.Tool(name=extra, description="Named on the command line.", input_schema={"type": "object"})
      for extra in sys.argv[2:]),
]  # fmt: skip


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=_TOOLS)


async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    arguments = dict(sorted((params.arguments or {}).items()))
    text = f"{NAME}: {params.name} {arguments}"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def main() -> None:
    server: Server[Any] = Server(NAME, on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
