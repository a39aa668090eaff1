"""An MCP server (stdio) that answers the way FastMCP does for tools returning plain values.

FastMCP gives a tool whose function returns ``str``, ``int``, a list... the output schema
``{"type": "object", "properties": {"result": <the value's schema>}, "required": ["result"],
"x-fastmcp-wrap-result": true}`` and sends ``{"result": value}`` as structured content, with the
value as text beside it (JSON, or the string itself). This server sends exactly that wire shape
(built on the SDK's low-level server, as FastMCP is), plus ``legacy_cities``: the same wrapped
value with no output schema at all, for the types inferred from recorded results.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server


def _wrapped(value_schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"result": value_schema},
        "required": ["result"],
        "x-fastmcp-wrap-result": True,
    }


_INPUT = {"type": "object", "properties": {"name": {"type": "string"}}}
_TOOLS = [
    types.Tool(name="greet", input_schema=_INPUT, output_schema=_wrapped({"type": "string", "title": "Result"})),
    types.Tool(name="add", input_schema=_INPUT, output_schema=_wrapped({"type": "integer"})),
    types.Tool(
        name="cities", input_schema=_INPUT, output_schema=_wrapped({"type": "array", "items": {"type": "string"}})
    ),
    types.Tool(
        name="point",  # a wrapped object defined in $defs: the value is the model of the definition
        input_schema=_INPUT,
        output_schema={
            **_wrapped({"$ref": "#/$defs/Point"}),
            "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}},
        },
    ),
    types.Tool(name="legacy_cities", input_schema=_INPUT),  # no outputSchema; results recorded
]
_VALUES: dict[str, Any] = {
    "greet": "hello",
    "add": 42,
    "cities": ["Paris", "Lyon"],
    "point": {"x": 3},
    "legacy_cities": ["Kyoto", "Osaka"],
}


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=_TOOLS)


async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    value = _VALUES[params.name]
    if params.name == "greet":
        value = f"hello {(params.arguments or {}).get('name', 'world')}"
    text = value if isinstance(value, str) else json.dumps(value)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content={"result": value}
    )


async def main() -> None:
    server: Server[Any] = Server("fastmcp-like", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
