"""The contract's envelope rule (``wrap_result``, ``ToolResultEnvelope.coerce``) and its argument
forwarding (``invoke_call_tool``, ``ainvoke_call_tool``), each outcome written out by hand."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
from typing import Any

import pytest
from pydantic import BaseModel, Field

from mas.runtime.contracts.tool_contract import (
    CALL_KWARGS,
    ToolResultEnvelope,
    accepted_call_kwargs,
    ainvoke_call_tool,
    invoke_call_tool,
    wrap_result,
)


class Weather(BaseModel):
    city_name: str = Field(alias="cityName")
    day: datetime.date


# --- the envelope rule ----------------------------------------------------------------------------
def test_an_envelope_passes_through_unchanged() -> None:
    envelope = ToolResultEnvelope.failure("boom")
    assert wrap_result(envelope, has_output_schema=True) is envelope
    assert ToolResultEnvelope.coerce(envelope) is envelope


def test_an_envelope_shaped_dict_is_read_as_an_envelope() -> None:
    assert wrap_result({"is_error": True, "result": "bad", "status": "error"}, has_output_schema=True) == (
        ToolResultEnvelope(status="error", result="bad", is_error=True)
    )
    assert wrap_result({"is_error": False, "result": {"a": 1}}, has_output_schema=False) == (
        ToolResultEnvelope(result={"a": 1})
    )


def test_a_dict_with_a_marker_key_and_only_envelope_keys_is_an_envelope() -> None:
    assert wrap_result({"result": 1}, has_output_schema=False) == ToolResultEnvelope(result=1)
    assert wrap_result({"result": 1}, has_output_schema=True) == ToolResultEnvelope(result=1)
    assert wrap_result({"is_error": False}, has_output_schema=True) == ToolResultEnvelope(result=None)


def test_an_envelope_like_dict_with_unknown_keys_is_one_plain_value() -> None:
    value = {"is_error": True, "result": 1, "other": 2}
    assert wrap_result(value, has_output_schema=True) == ToolResultEnvelope(result=value, structured_content=value)
    assert wrap_result(value, has_output_schema=False) == ToolResultEnvelope(result=value)


def test_a_model_is_dumped_as_json_with_aliases() -> None:
    value = Weather(cityName="Oslo", day=datetime.date(2026, 1, 2))
    dumped = {"cityName": "Oslo", "day": "2026-01-02"}
    assert wrap_result(value, has_output_schema=True) == ToolResultEnvelope(result=dumped, structured_content=dumped)
    assert wrap_result(value, has_output_schema=False) == ToolResultEnvelope(result=dumped)


def test_a_non_callable_model_dump_attribute_is_not_called() -> None:
    class Odd:
        model_dump = "not callable"

    odd = Odd()
    assert wrap_result(odd, has_output_schema=False) == ToolResultEnvelope(result=odd)


def test_text_gets_a_text_block_and_other_values_none() -> None:
    assert wrap_result("hi", has_output_schema=False) == ToolResultEnvelope(
        result="hi", content=[{"type": "text", "text": "hi"}]
    )
    assert wrap_result("", has_output_schema=False) == ToolResultEnvelope(
        result="", content=[{"type": "text", "text": ""}]
    )
    assert wrap_result(3, has_output_schema=False) == ToolResultEnvelope(result=3)
    assert wrap_result(None, has_output_schema=False) == ToolResultEnvelope(result=None)
    assert wrap_result("hi", has_output_schema=True) == ToolResultEnvelope(result="hi", structured_content="hi")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"is_error": True, "result": "x"}, ToolResultEnvelope(result="x", is_error=True)),
        ({"status": "error"}, ToolResultEnvelope(result={"status": "error"})),  # no marker key: a value
        ({"status": "ok", "unknown": 1}, ToolResultEnvelope(result={"status": "ok", "unknown": 1})),
        ({"result": 5}, ToolResultEnvelope(result=5)),
        ([1, 2], ToolResultEnvelope(result=[1, 2])),
        ("text", ToolResultEnvelope(result="text")),
    ],
)
def test_coerce(value: Any, expected: ToolResultEnvelope) -> None:
    assert ToolResultEnvelope.coerce(value) == expected


def test_coerce_reads_a_dict_with_every_envelope_key() -> None:
    full = ToolResultEnvelope(
        result=1,
        events=[],
        session_id="s",
        session_status="open",
        metadata={},
        content=[],
        structured_content=1,
        result_type="x",
        meta={},
    )
    data = {f.name: getattr(full, f.name) for f in dataclasses.fields(ToolResultEnvelope)}
    assert ToolResultEnvelope.coerce(data) == full


# --- argument forwarding --------------------------------------------------------------------------
calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = []


def plain_call_tool(tool_name: str, arguments: dict[str, Any], timeout_seconds: float | None = None) -> str:
    calls.append((tool_name, arguments, {"timeout_seconds": timeout_seconds}))
    return "plain"


class PlainFunctionProvider:
    """``call_tool`` is a plain function here, not a bound method."""

    call_tool = staticmethod(plain_call_tool)


class Unhashable:
    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        return other is self

    def __call__(self, tool_name: str, arguments: dict[str, Any], *, meta: Any = None, user: str = "") -> str:
        calls.append((tool_name, arguments, {"meta": meta, "user": user}))
        return "unhashable"


def test_accepted_kwargs_of_plain_functions_bound_methods_and_unhashable_callables() -> None:
    assert accepted_call_kwargs(plain_call_tool) == frozenset({"timeout_seconds"})
    assert accepted_call_kwargs(Unhashable()) == frozenset({"meta", "user"})
    assert accepted_call_kwargs(lambda name, args, **kw: None) is None
    assert accepted_call_kwargs(print) == frozenset()  # no usable signature: forward nothing


def test_invoke_forwards_declared_options_to_a_plain_function() -> None:
    calls.clear()
    assert invoke_call_tool(PlainFunctionProvider(), "t", None, timeout_seconds=2.0, meta={"m": 1}) == "plain"
    assert calls == [("t", {}, {"timeout_seconds": 2.0})]


def test_invoke_forwards_to_an_unhashable_callable() -> None:
    class Provider:
        call_tool = Unhashable()

    calls.clear()
    assert invoke_call_tool(Provider(), "t", {"a": 1}, meta={"m": 1}, user="u", timeout_seconds=1) == "unhashable"
    assert calls == [("t", {"a": 1}, {"meta": {"m": 1}, "user": "u"})]


def test_unknown_options_are_named_with_the_known_ones() -> None:
    with pytest.raises(TypeError) as info:
        invoke_call_tool(PlainFunctionProvider(), "t", {}, retries=3, colour="red")
    assert str(info.value) == f"unknown call option(s): colour, retries; known: {', '.join(CALL_KWARGS)}"


class AsyncFirst:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = []

    async def acall_tool(self, tool_name: str, arguments: dict[str, Any], timeout_seconds: float | None = None) -> str:
        self.seen.append(("acall", tool_name, arguments, {"timeout_seconds": timeout_seconds}))
        return "async"

    def call_tool(self, tool_name: str, arguments: dict[str, Any], **kwargs: Any) -> str:
        raise AssertionError("acall_tool should be preferred")


class CoroutineCallTool:
    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any], dict[str, Any]]] = []

    async def call_tool(self, tool_name: str, arguments: dict[str, Any], *, user: str = "") -> str:
        self.seen.append((tool_name, arguments, {"user": user}))
        return "coroutine"


class SyncCallTool:
    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any], dict[str, Any], bool]] = []

    def call_tool(self, tool_name: str, arguments: dict[str, Any], ctx: Any = None) -> Any:
        in_loop = True
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            in_loop = False
        self.seen.append((tool_name, arguments, {"ctx": ctx}, in_loop))
        if tool_name == "awaitable":
            return asyncio.sleep(0, result="awaited")
        return "sync"


def test_ainvoke_prefers_acall_tool_and_forwards_its_options() -> None:
    provider = AsyncFirst()
    assert asyncio.run(ainvoke_call_tool(provider, "t", {"a": 1}, timeout_seconds=3, user="u")) == "async"
    assert provider.seen == [("acall", "t", {"a": 1}, {"timeout_seconds": 3})]


def test_ainvoke_awaits_a_coroutine_call_tool_with_its_options() -> None:
    provider = CoroutineCallTool()
    assert asyncio.run(ainvoke_call_tool(provider, "t", None, user="u", timeout_seconds=3)) == "coroutine"
    assert provider.seen == [("t", {}, {"user": "u"})]


def test_ainvoke_runs_a_sync_call_tool_in_a_thread_and_awaits_what_it_returns() -> None:
    provider = SyncCallTool()
    assert asyncio.run(ainvoke_call_tool(provider, "t", {"b": 2}, ctx="c", user="u")) == "sync"
    assert asyncio.run(ainvoke_call_tool(provider, "awaitable", {}, ctx="d")) == "awaited"
    assert provider.seen == [("t", {"b": 2}, {"ctx": "c"}, False), ("awaitable", {}, {"ctx": "d"}, False)]
