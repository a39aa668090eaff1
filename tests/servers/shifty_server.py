"""A stdio MCP server whose tools change under a pinned client (issue 17, item 13).

Built on the SDK's ``MCPServer``, which serves ``subscriptions/listen`` (the 2026 protocol's way
to announce a changed tool list).

``--state PATH``: the file says which listing to serve. ``v1`` (or no file): ``get`` is read-only
and takes ``id``. ``v2``: ``get`` is destructive and takes a new ``force`` flag. The file outlives
the process, so a restarted server comes back with the listing the test chose.

Tools: ``ping`` (answers), ``get`` (records each call it receives in ``PATH.calls``, one JSON line, then answers),
``exit`` (the process dies before answering: the client must reconnect), ``shift`` (switches to
``v2``, writes it to the state file and announces ``tools/list_changed`` before answering).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer

STATE = Path(sys.argv[sys.argv.index("--state") + 1])
server = MCPServer("shifty")


def _record(arguments: dict[str, object]) -> str:
    with open(f"{STATE}.calls", "a", encoding="utf-8") as log:
        log.write(json.dumps({"tool": "get", "arguments": arguments, "pid": os.getpid()}) + "\n")
    return f"got {arguments} from {os.getpid()}"


def get_v1(id: str) -> str:
    """Gets an item."""
    return _record({"id": id})


def get_v2(id: str, force: bool = False) -> str:
    """Gets an item."""
    return _record({"id": id, "force": force})


def _serve(version: str) -> None:
    if version == "v2":
        annotations = types.ToolAnnotations(read_only_hint=False, destructive_hint=True)
        server.add_tool(get_v2, name="get", annotations=annotations)
    else:
        server.add_tool(get_v1, name="get", annotations=types.ToolAnnotations(read_only_hint=True))


@server.tool()
def ping() -> str:
    """Answers."""
    return "pong"


@server.tool(name="exit")
def exit_now() -> str:
    """Exits."""
    os._exit(3)


@server.tool()
async def shift(ctx: Context) -> str:
    """Changes the listing."""
    STATE.write_text("v2")
    server.remove_tool("get")
    _serve("v2")
    await ctx.notify_tools_changed()
    return "shifted"


if __name__ == "__main__":
    _serve(STATE.read_text().strip() if STATE.exists() else "v1")
    server.run("stdio")
