"""A server whose cursors go round a cycle (A -> B -> A) is stopped with the right message.

The cycle must be recognised as a repeated cursor, not left to run into ``max_pages`` (whose
message would blame the size of the listing).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp_helpers import stdio_config

from mas.runtime.mcp.provider import MCPToolProvider, ToolServerError

SERVER = Path(__file__).resolve().parents[1] / "servers" / "cursor_loop_server.py"


@pytest.mark.parametrize(
    ("cycle", "expected"),
    [
        (2, "tools/list repeated cursor 'c1' on page 4; stopped paging"),  # c1 -> c2 -> c1
        (3, "tools/list repeated cursor 'c1' on page 5; stopped paging"),  # c1 -> c2 -> c3 -> c1
    ],
)
def test_a_cursor_cycle_is_a_repeated_cursor(cycle: int, expected: str) -> None:
    config = stdio_config("cycler", "--cycle", str(cycle), script=SERVER, max_pages=50)
    with MCPToolProvider(config) as provider:
        with pytest.raises(ToolServerError) as info:
            provider.list_tools()
        assert str(info.value) == f"MCP server 'cycler': {expected}"
        # The call path prefetches the same listing; the failure must not break calling.
        assert provider.call_tool("echo", {}).result == "echo"


def test_a_page_that_never_comes_times_out_naming_the_page() -> None:
    config = stdio_config(
        "slow",
        "--hang-page-2",
        script=SERVER,  # a fork of the pre-imported interpreter: connecting takes no cold import
        connect_timeout_seconds=3,  # bounds connecting and then each page
        # No server/discover probe: under load it took half of the time that connecting shares
        # with the handshake, so a slow machine timed out connecting instead of on page 2.
        connect_mode="legacy",
    )
    with MCPToolProvider(config) as provider:
        with pytest.raises(ToolServerError) as info:
            provider.list_tools()
        assert str(info.value) == "MCP server 'slow': tools/list timed out after 3 s (page 2)"
        # The session survived the timeout: the call (and the full listing it fetches first, which
        # the server now answers) goes through on the same connection.
        conn = provider._keeper._conn
        assert provider.call_tool("echo", {}).result == "echo"
        assert [tool["name"] for tool in provider.list_tools()] == ["echo"]
        assert provider._keeper._conn is conn


@pytest.mark.parametrize(("max_pages", "listed"), [(4, None), (5, 9)])
def test_max_pages_is_exact(max_pages: int, listed: int | None) -> None:
    # The sample server lists 9 tools over 5 pages of 2: 4 pages is one too few, 5 is enough.
    with MCPToolProvider(stdio_config("pages", "--page-size", "2", max_pages=max_pages)) as provider:
        if listed is None:
            with pytest.raises(ToolServerError) as info:
                provider.list_tools()
            assert (
                str(info.value) == "MCP server 'pages': tools/list returned more than max_pages=4 pages; stopped paging"
            )
        else:
            progress: list[tuple[int, int]] = []
            provider.on_page = lambda page, tools: progress.append((page, tools))
            assert len(provider.list_tools()) == listed
            assert progress == [(1, 2), (2, 4), (3, 6), (4, 8), (5, 9)]  # pages read, tools so far


def test_a_listing_whose_pages_each_come_just_in_time_is_bounded_in_total() -> None:
    """Issue 31 (also seen): each page was bounded by connect_timeout_seconds, the listing not at
    all: a server answering every page just in time held a listing for 100 pages x 30 s (50
    minutes) by default. `list_timeout_seconds` bounds the whole listing."""
    import time

    config = stdio_config(
        "trickle", "--slow-pages", "0.4", script=SERVER, connect_timeout_seconds=10, list_timeout_seconds=3
    )
    with MCPToolProvider(config) as provider:
        provider.call_tool("echo", {}, timeout_seconds=20)  # connected (the call path lists first)
        started = time.monotonic()
        with pytest.raises(ToolServerError) as info:
            provider.list_tools()
        took = time.monotonic() - started
    assert took < 8, took  # 3 s and the time to say so; unbounded, 100 pages took 40 s
    assert str(info.value).startswith("MCP server 'trickle': tools/list took more than list_timeout_seconds=3 s")
    assert str(info.value).endswith("page(s) so far); stopped paging")
