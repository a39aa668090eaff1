"""Every tool of every real capture generates, imports and is callable; real call results decode."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from gen_helpers import REPO, RecordingProvider, generate, import_fresh

from codegen.naming import assign_names

LISTS = REPO / "tests" / "fixtures" / "mcp-tools-list"
RESULTS = REPO / "tests" / "fixtures" / "mcp-call-results"
SERVERS = sorted(p.stem for p in LISTS.glob("*.json"))


def _tools(server: str) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = json.loads((LISTS / f"{server}.json").read_text())["tools"]
    return tools


def _sample(schema: dict[str, Any]) -> Any:
    """A minimal valid value for a property schema."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    return {"string": "x", "integer": 1, "number": 1.5, "boolean": True, "array": [], "object": {}}.get(kind, "x")


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    root = tmp_path_factory.mktemp("captures")
    args = [a for s in SERVERS for a in ("--mcp-json", str(LISTS / f"{s}.json"))]
    mp = pytest.MonkeyPatch()
    try:
        assert generate(root, [*args, "--out", str(root), "--package", "all_captures"], mp) == 0
    finally:
        mp.undo()
    return import_fresh(root, "all_captures")


CASES = [(server, tool["name"]) for server in SERVERS for tool in _tools(server)]


def test_every_capture_tool_is_in_the_manifest(pkg: ModuleType) -> None:
    assert sorted(pkg.TOOLS) == sorted(name for _, name in CASES)
    assert len(CASES) == 55


@pytest.mark.parametrize(("server", "wire"), CASES, ids=[f"{s}.{w}" for s, w in CASES])
def test_tool_is_callable_with_wire_name_and_keys(pkg: ModuleType, server: str, wire: str) -> None:
    tool = next(t for t in _tools(server) if t["name"] == wire)
    props = tool["inputSchema"].get("properties", {})
    required = tool["inputSchema"].get("required", [])
    py = assign_names(props, prefix="arg", reserved={"self"}, builtins_ok=True)
    kwargs = {py[key]: _sample(props[key]) for key in required}

    capture = RESULTS / f"{server}.call.{wire}.json"
    answer = json.loads(capture.read_text()) if capture.exists() else {"content": [{"type": "text", "text": "ok"}]}
    provider = RecordingProvider(default=answer)
    info = pkg.TOOLS[wire]
    method = getattr(getattr(pkg.Tools(provider), info.namespace), info.method)

    if answer.get("isError"):
        with pytest.raises(pkg.ToolCallError):
            method(**kwargs)
    elif info.output_model is not None and "structuredContent" not in answer:
        with pytest.raises(pkg.ToolOutputValidationError):
            method(**kwargs)
    else:
        value = method(**kwargs)
        expected_type = info.output_model if info.output_model is not None else pkg.ToolOutput
        assert isinstance(value, expected_type)
        if info.output_model is not None:
            assert value.model_dump(mode="json", by_alias=True, exclude_none=True) == answer["structuredContent"]
    assert provider.calls == [(wire, {key: _sample(props[key]) for key in required}, {})]


def test_real_results_decode_to_typed_values(pkg: ModuleType) -> None:
    time_answer = json.loads((RESULTS / "time.call.get_current_time.json").read_text())
    now = pkg.Tools(RecordingProvider(default=time_answer)).time.get_current_time(timezone="UTC")
    assert type(now).__name__ == "TimeGetCurrentTimeOutput"
    assert (now.timezone, now.is_dst) == (time_answer["structuredContent"]["timezone"], False)

    image = json.loads((RESULTS / "everything.call.get-tiny-image.json").read_text())
    out = pkg.Tools(RecordingProvider(default=image)).everything.get_tiny_image()
    kinds = [type(block).__name__ for block in out.content]
    assert "ImageContent" in kinds and out.text.startswith("Here's the image")


def test_async_twin_calls_the_same_wire_name(pkg: ModuleType) -> None:
    import asyncio

    provider = RecordingProvider(default=json.loads((RESULTS / "time.call.convert_time.json").read_text()))
    tools = pkg.AsyncTools(provider)
    converted = asyncio.run(tools.time.convert_time(source_timezone="UTC", time="12:00", target_timezone="Asia/Tokyo"))
    assert type(converted).__name__ == "TimeConvertTimeOutput"
    assert provider.calls[0][:2] == (
        "convert_time",
        {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
    )


def test_models_are_imported_on_first_use(pkg: ModuleType) -> None:
    """A large package imports fast: no model module loads until a tool needs one."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(pkg.__file__).parent.parent
    script = """
import json, sys
import all_captures as pkg
before = sorted(m for m in sys.modules if m.startswith("all_captures."))
answer = {"structuredContent": {"timezone": "UTC", "datetime": "2026-01-01T00:00:00+00:00",
          "day_of_week": "Thursday", "is_dst": False}}
value = pkg.Tools(type("P", (), {"call_tool": lambda self, n, a: answer})()).time.get_current_time(timezone="UTC")
after = sorted(m for m in sys.modules if m.startswith("all_captures."))
print(json.dumps([before, after, type(value).__name__, pkg.TOOLS["get_current_time"].output_model.__name__]))
"""
    proc = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, check=True)
    before, after, value_type, model_name = json.loads(proc.stdout)
    assert before == ["all_captures._runtime", "all_captures._tools"]
    # Only the called tool's model module, not every tool's: a call builds its own models.
    assert after == [
        "all_captures._runtime",
        "all_captures._tools",
        "all_captures.outputs",
        "all_captures.outputs.time_get_current_time_output",
    ]
    assert value_type == model_name == "TimeGetCurrentTimeOutput"
