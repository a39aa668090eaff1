"""A misbehaving MCP server (stdio) whose tools/list cursors never end.

* default: every page returns the same nextCursor, ``same-cursor``, forever;
* ``--cycle N``: the cursors go round a cycle of N, ``c1`` -> ``c2`` -> ... -> ``cN`` -> ``c1``;
* ``--hang-page-2``: page 1 returns cursor ``c1``; asked for it the first time, the server never
  answers (later, page 2 is the last, empty).
* ``--slow-pages S``: every page comes S seconds late, always with a new cursor (``p1``, ``p2``,
  ...): each page in time, the listing as a whole never done.

Clients that follow nextCursor blindly never stop; the provider must cut this off.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

_CYCLE = int(sys.argv[sys.argv.index("--cycle") + 1]) if "--cycle" in sys.argv else 0
#: The cursors of page-2 requests left unanswered (``--hang-page-2``).
_HUNG: list[str] = []
_TOOL = types.Tool(name="echo", description="Echo the input.", input_schema={"type": "object", "properties": {}})


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    if "--hang-page-2" in sys.argv and params is not None and params.cursor:
        if not _HUNG:  # the first ask for page 2 is never answered; later ones end the listing
            _HUNG.append(params.cursor)
            await asyncio.Event().wait()  # never set
        return types.ListToolsResult(tools=[])
    if "--hang-page-2" in sys.argv:
        return types.ListToolsResult(tools=[_TOOL], next_cursor="c1")
    if "--slow-pages" in sys.argv:
        await asyncio.sleep(float(sys.argv[sys.argv.index("--slow-pages") + 1]))
        at = int(params.cursor[1:]) if params is not None and params.cursor else 0
        return types.ListToolsResult(tools=[_TOOL], next_cursor=f"p{at + 1}")
    if _CYCLE == 0:
        return types.ListToolsResult(tools=[_TOOL], next_cursor="same-cursor")
    at = int(params.cursor[1:]) if params is not None and params.cursor else 0
    return types.ListToolsResult(tools=[_TOOL], next_cursor=f"c{at % _CYCLE + 1}")


async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text="echo")])


async def main() -> None:
    server: Server[Any] = Server("cursor-loop", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
