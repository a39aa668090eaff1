"""The rest of the 2026-07-28 revision (issue 20, item 3), against the real sample server.

``python -m mas.samples.mcp_server --with-revision-tools`` adds ``route_query`` (its ``region``
is mirrored into ``Mcp-Param-Region``), ``bad_header`` (``x-mcp-header`` on a number: invalid),
``refresh_panel`` (``_meta.ui.visibility: ["app"]``) and ``fail_with`` (fails with the code it is
given); ``--list-ttl-ms`` / ``--list-cache-scope`` set the cache hints of its listings.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import REPO, free_port, http_config, http_sample_server, stdio_config
from prefork import python_args, python_command

from mas.runtime.config import MCPServerConfig
from mas.runtime.mcp.provider import MCPToolProvider
from mas.runtime.registry import RuntimeRegistry

REVISION = "--with-revision-tools"
ALWAYS = ["get_weather", "route_query", "fail_with"]
#: tools/list pages of the sample server with the revision tools: 13 tools, 3 a page.
PAGES = 5


def names(provider: MCPToolProvider) -> list[str]:
    return [tool["name"] for tool in provider.list_mcp_tools()]


def fetches(provider: MCPToolProvider) -> list[int]:
    """Count the tools/list pages the provider fetches from now on (the cache serves the others)."""
    pages: list[int] = []
    provider.on_page = lambda page, total: pages.append(page)
    return pages


# --- x-mcp-header ---------------------------------------------------------------------------------
def test_an_x_mcp_header_parameter_travels_as_its_mcp_param_header_over_http() -> None:
    port = free_port()
    with (
        http_sample_server(port, "tok", REVISION),
        MCPToolProvider(http_config("rev", f"http://127.0.0.1:{port}/mcp")) as provider,
    ):
        envelope = provider.call_tool("route_query", {"region": "eu-west3", "query": "q"}, timeout_seconds=10)
    assert not envelope.is_error, envelope.result
    # The server's handler saw the header the SDK mirrored from the argument (the SDK's server
    # would have refused a call whose header and body disagree with -32020).
    assert envelope.result == {"region": "eu-west3", "query": "q", "header": "eu-west3"}


def test_an_explicit_tool_list_gets_its_mcp_param_headers_too() -> None:
    """Infra `tools:` skips tools/list, so the SDK never saw the annotation: the 2026 server refused
    the call (-32020, "Mcp-Param-Region header is missing") until the runtime taught it the list."""
    from mas.samples.mcp_server import revision_tools

    declared = tuple(tool.model_dump(by_alias=True, exclude_none=True) for tool in revision_tools()[:1])
    port = free_port()
    with (
        http_sample_server(port, "tok", REVISION),
        MCPToolProvider(http_config("rev", f"http://127.0.0.1:{port}/mcp", tools=declared)) as provider,
    ):
        envelope = provider.call_tool("route_query", {"region": "ap-south1", "query": "q"}, timeout_seconds=10)
    assert envelope.result == {"region": "ap-south1", "query": "q", "header": "ap-south1"}, envelope.result


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_tool_whose_x_mcp_header_is_invalid_is_dropped_with_a_warning(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    """On a 2026 session the SDK drops it (and warns); on an initialize session our filter does."""
    caplog.set_level(logging.WARNING)
    with MCPToolProvider(stdio_config("rev", REVISION, connect_mode=mode)) as provider:
        listed = names(provider)
        with RuntimeRegistry({"rev": provider}) as registry:
            assert "bad_header" not in [tool["name"] for tool in registry.list_tools()]
    assert "bad_header" not in listed and all(name in listed for name in ALWAYS), listed
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    dropped = [w for w in warnings if "dropping tool 'bad_header': invalid x-mcp-header" in w]
    assert len(dropped) == 2, warnings  # one per listing: the provider's, then the registry's
    assert "x-mcp-header is only permitted on integer/string/boolean properties (got 'number')" in dropped[0]
    if mode == "legacy":
        assert dropped[0].startswith("MCP server 'rev': "), dropped


def test_the_generated_docstring_names_the_header_and_the_package_has_neither_dropped_tool(tmp_path: Path) -> None:
    infra = tmp_path / "infra.yaml"
    infra.write_text(
        "apiVersion: toolgen/v1\nkind: ToolServerRegistry\nspec:\n  servers:\n"
        "    - name: rev\n      protocol: mcp\n      transport: stdio\n      command: python\n"
        f"      args: {json.dumps([*python_args('-m', 'mas.samples.mcp_server', pythonpath=None), REVISION])}\n"
        f"      cwd: {REPO}\n"
    )
    run = subprocess.run(
        python_command("-m", "codegen", "generate", "--infra", str(infra), "--out", "out", "--package", "pkg",
                       "--lock", "toolgen.lock.json", pythonpath=os.environ.get("PYTHONPATH")),
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "dropping tool 'bad_header': invalid x-mcp-header" in run.stderr  # the one warning line
    code = "".join(path.read_text() for path in sorted((tmp_path / "out" / "pkg").rglob("*.py")))
    assert "region: Where the query runs. (also sent as the HTTP header Mcp-Param-Region)" in code
    lock = (tmp_path / "toolgen.lock.json").read_text()
    for dropped in ("bad_header", "refresh_panel"):
        assert dropped not in code and dropped not in lock


# --- app-only tools ---------------------------------------------------------------------------------
def test_the_filters_header_key_is_the_sdks() -> None:
    """tool_filters names the key itself (so a listing without it never imports the SDK)."""
    from mcp.shared.inbound import X_MCP_HEADER_KEY

    from mas.runtime import tool_filters

    assert tool_filters.X_MCP_HEADER_KEY == X_MCP_HEADER_KEY


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}},  # not a primitive
        {"type": "object", "properties": {"a": {"type": "object", "anyOf": [{"x-mcp-header": "A"}]}}},  # unreachable
        {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A"},
                                          "b": {"type": "string", "x-mcp-header": "a"}}},  # twice
        {"type": "object", "x-mcp-header": "Root"},  # on the root
    ],
)  # fmt: skip
def test_a_saved_listing_loses_each_tool_with_an_invalid_header_and_keeps_the_rest(
    schema: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """The cheap pre-check (is the key anywhere?) lets the SDK's walk judge every tool that has it."""
    from mas.runtime.tool_filters import agent_facing

    caplog.set_level(logging.WARNING)
    header = {"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "R"}}}
    tools = [
        {"name": "bad", "inputSchema": schema},
        {"name": "fine", "inputSchema": header},
        {"name": "plain", "inputSchema": {"type": "object", "description": "says x-mcp-header in words only"}},
        {"name": "none"},
    ]  # fmt: skip
    assert [t["name"] for t in agent_facing(tools, "saved")] == ["fine", "plain", "none"]
    assert [r.getMessage().split(": invalid")[0] for r in caplog.records] == ["MCP server 'saved': dropping tool 'bad'"]


def test_app_only_tools_are_left_out_unless_the_server_entry_keeps_them() -> None:
    with MCPToolProvider(stdio_config("rev", REVISION)) as provider:
        assert "refresh_panel" not in names(provider)
        # Still callable by name on the provider itself (an app's UI calls it through its host).
        assert provider.call_tool("refresh_panel", {}, timeout_seconds=10).result == "refresh_panel done"
    with MCPToolProvider(stdio_config("rev", REVISION, app_only_tools="keep")) as provider:
        listed = provider.list_mcp_tools()
    panel = next(tool for tool in listed if tool["name"] == "refresh_panel")
    assert panel["_meta"]["ui"]["visibility"] == ["app"]


# --- list-result cache hints ----------------------------------------------------------------------
def hinted(*hints: str, **overrides: Any) -> MCPServerConfig:
    return stdio_config("cached", REVISION, *hints, **{"cache_ttl_ms": 60_000, **overrides})


def test_a_listing_the_server_says_is_stale_at_once_is_not_reused() -> None:
    """The SDK's default hint (ttlMs 0) beats the infra's 60 s; `cache_hints: ignore` restores it."""
    with MCPToolProvider(hinted()) as provider:
        pages = fetches(provider)
        provider.list_tools()
        provider.list_tools()
    assert len(pages) == 2 * PAGES  # listed twice
    with MCPToolProvider(hinted(cache_hints="ignore")) as provider:
        pages = fetches(provider)
        provider.list_tools()
        provider.list_tools()
    assert len(pages) == PAGES


def test_the_servers_ttl_shortens_the_infra_cache_and_an_initialize_session_has_no_hints() -> None:
    with MCPToolProvider(hinted("--list-ttl-ms", "700", "--list-cache-scope", "public")) as provider:
        pages = fetches(provider)
        provider.list_tools()
        provider.list_tools()  # within 700 ms: reused
        assert len(pages) == PAGES
        time.sleep(0.9)
        provider.list_tools()  # past the server's ttlMs, long before the infra's 60 s
        assert len(pages) == 2 * PAGES
    # The same server on an initialize (2025) session sends no hints: the infra's policy alone.
    with MCPToolProvider(hinted("--list-ttl-ms", "0", connect_mode="legacy")) as provider:
        pages = fetches(provider)
        provider.list_tools()
        provider.list_tools()
    assert len(pages) == PAGES


@pytest.mark.parametrize(("scope", "shared"), [("public", True), ("private", False)])
def test_only_a_public_listing_is_shared_across_providers(scope: str, shared: bool) -> None:
    config = hinted("--list-ttl-ms", "60000", "--list-cache-scope", scope, cache_scope="process")
    with MCPToolProvider(config) as one:
        first = one.list_tools()
        with MCPToolProvider(config) as two:
            pages = fetches(two)
            assert two.list_tools() == first
        pages_one = fetches(one)
        one.list_tools()  # a private listing is still reused by the provider that fetched it
    assert (len(pages) == 0, len(pages_one)) == (shared, 0)


# --- error codes ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("code", "kind", "name"),
    [
        (-32020, "protocol", "HeaderMismatch"),
        (-32021, "protocol", "MissingRequiredClientCapability"),
        (-32022, "protocol", "UnsupportedProtocolVersion"),
        (-32042, "unavailable", "URL elicitation required"),
        (-32601, "protocol", "method not found"),
        (-32603, "tool_error", None),
        (-32099, "protocol", None),
    ],
)
def test_each_error_code_has_its_failure_kind(code: int, kind: str, name: str | None) -> None:
    with MCPToolProvider(stdio_config("rev", REVISION)) as provider:
        envelope = provider.call_tool("fail_with", {"code": code}, timeout_seconds=10)
    assert envelope.is_error and envelope.error_kind == kind, envelope
    named = f", {name}" if name else ""
    assert str(envelope.result).endswith(f" (MCP error {code}{named})"), envelope.result
    links = (envelope.metadata or {}).get("url_elicitations")
    if code == -32042:
        sign_in = {"url": "https://example.com/sign-in", "message": "Sign in to the sample archive."}
        assert links == [{**sign_in, "elicitationId": "sample-1"}]
    else:
        assert links is None


