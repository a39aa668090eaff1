"""The contract's shared rules in ``mas/runtime/contracts/_rules.py``, called directly: failure
kinds, content-block envelopes and the forwarding target (``docs/tool.md``, "Results")."""

from __future__ import annotations

import asyncio
import datetime
import threading
from types import SimpleNamespace
from typing import Any

import pytest
from mcp.types import TextContent
from pydantic import BaseModel, Field, RootModel

from mas.runtime.contracts import _rules
from mas.runtime.contracts.tool_contract import ToolContract, ToolResultEnvelope, ainvoke_call_tool


# --- failure kinds --------------------------------------------------------------------------------
def test_failure_dict_is_an_error_envelope_with_its_kind() -> None:
    assert _rules.failure_dict("gone", "unavailable") == {
        "status": "error",
        "result": "gone",
        "is_error": True,
        "result_mode": "inline",
        "execution_mode": "sync",
        "metadata": {"error_kind": "unavailable"},
        "content": [{"type": "text", "text": "gone"}],
    }
    assert _rules.failure_dict("x")["metadata"] == {"error_kind": "tool_error"}


def test_failure_dict_refuses_an_unknown_kind() -> None:
    with pytest.raises(ValueError) as info:
        _rules.failure_dict("x", "oops")
    assert str(info.value) == (
        "error kind must be one of tool_error, invalid_arguments, unknown_tool, timeout, cancelled, "
        "unavailable, protocol, not 'oops'"
    )


@pytest.mark.parametrize(
    ("envelope", "kind"),
    [
        ({"is_error": False, "metadata": {"error_kind": "timeout"}}, None),
        ({"status": "success"}, None),
        ({"is_error": True, "metadata": {"error_kind": "timeout"}}, "timeout"),
        ({"is_error": True}, "tool_error"),  # an error without a kind counts as tool_error
        ({"is_error": True, "metadata": None}, "tool_error"),
        ({"is_error": True, "metadata": {}}, "tool_error"),
        ({"is_error": True, "metadata": {"error_kind": "bogus"}}, "tool_error"),
        ({"is_error": True, "metadata": {"error_kind": 3}}, "tool_error"),
    ],
)
def test_error_kind(envelope: dict[str, Any], kind: str | None) -> None:
    assert _rules.error_kind(envelope) == kind


# --- content blocks -------------------------------------------------------------------------------
def test_a_dict_with_only_content_blocks_is_an_envelope_with_their_text() -> None:
    blocks = [{"type": "text", "text": "a"}, {"type": "image", "data": "..."}, {"type": "text", "text": "b"}]
    assert _rules.to_envelope({"content": blocks}) == {
        "status": "success",
        "result": "a\nb",
        "is_error": False,
        "result_mode": "inline",
        "execution_mode": "sync",
        "content": blocks,
    }


def test_block_models_are_dumped_to_dicts() -> None:
    envelope = _rules.to_envelope({"content": [TextContent(type="text", text="hi")]})
    assert envelope["result"] == "hi"
    assert envelope["content"] == [{"type": "text", "text": "hi"}]


@pytest.mark.parametrize(
    "value",
    [{"content": "hello"}, {"content": [{"text": "x"}]}, {"content": [{"type": 1}]}, {"content": ["x"]}],
)
def test_content_that_is_not_a_list_of_blocks_is_a_value(value: dict[str, Any]) -> None:
    assert _rules.to_envelope(value)["result"] == value


def test_only_text_blocks_give_the_text_and_other_items_are_skipped() -> None:
    blocks: list[Any] = ["loose", {"type": "resource", "text": "not text"}, {"type": "text", "text": "yes"}]
    assert _rules.to_envelope({"is_error": True, "content": blocks})["result"] == "yes"


# --- the forwarding target ------------------------------------------------------------------------
def _marked(target: str) -> Any:
    def method(*args: Any, **kwargs: Any) -> None:
        return None

    setattr(method, _rules.FORWARDS_TO, target)
    return method


def _plain(*args: Any, **kwargs: Any) -> None:
    return None


def test_a_missing_method_has_no_target() -> None:
    assert _rules.forward_target(object(), "call_tool") is None
    assert _rules.forward_target(SimpleNamespace(call_tool=3), "call_tool") is None


