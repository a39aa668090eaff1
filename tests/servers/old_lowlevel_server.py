"""An MCP server on the mcp 1.x Python SDK's low-level ``Server``, as published shell and file
servers are (mcp-shell-server's ``shell_execute`` takes ``command`` as an array).

Run it with the interpreter of a venv that has ``mcp==1.30.0`` (tests/old_sdk.py). The 1.x
low-level server checks arguments against the input schema itself (jsonschema) and answers a bad
one with an ``isError`` result, ``Input validation error: 'ls' is not of type 'array'``: the
wording tests/runtime/test_live_behaviour.py classifies. It imports nothing of this repo.
"""

import json
import sys

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

server = Server("old-lowlevel")

RUN = types.Tool(
    name="run",
    description="Echo a command line (an array of words).",
    inputSchema={
        "type": "object",
        "properties": {"command": {"type": "array", "items": {"type": "string"}}},
        "required": ["command"],
    },
)


@server.list_tools()
async def list_tools() -> list[types.Tool]:
    return [RUN]


@server.call_tool()
async def call_tool(name: str, arguments: dict) -> list[types.TextContent]:  # type: ignore[type-arg]
    if name != "run":
        raise ValueError(f"Unknown tool: {name}")
    return [types.TextContent(type="text", text=json.dumps(arguments["command"]))]


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    if "--noisy" in sys.argv[1:]:
        print("old-lowlevel server: starting", file=sys.stderr, flush=True)
    anyio.run(main)
