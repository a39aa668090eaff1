"""Every tool of every real capture generates, imports and is callable; real call results decode."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from gen_helpers import REPO, RecordingProvider, generate, import_fresh

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

# Written out by hand from the naming rules in docs/generator.md ("Names"), never computed with
# codegen.naming: (server, wire tool name) -> (method name, {required wire key: parameter name}).
EXPECTED_NAMES: dict[tuple[str, str], tuple[str, dict[str, str]]] = {
    ("everything", "echo"): ("echo", {"message": "message"}),
    ("everything", "get-annotated-message"): ("get_annotated_message", {"messageType": "message_type"}),
    ("everything", "get-env"): ("get_env", {}),
    ("everything", "get-resource-links"): ("get_resource_links", {}),
    ("everything", "get-resource-reference"): ("get_resource_reference", {}),
    ("everything", "get-structured-content"): ("get_structured_content", {"location": "location"}),
    ("everything", "get-sum"): ("get_sum", {"a": "a", "b": "b"}),
    ("everything", "get-tiny-image"): ("get_tiny_image", {}),
    ("everything", "gzip-file-as-resource"): ("gzip_file_as_resource", {}),
    ("everything", "toggle-simulated-logging"): ("toggle_simulated_logging", {}),
    ("everything", "toggle-subscriber-updates"): ("toggle_subscriber_updates", {}),
    ("everything", "trigger-long-running-operation"): ("trigger_long_running_operation", {}),
    ("everything", "get-roots-list"): ("get_roots_list", {}),
    ("everything", "trigger-elicitation-request"): ("trigger_elicitation_request", {}),
    ("everything", "trigger-url-elicitation"): ("trigger_url_elicitation", {"url": "url"}),
    ("everything", "trigger-sampling-request"): ("trigger_sampling_request", {"prompt": "prompt"}),
    ("everything", "simulate-research-query"): ("simulate_research_query", {"topic": "topic"}),
    ("fetch", "fetch"): ("fetch", {"url": "url"}),
    ("filesystem", "read_file"): ("read_file", {"path": "path"}),
    ("filesystem", "read_text_file"): ("read_text_file", {"path": "path"}),
    ("filesystem", "read_media_file"): ("read_media_file", {"path": "path"}),
    ("filesystem", "read_multiple_files"): ("read_multiple_files", {"paths": "paths"}),
    ("filesystem", "write_file"): ("write_file", {"path": "path", "content": "content"}),
    ("filesystem", "edit_file"): ("edit_file", {"path": "path", "edits": "edits"}),
    ("filesystem", "create_directory"): ("create_directory", {"path": "path"}),
    ("filesystem", "list_directory"): ("list_directory", {"path": "path"}),
    ("filesystem", "list_directory_with_sizes"): ("list_directory_with_sizes", {"path": "path"}),
    ("filesystem", "directory_tree"): ("directory_tree", {"path": "path"}),
    ("filesystem", "move_file"): ("move_file", {"source": "source", "destination": "destination"}),
    ("filesystem", "search_files"): ("search_files", {"path": "path", "pattern": "pattern"}),
    ("filesystem", "get_file_info"): ("get_file_info", {"path": "path"}),
    ("filesystem", "list_allowed_directories"): ("list_allowed_directories", {}),
    ("git", "git_status"): ("git_status", {"repo_path": "repo_path"}),
    ("git", "git_diff_unstaged"): ("git_diff_unstaged", {"repo_path": "repo_path"}),
    ("git", "git_diff_staged"): ("git_diff_staged", {"repo_path": "repo_path"}),
    ("git", "git_diff"): ("git_diff", {"repo_path": "repo_path", "target": "target"}),
    ("git", "git_commit"): ("git_commit", {"repo_path": "repo_path", "message": "message"}),
    ("git", "git_add"): ("git_add", {"repo_path": "repo_path", "files": "files"}),
    ("git", "git_reset"): ("git_reset", {"repo_path": "repo_path"}),
    ("git", "git_log"): ("git_log", {"repo_path": "repo_path"}),
    ("git", "git_create_branch"): ("git_create_branch", {"repo_path": "repo_path", "branch_name": "branch_name"}),
    ("git", "git_checkout"): ("git_checkout", {"repo_path": "repo_path", "branch_name": "branch_name"}),
    ("git", "git_show"): ("git_show", {"repo_path": "repo_path", "revision": "revision"}),
    ("git", "git_branch"): ("git_branch", {"repo_path": "repo_path", "branch_type": "branch_type"}),
    ("memory", "create_entities"): ("create_entities", {"entities": "entities"}),
    ("memory", "create_relations"): ("create_relations", {"relations": "relations"}),
    ("memory", "add_observations"): ("add_observations", {"observations": "observations"}),
    ("memory", "delete_entities"): ("delete_entities", {"entityNames": "entity_names"}),
    ("memory", "delete_observations"): ("delete_observations", {"deletions": "deletions"}),
    ("memory", "delete_relations"): ("delete_relations", {"relations": "relations"}),
    ("memory", "read_graph"): ("read_graph", {}),
    ("memory", "search_nodes"): ("search_nodes", {"query": "query"}),
    ("memory", "open_nodes"): ("open_nodes", {"names": "names"}),
    ("time", "get_current_time"): ("get_current_time", {"timezone": "timezone"}),
    ("time", "convert_time"): (
        "convert_time",
        {"source_timezone": "source_timezone", "time": "time", "target_timezone": "target_timezone"},
    ),
}


def test_every_capture_tool_is_in_the_manifest(pkg: ModuleType) -> None:
    assert sorted(pkg.TOOLS) == sorted(name for _, name in CASES)
    assert len(CASES) == 55
    assert sorted(CASES) == sorted(EXPECTED_NAMES)


@pytest.mark.parametrize(("server", "wire"), CASES, ids=[f"{s}.{w}" for s, w in CASES])
def test_tool_is_callable_with_wire_name_and_keys(pkg: ModuleType, server: str, wire: str) -> None:
    tool = next(t for t in _tools(server) if t["name"] == wire)
    props = tool["inputSchema"].get("properties", {})
    required = tool["inputSchema"].get("required", [])
    method_name, param_names = EXPECTED_NAMES[(server, wire)]
    assert sorted(param_names) == sorted(required)
    kwargs = {param_names[key]: _sample(props[key]) for key in required}

    capture = RESULTS / f"{server}.call.{wire}.json"
    answer = json.loads(capture.read_text()) if capture.exists() else {"content": [{"type": "text", "text": "ok"}]}
    provider = RecordingProvider(default=answer)
    info = pkg.TOOLS[wire]
    assert info.method == method_name
    method = getattr(getattr(pkg.Tools(provider), info.namespace), method_name)

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
    # The shim without its content-block models (``_runtime._content``, pydantic): no model is built.
    shim = [f"all_captures._runtime.{name}" for name in ("_base", "_decode", "_envelope", "_errors", "_info", "_input",
                                                          "_omit", "_options", "_plan", "_task", "_text")]  # fmt: skip
    assert before == [
        "all_captures._rules",
        "all_captures._runtime",
        *shim,
        "all_captures._tools",
        "all_captures._version",
    ]
    # Only the called tool's model module, not every tool's: a call builds its own models.
    assert after == [
        *before,
        "all_captures.outputs",
        "all_captures.outputs.time_get_current_time_output",
    ]
    assert value_type == model_name == "TimeGetCurrentTimeOutput"
