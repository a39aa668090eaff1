"""An mcp 1.x low-level server whose resource ``memo://note`` can be subscribed to (2025-11-25 dialect).

mcp 1.x's ``get_capabilities`` always declares ``resources.subscribe: false``, even with
``@server.subscribe_resource()`` handlers; a 1.x server that serves subscriptions has to say so
itself, as this one does. Tools: ``touch`` (changes the note: one ``notifications/resources/updated``
to each subscribed session) and ``subscribed`` (how many subscriptions the server holds, to see an
unsubscribe arrive). Run it with an old-SDK venv's interpreter (tests/old_sdk.py); it imports nothing
of this repo.
"""

import json

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

server = Server("old-subscribe")
NOTE = "memo://note"
state = {"text": "first", "subscribed": 0, "session": None}


@server.list_tools()
async def list_tools() -> list[types.Tool]:
    empty = {"type": "object", "properties": {}}
    return [
        types.Tool(name="touch", description="Change the note.", inputSchema=empty),
        types.Tool(name="subscribed", description="How many subscriptions the server holds.", inputSchema=empty),
    ]


@server.call_tool()
async def call_tool(name: str, arguments: dict) -> list[types.TextContent]:  # type: ignore[type-arg]
    if name == "touch":
        state["text"] = state["text"] + "!"
        session = server.request_context.session
        if state["subscribed"]:
            await session.send_resource_updated(NOTE)  # type: ignore[arg-type]
        return [types.TextContent(type="text", text=str(state["text"]))]
    if name == "subscribed":
        return [types.TextContent(type="text", text=json.dumps(state["subscribed"]))]
    raise ValueError(f"Unknown tool: {name}")


@server.list_resources()
async def list_resources() -> list[types.Resource]:
    return [types.Resource(uri=NOTE, name="note", mimeType="text/plain")]  # type: ignore[arg-type]


@server.read_resource()
async def read_resource(uri: object) -> str:
    return str(state["text"])


@server.subscribe_resource()
async def subscribe(uri: object) -> None:
    state["subscribed"] = int(state["subscribed"]) + 1  # type: ignore[call-overload]


@server.unsubscribe_resource()
async def unsubscribe(uri: object) -> None:
    state["subscribed"] = max(0, int(state["subscribed"]) - 1)  # type: ignore[call-overload]


async def main() -> None:
    options = server.create_initialization_options()
    resources = options.capabilities.resources
    if resources is not None:
        resources.subscribe = True  # 1.x never declares it on its own
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, options)


if __name__ == "__main__":
    anyio.run(main)