def test_an_x_mcp_header_argument_past_max_header_bytes_is_the_callers_mistake_and_is_not_sent() -> None:
    """Issue 31, defect 14: an `x-mcp-header` argument past the server's header limit was sent
    anyway; the server's HTTP layer refused it before the tool ran, and the caller got `tool_error`
    or `unavailable` (which packages retry). Past `max_header_bytes` (default 8192) the call fails
    as `invalid_arguments` naming the argument, and nothing is sent."""
    port = free_port()
    with (
        http_sample_server(port, "tok", REVISION),
        MCPToolProvider(http_config("rev", f"http://127.0.0.1:{port}/mcp")) as provider,
    ):
        fits = provider.call_tool("route_query", {"region": "r" * 8000, "query": "q"}, timeout_seconds=10)
        assert not fits.is_error and fits.result["header"] == "r" * 8000, fits.result
        refused = provider.call_tool("route_query", {"region": "r" * 20000, "query": "q"}, timeout_seconds=10)
        # This server would have taken it (its limit is higher): the answer above proves nothing was sent.
        assert refused.is_error and refused.error_kind == "invalid_arguments", refused.result
        assert refused.result == (
            "MCP server 'rev': tools/call 'route_query' failed: argument /region travels as the HTTP header "
            "Mcp-Param-Region, 20018 bytes, more than max_header_bytes=8192; nothing was sent"
        )
    with (
        http_sample_server(port, "tok", REVISION),
        MCPToolProvider(http_config("rev", f"http://127.0.0.1:{port}/mcp", max_header_bytes=1024)) as provider,
    ):
        small = provider.call_tool("route_query", {"region": "r" * 2000, "query": "q"}, timeout_seconds=10)
    assert small.error_kind == "invalid_arguments" and "max_header_bytes=1024" in str(small.result)


def test_a_servers_http_431_is_the_callers_argument_not_a_tool_error() -> None:
    """Issue 31, defect 14's rest: a server whose own header limit is below `max_header_bytes`
    (Node's is 16 KiB, some proxies' 4 or 8 KiB) answers 431 before the tool runs. That reached
    the caller as `tool_error` ("Server returned an error response"); it is `invalid_arguments`,
    saying what to change, and the connection serves the next call."""
    port = free_port()
    with (
        http_sample_server(port, "tok", REVISION, "--max-header-line", "4096"),
        MCPToolProvider(http_config("rev", f"http://127.0.0.1:{port}/mcp")) as provider,
    ):
        refused = provider.call_tool("route_query", {"region": "r" * 5000, "query": "q"}, timeout_seconds=10)
        assert refused.is_error and refused.error_kind == "invalid_arguments", refused.result
        assert "HTTP 431" in str(refused.result) and "max_header_bytes" in str(refused.result)
        fits = provider.call_tool("route_query", {"region": "r" * 100, "query": "q"}, timeout_seconds=10)
        assert not fits.is_error and fits.result["header"] == "r" * 100, fits.result
