"""How real servers behave, met by the runtime: schemas the SDK rejects, noise, failure kinds, many servers.

Servers: the sample server (mcp 2.3), FastMCP on the mcp 1.x SDKs in cached venvs (tests/old_sdk.py),
the banner server, and the hand-written tests/servers/raw_jsonrpc_server.py.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import stdio_config

from mas.runtime.mcp_provider import MCPToolProvider
from mas.runtime.registry import RuntimeRegistry

SERVERS = Path(__file__).resolve().parents[1] / "servers"
RAW_SERVER = SERVERS / "raw_jsonrpc_server.py"
TYPELESS = {"$schema": "http://json-schema.org/draft-07/schema#"}


def _write_infra(folder: Path, servers: list[dict[str, Any]]) -> Path:
    spec = {"kind": "ToolServerRegistry", "spec": {"servers": servers}}
    path = folder / "infra.yaml"
    path.write_text(json.dumps(spec), encoding="utf-8")  # JSON is YAML
    return path


def _stdio(name: str, script: Path, *args: str, command: str = "python", **extra: Any) -> dict[str, Any]:
    entry = {"name": name, "protocol": "mcp", "transport": "stdio", "command": command,
             "args": [str(script), *args], "connect_timeout_seconds": 30}  # fmt: skip
    return {**entry, **extra}


def _runtime_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mas.runtime", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


# --- a schema the SDK rejects (issue 16 item 5) -----------------------------------------------------


def test_tools_without_an_object_type_are_listed_as_sent_with_one_line_and_still_called(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="mas.runtime.mcp_provider")
    config = stdio_config("gitlabish", "--typeless", script=RAW_SERVER)
    with MCPToolProvider(config) as provider:
        tools = provider.list_mcp_tools()
        # Exactly as sent: the generator judges the schema (and warns), not the runtime.
        assert [(t["name"], t["inputSchema"]) for t in tools] == [("echo", TYPELESS), ("shout", TYPELESS)]
        # The SDK learnt the tools too, so a call does not make it list again and fail.
        assert provider.call_tool("shout", {"text": "hi"}).result == "HI"
    (line,) = [r.getMessage() for r in caplog.records if "MCP schema" in r.getMessage()]
    assert line == (
        "MCP server 'gitlabish': 2 tool(s) do not match the MCP schema; listed as sent: "
        "inputSchema has no \"type\": \"object\" ('echo', 'shout')"
    )


def test_the_registry_lists_and_calls_a_typeless_server_and_the_cli_says_one_line(tmp_path: Path) -> None:
    infra = _write_infra(tmp_path, [_stdio("gitlabish", RAW_SERVER, "--typeless")])
    with RuntimeRegistry.from_sources(infra=[infra]) as registry:
        (echo, _) = registry.list_tools()
        assert echo["parameters"] == TYPELESS
        assert registry.call_tool("echo", {"text": "sent"}).result == "sent"
    listed = _runtime_cli(tmp_path, "list", "--infra", "infra.yaml", "-q")
    assert listed.returncode == 0, listed.stderr
    assert listed.stderr.splitlines() == [
        "mas-runtime: warning: mas.runtime.mcp_provider: MCP server 'gitlabish': 2 tool(s) do not match the MCP "
        "schema; listed as sent: inputSchema has no \"type\": \"object\" ('echo', 'shout')"
    ]


# --- server noise (issue 16 item 9) ----------------------------------------------------------------


def test_server_stderr_is_one_summary_line_per_server_and_the_lines_under_v(tmp_path: Path) -> None:
    _write_infra(
        tmp_path,
        [
            _stdio("banner", SERVERS / "banner_server.py", namespace="b"),
            _stdio("noisy", RAW_SERVER, "--stderr", "40", namespace="n"),
        ],
    )
    quiet = _runtime_cli(tmp_path, "list", "--infra", "infra.yaml")
    assert quiet.returncode == 0, quiet.stderr
    noise = [line for line in quiet.stderr.splitlines() if "warning" in line]
    assert noise == [  # closed last-opened first, so in that order
        "mas-runtime: warning: mas.runtime.server_stderr: MCP server 'noisy' wrote 40 line(s) on stderr; "
        "-v shows them (logger mas.runtime.server_stderr at INFO)",
        "mas-runtime: warning: mas.runtime.server_stderr: MCP server 'banner' wrote 1 line(s) on stdout that are "
        "not JSON-RPC (skipped); -v shows them (logger mas.runtime.server_stderr at INFO)",
    ]
    assert "raw server: log line" not in quiet.stderr and "Traceback" not in quiet.stderr
    verbose = _runtime_cli(tmp_path, "list", "--infra", "infra.yaml", "-v")
    assert verbose.returncode == 0, verbose.stderr
    shown = [line for line in verbose.stderr.splitlines() if "MCP server 'noisy' stderr: raw server: log line" in line]
    assert len(shown) == 40 and shown[0].endswith("log line 1") and shown[-1].endswith("log line 40")
    assert "wrote 40 line(s)" not in verbose.stderr  # shown, so not summed up


def test_a_server_that_writes_nothing_on_stderr_gets_no_summary(tmp_path: Path) -> None:
    _write_infra(tmp_path, [_stdio("quiet", RAW_SERVER)])
    listed = _runtime_cli(tmp_path, "list", "--infra", "infra.yaml", "-q")
    assert (listed.returncode, listed.stderr) == (0, "")
