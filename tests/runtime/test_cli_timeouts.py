"""``mas-runtime call`` and ``toolgen record`` give up on a server that never answers (issue 17, item 6).

Both run as a user runs them (a subprocess, from a folder that is not the repo) against
``tests/servers/raw_stdio_server.py``, whose ``never`` tool never answers.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from prefork import python_args, python_command

from mas.runtime.__main__ import CALL_TIMEOUT, _call_timeout
from mas.runtime.config import positive_seconds
from mas.runtime.registry import RuntimeRegistry

REPO = Path(__file__).resolve().parents[2]
SERVER = REPO / "tests" / "servers" / "raw_stdio_server.py"


def _infra(folder: Path) -> Path:
    path = folder / "infra.yaml"
    spec = {
        "kind": "ToolServerRegistry",
        "spec": {"servers": [{"name": "raw", "protocol": "mcp", "transport": "stdio", "command": "python",
                              "args": list(python_args(str(SERVER), pythonpath=None)), "connect_timeout_seconds": 20}]},
    }  # fmt: skip
    path.write_text(json.dumps(spec))
    return path


def _run(cwd: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    start = time.monotonic()
    proc = subprocess.run(python_command(*args), cwd=cwd, env=env, capture_output=True, text=True, timeout=90)
    return proc, time.monotonic() - start


def test_mas_runtime_call_gives_up_after_its_timeout(tmp_path: Path) -> None:
    _infra(tmp_path)
    proc, took = _run(tmp_path, "-m", "mas.runtime", "call", "never", "--infra", "infra.yaml", "--timeout", "2", "-q")
    assert proc.returncode == 1, proc.stderr
    envelope = json.loads(proc.stdout)
    assert envelope["metadata"] == {"error_kind": "timeout"}
    assert envelope["result"] == "MCP server 'raw': tools/call 'never' timed out after 2.0 s"
    assert took < 30, took


def test_toolgen_record_gives_up_on_each_call_after_its_timeout(tmp_path: Path) -> None:
    _infra(tmp_path)
    (tmp_path / "examples.yaml").write_text("- tool: never\n- tool: echo\n  arguments: {text: hi}\n")
    proc, took = _run(
        tmp_path, "-m", "codegen", "record", "--examples", "examples.yaml", "--infra", "infra.yaml",
        "--samples", "samples.json", "--timeout", "2",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr  # a call failed: exit 1, the rest recorded
    assert (
        "toolgen: not recorded (error result): never: MCP server 'raw': tools/call 'never' timed out after 2.0 s"
        in (proc.stderr)
    )
    assert "1 result(s) recorded" in proc.stdout  # the healthy call after it still ran
    assert took < 30, took


def test_the_call_timeout_defaults_to_the_tools_own_then_60_seconds(tmp_path: Path) -> None:
    tools = tmp_path / "tools.yaml"
    (tmp_path / "cli_timeout_handlers.py").write_text("def f():\n    return 1\n")  # found beside the YAML
    tools.write_text(
        "kind: Tool\nmetadata:\n  name: slow\nspec:\n  description: d\n  parameters: {type: object}\n"
        "  timeout_seconds: 7\n  handler: cli_timeout_handlers:f\n---\nkind: Tool\nmetadata:\n  name: plain\n"
        "spec:\n  description: d\n  parameters: {type: object}\n  handler: cli_timeout_handlers:f\n"
    )
    with RuntimeRegistry.from_sources(tools=[tools]) as registry:
        given = argparse.Namespace(tool="slow", timeout=3.0)
        assert _call_timeout(given, registry) == 3.0
        assert _call_timeout(argparse.Namespace(tool="slow", timeout=None), registry) == 7.0
        assert _call_timeout(argparse.Namespace(tool="plain", timeout=None), registry) == CALL_TIMEOUT == 60.0


@pytest.mark.parametrize("text", ["0", "-1", "nan", "inf", "soon"])
def test_a_timeout_must_be_a_positive_number_of_seconds(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        positive_seconds(text)
    assert positive_seconds("0.5") == 0.5
