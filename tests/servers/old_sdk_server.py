"""An MCP server on the mcp 1.x Python SDK's FastMCP, as many published servers still are.

Run it with the interpreter of a venv that has ``mcp==1.6.0`` or ``mcp==1.30.0`` (the cached
fixture in tests/runtime/old_sdk.py makes them). It imports nothing of this repo: the 1.x SDK
lives only in that venv. ``--noisy`` also writes a few lines to stderr at start, as many
published servers do. ``client_info`` answers with the ``clientInfo`` the handshake brought.
``--docstrings`` adds ``convert``, whose description is its indented docstring with an ``Args:``
section and quotes.
"""

# No `from __future__ import annotations`: FastMCP 1.6 finds the Context parameter by its
# evaluated annotation.
import sys

from mcp.server.fastmcp import Context, FastMCP

server = FastMCP("old-sdk")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def greet(name: str, punctuation: str = "!") -> str:
    """Greet someone by name."""
    return f"Hello, {name}{punctuation}"


@server.tool()
def client_info(ctx: Context) -> dict[str, str]:  # type: ignore[type-arg]
    """The clientInfo this server got in the initialize handshake."""
    params = ctx.session.client_params
    info = params.clientInfo if params is not None else None
    return {"name": info.name, "version": info.version} if info is not None else {}


def convert(uri: str, max_chars: int = 100, mode: str = "text") -> str:
    """Convert a resource to Markdown.

    Reads the resource at a "uri" and answers with its text, as markitdown-mcp's
    convert_to_markdown does.

    Args:
        uri: Where the resource is, e.g. "file:///tmp/a.txt".
        max_chars: The longest answer.
    """
    return f"{mode}: {uri}"[:max_chars]


if "--docstrings" in sys.argv[1:]:  # a tool whose description is its docstring, Args: section and all
    server.tool()(convert)


if __name__ == "__main__":
    if "--noisy" in sys.argv[1:]:
        for n in range(3):
            print(f"old-sdk server: start-up line {n + 1} of 3", file=sys.stderr, flush=True)
    server.run("stdio")
