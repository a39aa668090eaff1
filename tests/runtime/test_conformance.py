"""Conformance with the ToolContract (``tool-contract.txt``), statement by statement.

Each section quotes the statement it checks. MCP statements run against the real sample server
over stdio; nothing on the contract's path is mocked.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp_helpers import stdio_config

from mas.runtime.config import MCPServerConfig
from mas.runtime.contracts import _rules
from mas.runtime.contracts.tool_contract import (
    ADVERTISE_KEYS,
    CALL_KWARGS,
    HINT_KEYS,
    ToolContract,
    ToolResultEnvelope,
    ainvoke_call_tool,
    build_tool_entry,
    invoke_call_tool,
)
from mas.runtime.local import LocalToolRegistry
from mas.runtime.mcp.provider import MCPToolProvider
from mas.runtime.registry import RuntimeRegistry
from mas.runtime.yaml_source import load_tool_documents
from mas.samples.mcp_server import get_weather

REPO = Path(__file__).resolve().parents[2]
ALL_OPTIONS: dict[str, Any] = {
    "timeout_seconds": 5.0,
    "progress_callback": print,
    "cancel_event": threading.Event(),
    "meta": {"trace": "t"},
    "input_responses": {"r": {"action": "decline"}},
    "request_state": "state",
    "allow_input_required": True,
    "allow_claimed": False,
    "ctx": object(),
    "user": "alice",
}


class Echo(ToolContract):
    """Echo the message."""

    name = "echo"
    parameters = {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}

    def __init__(self) -> None:
        self.executed: list[dict[str, Any]] = []

    def execute(self, **kwargs: Any) -> Any:
        self.executed.append(kwargs)
        return kwargs["message"]


@pytest.fixture(scope="module")
def mcp() -> Iterator[MCPToolProvider]:
    with MCPToolProvider(stdio_config("sample")) as provider:
        yield provider


# --- "The engine, the local plugin, and the MCP plugin all dispatch through call_tool" -----------


def test_local_skills_and_mcp_all_dispatch_through_call_tool(mcp: MCPToolProvider) -> None:
    skills = RuntimeRegistry.from_sources(tools=[REPO / "library-samples" / "tools"])
    registry = RuntimeRegistry({"local": LocalToolRegistry([Echo]), "skills": skills, "sample": mcp})
    assert registry.call_tool("echo", {"message": "hi"}).result == "hi"
    converted = registry.call_tool("unit_convert", {"value": 1, "from_unit": "kg", "to_unit": "g"})
    assert converted.result["value"] == 1000
    assert registry.call_tool("get_weather", {"city": "Rome"}).structured_content == get_weather("Rome")


# --- "For local tools, ToolContract.call_tool validates the arguments and calls execute(**arguments)"


def test_local_call_tool_validates_then_calls_execute_with_the_arguments() -> None:
    tool = Echo()
    assert tool.call_tool("echo", {"message": "x"}).result == "x"
    refused = tool.call_tool("echo", {"message": 3})
    assert refused.error_kind == "invalid_arguments" and tool.executed == [{"message": "x"}]


# --- "For MCP, MCPToolProvider.call_tool sends MCP tools/call with the same name and arguments" --


def test_mcp_call_tool_sends_the_same_name_and_arguments(mcp: MCPToolProvider) -> None:
    envelope = mcp.call_tool("get_weather", {"city": "Lima", "units": "fahrenheit"})
    assert envelope.structured_content == get_weather("Lima", "fahrenheit")


# --- "Composite providers ... override call_tool and skip execute" ------------------------------


class Composite(ToolContract):
    """A composite: overrides call_tool (declaring only ``user``) and never runs execute."""

    name = "composite"

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []

    def call_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, user: str = "") -> ToolResultEnvelope:
        self.received.append({"user": user})
        return ToolResultEnvelope.success(f"{tool_name}:{user}")


def test_a_composite_overrides_call_tool_and_skips_execute() -> None:
    assert Composite().call_tool("anything", {}, user="u").result == "anything:u"


# --- Required surface ----------------------------------------------------------------------------


def test_list_tools_entries_have_name_description_parameters(mcp: MCPToolProvider) -> None:
    skills = RuntimeRegistry.from_sources(tools=[REPO / "library-samples" / "tools"])
    for provider in (Echo(), LocalToolRegistry([Echo]), skills, mcp):
        for entry in provider.list_tools():
            assert {"name", "description", "parameters"} <= set(entry)
            assert isinstance(entry["name"], str) and isinstance(entry["parameters"], dict)


def test_call_tool_gives_result_and_is_error_on_failure() -> None:
    assert Echo().call_tool("echo", {"message": "m"}).to_dict()["result"] == "m"
    failed = Echo().call_tool("other", {}).to_dict()
    assert failed["is_error"] is True and failed["status"] == "error" and failed["result"]


# --- "invoke_call_tool forwards optional kwargs only when the callee declares them or takes **kwargs"


class DeclaresSubset:
    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []

    def call_tool(
        self, tool_name: str, arguments: Mapping[str, Any], timeout_seconds: float | None = None, user: str = ""
    ) -> dict[str, Any]:
        self.received.append({"timeout_seconds": timeout_seconds, "user": user})
        return {"result": "ok", "is_error": False}


class DeclaresNone:
    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []

    def call_tool(self, tool_name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        self.received.append({})
        return {"result": "ok", "is_error": False}


class TakesKwargs:
    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []

    def call_tool(self, tool_name: str, arguments: Mapping[str, Any], **kwargs: Any) -> dict[str, Any]:
        self.received.append(kwargs)
        return {"result": "ok", "is_error": False}


class AsyncDeclaresSubset(DeclaresSubset):
    async def acall_tool(
        self, tool_name: str, arguments: Mapping[str, Any], timeout_seconds: float | None = None, user: str = ""
    ) -> dict[str, Any]:
        return self.call_tool(tool_name, arguments, timeout_seconds=timeout_seconds, user=user)


CALLEES: dict[str, tuple[type[Any], dict[str, Any]]] = {
    "declared subset": (DeclaresSubset, {"timeout_seconds": 5.0, "user": "alice"}),
    "none": (DeclaresNone, {}),
    "**kwargs": (TakesKwargs, ALL_OPTIONS),
    "composite ToolContract": (Composite, {"user": "alice"}),
    "async twin, declared subset": (AsyncDeclaresSubset, {"timeout_seconds": 5.0, "user": "alice"}),
}


@pytest.mark.parametrize("path", ["sync", "async"])
@pytest.mark.parametrize("kind", list(CALLEES))
def test_forwarding_rule(kind: str, path: str) -> None:
    cls, expected = CALLEES[kind]
    callee = cls()
    if path == "sync":
        invoke_call_tool(callee, "t", {}, **ALL_OPTIONS)
    else:
        asyncio.run(ainvoke_call_tool(callee, "t", {}, **ALL_OPTIONS))
    assert callee.received == [expected]


@pytest.mark.parametrize("path", ["sync", "async"])
def test_none_is_never_forwarded(path: str) -> None:
    callee = TakesKwargs()
    options = dict.fromkeys(CALL_KWARGS)
    if path == "sync":
        invoke_call_tool(callee, "t", {}, **options)
    else:
        asyncio.run(ainvoke_call_tool(callee, "t", {}, **options))
    assert callee.received == [{}]


@pytest.mark.parametrize("path", ["sync", "async"])
def test_the_registry_follows_the_forwarding_rule_on_both_paths(path: str) -> None:
    composite = Composite()
    registry = RuntimeRegistry({"p": composite})
    if path == "sync":
        registry.call_tool("composite", {}, **ALL_OPTIONS)
    else:
        asyncio.run(registry.acall_tool("composite", {}, **ALL_OPTIONS))
    assert composite.received == [{"user": "alice"}]


# --- Optional advertise keys: "A key appears only when set" --------------------------------------

VALUES: dict[str, Any] = {
    "title": "T",
    "output_schema": {"type": "object"},
    "idempotent": True,
    "read_only": False,
    "destructive": True,
    "open_world": False,
    "icons": [{"src": "https://example.com/i.png"}],
    "task_support": "optional",
    "meta": {"k": "v"},
    "semantics": {"kind": "search"},
    "timeout_seconds": 2.5,
}


def test_the_advertise_keys_are_the_contracts() -> None:
    assert tuple(VALUES) == ADVERTISE_KEYS


@pytest.mark.parametrize("key", ADVERTISE_KEYS)
def test_an_advertise_key_appears_only_when_set(key: str) -> None:
    bare = type("Bare", (Echo,), {})().list_tools()[0]
    assert key not in bare
    tool = type("WithKey", (Echo,), {key: VALUES[key]})()
    entry = tool.list_tools()[0]
    assert entry[key] == VALUES[key]
    assert set(entry) - {"name", "description", "parameters", "annotations"} == {key}


@pytest.mark.parametrize("key", ADVERTISE_KEYS)
def test_each_getter_feeds_its_key(key: str) -> None:
    getter = {
        "title": "get_title",
        "output_schema": "get_output_schema",
        "idempotent": "is_idempotent",
        "read_only": "is_read_only",
        "destructive": "is_destructive",
        "open_world": "is_open_world",
        "icons": "get_icons",
        "task_support": "get_task_support",
        "meta": "get_meta",
        "semantics": "get_semantics",
        "timeout_seconds": "get_timeout_seconds",
    }[key]
    tool = type("Overridden", (Echo,), {getter: lambda self: VALUES[key]})()
    assert tool.list_tools()[0][key] == VALUES[key]


@pytest.mark.parametrize("key", ADVERTISE_KEYS)
def test_a_yaml_spec_key_appears_only_when_set(tmp_path: Path, key: str) -> None:
    import yaml

    spec: dict[str, Any] = {"description": "d", "parameters": {"type": "object"}}
    doc = {"apiVersion": "toolgen/v1", "kind": "Tool", "metadata": {"name": "t"}, "spec": spec}
    (tmp_path / "bare.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    (bare,) = load_tool_documents([tmp_path / "bare.yaml"])
    assert key not in bare.to_entry()
    spec[key] = VALUES[key]
    (tmp_path / "set.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    (with_key,) = load_tool_documents([tmp_path / "set.yaml"])
    assert with_key.to_entry()[key] == VALUES[key]


# --- "When idempotent, read_only, destructive, or open_world is set, the entry also carries
#      MCP-style annotations" -------------------------------------------------------------------


@pytest.mark.parametrize("key", list(HINT_KEYS))
@pytest.mark.parametrize("value", [True, False])
def test_a_set_hint_is_mirrored_as_an_mcp_annotation(key: str, value: bool) -> None:
    entry = build_tool_entry("t", "", {"type": "object"}, **{key: value})
    assert entry["annotations"] == {HINT_KEYS[key]: value}


def test_no_hint_no_annotations() -> None:
    assert "annotations" not in build_tool_entry("t", "", {"type": "object"}, title="T", timeout_seconds=1)


# --- "read_only (None = omit)" --------------------------------------------------------------------


def test_read_only_none_is_omitted_everywhere(tmp_path: Path) -> None:
    assert "read_only" not in Echo().list_tools()[0]
    assert "read_only" not in build_tool_entry("t", "", {}, read_only=None)
    (tmp_path / "t.yaml").write_text(
        "apiVersion: toolgen/v1\nkind: Tool\nmetadata: {name: t}\n"
        "spec: {description: d, read_only: null, parameters: {type: object}}\n",
        encoding="utf-8",
    )
    (definition,) = load_tool_documents([tmp_path])
    assert "read_only" not in definition.to_entry() and "annotations" not in definition.to_entry()


# --- Optional call_tool kwargs ---------------------------------------------------------------------


def test_the_call_kwargs_are_the_contracts_in_order() -> None:
    assert CALL_KWARGS == tuple(ALL_OPTIONS)


def test_the_default_call_tool_ignores_the_kwargs_and_runs_execute() -> None:
    tool = Echo()
    assert tool.call_tool("echo", {"message": "m"}, **ALL_OPTIONS).result == "m"
    assert tool.executed == [{"message": "m"}]


def test_the_mcp_client_takes_every_option() -> None:
    # Typed by the one CallOptions (``**options: Unpack[CallOptions]``): every option is forwarded to it.
    for method in (MCPToolProvider.call_tool, MCPToolProvider.acall_tool):
        assert _rules.accepted_options(method) is None
        assert method.__annotations__["options"] == "Unpack[CallOptions]"


def test_the_mcp_client_maps_timeout_and_progress(mcp: MCPToolProvider) -> None:
    progress: list[tuple[float, float | None, str | None]] = []
    done = mcp.call_tool(
        "count_slowly",
        {"steps": 2, "delay_seconds": 0.01},
        progress_callback=lambda p, t, m: progress.append((p, t, m)),
    )
    assert done.text == "counted to 2" and [p for p, _, _ in progress] == [1, 2]
    late = mcp.call_tool("count_slowly", {"steps": 3, "delay_seconds": 0.5}, timeout_seconds=0.2)
    assert late.error_kind == "timeout"
    at_once = mcp.call_tool("count_slowly", {"steps": 1, "delay_seconds": 0.3}, timeout_seconds=0)
    assert at_once.error_kind == "timeout"  # 0 is a limit, not "unset"


# --- Result keys -----------------------------------------------------------------------------------


def test_the_usual_payload() -> None:
    assert ToolResultEnvelope.success(1).to_dict() == {
        "status": "success",
        "result": 1,
        "is_error": False,
        "result_mode": "inline",
        "execution_mode": "sync",
    }


OPTIONAL_VALUES: dict[str, Any] = {
    "events": [{"type": "progress"}],
    "session_id": "s-1",
    "session_status": "open",
    "metadata": {"error_kind": "tool_error"},
    "content": [{"type": "text", "text": "t"}],
    "structured_content": {"a": 1},
    "result_type": "input_required",
    "meta": {"m": 1},
}


@pytest.mark.parametrize("key", list(OPTIONAL_VALUES))
def test_an_optional_result_key_appears_only_when_set(key: str) -> None:
    assert key not in ToolResultEnvelope.success(1).to_dict()
    envelope = ToolResultEnvelope.success(1, **{key: OPTIONAL_VALUES[key]})
    data = envelope.to_dict()
    assert data[key] == OPTIONAL_VALUES[key]
    assert ToolResultEnvelope.from_dict(data) == envelope


def test_result_type_complete_is_omitted() -> None:
    assert "result_type" not in ToolResultEnvelope.success(1, result_type="complete").to_dict()


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=150, deadline=None)
@given(
    status=st.sampled_from(_rules.STATUSES),
    result=_json,
    is_error=st.booleans(),
    result_mode=st.sampled_from(_rules.RESULT_MODES),
    execution_mode=st.sampled_from(_rules.EXECUTION_MODES),
    session_id=st.none() | st.text(max_size=5),
    metadata=st.none() | st.dictionaries(st.text(max_size=4), _json, max_size=2),
    structured=_json,
    result_type=st.sampled_from(["complete", "input_required", "x-claimed"]),
)
def test_envelopes_round_trip(
    status: str,
    result: Any,
    is_error: bool,
    result_mode: Any,
    execution_mode: str,
    session_id: str | None,
    metadata: dict[str, Any] | None,
    structured: Any,
    result_type: str,
) -> None:
    envelope = ToolResultEnvelope(
        status=status,
        result=result,
        is_error=is_error,
        result_mode=result_mode,
        execution_mode=execution_mode,
        session_id=session_id,
        metadata=metadata,
        structured_content=structured,
        result_type=result_type,
    )
    assert envelope.is_error == (envelope.status == "error")  # the two always agree
    assert ToolResultEnvelope.from_dict(envelope.to_dict()) == envelope
    assert ToolResultEnvelope.coerce(envelope.to_dict()) == envelope
    assert _rules.to_envelope(envelope) == envelope.to_dict()


# --- "A caller that uses only the contract ... does not see URL, headers, pagination, or cache policy"


def test_mcp_entries_carry_no_connection_policy(mcp: MCPToolProvider) -> None:
    allowed = {"name", "description", "parameters", "annotations", *ADVERTISE_KEYS}
    for entry in mcp.list_tools():
        assert set(entry) <= allowed


# --- "The runtime discovers the tool names from the server, unless infra supplies an explicit list"


def test_an_explicit_tools_list_is_listed_without_a_server() -> None:
    config = MCPServerConfig(
        name="explicit",
        transport="stdio",
        command="/nonexistent/server",
        tools=({"name": "a", "inputSchema": {"type": "object"}},),
    )
    with MCPToolProvider(config) as provider:
        assert [entry["name"] for entry in provider.list_tools()] == ["a"]
