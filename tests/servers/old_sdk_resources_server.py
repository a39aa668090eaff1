"""An mcp 1.x FastMCP server with resources, a resource template and a prompt (no completions).

Run it with the interpreter of an old-SDK venv (tests/old_sdk.py); it imports nothing of this repo.
The ServerContract's tests (tests/runtime/test_server_surface.py) list, read, fill and get these.
"""

from mcp.server.fastmcp import FastMCP

server = FastMCP("old-sdk-resources")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.resource("docs://readme", mime_type="text/plain")
def readme() -> str:
    """The readme."""
    return "old but fine"


@server.resource("greeting://{name}")
def greeting(name: str) -> str:
    """A greeting for someone."""
    return f"Hello, {name}!"


@server.prompt()
def summarize(text: str) -> str:
    """Summarize a text."""
    return f"Summarize this: {text}"


if __name__ == "__main__":
    server.run("stdio")
