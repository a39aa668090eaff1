"""Tests of the runtime shim copied into every generated package (codegen/shim/_runtime/)."""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import gc
import importlib
import json
import os
import shutil
import subprocess
import sys
import threading
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, cast

import mcp.types
import pytest
from pydantic import BaseModel, ConfigDict, Field, RootModel
from pyright_batch import Batch, pyright_workspace

from codegen.shim import _runtime as rt
from mas.runtime.contracts.tool_contract import CALL_KWARGS, ToolContract, ToolResultEnvelope

REPO = Path(__file__).resolve().parents[2]
SHIM = REPO / "codegen" / "shim" / "_runtime"
RULES = REPO / "mas" / "runtime" / "contracts" / "_rules.py"
CALLS = REPO / "tests" / "fixtures" / "mcp-call-results"
TYPING_CASES = Path(__file__).resolve().parent / "typing_cases"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CALLS / f"{name}.json").read_text(encoding="utf-8"))
    return data


def info(
    name: str = "tool",
    output_model: type[BaseModel] | None = None,
    *,
    output_is_root: bool = False,
    **hints: bool | None,
) -> rt.ToolInfo[Any]:
    return rt.ToolInfo(
        name=name,
        method=name.replace("-", "_"),
        namespace=None,
        title=None,
        description="",
        input_ref=dict,
        output_ref=output_model,
        output_is_root=output_is_root,
        **hints,
    )


# --- output models used below ---------------------------------------------------------------


class Weather(BaseModel):
    temperature: float
    conditions: str
    humidity: float


class Sum(RootModel[float]):
    root: float


class Label(RootModel[str]):
    root: str


