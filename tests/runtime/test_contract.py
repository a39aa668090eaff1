"""The ToolContract core: list_tools entries, envelopes and kwarg forwarding."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import pytest

from mas.runtime.contracts.tool_contract import (
    ToolContract,
    ToolResultEnvelope,
    ainvoke_call_tool,
    build_tool_entry,
    invoke_call_tool,
)


class Weather(ToolContract):
    name: ClassVar[str] = "weather"
    description: ClassVar[str] = "Weather for a city."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
        "required": ["city"],
    }
    title: ClassVar[str | None] = "Weather"
    read_only: ClassVar[bool | None] = True
    destructive: ClassVar[bool | None] = False
    timeout_seconds: ClassVar[float | None] = 2.5

    def execute(self, **kwargs: Any) -> Any:
        if kwargs["city"] == "Atlantis":
            raise LookupError("no such city")
        return f"sunny in {kwargs['city']}"


class Bare(ToolContract):
    name: ClassVar[str] = "bare"
    description: ClassVar[str] = "Nothing optional."

    def execute(self, **kwargs: Any) -> Any:
        return None


def test_list_tools_has_advertise_keys_only_when_set_and_mirrors_hints() -> None:
    assert Weather().list_tools() == [
        {
            "name": "weather",
            "description": "Weather for a city.",
            "parameters": Weather.parameters,
            "title": "Weather",
            "read_only": True,
            "destructive": False,
            "timeout_seconds": 2.5,
            "annotations": {"readOnlyHint": True, "destructiveHint": False},
        }
    ]


def test_unset_hints_are_omitted_including_read_only_none() -> None:
    entry = Bare().list_tools()[0]
    assert entry == {
        "name": "bare",
        "description": "Nothing optional.",
        "parameters": {"type": "object", "properties": {}},
    }
    assert "read_only" not in build_tool_entry("x", "d", {"type": "object"}, read_only=None)


def test_build_tool_entry_rejects_unknown_advertise_key() -> None:
    with pytest.raises(TypeError, match="unknown advertise key"):
        build_tool_entry("x", "d", {"type": "object"}, colour="red")


def test_envelope_round_trip_with_every_key() -> None:
    full = ToolResultEnvelope(
        status="success",
        result={"a": 1},
        is_error=False,
        result_mode="session",
        execution_mode="async",
        events=[{"progress": 1}],
        session_id="s-1",
        session_status="running",
        metadata={"k": "v"},
        content=[{"type": "text", "text": "hi"}],
        structured_content={"a": 1},
        result_type="input_required",
        meta={"trace": "t"},
    )
    data = full.to_dict()
    assert data == {
        "status": "success",
        "result": {"a": 1},
        "is_error": False,
        "result_mode": "session",
        "execution_mode": "async",
        "events": [{"progress": 1}],
        "session_id": "s-1",
        "session_status": "running",
        "metadata": {"k": "v"},
        "content": [{"type": "text", "text": "hi"}],
        "structured_content": {"a": 1},
        "result_type": "input_required",
        "meta": {"trace": "t"},
    }
    assert ToolResultEnvelope.from_dict(data) == full


def test_envelope_omits_unset_keys_and_complete_result_type() -> None:
    data = ToolResultEnvelope.success(42).to_dict()
    assert data == {
        "status": "success",
        "result": 42,
        "is_error": False,
        "result_mode": "inline",
        "execution_mode": "sync",
    }
    assert ToolResultEnvelope.from_dict(data) == ToolResultEnvelope.success(42)


def test_envelope_from_dict_rejects_unknown_key() -> None:
    with pytest.raises(ValueError, match="unknown ToolResultEnvelope key\\(s\\): colour"):
        ToolResultEnvelope.from_dict({"status": "success", "result": 1, "colour": "red"})


class Recorder:
    """Records what call_tool received."""

    def __init__(self) -> None:
        self.received: dict[str, Any] = {}


class DeclaresSome(Recorder):
    def call_tool(
        self, tool_name: str, arguments: dict[str, Any], timeout_seconds: float | None = None, user: str = ""
    ) -> str:
        self.received = {
            "tool_name": tool_name,
            "arguments": arguments,
            "timeout_seconds": timeout_seconds,
            "user": user,
        }
        return "ok"


class DeclaresNone(Recorder):
    def call_tool(self, tool_name: str, arguments: dict[str, Any]) -> str:
        self.received = {"tool_name": tool_name, "arguments": arguments}
        return "ok"


class TakesAll(Recorder):
    def call_tool(self, tool_name: str, arguments: dict[str, Any], **kwargs: Any) -> str:
        self.received = {"tool_name": tool_name, "arguments": arguments, **kwargs}
        return "ok"


OPTIONS: dict[str, Any] = {"timeout_seconds": 3.0, "user": "ada", "meta": {"m": 1}, "allow_claimed": None}


def test_invoke_forwards_only_declared_kwargs() -> None:
    callee = DeclaresSome()
    assert invoke_call_tool(callee, "t", {"x": 1}, **OPTIONS) == "ok"
    assert callee.received == {"tool_name": "t", "arguments": {"x": 1}, "timeout_seconds": 3.0, "user": "ada"}


def test_invoke_forwards_nothing_to_a_plain_callee() -> None:
    callee = DeclaresNone()
    invoke_call_tool(callee, "t", None, **OPTIONS)
    assert callee.received == {"tool_name": "t", "arguments": {}}


def test_invoke_forwards_every_set_kwarg_to_var_keyword() -> None:
    callee = TakesAll()
    invoke_call_tool(callee, "t", {"x": 1}, **OPTIONS)
    # allow_claimed=None means "not set": it is not forwarded even to **kwargs.
    assert callee.received == {
        "tool_name": "t",
        "arguments": {"x": 1},
        "timeout_seconds": 3.0,
        "user": "ada",
        "meta": {"m": 1},
    }


def test_invoke_rejects_unknown_option() -> None:
    with pytest.raises(TypeError, match="unknown call option\\(s\\): retries"):
        invoke_call_tool(TakesAll(), "t", {}, retries=3)


class AsyncPreferred:
    def __init__(self) -> None:
        self.used = ""
        self.received: dict[str, Any] = {}

    def call_tool(self, tool_name: str, arguments: dict[str, Any]) -> str:
        self.used = "call_tool"
        return "sync"

    async def acall_tool(self, tool_name: str, arguments: dict[str, Any], timeout_seconds: float | None = None) -> str:
        self.used = "acall_tool"
        self.received = {"timeout_seconds": timeout_seconds}
        return "async"


class CoroutineCallTool:
    async def call_tool(self, tool_name: str, arguments: dict[str, Any], user: str = "") -> str:
        return f"coroutine:{tool_name}:{user}"


class SyncOnly:
    def call_tool(self, tool_name: str, arguments: dict[str, Any]) -> str:
        return f"thread:{tool_name}:{arguments}"


def test_ainvoke_prefers_acall_tool() -> None:
    callee = AsyncPreferred()
    assert asyncio.run(ainvoke_call_tool(callee, "t", {}, timeout_seconds=1.5, user="ada")) == "async"
    assert (callee.used, callee.received) == ("acall_tool", {"timeout_seconds": 1.5})


def test_ainvoke_awaits_a_coroutine_call_tool() -> None:
    assert asyncio.run(ainvoke_call_tool(CoroutineCallTool(), "t", {}, user="ada", meta={"x": 1})) == "coroutine:t:ada"


def test_ainvoke_runs_a_sync_call_tool() -> None:
    assert asyncio.run(ainvoke_call_tool(SyncOnly(), "t", {"a": 1})) == "thread:t:{'a': 1}"


def test_invalid_arguments_give_an_error_envelope_naming_the_field() -> None:
    envelope = Weather().call_tool("weather", {"city": "Oslo", "days": 0})
    assert envelope.is_error is True
    assert envelope.status == "error"
    assert envelope.result == "invalid arguments for tool 'weather': /days: 0 is less than the minimum of 1"


def test_missing_required_argument_is_named() -> None:
    envelope = Weather().call_tool("weather", {})
    assert envelope.result == "invalid arguments for tool 'weather': /: missing required argument 'city'"


def test_raising_execute_gives_an_error_envelope() -> None:
    envelope = Weather().call_tool("weather", {"city": "Atlantis"})
    assert envelope.to_dict() == {
        "status": "error",
        "result": "tool 'weather' failed: LookupError: no such city",
        "is_error": True,
        "result_mode": "inline",
        "execution_mode": "sync",
        "metadata": {"error_kind": "tool_error"},
        "content": [{"type": "text", "text": "tool 'weather' failed: LookupError: no such city"}],
    }


def test_successful_call_wraps_text() -> None:
    envelope = Weather().call_tool("weather", {"city": "Oslo"})
    assert (envelope.is_error, envelope.result, envelope.content) == (
        False,
        "sunny in Oslo",
        [{"type": "text", "text": "sunny in Oslo"}],
    )
