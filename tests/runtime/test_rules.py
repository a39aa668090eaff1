"""The contract's shared rules in ``mas/runtime/contracts/_rules.py``, called directly: failure
kinds, content-block envelopes and the forwarding target (``docs/tool.md``, "Results")."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import pytest
from mcp.types import TextContent

from mas.runtime.contracts import _rules
from mas.runtime.contracts.tool_contract import ToolContract


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
