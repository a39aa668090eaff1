"""The envelope rule's shortcut for snake_case envelopes gives what the general path gives.

``_rules.is_envelope`` and ``_rules.to_envelope`` skip renaming and filtering when every key is
already an envelope key (the form ``ToolResultEnvelope.to_dict`` returns, so the hot path of every
typed call). A ``__dunder__`` key is ignored by the rule but sends a mapping down the general
path, so adding one to an envelope must change nothing: not the answer, the key order or the error.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mas.runtime.contracts import _rules

_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(max_size=4),
    st.sampled_from(_rules.STATUSES + _rules.RESULT_MODES + _rules.EXECUTION_MODES + ("complete", "input_required")),
    st.lists(st.fixed_dictionaries({"type": st.sampled_from(["text", "image"]), "text": st.text(max_size=3)})),
    st.dictionaries(st.sampled_from([_rules.ERROR_KIND_KEY, "other"]), st.sampled_from(_rules.ERROR_KINDS)),
)
_SNAKE_ENVELOPES = st.dictionaries(st.sampled_from(_rules.ENVELOPE_KEYS), _VALUES, max_size=8)


def _outcome(data: object) -> tuple[object, ...]:
    try:
        envelope = _rules.to_envelope(data)
    except ValueError as exc:
        return ("error", str(exc))
    return ("ok", envelope, list(envelope))


class _Converted:
    """An object with ``to_dict()``, the way a ``ToolResultEnvelope`` reaches the rule."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        return dict(self.data)


@settings(max_examples=400, deadline=None)
@given(_SNAKE_ENVELOPES)
def test_snake_case_shortcut_equals_the_general_path(data: dict[str, Any]) -> None:
    general = {**data, "__recorded_at__": "ignored"}  # not all envelope keys: the general path
    assert _rules.is_envelope(data) == _rules.is_envelope(general)
    if _rules.is_envelope(data):  # (a plain value keeps every key, the dunder one too)
        assert _outcome(data) == _outcome(general)


def test_shortcut_keeps_the_contract_order_and_copies_content() -> None:
    blocks = [{"type": "text", "text": "hi"}]
    data = {"structured_content": {"a": 1}, "content": blocks, "is_error": False, "status": "success"}
    envelope = _rules.to_envelope(_Converted(data))
    assert list(envelope) == [
        "status",
        "result",
        "is_error",
        "result_mode",
        "execution_mode",
        "content",
        "structured_content",
    ]
    assert envelope["result"] == {"a": 1}
    assert envelope["content"] == blocks and envelope["content"] is not blocks
    assert data["content"] is blocks  # the caller's mapping is never changed