def test_a_method_without_a_mark_is_its_own_target() -> None:
    callee = SimpleNamespace(call_tool=_plain)
    assert _rules.forward_target(callee, "call_tool") is _plain


def test_acall_tool_hands_its_options_to_call_tool() -> None:
    tool = ToolContract()
    assert _rules.forward_target(tool, "acall_tool") == tool.call_tool


def test_marks_are_followed_to_the_end_of_the_chain() -> None:
    callee = SimpleNamespace(a=_marked("b"), b=_marked("c"), c=_plain)
    assert _rules.forward_target(callee, "a") is _plain


def test_a_mark_naming_nothing_callable_stops_at_the_marked_method() -> None:
    missing = SimpleNamespace(a=_marked("b"))
    assert _rules.forward_target(missing, "a") is missing.a
    not_callable = SimpleNamespace(a=_marked("b"), b="text")
    assert _rules.forward_target(not_callable, "a") is not_callable.a


def test_a_cycle_of_marks_ends() -> None:
    callee = SimpleNamespace(a=_marked("b"), b=_marked("c"), c=_marked("b"))
    found: list[object] = []
    # A daemon thread, so a rule that loops forever fails this test instead of hanging the suite.
    worker = threading.Thread(target=lambda: found.append(_rules.forward_target(callee, "a")), daemon=True)
    worker.start()
    worker.join(timeout=5)
    assert found == [callee.c]


class DatedBlock(BaseModel):
    type: str
    text: str
    day: datetime.date
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


def test_block_models_are_dumped_as_json_with_their_aliases() -> None:
    block = DatedBlock(type="text", text="hi", day=datetime.date(2026, 1, 2), _meta={"k": 1})
    assert _rules.to_envelope({"content": [block]})["content"] == [
        {"type": "text", "text": "hi", "day": "2026-01-02", "_meta": {"k": 1}}
    ]


class Narrow:
    """An ``acall_tool`` that takes every option but hands them to a ``call_tool`` that takes one."""

    def __init__(self) -> None:
        self.received: dict[str, Any] = {}

    async def acall_tool(self, tool_name: str, arguments: Any, **kwargs: Any) -> str:
        self.received = kwargs
        return "ok"

    setattr(acall_tool, _rules.FORWARDS_TO, "call_tool")  # noqa: B010

    def call_tool(self, tool_name: str, arguments: Any, timeout_seconds: float | None = None) -> str:
        return "ok"


def test_ainvoke_filters_the_options_by_the_method_they_are_handed_on_to() -> None:
    callee = Narrow()
    assert asyncio.run(ainvoke_call_tool(callee, "t", {}, timeout_seconds=2, meta={"k": 1})) == "ok"
    assert callee.received == {"timeout_seconds": 2}


# --- the envelope rule's table (docs/tool.md, "One envelope rule"), on this module directly -------
OK = {"status": "success", "is_error": False, "result_mode": "inline", "execution_mode": "sync"}
FAILED = {**OK, "status": "error", "is_error": True}
HI = [{"type": "text", "text": "hi"}]
ASK = {"r": {"method": "roots/list"}}


