"""A hand-written stand-in for a generated package module, type-checked against ``_runtime``.

tests/codegen/test_shim.py copies this file next to a verbatim copy of ``codegen/shim/_runtime/``
(as ``pkg/generated_usage.py`` beside ``pkg/_runtime/`` and ``pkg/_rules.py``) and runs mypy
--strict and pyright (strict) over the package: there must be no error at all.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Literal, TypedDict, assert_type

from pydantic import BaseModel, RootModel

from . import _runtime as _rt


class GetWeatherInput(TypedDict, total=False):
    city: str
    units: Literal["celsius", "fahrenheit"]


class GetWeatherOutput(BaseModel):
    temperature: float
    conditions: str


class GetSumOutput(RootModel[float]):
    root: float


GET_WEATHER: _rt.ToolInfo[GetWeatherOutput] = _rt.ToolInfo(
    name="get_weather",
    method="get_weather",
    namespace=None,
    title="Current weather",
    description="The current weather in a city.",
    input_ref=GetWeatherInput,
    output_ref=GetWeatherOutput,
    output_is_root=False,
    read_only=True,
    destructive=None,
    idempotent=None,
    open_world=False,
)
NOTES_DELETE: _rt.ToolInfo[_rt.ToolOutput] = _rt.ToolInfo(
    name="notes.delete",
    method="delete",
    namespace="notes",
    title=None,
    description="Delete a note.",
    input_ref=dict,
    output_ref=None,
    output_is_root=False,
    read_only=False,
    destructive=True,
    idempotent=True,
    open_world=None,
)
GET_SUM: _rt.ToolInfo[float] = _rt.ToolInfo(
    name="get-sum",
    method="get_sum",
    namespace=None,
    title=None,
    description="Add two numbers.",
    input_ref=dict,
    output_ref=GetSumOutput,
    output_is_root=True,
    read_only=None,
    destructive=None,
    idempotent=None,
    open_world=None,
)


class NotesTools(_rt.ToolsBase):
    def delete(self, *, note_id: str) -> _rt.ToolOutput:
        """Delete a note."""
        return self._call(NOTES_DELETE, {"id": note_id}).value


class Tools(_rt.ToolsBase):
    def __init__(self, provider: _rt.SupportsCallTool, options: _rt.CallOptions | None = None) -> None:
        super().__init__(provider, options)
        self.notes = NotesTools(provider, options)

    @property
    def results(self) -> ToolsResults:
        return ToolsResults(self._provider, self._options)

    def get_weather(
        self, *, city: str, units: Literal["celsius", "fahrenheit"] | _rt.NotGiven = _rt.NOT_GIVEN
    ) -> GetWeatherOutput:
        """The current weather in a city."""
        return self._call(GET_WEATHER, {"city": city, "units": units}).value

    def get_sum(self, *, a: float, b: float) -> float:
        return self._call(GET_SUM, {"a": a, "b": b}).value


class ToolsResults(_rt.ToolsBase):
    def get_weather(
        self, *, city: str, units: Literal["celsius", "fahrenheit"] | _rt.NotGiven = _rt.NOT_GIVEN
    ) -> _rt.ToolResult[GetWeatherOutput]:
        return self._call(GET_WEATHER, {"city": city, "units": units})


class AsyncTools(_rt.AsyncToolsBase):
    async def get_weather(
        self, *, city: str, units: Literal["celsius", "fahrenheit"] | _rt.NotGiven = _rt.NOT_GIVEN
    ) -> GetWeatherOutput:
        return (await self._call(GET_WEATHER, {"city": city, "units": units})).value


# --- providers of every accepted shape ----------------------------------------------------------


class PlainProvider:
    def call_tool(self, tool_name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"result": tool_name, "is_error": False}


class RuntimeShapedProvider:
    """The runtime ToolContract's signature: Mapping | None arguments and **kwargs."""

    def call_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any) -> object:
        return None


class OptionalKwargsProvider:
    def call_tool(
        self, name: str, args: Mapping[str, object], timeout_seconds: float | None = None, *, user: str = ""
    ) -> object:
        return None


class AsyncCallToolProvider:
    async def call_tool(self, tool_name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {}


class AcallProvider:
    async def acall_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any) -> object:
        return None


def sync_usage() -> None:
    tools = Tools(PlainProvider())
    assert_type(tools.get_weather(city="Paris"), GetWeatherOutput)
    assert_type(tools.get_sum(a=1, b=2), float)
    assert_type(tools.notes.delete(note_id="n1"), _rt.ToolOutput)
    assert_type(tools.notes.delete(note_id="n1").text, str)
    result = tools.results.get_weather(city="Paris", units="fahrenheit")
    assert_type(result, _rt.ToolResult[GetWeatherOutput])
    assert_type(result.value.temperature, float)
    assert_type(result.content, list[_rt.ContentBlock])
    assert_type(result.session_id, str | None)
    assert_type(result.result_type, str)
    tuned = tools.with_options(timeout_seconds=2.5, meta={"trace": "t1"}, user="alice", allow_claimed=True)
    assert_type(tuned, Tools)
    assert_type(GET_WEATHER.hints, tuple[str, ...])
    Tools(RuntimeShapedProvider(), {"timeout_seconds": 1.0})
    Tools(OptionalKwargsProvider())
    Tools(AsyncCallToolProvider())


async def async_usage() -> None:
    for provider in (PlainProvider(), AcallProvider(), AsyncCallToolProvider(), RuntimeShapedProvider()):
        tools = AsyncTools(provider).with_options(progress_callback=print, cancel_event=asyncio.Event())
        assert_type(tools, AsyncTools)
        assert_type(await tools.get_weather(city="Oslo"), GetWeatherOutput)


def decoding() -> None:
    result = _rt.decode_result(GET_SUM, {"result": 5})
    assert_type(result, _rt.ToolResult[float])
    envelope = _rt.normalize_envelope({"isError": False})
    assert_type(envelope, _rt.ToolEnvelope)
    try:
        Tools(PlainProvider()).get_weather(city="x")
    except _rt.ToolCallError as exc:
        assert_type(exc.payload, Any)
        assert_type(exc.tool_name, str)
    except _rt.ToolOutputValidationError as exc:
        assert_type(exc.errors, list[dict[str, Any]])
        assert_type(exc.raw, object)


def answer_input(requests: list[_rt.InputRequest]) -> dict[str, object]:
    answers: dict[str, object] = {}
    for request in requests:
        if isinstance(request, _rt.ElicitationRequest):
            assert_type(request.message, str)
            assert_type(request.requested_schema, dict[str, Any] | None)
            answers[request.key] = {"action": "accept", "content": {"name": "Ada"}}
    return answers


def confirm_destructive(info: _rt.ToolInfo[Any], arguments: dict[str, Any]) -> bool:
    return info.destructive is not True


def hints_that_act() -> None:
    tools = Tools(PlainProvider()).with_options(on_input=answer_input, retries=2, confirm=confirm_destructive)
    assert_type(tools, Tools)
    try:
        tools.get_weather(city="x")
    except _rt.ToolInputRequiredError as exc:
        assert_type(exc.requests, list[_rt.InputRequest])
        assert_type(exc.request_state, str | None)
    except (_rt.ToolTimeoutError, _rt.ToolUnavailableError) as exc:
        assert_type(exc.envelope, _rt.ToolEnvelope)
    except _rt.ToolError as exc:
        assert_type(exc.payload, Any)
