"""The lock a live run writes, read back: canonical order, exactly the servers' tools, no secrets.

Two real servers: the sample server over stdio (given an environment value) and over streamable
HTTP on 127.0.0.1 (reached with a ``Bearer env:VAR`` header and a literal API key). Both list
their tools in server order, which is not name order, over several pages.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import generate
from mcp_helpers import free_port, served
from prefork import python_args, python_command

from codegen.lock import LOCK_VERSION
from mas.runtime.lockfile import canonical_tool
from mas.samples.mcp_server import tool_definitions

TOKEN_VAR = "TOOLGEN_TEST_LOCK_TOKEN"
# Written out by hand: name order, not the servers' order (get_weather, search-docs, notes.create, ...).
HTTP_TOOLS = [
    "count_slowly",
    "flaky_lookup",
    "get_weather",
    "greet",
    "list_cities",
    "notes.create",
    "notes.delete",
    "search-docs",
    "whoami",
]
STDIO_TOOLS = [
    "count_slowly",
    "crash",
    "flaky_lookup",
    "get_weather",
    "greet",
    "list_cities",
    "notes.create",
    "notes.delete",
    "search-docs",
    "whoami",
]


@pytest.fixture(scope="module")
def http_port() -> Iterator[int]:
    port = free_port()
    command = ("-m", "mas.samples.mcp_server", "--transport", "streamable-http", "--port", str(port))
    proc = subprocess.Popen(
        python_command(*command, pythonpath=os.environ.get("PYTHONPATH")),  # a fork of a pre-imported interpreter
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    with served(proc, port, "sample HTTP server"):
        yield port


def _wire(tool: Any) -> dict[str, Any]:
    wire: dict[str, Any] = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
    return wire


def test_the_lock_of_a_live_run_is_canonical_complete_and_secret_free(
    tmp_path: Path, http_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    token, api_key, env_value = secrets.token_urlsafe(24), "literal-" + secrets.token_hex(8), secrets.token_hex(12)
    monkeypatch.setenv(TOKEN_VAR, token)
    url = f"http://127.0.0.1:{http_port}/mcp"
    # Infra order (zeta, alpha) is not name order either.
    # The stdio server is a fork of the tests' pre-imported interpreter (tests/prefork.py).
    server = python_args("-m", "mas.samples.mcp_server", pythonpath=None)
    (tmp_path / "infra.yaml").write_text(
        f"""apiVersion: toolgen/v1
kind: ToolServerRegistry
metadata:
  name: lock-test
spec:
  servers:
    - name: zeta
      protocol: mcp
      transport: stdio
      command: python
      args: {json.dumps([*server, "--page-size", "2", "--with-crash-tool"])}
      prefix: zns
      env:
        TOOLGEN_LOCK_ENV: {env_value}
      connect_timeout_seconds: 20
    - name: alpha
      protocol: mcp
      transport: streamable-http
      url: {url}
      headers:
        Authorization: Bearer env:{TOKEN_VAR}
        X-Api-Key: {api_key}
      connect_timeout_seconds: 20
"""
    )
    args = ["--infra", "infra.yaml", "--lock", "lock.json", "--out", "out", "--package", "pkg"]
    assert generate(tmp_path, args, monkeypatch) == 0
    text = (tmp_path / "lock.json").read_text(encoding="utf-8")
    data = json.loads(text)

    # Canonical: sorted keys everywhere, two-space indent, literal UTF-8, one final newline.
    assert text == json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert text.startswith('{\n  "') and not text.endswith("\n\n")
    assert data["toolgen_snapshot"] == LOCK_VERSION
    assert list(data["servers"]) == ["alpha", "zeta"]
    listed = {"alpha": HTTP_TOOLS, "zeta": STDIO_TOOLS}
    served = {_wire(t)["name"]: _wire(t) for t in tool_definitions(with_crash_tool=True)}
    for server, names in listed.items():
        tools = data["servers"][server]["tools"]
        assert [tool["name"] for tool in tools] == names
        for tool in tools:
            # Exactly what tools/list returned for it, in the canonical form (`required` sorted,
            # mas/runtime/lockfile.py; new bookkeeping keys may sit beside it).
            expected = canonical_tool(served[tool["name"]])
            assert {key: tool[key] for key in expected} == expected

    # Nothing about where or how the servers are reached.
    for forbidden in [token, api_key, env_value, url, "127.0.0.1", TOKEN_VAR, "TOOLGEN_LOCK_ENV", "Bearer", "env:"]:
        assert forbidden not in text, forbidden
    for forbidden in ['"authorization"', '"x-api-key"', "mas.samples", "--page-size", "zns"]:
        assert forbidden not in text.lower(), forbidden

    # A second live run rewrites nothing, and offline generation agrees with the lock.
    assert generate(tmp_path, args, monkeypatch) == 0
    assert (tmp_path / "lock.json").read_text(encoding="utf-8") == text
    assert generate(tmp_path, [*args, "--offline", "--check"], monkeypatch) == 0