@pytest.mark.parametrize(
    ("raw", "envelope"),
    [
        ({"is_error": True, "result": "x"}, {**FAILED, "result": "x"}),
        ({"status": "error", "result": "x"}, {**FAILED, "result": "x"}),
        ({"result": 5}, {**OK, "result": 5}),
        ({"status": "running"}, {**OK, "result": {"status": "running"}}),
        ({"is_error": False, "total": 3}, {**OK, "result": {"is_error": False, "total": 3}}),
        ({"content": HI, "isError": False}, {**OK, "result": "hi", "content": HI}),
        (
            {"content": HI, "structuredContent": {"a": 1}, "isError": True},
            {**FAILED, "result": {"a": 1}, "structured_content": {"a": 1}, "content": HI},
        ),
        (
            {"resultType": "input_required", "inputRequests": ASK, "requestState": "s"},
            {
                **OK,
                "result": {"resultType": "input_required", "inputRequests": ASK, "requestState": "s"},
                "result_type": "input_required",
            },
        ),
        (
            {"result_type": "input_required", "requestState": "s", "__recorded__": 1},
            {**OK, "result": {"result_type": "input_required", "requestState": "s"}, "result_type": "input_required"},
        ),
        ({"resultType": "input_required", "result": 3}, {**OK, "result": 3, "result_type": "input_required"}),
        ({"__recorded__": 1, "result": 2}, {**OK, "result": 2}),  # recorder keys are skipped
        ({"result": 1, "x__": 2}, {**OK, "result": {"result": 1, "x__": 2}}),  # not a __dunder__ key
        ({"result": 1, "__x": 2}, {**OK, "result": {"result": 1, "__x": 2}}),
        ({"isError": False, "is_error": True, "result": "x"}, {**FAILED, "result": "x"}),  # snake_case wins
        ({"result": 1, "result_type": "complete"}, {**OK, "result": 1}),
        ({"result": 1, "resultType": "pending"}, {**OK, "result": 1, "result_type": "pending"}),
    ],
)
def test_the_documented_envelope_rule(raw: dict[str, Any], envelope: dict[str, Any]) -> None:
    assert _rules.to_envelope(raw) == envelope


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"status": "done", "result": 1},
            "envelope key 'status' must be one of success, error, pending, running, not 'done'",
        ),
        (
            {"result": 1, "result_mode": "x"},
            "envelope key 'result_mode' must be one of inline, stream, session, not 'x'",
        ),
        ({"result": 1, "execution_mode": "x"}, "envelope key 'execution_mode' must be one of sync, async, not 'x'"),
        ({"result": 1, "events": "x"}, "envelope key 'events' must be a list, not str"),
        ({"is_error": True, "content": "x"}, "envelope key 'content' must be a list of blocks, not str"),
        ({"result": 1, "is_error": "yes"}, "envelope key 'is_error' must be a boolean, not 'yes'"),
        ({"result": 1, "result_type": 3}, "envelope key 'result_type' must be a string, not 3"),
    ],
)
def test_a_bad_enumerated_value_names_the_key(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as info:
        _rules.to_envelope(raw)
    assert str(info.value) == message


class Aliased(BaseModel):
    """An envelope only under its aliases, with a value that is not JSON until dumped as JSON."""

    value: datetime.date = Field(alias="result")
    failed: bool = Field(alias="isError")


class Point(BaseModel):
    x: int


class Dated(BaseModel):
    day: datetime.date = Field(alias="theDay")


class ToDict:
    def __init__(self, converted: object) -> None:
        self.converted = converted

    def to_dict(self) -> object:
        return self.converted


def test_a_model_is_read_as_json_by_its_aliases() -> None:
    model = Aliased(result=datetime.date(2026, 1, 2), isError=True)
    assert _rules.to_envelope(model) == {**FAILED, "result": "2026-01-02"}
    assert _rules.to_envelope(Point(x=3)) == {**OK, "result": {"x": 3}}  # not an envelope: the value, dumped
    assert _rules.to_envelope(Dated(theDay=datetime.date(2026, 1, 2))) == {**OK, "result": {"theDay": "2026-01-02"}}
    assert _rules.to_envelope(RootModel[list[int]]([1, 2])) == {**OK, "result": [1, 2]}


def test_an_object_whose_to_dict_is_no_envelope_is_the_value_itself() -> None:
    for converted in ({"a": 1}, [1, 2]):
        raw = ToDict(converted)
        assert _rules.to_envelope(raw) == {**OK, "result": raw}
    assert _rules.to_envelope(ToDict({"result": 1, "status": "error"})) == {**FAILED, "result": 1}


def test_coerce_turns_a_malformed_envelope_into_a_protocol_error() -> None:
    message = "malformed result: envelope key 'status' must be one of success, error, pending, running, not 'done'"
    envelope = ToolResultEnvelope.coerce({"status": "done", "result": 1})
    assert envelope.to_dict() == _rules.failure_dict(message, "protocol")
    assert envelope.error_kind == "protocol"


# --- is_envelope at its edges -----------------------------------------------------------------------
_WIRE = {snake: wire for wire, snake in _rules._WIRE_KEYS.items()}


def test_a_snake_case_input_required_answer_is_an_envelope() -> None:
    # No marker key (result, is_error, structured_content): result_type alone says it.
    assert _rules.is_envelope({"result_type": "input_required"})
    assert _rules.is_envelope({"result_type": "input_required", "status": "running"})
    assert not _rules.is_envelope({"result_type": "complete", "status": "running"})


def test_every_envelope_key_at_once_in_wire_spelling_is_an_envelope() -> None:
    # Every key present is the one case where "a subset of the envelope keys" and "a proper subset"
    # differ; wire spellings take the renaming path.
    data: dict[str, Any] = {_WIRE.get(key, key): None for key in _rules.ENVELOPE_KEYS}
    data[_WIRE.get("is_error", "is_error")] = False
    assert set(data) != set(_rules.ENVELOPE_KEYS) and _rules.is_envelope(data)
    data["resultType"] = "input_required"
    data.update({"inputRequests": {}, "requestState": "s"})
    assert _rules.is_envelope(data)


# --- who asks first, what may run twice, what an input round asks (the rules every package copies) --
# These call the runtime's own _rules.py, the file every generated package ships byte for byte
# (tests/codegen/test_golden.py holds the copies equal); the packages' tests use their copy.
@pytest.mark.parametrize(
    ("read_only", "destructive", "expected"),
    [
        (None, None, True),  # MCP's defaults: destructive unless it says otherwise
        (True, None, False),
        (False, None, True),
        (None, False, False),
        (None, True, True),
        (True, True, False),  # read-only wins over a contradicting destructive hint
        (False, False, False),
    ],
)
def test_is_destructive_follows_mcps_defaults(read_only: bool | None, destructive: bool | None, expected: bool) -> None:
    assert _rules.is_destructive(read_only, destructive) is expected


@pytest.mark.parametrize(
    ("read_only", "idempotent", "destructive", "expected"),
    [
        (True, True, None, True),
        (True, True, False, True),
        (True, True, True, False),
        (True, None, None, False),
        (None, True, None, False),
        (False, True, None, False),
    ],
)
def test_retry_safe_needs_read_only_and_idempotent(
    read_only: bool | None, idempotent: bool | None, destructive: bool | None, expected: bool
) -> None:
    assert _rules.retry_safe(read_only, idempotent, destructive) is expected


def _round(result: Any, **extra: Any) -> dict[str, Any]:
    return {"status": "success", "result_type": "input_required", "result": result, "is_error": False, **extra}


def test_input_requests_reads_each_request_and_the_state() -> None:
    ask = {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {"type": "object"}}}
    roots = {"method": "roots/list"}
    found = _rules.input_requests(_round({"inputRequests": {"name": ask, "where": roots}, "requestState": "s1"}))
    assert found == (
        [("name", "elicitation/create", {"message": "Name?", "requestedSchema": {"type": "object"}}),
         ("where", "roots/list", {})],
        "s1",
    )  # fmt: skip
    # Either one alone is a round (MCP requires one of the two).
    assert _rules.input_requests(_round({"requestState": "only"})) == ([], "only")
    assert _rules.input_requests(_round({"inputRequests": {"k": ask}})) == (
        [("k", "elicitation/create", ask["params"])], None
    )  # fmt: skip


@pytest.mark.parametrize(
    "envelope",
    [
        _round({}),  # neither requests nor state: nothing to answer
        _round({"inputRequests": {}, "requestState": 7}),
        _round({"requestState": "s"}, is_error=True),  # a failure is never a round
        {"status": "success", "result_type": "complete", "result": {"requestState": "s"}, "is_error": False},
        {"status": "success", "result": "plain", "is_error": False},
        _round("not an object"),
    ],
)
def test_input_requests_is_none_for_anything_but_a_round(envelope: dict[str, Any]) -> None:
    assert _rules.input_requests(envelope) is None


def test_input_requests_keeps_a_malformed_request_as_an_empty_one() -> None:
    found = _rules.input_requests(_round({"inputRequests": {"a": "junk", 3: {"method": 5}}, "requestState": "s"}))
    assert found == ([("a", "", {}), ("3", "", {})], "s")
