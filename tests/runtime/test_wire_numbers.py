"""NaN and infinity never leave the client as ``null`` (issue 17, item 11).

pydantic, which the MCP SDK serialises requests with, writes a float NaN or infinity as ``null``:
the server would run the call with an argument nobody gave. Every path that sends arguments (the
provider, sync and async; ``mas-runtime call``; ``toolgen record``) refuses them first, as an
``invalid_arguments`` error naming the JSON pointer. ``tests/servers/echo_arguments_server.py``
logs every call that reaches it, so "nothing was sent" is checked against a real process.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp_helpers import stdio_config
from prefork import python_args, python_command

from mas.runtime.mcp._wire import non_json_number
from mas.runtime.mcp.provider import MCPToolProvider

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "tests" / "servers" / "echo_arguments_server.py"
NAN, INF = float("nan"), float("inf")

REFUSED = {
    "nan": ({"x": NAN}, "/x: nan is not a JSON number"),
    "infinity in a list": ({"x": [1.5, INF]}, "/x/1: inf is not a JSON number"),
    "negative infinity deep": ({"a": {"b/c": [{"d": -INF}]}}, "/a/b~1c/0/d: -inf is not a JSON number"),
    "in a tuple": ({"t": (1, NAN)}, "/t/1: nan is not a JSON number"),
}


def _received(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture
def served(tmp_path: Path) -> Any:
    log = tmp_path / "calls.jsonl"
    with MCPToolProvider(stdio_config("echo", "--log", str(log), script=SCRIPT)) as provider:
        yield provider, log


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_non_finite_arguments_are_refused_before_sending(served: Any, case: str) -> None:
    provider, log = served
    arguments, problem = REFUSED[case]
    envelope = provider.call_tool("echo", arguments)
    assert envelope.is_error and envelope.error_kind == "invalid_arguments"
    assert f"not sent: invalid arguments: {problem} (NaN and infinity cannot be sent)" in envelope.text
    assert _received(log) == []
    # The connection is fine, and finite floats go through unchanged.
    envelope = provider.call_tool("echo", {"x": [1.5, -0.0, 1e308]})
    assert not envelope.is_error, envelope.text
    assert _received(log) == [{"arguments": {"x": [1.5, -0.0, 1e308]}, "meta": None}]


def test_non_finite_meta_is_refused_and_the_async_path_too(served: Any) -> None:
    provider, log = served
    envelope = provider.call_tool("echo", {"x": 1}, meta={"trace": {"w": NAN}})
    assert envelope.error_kind == "invalid_arguments" and "invalid meta: /trace/w: nan" in envelope.text

    async def call() -> Any:
        return await provider.acall_tool("echo", {"x": INF})

    envelope = asyncio.run(call())
    assert envelope.error_kind == "invalid_arguments" and "invalid arguments: /x: inf" in envelope.text
    assert _received(log) == []


def _infra(tmp_path: Path) -> Path:
    server = {"name": "echo", "protocol": "mcp", "transport": "stdio", "command": "python",
              "args": [*python_args(str(SCRIPT), pythonpath=None), "--log", str(tmp_path / "calls.jsonl")],
              "connect_timeout_seconds": 20}  # fmt: skip
    doc = {"apiVersion": "toolgen/v1", "kind": "ToolServerRegistry", "metadata": {"name": "e"},
           "spec": {"servers": [server]}}  # fmt: skip
    (tmp_path / "infra.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    return tmp_path / "infra.yaml"


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = python_command("-m", *args, pythonpath=os.environ.get("PYTHONPATH"))
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120, env={**os.environ})


def test_mas_runtime_call_refuses_nan_read_from_the_command_line(tmp_path: Path) -> None:
    _infra(tmp_path)
    proc = _run(tmp_path, "mas.runtime", "call", "echo", '{"x": NaN, "y": Infinity}', "--infra", "infra.yaml")
    assert proc.returncode == 1, proc.stderr
    envelope = json.loads(proc.stdout)
    assert envelope["metadata"] == {"error_kind": "invalid_arguments"}
    assert "not sent: invalid arguments: /x: nan is not a JSON number" in envelope["result"]
    assert _received(tmp_path / "calls.jsonl") == []


def test_toolgen_record_refuses_nan_examples(tmp_path: Path) -> None:
    _infra(tmp_path)
    (tmp_path / "examples.yaml").write_text("- tool: echo\n  arguments: {x: .nan}\n- tool: echo\n  arguments: {x: 1}\n")
    proc = _run(tmp_path, "codegen", "record", "--examples", "examples.yaml", "--infra", "infra.yaml",
                "--samples", "samples.json")  # fmt: skip
    assert proc.returncode == 1, proc.stderr  # a call failed: exit 1, the rest recorded
    assert (
        "toolgen: not recorded (error result): echo: " in proc.stderr and "/x: nan is not a JSON number" in proc.stderr
    )
    assert "1 result(s) recorded" in proc.stdout
    assert _received(tmp_path / "calls.jsonl") == [{"arguments": {"x": 1}, "meta": None}]


def test_the_check_names_the_first_value_and_survives_cycles_and_depth() -> None:
    looped: dict[str, Any] = {"ok": 1.0}
    looped["self"] = looped
    assert non_json_number(looped) is None
    deep: Any = NAN
    for _ in range(5000):
        deep = [deep]
    assert (
        non_json_number({"d": deep})
        == "/d" + "/0" * 5000 + ": nan is not a JSON number (NaN and infinity cannot be sent)"
    )
    assert non_json_number({"a": INF, "b": NAN}).startswith("/a: inf")  # type: ignore[union-attr]
    assert non_json_number(NAN) == "/: nan is not a JSON number (NaN and infinity cannot be sent)"
    assert non_json_number({"n": None, "s": "NaN", "i": 10**400, "f": math.pi}) is None
