"""One canonical form by JSON Schema's meaning (issue 16 item 11, issue 17 item 14), used by the
lock, drift (``toolgen diff``, live ``--check``) and the runtime pin hash alike; and ``drift_ignore``,
the infra key that keeps a known-noisy spot of a server as the lock has it.

Against a real stdio server whose listing changes at every start (tests/servers/noisy_default_server.py:
a default list rebuilt in another order, ``required`` reordered), as mcp-atlassian's does; each start
a fork of an interpreter that has imported the MCP SDK already (tests/prefork.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import REPO, forked_python

from codegen.cli import main as toolgen
from mas.runtime.lockfile import canonical_tool, tool_hash
from mas.runtime.registry import RuntimeRegistry

SERVER = REPO / "tests" / "servers" / "noisy_default_server.py"
IGNORE = [{"tool": "search", "pointer": "/inputSchema/properties/fields/default"}]


def _tool(required: list[str], default: list[str]) -> dict[str, Any]:
    return {
        "name": "t",
        "inputSchema": {
            "type": "object",
            "properties": {
                "a": {"type": "object", "properties": {"x": {}, "y": {}}, "required": required},
                "b": {"default": {"required": default}, "examples": [default], "const": default},
            },
            "required": required,
            "$defs": {"D": {"anyOf": [{"required": required}]}},
        },
        "_meta": {"required": default},
        "annotations": {"title": "x"},
    }


def test_sets_are_sorted_wherever_a_schema_is_and_data_keeps_its_order() -> None:
    tool = canonical_tool(_tool(["y", "x"], ["b", "a"]))
    schema = tool["inputSchema"]
    assert schema["required"] == ["x", "y"]
    assert schema["properties"]["a"]["required"] == ["x", "y"]
    assert schema["$defs"]["D"]["anyOf"][0]["required"] == ["x", "y"]
    # Values are data, even under a key named `required`: kept as sent.
    assert schema["properties"]["b"] == {
        "default": {"required": ["b", "a"]},
        "examples": [["b", "a"]],
        "const": ["b", "a"],
    }
    assert tool["_meta"] == {"required": ["b", "a"]}


def test_the_pin_hash_sees_a_change_inside_a_default_but_not_a_reordered_required() -> None:
    assert tool_hash(_tool(["x", "y"], ["a", "b"])) == tool_hash(_tool(["y", "x"], ["a", "b"]))
    assert tool_hash(_tool(["x", "y"], ["a", "b"])) != tool_hash(_tool(["x", "y"], ["b", "a"]))


def _infra(folder: Path, start: int, *, ignore: bool, pin: bool = False) -> Path:
    server: dict[str, Any] = {"name": "noisy", "protocol": "mcp", "transport": "stdio",
                              **forked_python(str(SERVER), str(start)), "connect_timeout_seconds": 20}  # fmt: skip
    if ignore:
        server["drift_ignore"] = IGNORE
    if pin:
        server |= {"pin": "refuse", "lock": "toolgen.lock.json"}
    doc = {"apiVersion": "toolgen/v1", "kind": "ToolServerRegistry", "metadata": {"name": "n"},
           "spec": {"servers": [server]}}  # fmt: skip
    path = folder / "infra.yaml"
    path.write_text(json.dumps(doc))
    return path


def _toolgen(cwd: Path, args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(cwd)
        code = toolgen(args)
    out, err = capsys.readouterr()
    return code, out + err


GEN = ["generate", "--infra", "infra.yaml", "--out", "out", "--package", "noisy", "-q"]


def test_a_reordered_required_is_no_change_for_check_or_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _infra(tmp_path, 0, ignore=False)
    assert _toolgen(tmp_path, GEN, capsys)[0] == 0
    _infra(tmp_path, 4, ignore=False)  # started again: `required` in another order, nothing else
    assert _toolgen(tmp_path, [*GEN, "--check"], capsys) == (0, "toolgen: out/noisy is up to date\n")
    assert _toolgen(tmp_path, ["diff", "--infra", "infra.yaml", "-q"], capsys)[0] == 0


def test_a_noisy_default_is_drift_until_drift_ignore_keeps_it_as_locked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _infra(tmp_path, 0, ignore=False)
    assert _toolgen(tmp_path, GEN, capsys)[0] == 0
    lock = (tmp_path / "toolgen.lock.json").read_text()
    _infra(tmp_path, 1, ignore=False)  # the default list rebuilt in another order: data, so a change
    code, out = _toolgen(tmp_path, [*GEN, "--check"], capsys)
    assert code == 1 and "parameter 'fields': default changed (review)" in out, out
    assert _toolgen(tmp_path, ["diff", "--infra", "infra.yaml", "-q"], capsys)[0] in (1, 3)
    # Every start another order; ignored, it is the locked value for each command that reads the
    # server. One start per command (each start is a server process), and a last one that moves
    # `required` too.
    _infra(tmp_path, 1, ignore=True)
    assert _toolgen(tmp_path, [*GEN, "--check"], capsys) == (0, "toolgen: out/noisy is up to date\n")
    _infra(tmp_path, 2, ignore=True)
    assert _toolgen(tmp_path, ["diff", "--infra", "infra.yaml", "-q"], capsys)[0] == 0
    _infra(tmp_path, 3, ignore=True)
    assert _toolgen(tmp_path, GEN, capsys)[0] == 0
    assert (tmp_path / "toolgen.lock.json").read_text() == lock
    _infra(tmp_path, 5, ignore=True)
    assert _toolgen(tmp_path, [*GEN, "--check"], capsys) == (0, "toolgen: out/noisy is up to date\n")


def test_pinning_refuses_a_changed_default_unless_it_is_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _infra(tmp_path, 0, ignore=False)
    assert _toolgen(tmp_path, GEN, capsys)[0] == 0
    with RuntimeRegistry.from_sources(infra=[_infra(tmp_path, 2, ignore=False, pin=True)]) as registry:
        refused = registry.call_tool("search", {"query": "q", "limit": 1})
        assert refused.is_error and refused.metadata is not None
        assert refused.metadata["pointer"] == "/inputSchema/properties/fields/default/0"
    with RuntimeRegistry.from_sources(infra=[_infra(tmp_path, 2, ignore=True, pin=True)]) as registry:
        assert registry.call_tool("search", {"query": "q", "limit": 1}).text == "searched (start 2)"
