"""Over streamable HTTP, ``max_result_bytes`` and ``max_json_depth`` hold as over stdio (issue 17, items 2-3).

Every test talks to ``tests/servers/raw_http_server.py``, a real server on 127.0.0.1 that writes
its own bytes, answering as ``application/json`` or, with ``"sse": true``, as an event stream.
mcp 2.3.0 reads a JSON answer whole without a bound; ``mas/runtime/mcp/_http_limits.py`` bounds it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import free_port, http_config, served
from prefork import python_command

from mas.runtime.contracts.tool_contract import ToolResultEnvelope
from mas.runtime.mcp._stdio import json_depth
from mas.runtime.mcp.provider import MCPToolProvider

SERVER = Path(__file__).resolve().parents[1] / "servers" / "raw_http_server.py"
FRAMINGS = [pytest.param(False, id="json"), pytest.param(True, id="sse")]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        python_command(str(SERVER), str(port), pythonpath=os.environ.get("PYTHONPATH")), stdout=subprocess.DEVNULL
    )
    with served(proc, port, "raw HTTP server") as url:
        yield url


def kind(envelope: ToolResultEnvelope) -> str | None:
    return (envelope.metadata or {}).get("error_kind")


def timed(provider: MCPToolProvider, tool: str, arguments: dict[str, Any], timeout: float = 10.0) -> tuple[Any, float]:
    start = time.monotonic()
    envelope = provider.call_tool(tool, arguments, timeout_seconds=timeout, progress_callback=lambda *_: None)
    return envelope, time.monotonic() - start


@pytest.mark.parametrize(
    ("tool", "sse"),
    [
        pytest.param("big", False, id="json"),
        pytest.param("big", True, id="sse"),
        pytest.param("bomb", False, id="gzip"),
    ],
)
def test_an_http_answer_over_max_result_bytes_is_a_protocol_error_naming_the_size_and_the_connection_is_replaced(
    url: str, tool: str, sse: bool
) -> None:
    """``bomb`` is gzip: 30 MB that travel as 30 KB are stopped once inflated past the limit."""
    with MCPToolProvider(http_config("raw", url, max_result_bytes=1_000_000)) as provider:
        assert provider.call_tool("echo", {"text": "a"}, timeout_seconds=10).result == {"text": "a"}
        first = provider._keeper._conn
        size = 30_000_000 if tool == "bomb" else 3_000_000
        refused, took = timed(provider, tool, {"size": size, "sse": sse})
        assert (refused.is_error, kind(refused), took < 5) == (True, "protocol", True), refused
        text = str(refused.result)
        assert text.startswith(f"MCP server 'raw': tools/call '{tool}' failed: the server sent a message of "), text
        assert text.endswith("more than max_result_bytes=1000000; the connection is replaced"), text
        after, took = timed(provider, "echo", {"text": "b", "sse": sse})
        assert (after.is_error, after.result, took < 5) == (False, {"text": "b"}, True), after
        assert provider._keeper._conn is not first


@pytest.mark.parametrize("sse", FRAMINGS)
def test_an_http_answer_within_max_result_bytes_passes_even_past_the_sdks_own_1_mib_event_bound(
    url: str, sse: bool
) -> None:
    with MCPToolProvider(http_config("raw", url)) as provider:
        envelope, _ = timed(provider, "big", {"size": 3_000_000, "sse": sse}, timeout=30)
    assert not envelope.is_error, str(envelope.result)[:300]
    assert envelope.result == "x" * 3_000_000


@pytest.mark.parametrize("sse", FRAMINGS)
def test_an_http_answer_deeper_than_max_json_depth_is_refused_at_once_naming_the_depth(url: str, sse: bool) -> None:
    with MCPToolProvider(http_config("raw", url)) as provider:
        fine, _ = timed(provider, "deep", {"depth": 150, "sse": sse})
        assert not fine.is_error and json_depth(fine.result) == 151, fine
        first = provider._keeper._conn
        refused, took = timed(provider, "deep", {"depth": 300, "sse": sse})
        assert (refused.is_error, kind(refused), took < 5) == (True, "protocol", True), refused
        assert refused.result == (
            "MCP server 'raw': tools/call 'deep' failed: the server's answer is nested 303 levels deep, "
            "more than max_json_depth=256 (MCP error -32700)"
        )
        # The refusal answered that one call; the connection goes on.
        after, _ = timed(provider, "echo", {"text": "ok", "sse": sse})
        assert after.result == {"text": "ok"} and provider._keeper._conn is first


@pytest.mark.parametrize("sse", FRAMINGS)
def test_max_json_depth_is_the_infra_setting_over_http(url: str, sse: bool) -> None:
    with MCPToolProvider(http_config("raw", url, max_json_depth=20)) as provider:
        assert not timed(provider, "deep", {"depth": 10, "sse": sse})[0].is_error
        refused, _ = timed(provider, "deep", {"depth": 30, "sse": sse})
        assert kind(refused) == "protocol" and "nested 33 levels deep, more than max_json_depth=20" in str(
            refused.result
        )
        assert timed(provider, "echo", {"text": "next", "sse": sse})[0].result == {"text": "next"}


#: Runs a command as its only child and writes the child's peak resident memory (KiB) to argv[1].
MEASURED = (
    "import resource, subprocess, sys; code = subprocess.call(sys.argv[2:]); "
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); sys.exit(code)"
)


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in KiB on Linux")
def test_token_exchange_discovery_is_bounded_like_the_connection(url: str, tmp_path: Path) -> None:
    """Issue 31, defect 4: `grant: token_exchange` without `issuer` reads the server's protected
    resource metadata itself; a gzip bomb there (256 MiB of JSON in ~250 KiB) is stopped at
    `max_result_bytes` like any answer, in a child whose peak memory is measured."""
    entry = {
        "name": "xaa", "protocol": "mcp", "transport": "streamable-http", "url": url,
        "auth": {"grant": "token_exchange", "client_id": "c", "client_secret": "env:XAA_SECRET",
                 "idp_token_endpoint": "http://127.0.0.1:9/token", "idp_client_id": "i", "id_token": "env:XAA_ID"},
    }  # fmt: skip
    infra = tmp_path / "infra.yaml"
    infra.write_text(json.dumps({"kind": "ToolServerRegistry", "spec": {"servers": [entry]}}), encoding="utf-8")
    env = {**os.environ, "XAA_SECRET": "s" * 16, "XAA_ID": "i" * 16, "TOOLGEN_TOKEN_DIR": str(tmp_path / "t")}
    peak_file = tmp_path / "peak"
    proc = subprocess.run(
        [sys.executable, "-c", MEASURED, str(peak_file), sys.executable, "-m", "mas.runtime", "list", "-q",
         "--infra", str(infra)],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    err = proc.stderr
    peak = int(peak_file.read_text()) // 1024  # KiB on Linux
    assert proc.returncode == 2, err
    assert b"max_result_bytes" in err and len(err.decode().strip().splitlines()) == 1, err
    # Unbounded, the client held the 256 MiB body (and more while parsing it); bounded, ~16 MiB.
    assert peak < 200, f"peak {peak} MiB"
