"""Edge cases of the shim's decoding (codegen/shim/_runtime/_decode.py), each outcome written out by hand.

test_shim.py covers decoding through real captures; these pin the helpers' corner cases.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, RootModel

from codegen.shim import _runtime as rt
from codegen.shim._runtime._decode import _is_str_root
from codegen.shim._runtime._text import block_tag, joined_text
from mas.runtime.contracts import _rules as rules


def info(name: str = "tool", output_ref: type[BaseModel] | None = None, **fields: Any) -> rt.ToolInfo[Any]:
    return rt.ToolInfo(
        name=name,
        method=name,
        namespace=None,
        title=None,
        description="",
        input_ref=dict,
        output_ref=output_ref,
        output_is_root=False,
        **fields,
    )


class Typed:
    type = "image"


@pytest.mark.parametrize(
    ("block", "tag"),
    [
        ({"type": "text"}, "text"),
        ({"type": "video"}, "unknown"),
        ({"type": 5}, "unknown"),
        ({}, "unknown"),
        (Typed(), "image"),
        (object(), "unknown"),
    ],
)
def test_block_tag(block: object, tag: str) -> None:
    assert block_tag(block) == tag


def test_joined_text_takes_only_text_blocks_with_string_text() -> None:
    blocks: list[object] = [
        rt.TextContent(text="a"),
        {"type": "text", "text": "b"},
        {"type": "image", "text": "c"},
        {"type": "text", "text": 5},
        "d",
    ]
    assert joined_text(blocks) == "a\nb"
    assert joined_text([{"type": "image", "data": "x"}]) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([{"type": "text"}, rt.TextContent(text="x")], True),
        ([], True),
        ([{"type": "text"}, 5], False),
        ([{"type": 1}], False),
        (({"type": "text"},), False),  # a tuple is not a block list
        (5, False),
        (None, False),
    ],
)
def test_is_block_list(value: object, expected: bool) -> None:
    assert rules._is_block_list(value) is expected


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"__capture__": 1, "result": 2}, True),  # capture keys aside
        ({"__x": 1, "result": 2}, False),  # not a dunder: an unknown key
        ({"x__": 1, "result": 2}, False),
        ({"result": 2, "meta": None, "content": "x"}, True),
        ({"isError": False}, True),
        ({"structuredContent": None}, True),
        ({"content": [{"type": "text", "text": "x"}]}, True),
        ({"content": "x"}, False),
        ({"value": 1}, False),
    ],
)
def test_looks_like_envelope(data: dict[str, object], expected: bool) -> None:
    assert rules.is_envelope(data) is expected


class Block(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    type: str
    mime_type: str = Field(alias="mimeType")
    day: datetime.date
    note: str | None = None


def test_envelope_from_mapping_prefers_snake_case_and_dumps_block_models_as_json() -> None:
    data = {
        "structuredContent": {"camel": 1},
        "structured_content": {"snake": 2},
        "result": 3,
        "content": [Block(type="image", mimeType="image/png", day=datetime.date(2026, 1, 2)), {"type": "text"}],
        "isError": False,
    }
    assert rules._from_mapping(data) == {
        "status": "success",
        "result": 3,
        "is_error": False,
        "result_mode": "inline",
        "execution_mode": "sync",
        "content": [{"type": "image", "mimeType": "image/png", "day": "2026-01-02"}, {"type": "text"}],
        "structured_content": {"snake": 2},
    }
    with pytest.raises(ValueError, match="'content' must be a list of blocks"):
        rules._from_mapping({"result": 1, "content": "x"})


def test_is_str_root() -> None:
    assert _is_str_root(RootModel[str]) is True
    assert _is_str_root(RootModel[str | None]) is True
    assert _is_str_root(RootModel[int]) is False
    assert _is_str_root(Block) is False


def test_a_result_without_blocks_becomes_readable_text() -> None:
    out = rt.decode_result(info(), {"result": {"city": "Zürich"}, "is_error": False}).value
    assert isinstance(out, rt.ToolOutput)
    assert out.text == '{"city": "Zürich"}'
    assert rt.decode_result(info(), {"result": "plain", "is_error": False}).value.text == "plain"


def test_bad_blocks_raise_with_the_envelope() -> None:
    raw = {"content": [{"type": "text", "text": 5}], "is_error": False}
    with pytest.raises(rt.ToolOutputValidationError) as caught:
        rt.decode_result(info("t"), raw)
    assert caught.value.envelope == {
        "status": "success",
        "result": "",  # the joined text of the (bad) blocks: there is none
        "is_error": False,
        "result_mode": "inline",
        "execution_mode": "sync",
        "content": [{"type": "text", "text": 5}],
    }
    assert caught.value.raw == [{"type": "text", "text": 5}]
    assert caught.value.tool_name == "t"


class Note(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    note: str = Field(alias="x-note")
    day: datetime.date


class NoteEnvelope(Note):
    is_error: bool = Field(alias="isError")


def test_models_are_read_as_json_with_their_aliases() -> None:
    day = datetime.date(2026, 1, 2)
    plain = {"status": "success", "is_error": False, "result_mode": "inline", "execution_mode": "sync"}
    assert rt.normalize_envelope(Note(note="n", day=day)) == {"result": {"x-note": "n", "day": "2026-01-02"}, **plain}
    # A model with isError and keys outside the envelope's is a value too (unknown keys: not an envelope).
    assert rt.normalize_envelope(NoteEnvelope(note="n", day=day, isError=False)) == {
        "result": {"x-note": "n", "day": "2026-01-02", "isError": False},
        **plain,
    }


def test_a_result_that_is_not_json_becomes_text_anyway() -> None:
    out = rt.decode_result(info(), {"result": {"day": datetime.date(2026, 1, 2)}, "is_error": False}).value
    assert out.text == '{"day": "2026-01-02"}'


# --- malformed results and input rounds -----------------------------------------------------------
def test_a_malformed_envelope_becomes_a_protocol_error_envelope() -> None:
    message = "malformed result: envelope key 'status' must be one of success, error, pending, running, not 'done'"
    assert rt.normalize_envelope({"status": "done", "result": 1}) == rules.failure_dict(message, "protocol")
    with pytest.raises(rt.ToolProtocolError) as raised:
        rt.decode_result(info("t"), {"status": "done", "result": 1})
    assert str(raised.value) == f"tool 't' got a malformed reply: {message}"


def test_an_input_required_result_raises_with_its_requests_and_state() -> None:
    wire = {
        "resultType": "input_required",
        "inputRequests": {"ask": {"method": "elicitation/create", "params": {"message": "Which city?"}}},
        "requestState": "s1",
    }
    with pytest.raises(rt.ToolInputRequiredError) as raised:
        rt.decode_result(info("t"), wire)
    error = raised.value
    assert str(error) == (
        "tool 't' needs input: ask (elicitation/create); pass on_input=... in with_options to answer it"
    )
    assert error.tool_name == "t"
    assert error.requests == [rt.ElicitationRequest("ask", "elicitation/create", {"message": "Which city?"})]
    assert error.request_state == "s1"
    assert error.envelope == rules.to_envelope(wire)
    assert error.payload == wire


def _requests(raw: object, state: object = None) -> Any:
    wire: dict[str, Any] = {"resultType": "input_required", "inputRequests": raw}
    if state is not None:
        wire["requestState"] = state
    with pytest.raises(rt.ToolInputRequiredError) as raised:
        rt.decode_result(info("t"), wire)
    return raised.value


def test_odd_input_requests_are_kept_as_plain_requests() -> None:
    error = _requests({"a": "junk", "b": {"method": 5}, "c": {"method": "x/y", "params": {"k": 1}}}, state=7)
    assert error.requests == [
        rt.InputRequest("a", "", {}),
        rt.InputRequest("b", "", {}),
        rt.InputRequest("c", "x/y", {"k": 1}),
    ]
    assert [type(r) for r in error.requests] == [rt.InputRequest] * 3
    assert error.request_state is None  # a state that is not a string is no state


def test_requests_without_a_state_still_ask_for_input() -> None:
    error = _requests({"r": {"method": "roots/list"}})
    assert error.requests == [rt.RootsRequest("r", "roots/list", {})]
    assert error.request_state is None


def test_an_input_required_error_result_is_an_error_not_an_input_round() -> None:
    wire = {"isError": True, "resultType": "input_required", "inputRequests": {"r": {"method": "roots/list"}}}
    with pytest.raises(rt.ToolCallError):
        rt.decode_result(info("t"), wire)


def test_a_result_that_looks_like_requests_is_only_a_value() -> None:
    value = {"inputRequests": {"r": {"method": "roots/list"}}, "requestState": "s"}
    out = rt.decode_result(info(), {"result": value}).value
    assert json.loads(out.text) == value


class Point(BaseModel):
    x: int


def typed(model: type[BaseModel], **fields: Any) -> rt.ToolInfo[Any]:
    return info("t", model, **fields)


def test_json_text_in_the_blocks_is_decoded_when_the_result_is_none() -> None:
    envelope = {"result": None, "content": [{"type": "text", "text": '{"x": 3}'}]}
    assert rt.decode_result(typed(Point), envelope).value == Point(x=3)


def test_an_inferred_type_decodes_a_result_of_its_shape_and_falls_back_otherwise() -> None:
    inferred = typed(Point, inferred_from=2)
    assert rt.decode_result(inferred, {"result": {"x": 3}}).value == Point(x=3)
    fallback = rt.decode_result(inferred, {"result": {"x": "3"}}).value  # strict: no coercion
    assert isinstance(fallback, rt.ToolOutput)
    assert json.loads(fallback.text) == {"x": "3"}