class Entity(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    name: str
    entity_type: str = Field(alias="entityType")
    observations: list[str]


class Entities(BaseModel):
    entities: list[Entity]


class EntityList(RootModel[list[Entity]]):
    root: list[Entity]


class CurrentTime(BaseModel):
    timezone: str
    datetime: str
    day_of_week: str
    is_dst: bool


class Point(BaseModel):
    a: int


# --- decoding the real captures as ToolOutput ---------------------------------------------------

ALL_CAPTURES = sorted(p.stem for p in CALLS.glob("*.json"))
TASK_CAPTURE = "everything.call.simulate-research-query.task"
ERROR_CAPTURE = "everything.call.simulate-research-query"
BLOCK_TYPES = {
    "text": rt.TextContent,
    "image": rt.ImageContent,
    "audio": rt.AudioContent,
    "resource_link": rt.ResourceLink,
    "resource": rt.EmbeddedResource,
}


def capture_payloads(name: str) -> list[dict[str, Any]]:
    """The tools/call results in a capture (the task capture holds its final payload twice)."""
    data = load(name)
    if name == TASK_CAPTURE:
        return [data["payload_raw"], data["payload_as_CallToolResult"]]
    return [data]


def test_there_are_captures_to_decode() -> None:
    assert len(ALL_CAPTURES) >= 26
    assert TASK_CAPTURE in ALL_CAPTURES and ERROR_CAPTURE in ALL_CAPTURES


@pytest.mark.parametrize("name", [n for n in ALL_CAPTURES if n != ERROR_CAPTURE])
def test_every_capture_decodes_as_tool_output(name: str) -> None:
    for raw in capture_payloads(name):
        result = rt.decode_result(info(name), raw)
        output = result.value
        assert type(output) is rt.ToolOutput
        assert [type(b) for b in output.content] == [BLOCK_TYPES[b["type"]] for b in raw["content"]]
        assert output.text == "\n".join(b["text"] for b in raw["content"] if b["type"] == "text")
        assert result.text == output.text
        assert output.structured_content == raw.get("structuredContent")
        assert result.structured_content == raw.get("structuredContent")
        assert result.meta == raw.get("_meta")
        assert result.result_type == "complete"
        assert result.envelope["is_error"] is False
        assert "isError" not in result.envelope and "structuredContent" not in result.envelope


@pytest.mark.parametrize("name", [n for n in ALL_CAPTURES if n not in (ERROR_CAPTURE, TASK_CAPTURE)])
def test_every_capture_decodes_from_an_mcp_call_tool_result(name: str) -> None:
    raw = load(name)
    model = mcp.types.CallToolResult.model_validate(raw)
    from_model = rt.decode_result(info(name), model)
    from_dict = rt.decode_result(info(name), raw)
    assert from_model.value == from_dict.value
    assert from_model.envelope["is_error"] is False


def test_capture_keys_of_the_recorder_do_not_disturb_decoding() -> None:
    raw = load("everything.call.trigger-long-running-operation")
    assert "__progress__" in raw and "__server_requests__" in raw
    result = rt.decode_result(info("trigger-long-running-operation"), raw)
    assert result.value.content == [
        rt.TextContent(text="Long running operation completed. Duration: 2 seconds, Steps: 4.")
    ]
    assert result.text == "Long running operation completed. Duration: 2 seconds, Steps: 4."


def test_echo_text_block() -> None:
    output = rt.decode_result(info("echo"), load("everything.call.echo")).value
    assert output.content == [rt.TextContent(type="text", text="Echo: hello")]
    assert output.text == "Echo: hello"


def test_annotated_message_text_and_image_blocks() -> None:
    raw = load("everything.call.get-annotated-message")
    text, image = rt.decode_result(info(), raw).value.content
    assert isinstance(text, rt.TextContent)
    assert text.text == "Error: Operation failed"
    assert text.annotations == rt.Annotations(audience=["user", "assistant"], priority=1.0)
    assert isinstance(image, rt.ImageContent)
    assert image.mime_type == "image/png"
    assert image.data == raw["content"][1]["data"]
    assert image.data.startswith("iVBORw0KGgo")
    assert image.annotations is not None and image.annotations.audience == ["user"]
    assert image.annotations.priority == 0.5


def test_tiny_image_block() -> None:
    raw = load("everything.call.get-tiny-image")
    blocks = rt.decode_result(info(), raw).value.content
    assert [type(b) for b in blocks] == [rt.TextContent, rt.ImageContent, rt.TextContent]
    image = blocks[1]
    assert isinstance(image, rt.ImageContent)
    assert (image.mime_type, image.data) == (raw["content"][1]["mimeType"], raw["content"][1]["data"])


def test_resource_link_blocks() -> None:
    blocks = rt.decode_result(info(), load("everything.call.get-resource-links")).value.content
    assert blocks[0] == rt.TextContent(text="Here are 2 resource links to resources available in this server:")
    assert blocks[1:] == [
        rt.ResourceLink(
            uri="demo://resource/dynamic/blob/1",
            name="Blob Resource 1",
            description="Resource 1: plaintext resource",
            mime_type="text/plain",
        ),
        rt.ResourceLink(
            uri="demo://resource/dynamic/text/2",
            name="Text Resource 2",
            description="Resource 2: plaintext resource",
            mime_type="text/plain",
        ),
    ]
    link = blocks[1]
    assert isinstance(link, rt.ResourceLink)
    assert link.title is None and link.size is None
    assert link.model_dump(by_alias=True, exclude_none=True) == load("everything.call.get-resource-links")["content"][1]


def test_embedded_blob_resource_block() -> None:
    blocks = rt.decode_result(info(), load("everything.call.get-resource-reference")).value.content
    assert [type(b) for b in blocks] == [rt.TextContent, rt.EmbeddedResource, rt.TextContent]
    embedded = blocks[1]
    assert isinstance(embedded, rt.EmbeddedResource)
    assert embedded.resource == rt.BlobResourceContents(
        uri="demo://resource/dynamic/blob/2",
        mime_type="text/plain",
        blob="UmVzb3VyY2UgMjogVGhpcyBpcyBhIGJhc2U2NCBibG9iIGNyZWF0ZWQgYXQgODo1ODo0MSBBTQ==",
    )


def test_embedded_text_resource_and_audio_blocks() -> None:
    raw = {
        "content": [
            {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "A"}},
            {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
        ]
    }
    embedded, audio = rt.decode_result(info(), raw).value.content
    assert isinstance(embedded, rt.EmbeddedResource)
    assert embedded.resource == rt.TextResourceContents(uri="file:///a.txt", mime_type="text/plain", text="A")
    assert audio == rt.AudioContent(data="UklGRg==", mime_type="audio/wav")


def test_unknown_block_type_decodes_and_keeps_its_fields() -> None:
    raw = {"content": [{"type": "video", "url": "https://x/v.mp4", "seconds": 3}, {"type": "text", "text": "ok"}]}
    result = rt.decode_result(info(), raw)
    unknown, text = result.value.content
    assert type(unknown) is rt.UnknownContent
    assert unknown.type == "video"
    assert unknown.model_extra == {"url": "https://x/v.mp4", "seconds": 3}
    assert text == rt.TextContent(text="ok")
    assert result.value.text == "ok"
    assert [type(b) for b in result.content] == [rt.UnknownContent, rt.TextContent]


def test_task_payload_meta_is_kept() -> None:
    result = rt.decode_result(info(), load(TASK_CAPTURE)["payload_raw"])
    assert result.meta == {"io.modelcontextprotocol/related-task": {"taskId": "abf6eb60d71bf56cc2d306bb2fba4c46"}}
    assert result.text.startswith("# Research Report: typed wrappers\n")


def test_tool_output_from_a_bare_result() -> None:
    assert rt.decode_result(info(), "plain").value == rt.ToolOutput(content=[rt.TextContent(text="plain")])
    output = rt.decode_result(info(), {"result": {"n": 1}, "is_error": False}).value
    assert output.content == [rt.TextContent(text='{"n": 1}')]
    assert output.structured_content is None
    assert rt.decode_result(info(), None).value == rt.ToolOutput(content=[], structured_content=None)
    assert rt.decode_result(info(), None).value.text == ""


def test_malformed_known_block_is_an_output_validation_error() -> None:
    with pytest.raises(rt.ToolOutputValidationError) as caught:
        rt.decode_result(info("pics"), {"content": [{"type": "image", "data": "AAAA"}]})
    assert caught.value.tool_name == "pics"
    assert caught.value.errors[0]["loc"] == (0, "image", "mimeType")
    assert caught.value.raw == [{"type": "image", "data": "AAAA"}]


# --- structured decoding --------------------------------------------------------------------------


def test_structured_content_validates_against_the_output_model() -> None:
    result = rt.decode_result(info("get-structured-content", Weather), load("everything.call.get-structured-content"))
    assert result.value == Weather(temperature=36, conditions="Light rain / drizzle", humidity=82)
    assert type(result.value) is Weather
    assert result.text == '{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}'
    assert result.structured_content == {"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82}


def test_structured_content_with_aliases_and_root_models() -> None:
    entities = rt.decode_result(info("create_entities", Entities), load("memory.call.create_entities")).value
    assert entities == Entities(
        entities=[
            Entity.model_validate({"name": "Alice", "entityType": "person", "observations": ["likes tea"]}),
            Entity.model_validate({"name": "Acme", "entityType": "company", "observations": []}),
        ]
    )
    raw = {"content": [], "structuredContent": load("memory.call.create_entities")["structuredContent"]["entities"]}
    as_root = rt.decode_result(info("create_entities", EntityList, output_is_root=True), raw).value
    assert as_root == entities.entities
    assert type(as_root) is list


def test_root_model_output_is_unwrapped() -> None:
    for raw in ({"result": 5, "is_error": False}, {"content": [], "structuredContent": 5}, {"result": "5"}):
        value = rt.decode_result(info("get-sum", Sum, output_is_root=True), raw).value
        assert value == 5.0 and type(value) is float
    wrapped = rt.decode_result(info("get-sum", Sum, output_is_root=False), {"result": 5.5}).value
    assert wrapped == Sum(5.5)


def test_get_sum_capture_has_nothing_structured_to_validate() -> None:
    raw = load("everything.call.get-sum")
    assert rt.decode_result(info("get-sum"), raw).value.text == "The sum of 2 and 3 is 5."
    with pytest.raises(rt.ToolOutputValidationError) as caught:
        rt.decode_result(info("get-sum", Sum, output_is_root=True), raw)
    error = caught.value
    assert error.raw is None
    assert error.errors == [{"type": "missing", "loc": (), "msg": "the result has no structured content or JSON text"}]
    assert error.envelope["content"] == raw["content"]
    assert str(error) == (
        "tool 'get-sum' returned output that does not match Sum "
        "(1 validation error; /: the result has no structured content or JSON text)"
    )


def test_json_in_text_is_parsed_when_a_model_is_expected() -> None:
    raw = load("time.call.get_current_time")
    del raw["structuredContent"]
    value = rt.decode_result(info("get_current_time", CurrentTime), raw).value
    assert value == CurrentTime(
        timezone="Europe/Paris", datetime="2026-11-30T09:58:57+01:00", day_of_week="Monday", is_dst=False
    )
    two_blocks = {"content": [{"type": "text", "text": "Result:"}, {"type": "text", "text": '{"a": 7}'}]}
    assert rt.decode_result(info("p", Point), two_blocks).value == Point(a=7)
    assert rt.decode_result(
        info("p", Point), {"content": [{"type": "text", "text": '{"a":'}, {"type": "text", "text": "8}"}]}
    ).value == Point(a=8)


def test_json_string_result_is_parsed_but_a_str_root_keeps_the_string() -> None:
    assert rt.decode_result(info("p", Point), {"result": '{"a": 2}', "is_error": False}).value == Point(a=2)
    assert rt.decode_result(info("p", Point), {"structured_content": '{"a": 3}'}).value == Point(a=3)
    label = info("label", Label, output_is_root=True)
    assert rt.decode_result(label, {"result": '"quoted"'}).value == '"quoted"'
    assert rt.decode_result(label, {"result": "5"}).value == "5"


def test_structured_content_wins_over_result() -> None:
    raw = {"result": {"a": 1}, "structured_content": {"a": 2}, "is_error": False}
    assert rt.decode_result(info("p", Point), raw).value == Point(a=2)


def test_mismatching_structured_content_is_an_output_validation_error() -> None:
    raw = load("everything.call.get-structured-content")
    raw["structuredContent"] = {"temperature": "hot", "conditions": "sunny", "humidity": 10}
    with pytest.raises(rt.ToolOutputValidationError) as caught:
        rt.decode_result(info("get-structured-content", Weather), raw)
    error = caught.value
    assert isinstance(error, rt.ToolError)
    assert error.tool_name == "get-structured-content"
    assert error.model is Weather
    assert error.raw == {"temperature": "hot", "conditions": "sunny", "humidity": 10}
    assert [(e["type"], e["loc"]) for e in error.errors] == [("float_parsing", ("temperature",))]
    assert error.envelope["structured_content"] == error.raw
    assert str(error) == (
        "tool 'get-structured-content' returned output that does not match Weather "
        "(1 validation error; temperature: Input should be a valid number, unable to parse string as a number)"
    )
    assert "\n" not in str(error)


# --- tool errors -----------------------------------------------------------------------------------


def test_is_error_capture_raises_tool_call_error() -> None:
    raw = load(ERROR_CAPTURE)
    with pytest.raises(rt.ToolCallError) as caught:
        rt.decode_result(info("simulate-research-query"), raw)
    error = caught.value
    text = "MCP error -32601: Tool simulate-research-query requires task augmentation (taskSupport: 'required')"
    assert error.message == text
    assert error.payload == text  # no structured content: the joined text is the result
    assert error.tool_name == "simulate-research-query"
    assert error.envelope == {
        "status": "error",
        "result": text,
        "is_error": True,
        "result_mode": "inline",
        "execution_mode": "sync",
        "content": raw["content"],
    }
    assert str(error) == f"tool 'simulate-research-query' reported an error: {text}"


def test_tool_call_error_payload_and_one_line_message() -> None:
    envelope = {
        "isError": True,
        "content": [{"type": "text", "text": "bad input"}, {"type": "text", "text": "field x\nis required"}],
        "structuredContent": {"code": 422, "field": "x"},
    }
    with pytest.raises(rt.ToolCallError) as caught:
        rt.decode_result(info("validate", Point), envelope)
    error = caught.value
    assert error.message == "bad input\nfield x\nis required"
    assert error.payload == {"code": 422, "field": "x"}
    assert error.envelope["structured_content"] == {"code": 422, "field": "x"}
    assert str(error) == "tool 'validate' reported an error: bad input field x is required"


def test_tool_call_error_from_runtime_envelopes() -> None:
    with pytest.raises(rt.ToolCallError) as caught:
        rt.decode_result(info("t"), ToolResultEnvelope(status="error", result={"reason": "quota"}, is_error=True))
    assert caught.value.message == "{'reason': 'quota'}"
    assert caught.value.payload == {"reason": "quota"}
    with pytest.raises(rt.ToolCallError) as caught:
        rt.decode_result(info("t"), ToolResultEnvelope.failure("tool 't' failed: ValueError: nope"))
    assert caught.value.message == "tool 't' failed: ValueError: nope"
    assert caught.value.payload == "tool 't' failed: ValueError: nope"
    with pytest.raises(rt.ToolCallError) as caught:
        rt.decode_result(info("t"), {"is_error": True})
    assert caught.value.message == "tool reported an error"
    assert caught.value.payload is None
    assert str(caught.value) == "tool 't' reported an error: tool reported an error"


KINDS = {
    "tool_error": "ToolCallError",
    "invalid_arguments": "ToolArgumentsError",
    "unknown_tool": "ToolNotFoundError",
    "timeout": "ToolTimeoutError",
    "cancelled": "ToolCancelledError",
    "unavailable": "ToolUnavailableError",
    "protocol": "ToolProtocolError",
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_failure_is_a_tool_failed_error_with_its_kind(kind: str) -> None:
    with pytest.raises(rt.ToolFailedError) as caught:
        rt.decode_result(info("t"), ToolResultEnvelope.failure(f"it failed: {kind}", kind=kind))
    error = caught.value
    assert type(error).__name__ == KINDS[kind]
    assert error.kind == kind == type(error).kind
    assert error.message == f"it failed: {kind}"
    assert isinstance(error, rt.ToolError)
    # The transient parent groups exactly the kinds worth sending again.
    assert isinstance(error, rt.ToolTransientError) is (kind in ("timeout", "unavailable"))


def test_the_error_tree_keeps_every_old_name_and_adds_the_parents() -> None:
    assert rt.ToolTimeoutError.__mro__[1:4] == (rt.ToolTransientError, rt.ToolFailedError, rt.ToolError)
    assert rt.ToolUnavailableError.__mro__[1:4] == (rt.ToolTransientError, rt.ToolFailedError, rt.ToolError)
    for name in ("ToolCallError", "ToolArgumentsError", "ToolNotFoundError", "ToolCancelledError", "ToolProtocolError"):
        assert getattr(rt, name).__mro__[1:3] == (rt.ToolFailedError, rt.ToolError), name
    for name in ("ToolInputRequiredError", "ToolOutputValidationError"):
        assert getattr(rt, name).__mro__[1] is rt.ToolError  # not a failed call: the call succeeded
    assert not hasattr(rt._errors, "_FailedCall")  # the old private alias is gone (issue 34): ToolFailedError
    assert {cls.kind for cls in rt._errors.ERRORS_BY_KIND.values()} == set(KINDS)


def test_every_tool_error_has_a_message() -> None:
    plain = rt.ToolError("something broke", tool_name="t")
    assert (plain.message, str(plain), plain.envelope, plain.payload) == ("something broke",) * 2 + ({}, None)
    with pytest.raises(rt.ToolOutputValidationError) as caught:
        rt.decode_result(info("t", Point), {"structured_content": {"a": "x"}})
    assert caught.value.message == str(caught.value) and caught.value.message.startswith("tool 't' returned output")
    with pytest.raises(rt.ToolInputRequiredError) as needs:
        rt.decode_result(info("t"), {"resultType": "input_required", "requestState": "s"})
    assert needs.value.message == str(needs.value)


def test_bad_call_options_are_type_errors_not_tool_errors() -> None:
    with pytest.raises(TypeError, match="unknown call option") as caught:
        Tools(DeclaresSome(), {"timeout": 1})  # type: ignore[typeddict-unknown-key]
    assert not isinstance(caught.value, rt.ToolError)
    with pytest.raises(TypeError, match="retries must be a non-negative int"):
        Tools(DeclaresSome()).with_options(retries=-1)


def test_retries_resend_exactly_the_transient_kinds() -> None:
    assert rt._errors.TRANSIENT_KINDS == {"timeout", "unavailable"}

    class Flaky:
        def __init__(self, kind: str) -> None:
            self.kind, self.calls = kind, 0

        def call_tool(self, tool_name: str, arguments: dict[str, Any]) -> Any:
            self.calls += 1
            return ToolResultEnvelope.failure("no", kind=self.kind) if self.calls == 1 else {"result": "ok"}

    retried = {}
    for kind in KINDS:
        provider = Flaky(kind)
        try:
            rt.ToolsBase(provider, {"retries": 1})._call(info("t", read_only=True, idempotent=True), {})
        except rt.ToolFailedError:
            pass
        retried[kind] = provider.calls == 2
    assert {kind for kind, again in retried.items() if again} == {"timeout", "unavailable"}


# --- envelopes ------------------------------------------------------------------------------------


BASE = {"status": "success", "is_error": False, "result_mode": "inline", "execution_mode": "sync"}


def ok(result: object, **extra: object) -> dict[str, object]:
    """The envelope dict of a successful call (ToolResultEnvelope.to_dict form)."""
    return {"status": "success", "result": result, **{k: v for k, v in BASE.items() if k != "status"}, **extra}


def test_normalize_envelope_shapes() -> None:
    camel = {"isError": False, "structuredContent": {"a": 1}, "resultType": "complete", "_meta": {"k": 1}}
    assert rt.normalize_envelope(camel) == ok({"a": 1}, structured_content={"a": 1}, meta={"k": 1})
    both = rt.normalize_envelope({"is_error": True, "isError": False})
    assert (both["status"], both["is_error"]) == ("error", True)  # the snake_case spelling wins
    runtime = ToolResultEnvelope.success(3, session_id="s1", session_status="open")
    assert rt.normalize_envelope(runtime) == ok(3, session_id="s1", session_status="open")
    model = mcp.types.CallToolResult(content=[mcp.types.TextContent(type="text", text="hi")], structured_content=None)
    assert rt.normalize_envelope(model) == ok("hi", content=[{"type": "text", "text": "hi"}])
    assert rt.normalize_envelope(42) == ok(42)
    assert rt.normalize_envelope({"temperature": 1}) == ok({"temperature": 1})
    # the filesystem server's structured shape is a value, not an envelope
    assert rt.normalize_envelope({"content": "hello"}) == ok({"content": "hello"})
    assert rt.normalize_envelope(Point(a=1)) == ok({"a": 1})
    content_models = {"content": [mcp.types.TextContent(type="text", text="x")]}
    assert rt.normalize_envelope(content_models) == ok("x", content=[{"type": "text", "text": "x"}])


def test_the_shim_and_the_runtime_give_the_same_envelope() -> None:
    for raw in (
        {"is_error": True, "result": "x"},
        {"status": "error", "result": "x"},
        {"status": "running"},
        {"is_error": False, "total": 3},
        load("everything.call.echo"),
        mcp.types.CallToolResult(content=[mcp.types.TextContent(type="text", text="hi")], is_error=True),
        ToolResultEnvelope.failure("boom", kind="timeout"),
    ):
        assert rt.normalize_envelope(raw) == ToolResultEnvelope.coerce(raw).to_dict()


ENVELOPE_ATTRIBUTES = ("status", "result", "is_error", "result_mode", "execution_mode", "events", "session_id",
                       "session_status", "metadata", "content", "structured_content", "result_type", "meta",
                       "error_kind", "text")  # fmt: skip


@pytest.mark.parametrize(
    "raw",
    [
        ToolResultEnvelope.success(3, session_id="s1", session_status="open", meta={"k": 1}),
        ToolResultEnvelope.failure("boom", kind="timeout"),
        {"isError": False, "structuredContent": {"a": 1}, "content": [{"type": "text", "text": "hi"}]},
        {"resultType": "input_required", "requestState": "s"},
        {"status": "running"},
        42,
    ],
    ids=["success", "failure", "mcp-wire", "input-required", "malformed", "plain"],
)
def test_one_envelope_type_on_both_sides(raw: object) -> None:
    """What the shim normalizes reads like the registry's ToolResultEnvelope, attribute by
    attribute, and is its dict form, so either turns into the other."""
    envelope = rt.normalize_envelope(raw)
    registry = ToolResultEnvelope.coerce(raw)
    assert isinstance(envelope, rt.ToolEnvelope) and isinstance(envelope, dict)
    read = {a: getattr(envelope, a) for a in ENVELOPE_ATTRIBUTES}
    assert read == {a: getattr(registry, a) for a in ENVELOPE_ATTRIBUTES}
    assert envelope == registry.to_dict()
    assert ToolResultEnvelope.from_dict(envelope) == registry


def test_an_empty_envelope_reads_as_the_registrys_defaults() -> None:
    """A ToolError without a result has an empty envelope; it reads as ToolResultEnvelope() does."""
    empty = rt.ToolError("x", tool_name="t").envelope
    assert {a: getattr(empty, a) for a in ENVELOPE_ATTRIBUTES} == {
        a: getattr(ToolResultEnvelope(), a) for a in ENVELOPE_ATTRIBUTES
    }


def test_result_and_error_envelopes_are_tool_envelopes_with_wire_content() -> None:
    blocks = [{"type": "text", "text": "hi", "annotations": {"priority": 1.0}}]
    result = rt.decode_result(info(), {"content": blocks})
    assert type(result.envelope) is rt.ToolEnvelope
    assert result.envelope.content == blocks == result.envelope["content"]  # the wire form: dicts
    assert result.content == [rt.TextContent(text="hi", annotations=rt.Annotations(priority=1.0))]  # decoded
    assert result.envelope.text == result.text == "hi"
    with pytest.raises(rt.ToolTimeoutError) as caught:
        rt.decode_result(info(), ToolResultEnvelope.failure("slow", kind="timeout"))
    assert type(caught.value.envelope) is rt.ToolEnvelope
    assert (caught.value.envelope.error_kind, caught.value.envelope.is_error) == ("timeout", True)
    assert type(rt.ToolError("x", tool_name="t").envelope) is rt.ToolEnvelope
    assert type(rt.ToolResult(None, {"result": 1}).envelope) is rt.ToolEnvelope  # type: ignore[arg-type]


def test_to_dict_that_is_not_an_envelope_is_a_result() -> None:
    class Table:
        def to_dict(self) -> dict[str, list[int]]:
            return {"col": [1, 2]}

    table = Table()
    assert rt.normalize_envelope(table) == ok(table)


def test_tool_result_properties() -> None:
    envelope = {
        "result": "r",
        "is_error": False,
        "session_id": "s-9",
        "session_status": "running",
        "result_type": "input_required",
        "meta": {"m": 1},
        "structured_content": [1, 2],
    }
    result = rt.decode_result(info(), envelope)
    assert (result.session_id, result.session_status, result.result_type) == ("s-9", "running", "input_required")
    assert result.meta == {"m": 1}
    assert result.structured_content == [1, 2]
    assert result.text == "r"
    assert result.content == []
    assert result.value.content == [rt.TextContent(text="r")]
    bare = rt.ToolResult(value=None, envelope=rt.ToolEnvelope(is_error=False))
    assert (bare.session_id, bare.session_status, bare.meta, bare.result_type, bare.text) == (
        None,
        None,
        None,
        "complete",
        "",
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        bare.value = 1  # type: ignore[misc, assignment]


# --- ToolInfo ---------------------------------------------------------------------------------------


def test_tool_info_hints_in_words() -> None:
    assert info(read_only=True, open_world=False).hints == ("read-only", "closed-world")
    assert info(read_only=False, destructive=True, idempotent=True, open_world=True).hints == (
        "not read-only",
        "destructive",
        "idempotent",
        "open-world",
    )
    assert info(destructive=False, idempotent=False).hints == ("not destructive", "not idempotent")
    assert info().hints == ()


def test_tool_info_is_frozen_keyword_only_and_slotted() -> None:
    tool = info("notes.delete")
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.name = "x"  # type: ignore[misc]
    assert not hasattr(tool, "__dict__")
    with pytest.raises(TypeError):
        rt.ToolInfo("x", "x", None, None, "", dict, None, False)  # type: ignore[call-arg]


# --- providers --------------------------------------------------------------------------------------


class Recorder:
    """Records each call; ``returns`` is what call_tool returns."""

    def __init__(self, returns: object = None) -> None:
        self.calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
        self.threads: list[int] = []
        self.returns: object = {"content": [], "is_error": False} if returns is None else returns

    def record(self, tool_name: str, arguments: dict[str, Any], kwargs: dict[str, Any]) -> object:
        self.calls.append((tool_name, arguments, kwargs))
        self.threads.append(threading.get_ident())
        return self.returns


class DeclaresSome(Recorder):
    def call_tool(
        self, tool_name: str, arguments: dict[str, Any], timeout_seconds: float | None = None, *, user: str = ""
    ) -> object:
        return self.record(tool_name, arguments, {"timeout_seconds": timeout_seconds, "user": user})


class DeclaresNone(Recorder):
    def call_tool(self, tool_name: str, arguments: dict[str, Any]) -> object:
        return self.record(tool_name, arguments, {})


class TakesKwargs(Recorder):
    def call_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any) -> object:
        return self.record(tool_name, dict(arguments or {}), kwargs)


class PositionalOnlyUser(Recorder):
    def call_tool(self, tool_name: str, arguments: dict[str, Any], user: str = "", /) -> object:
        return self.record(tool_name, arguments, {"user": user})


class AsyncCallTool(Recorder):
    async def call_tool(self, tool_name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None) -> object:
        return self.record(tool_name, arguments, {"meta": meta})


class HasAcallTool(Recorder):
    def call_tool(self, tool_name: str, arguments: dict[str, Any]) -> object:
        raise AssertionError("acall_tool must be preferred")

    async def acall_tool(self, tool_name: str, arguments: dict[str, Any], **kwargs: Any) -> object:
        return self.record(tool_name, arguments, kwargs)


ECHO: rt.ToolInfo[rt.ToolOutput] = info("echo")
WEATHER: rt.ToolInfo[Weather] = info("get_weather", Weather)


class Tools(rt.ToolsBase):
    """Shaped like a generated class, with a sub-namespace built in __init__."""

    def __init__(self, provider: rt.SupportsCallTool, options: rt.CallOptions | None = None) -> None:
        super().__init__(provider, options)
        self.sub = rt.ToolsBase(provider, options)

    def echo(
        self,
        *,
        message: str,
        loud: bool | rt.NotGiven = rt.NOT_GIVEN,
        times: int | rt.NotGiven = rt.NOT_GIVEN,
        ratio: float | rt.NotGiven = rt.NOT_GIVEN,
        tag: str | None | rt.NotGiven = rt.NOT_GIVEN,
    ) -> str:
        args = {"message": message, "loud": loud, "times": times, "ratio": ratio, "tag": tag}
        return self._call(ECHO, args).value.text

    def get_weather(
        self, *, city: str, units: Literal["celsius", "fahrenheit"] | rt.NotGiven = rt.NOT_GIVEN
    ) -> Weather:
        return self._call(WEATHER, {"city": city, "units": units}).value


class AsyncTools(rt.AsyncToolsBase):
    async def echo(self, *, message: str, loud: bool | rt.NotGiven = rt.NOT_GIVEN) -> str:
        return (await self._call(ECHO, {"message": message, "loud": loud})).value.text


def received(provider: Recorder) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    return provider.calls


# --- argument omission ----------------------------------------------------------------------------


def test_unpassed_defaults_are_omitted() -> None:
    provider = DeclaresNone()
    Tools(provider).echo(message="hi")
    assert received(provider) == [("echo", {"message": "hi"}, {})]


def test_only_not_given_is_omitted_every_value_is_sent() -> None:
    """``NOT_GIVEN`` alone means "not passed" (by identity): ``None``, ``False``, ``0`` and ``""``
    are values, sent as they are."""
    provider = DeclaresNone()
    tools = Tools(provider)
    tools.echo(message="a", loud=False, times=0, ratio=0.0)
    tools.echo(message="b", tag=None)
    tools.echo(message="c", loud=True, tag="")
    assert [args for _, args, _ in received(provider)] == [
        {"message": "a", "loud": False, "times": 0, "ratio": 0.0},
        {"message": "b", "tag": None},
        {"message": "c", "loud": True, "tag": ""},
    ]


def test_omission_leaves_the_callers_arguments_alone() -> None:
    provider = DeclaresNone()
    tools = rt.ToolsBase(provider)
    arguments = {"required_nullable": None, "opt": rt.NOT_GIVEN, "tags": [1], "cfg": {"a": 1.0}}
    tools._call(ECHO, arguments)
    assert received(provider)[0][1] == {"required_nullable": None, "tags": [1], "cfg": {"a": 1.0}}
    assert arguments == {"required_nullable": None, "opt": rt.NOT_GIVEN, "tags": [1], "cfg": {"a": 1.0}}


def test_wire_keys_are_used_as_is() -> None:
    provider = TakesKwargs()
    rt.ToolsBase(provider)._call(info("x-y"), {"entityType": "p", "from": 1, "a-b": 2})
    assert received(provider) == [("x-y", {"entityType": "p", "from": 1, "a-b": 2}, {})]


# --- kwarg forwarding -----------------------------------------------------------------------------

ALL_OPTIONS: rt.CallOptions = {
    "timeout_seconds": 5.0,
    "progress_callback": print,
    "cancel_event": threading.Event(),
    "meta": {"trace": "t"},
    "input_responses": {"r": 1},
    "request_state": "state",
    "allow_input_required": True,
    "allow_claimed": False,
    "ctx": object(),
    "user": "alice",
}


def test_only_declared_options_are_forwarded() -> None:
    provider = DeclaresSome()
    Tools(provider).with_options(**ALL_OPTIONS).echo(message="x")
    assert received(provider) == [("echo", {"message": "x"}, {"timeout_seconds": 5.0, "user": "alice"})]


def test_provider_declaring_no_option_gets_none() -> None:
    provider = DeclaresNone()
    Tools(provider, ALL_OPTIONS).echo(message="x")
    assert received(provider) == [("echo", {"message": "x"}, {})]


def test_provider_with_var_kwargs_gets_every_option_but_none_values() -> None:
    provider = TakesKwargs()
    Tools(provider, ALL_OPTIONS).echo(message="x")
    assert received(provider) == [("echo", {"message": "x"}, dict(ALL_OPTIONS))]
    provider = TakesKwargs()
    Tools(provider, cast(rt.CallOptions, {"timeout_seconds": None, "user": "bob"})).echo(message="y")
    assert received(provider) == [("echo", {"message": "y"}, {"user": "bob"})]


def test_positional_only_parameter_is_not_a_declared_option() -> None:
    provider = PositionalOnlyUser()
    Tools(provider, {"user": "alice"}).echo(message="x")
    assert received(provider) == [("echo", {"message": "x"}, {"user": ""})]


def test_runtime_tool_contract_provider_end_to_end() -> None:
    class Adder(ToolContract):
        name = "add"
        parameters = {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        }
        output_schema = {"type": "number"}

        def execute(self, **kwargs: Any) -> Any:
            return kwargs["a"] + kwargs["b"]

    add = info("add", Sum, output_is_root=True)
    result = rt.ToolsBase(Adder(), {"timeout_seconds": 1.0, "user": "u"})._call(add, {"a": 2, "b": 3.5})
    assert result.value == 5.5
    assert result.envelope == {
        "status": "success",
        "result": 5.5,
        "is_error": False,
        "result_mode": "inline",
        "execution_mode": "sync",
        "structured_content": 5.5,
    }
    with pytest.raises(rt.ToolArgumentsError) as caught:
        rt.ToolsBase(Adder())._call(add, {"a": 2})
    assert caught.value.message == "invalid arguments for tool 'add': /: missing required argument 'b'"


def test_signature_inspection_is_cached() -> None:
    provider = DeclaresSome()
    tools = Tools(provider, {"user": "u"})
    tools.echo(message="1")
    before = rt._options._rules._declared.cache_info().hits
    tools.echo(message="2")
    Tools(DeclaresSome(), {"user": "v"}).echo(message="3")  # another instance: same function entry
    assert rt._options._rules._declared.cache_info().hits == before + 2


def test_unknown_option_is_rejected() -> None:
    with pytest.raises(TypeError, match="unknown call option\\(s\\): retry;"):
        rt.ToolsBase(DeclaresNone(), cast(rt.CallOptions, {"retry": 3}))
    with pytest.raises(TypeError, match="retry"):
        rt.ToolsBase(DeclaresNone()).with_options(**cast(rt.CallOptions, {"retry": 3}))
    with pytest.raises(TypeError, match="retries must be a non-negative int"):
        rt.ToolsBase(DeclaresNone()).with_options(retries=-1)


def test_call_option_names_match_the_contract() -> None:
    assert rt.CALL_OPTION_NAMES == CALL_KWARGS
    assert tuple(rt.CallOptions.__annotations__) == CALL_KWARGS + rt.PACKAGE_OPTION_NAMES
    assert rt.CallOptions.__total__ is False


# --- with_options ---------------------------------------------------------------------------------


def test_with_options_returns_a_new_instance_and_keeps_the_original() -> None:
    provider = TakesKwargs()
    base = Tools(provider, {"timeout_seconds": 1.0})
    tuned = base.with_options(user="alice", timeout_seconds=2.0)
    assert type(tuned) is Tools and tuned is not base
    assert tuned._provider is provider
    assert base._options == {"timeout_seconds": 1.0}
    assert tuned._options == {"timeout_seconds": 2.0, "user": "alice"}
    assert tuned.sub._options == {"timeout_seconds": 2.0, "user": "alice"}
    assert base.sub._options == {"timeout_seconds": 1.0}
    tuned.echo(message="x")
    base.echo(message="y")
    assert [kwargs for _, _, kwargs in received(provider)] == [
        {"timeout_seconds": 2.0, "user": "alice"},
        {"timeout_seconds": 1.0},
    ]
    assert repr(base) == f"Tools({provider!r}, {{'timeout_seconds': 1.0}})"


def test_options_passed_in_are_copied() -> None:
    options: rt.CallOptions = {"user": "a"}
    tools = rt.ToolsBase(DeclaresNone(), options)
    options["user"] = "b"
    assert tools._options == {"user": "a"}


def test_async_with_options() -> None:
    base = AsyncTools(DeclaresNone())
    tuned = base.with_options(meta={"k": 1})
    assert type(tuned) is AsyncTools and tuned is not base
    assert (base._options, tuned._options) == ({}, {"meta": {"k": 1}})


# --- sync Tools and async providers ---------------------------------------------------------------


def test_sync_tools_run_an_async_provider_without_a_loop() -> None:
    provider = AsyncCallTool()
    assert Tools(provider, {"meta": {"k": 1}, "user": "u"}).echo(message="x") == ""
    assert received(provider) == [("echo", {"message": "x"}, {"meta": {"k": 1}})]


def test_sync_tools_inside_a_running_loop_run_an_async_provider_in_a_helper_thread() -> None:
    """The runtime's one running-loop policy (``_rules.run_sync``): a sync call made where a loop
    runs (a notebook, async code) runs the provider's coroutine on a fresh loop in a helper thread."""
    provider = AsyncCallTool()

    async def inside() -> object:
        return Tools(provider, {"meta": {"k": 1}}).echo(message="x")

    with warnings.catch_warnings(record=True) as caught_warnings:
        warnings.simplefilter("always")
        assert asyncio.run(inside()) == ""
        gc.collect()
    assert [str(w.message) for w in caught_warnings if "never awaited" in str(w.message)] == []
    assert received(provider) == [("echo", {"message": "x"}, {"meta": {"k": 1}})]


# --- AsyncToolsBase -------------------------------------------------------------------------------


def test_async_prefers_acall_tool() -> None:
    provider = HasAcallTool()
    assert asyncio.run(AsyncTools(provider, {"user": "u", "ctx": None}).echo(message="x", loud=True)) == ""
    assert received(provider) == [("echo", {"message": "x", "loud": True}, {"user": "u"})]


def test_async_awaits_a_coroutine_call_tool_on_the_loop_thread() -> None:
    provider = AsyncCallTool()

    async def run() -> int:
        await AsyncTools(provider, {"meta": {"k": 2}, "timeout_seconds": 3.0}).echo(message="x")
        return threading.get_ident()

    loop_thread = asyncio.run(run())
    assert received(provider) == [("echo", {"message": "x"}, {"meta": {"k": 2}})]
    assert provider.threads == [loop_thread]


def test_async_runs_a_sync_call_tool_in_a_worker_thread() -> None:
    provider = DeclaresSome(returns={"content": [{"type": "text", "text": "done"}]})

    async def run() -> tuple[str, int]:
        return await AsyncTools(provider, {"timeout_seconds": 4.0}).echo(message="x"), threading.get_ident()

    text, loop_thread = asyncio.run(run())
    assert text == "done"
    assert received(provider) == [("echo", {"message": "x"}, {"timeout_seconds": 4.0, "user": ""})]
    assert provider.threads[0] != loop_thread


def test_async_decodes_and_raises_like_sync() -> None:
    provider = TakesKwargs(returns={"isError": True, "content": [{"type": "text", "text": "nope"}]})
    with pytest.raises(rt.ToolCallError, match="^tool 'echo' reported an error: nope$"):
        asyncio.run(AsyncTools(provider).echo(message="x"))


def test_a_provider_without_any_call_method_is_a_type_error() -> None:
    """The caller's mistake, not the tool's: ``except ToolError`` does not hide it."""
    with pytest.raises(TypeError, match="^tool 'echo': the provider has no call_tool or acall_tool$") as caught:
        asyncio.run(AsyncTools(cast(rt.SupportsCallTool, object())).echo(message="x"))
    assert not isinstance(caught.value, rt.ToolError)
    with pytest.raises(TypeError, match="^tool 'echo': the provider has no call_tool$") as caught:
        Tools(cast(rt.SupportsCallTool, object())).echo(message="x")
    assert not isinstance(caught.value, rt.ToolError)


# --- the module itself ----------------------------------------------------------------------------


MODULES = sorted(SHIM.glob("*.py"))


#: The test kit's engine (``<package>.testing``), which ``import <package>`` never imports.
KIT = SHIM / "_fake.py"


def test_the_package_is_standalone() -> None:
    """Standard library and pydantic only; inside, its own modules and the _rules.py beside it."""
    imported: set[str] = set()
    for path in MODULES:
        if path == KIT:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                # Relative: a module of the package, or (one level up) _rules.py, copied beside it.
                sibling = node.level == 1 and (node.module or "").startswith("_")
                rules = node.level == 2 and node.module is None and [a.name for a in node.names] == ["_rules"]
                assert node.level == 0 or sibling or rules, f"{path.name}: {ast.unparse(node)}"
                if node.level == 0:
                    imported.add((node.module or "").split(".")[0])
    third_party = {name for name in imported if name not in sys.stdlib_module_names and name != "__future__"}
    assert third_party == {"pydantic"}
    docstring = ast.get_docstring(ast.parse((SHIM / "__init__.py").read_text(encoding="utf-8"))) or ""
    assert "copied verbatim" in docstring and "codegen/shim/_runtime/" in docstring


def test_the_kit_imports_its_libraries_only_when_used() -> None:
    """The test kit's engine imports the standard library and the shim at its top; pydantic,
    polyfactory, jsonschema (by name) and the runtime's redaction inside the functions that use them,
    so importing ``<package>.testing`` costs none of them until an answer needs one."""
    tree = ast.parse(KIT.read_text(encoding="utf-8"))
    at_top = {
        (node.module or "").split(".")[0] if isinstance(node, ast.ImportFrom) and node.level == 0 else ""
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
    } | {alias.name.split(".")[0] for node in tree.body if isinstance(node, ast.Import) for alias in node.names}
    assert {name for name in at_top if name and name not in sys.stdlib_module_names} == set()
    inside = {
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 0
    }
    assert inside - set(sys.stdlib_module_names) - {"__future__"} == {"pydantic", "polyfactory", "mas"}
    rt_init = (SHIM / "__init__.py").read_text(encoding="utf-8")
    assert "_fake" not in rt_init  # the package's runtime never names the kit


def test_only_the_content_module_imports_pydantic_at_its_top() -> None:
    """Importing a package builds no pydantic class: pydantic is imported at module level by
    ``_content`` alone, which the rest imports inside functions (on first decode) or for type checkers."""
    at_top = set()
    for path in MODULES:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "pydantic":
                at_top.add(path.name)
            if isinstance(node, ast.ImportFrom) and node.module == "_content" and node.level == 1:
                at_top.add(f"{path.name} -> _content")
    assert at_top == {"_content.py"}


def test_all_lists_every_public_name() -> None:
    """Every class a user can meet (errors, results, requests, content blocks) is exported; the
    helpers the modules share are not."""
    classes: set[str] = set()
    for path in MODULES:
        if path == KIT:  # the test kit's engine: its names are <package>.testing's (test_testkit.py)
            continue
        module = importlib.import_module(f"{rt.__name__}.{path.stem}") if path.stem != "__init__" else rt
        classes |= {
            name
            for name, value in vars(module).items()
            if isinstance(value, type) and value.__module__ == module.__name__ and not name.startswith("_")
        }
    assert classes - {"CallPlan"} <= set(rt.__all__)  # the call plan is the bases' own
    constants = {"ContentBlock", "CALL_OPTION_NAMES", "PACKAGE_OPTION_NAMES", "MAX_INPUT_ROUNDS", "NOT_GIVEN"}
    assert constants <= set(rt.__all__)
    assert all(hasattr(rt, name) for name in rt.__all__)
    content = importlib.import_module(f"{rt.__name__}._content")
    models = {
        name
        for name, value in vars(content).items()
        if isinstance(value, type) and value.__module__ == content.__name__
    }
    assert set(rt.LAZY_NAMES) == models | {"ContentBlock"}  # every content model is named lazily, and only they
    assert set(rt.LAZY_NAMES) <= set(rt.__all__)


# --- static typing --------------------------------------------------------------------------------


def _expected_error_lines(path: Path) -> set[int]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {number for number, line in enumerate(lines, start=1) if line.endswith("# expect-error")}


# pyright checks the runtime copy too (exclude nothing): here it is the shim under test.
@pyright_workspace(include=["pkg"], exclude=lambda path: False, extra_paths=[str(REPO)])
def checked(root: Path) -> None:
    """A package laid out like a generated one: a verbatim _runtime/ and _rules.py plus the typing cases."""
    package = root / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text('"""A stand-in generated package."""\n', encoding="utf-8")
    shutil.copytree(SHIM, package / "_runtime", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(RULES, package / "_rules.py")
    for case in TYPING_CASES.glob("*.py"):
        shutil.copyfile(case, package / case.name)


@pytest.fixture(scope="module")
def typed_package(pyright_batch: Batch) -> Path:
    return pyright_batch.built(checked)[0]


@pytest.mark.full  # a mypy cache of its own: the standard library and pydantic analysed anew
def test_mypy_strict(typed_package: Path) -> None:
    completed = subprocess.run(
        # follow-imports=silent: mas (imported by runtime_providers.py) is checked by its own owners
        [sys.executable, "-m", "mypy", "--strict", "--show-error-codes", "--follow-imports=silent", "pkg"],
        cwd=typed_package,
        # A cache of its own: this option in the worker's shared one (tests/conftest.py) would make the
        # next mypy run there, with the usual options, analyse the standard library and pydantic again.
        env={**os.environ, "MYPYPATH": str(REPO), "MYPY_CACHE_DIR": os.environ["MYPY_CACHE_DIR"] + "/follow-silent"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    errors = [line for line in completed.stdout.splitlines() if ": error: " in line]
    bad = [line for line in errors if not line.startswith(os.path.join("pkg", "bad_usage.py") + ":")]
    assert bad == [], completed.stdout + completed.stderr
    flagged = {int(line.split(":")[1]) for line in errors}
    assert flagged == _expected_error_lines(TYPING_CASES / "bad_usage.py"), completed.stdout
    assert f"in 1 file (checked {5 + len(MODULES)} source files)" in completed.stdout


def test_pyright_strict(typed_package: Path, pyright_batch: Batch) -> None:
    report = pyright_batch.report(checked)
    diagnostics = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    bad = [d for d in diagnostics if Path(d["file"]).name != "bad_usage.py"]
    assert bad == [], json.dumps(bad, indent=1)
    flagged = {d["range"]["start"]["line"] + 1 for d in diagnostics}
    assert flagged == _expected_error_lines(TYPING_CASES / "bad_usage.py"), json.dumps(diagnostics, indent=1)
    assert len(report["checked"]) == 5 + len(MODULES)  # __init__, _rules, the shim, three cases


def test_the_shims_input_round_reads_the_runtimes_own_rules() -> None:
    """The shim's reading of an input round is ``_rules.input_requests`` of the runtime's own
    _rules.py (the file every package ships; a package's tests use its copy): typed requests by
    method, the state, and None for anything that is not a round."""
    from codegen.shim import _rules as shim_rules
    from codegen.shim._runtime._input import input_round
    from mas.runtime.contracts import _rules

    assert shim_rules is _rules
    ask = {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {"type": "object"}}}
    wire = {"inputRequests": {"name": ask, "llm": {"method": "sampling/createMessage", "params": {}},
                              "where": {"method": "roots/list"}}, "requestState": "s1"}  # fmt: skip
    envelope = {"status": "success", "result_type": "input_required", "result": wire, "is_error": False}
    found = input_round(envelope)
    assert found is not None
    requests, state = found
    assert state == "s1"
    assert [(type(r).__name__, r.key, r.method) for r in requests] == [
        ("ElicitationRequest", "name", "elicitation/create"),
        ("SamplingRequest", "llm", "sampling/createMessage"),
        ("RootsRequest", "where", "roots/list"),
    ]
    assert isinstance(requests[0], rt.ElicitationRequest) and requests[0].message == "Name?"
    assert input_round({**envelope, "result": {}}) is None
    assert input_round({**envelope, "result_type": "complete"}) is None
