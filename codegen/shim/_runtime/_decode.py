"""Decoding: what ``call_tool`` returned, normalized by the contract's envelope rule, into a ``ToolResult``.

A failure raises the error of its kind; a success becomes the validated output model, the
inferred model or the untyped ``ToolOutput``. pydantic is imported by the first decode that needs
a model, never by importing this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from .. import _rules
from ._envelope import ToolEnvelope, as_envelope
from ._errors import ToolInputRequiredError, ToolOutputValidationError, raise_failure
from ._input import input_round
from ._text import as_list, block_tag, joined_text, json_from_text, json_or_none

if TYPE_CHECKING:
    from pydantic import BaseModel, RootModel, ValidationError

    from ._content import ContentBlock, ToolOutput
    from ._info import ToolInfo

__all__ = [
    "ToolResult",
    "decode_envelope",
    "decode_inferred",
    "decode_result",
    "inferred_candidate",
    "normalize_envelope",
]

T = TypeVar("T")


def normalize_envelope(raw: object) -> ToolEnvelope:
    """Turn what ``call_tool`` returned into a :class:`ToolEnvelope`, by the contract's one rule.

    The rule lives in ``_rules.py`` (``to_envelope``; ``docs/tool.md`` has its table): a
    ToolResultEnvelope, an envelope dict (snake_case or MCP wire keys), an MCP ``CallToolResult``
    object or wire dict, or any other value (a successful ``result``). The dict has the form of
    the runtime's ``ToolResultEnvelope.to_dict()``. A malformed envelope becomes a ``protocol``
    error envelope.
    """
    if type(raw) is ToolEnvelope:  # normalized before (a retry, an input round): checked already
        return raw
    try:
        return ToolEnvelope(_rules.to_envelope(raw))
    except ValueError as exc:
        return ToolEnvelope(_rules.failure_dict(f"malformed result: {exc}", "protocol"))


@dataclass(frozen=True, slots=True)
class ToolResult(Generic[T]):
    """A decoded tool result: the typed ``value`` plus the whole normalized ``envelope``.

    Here everything is decoded (``value``, and ``content`` as content-block models); the envelope
    is the wire form, as the runtime's ``ToolResultEnvelope`` has it (``envelope.content`` is a
    list of dicts). A plain dict passed as ``envelope`` becomes a :class:`ToolEnvelope`.
    """

    value: T
    envelope: ToolEnvelope

    def __post_init__(self) -> None:
        if type(self.envelope) is not ToolEnvelope:
            object.__setattr__(self, "envelope", as_envelope(self.envelope))

    @property
    def content(self) -> list[ContentBlock]:
        """The content blocks, decoded (unknown block types as :class:`UnknownContent`)."""
        from ._content import CONTENT_LIST  # the models, on first use

        return CONTENT_LIST.validate_python(self.envelope.get("content") or [])

    @property
    def structured_content(self) -> Any:
        return self.envelope.get("structured_content")

    @property
    def meta(self) -> dict[str, Any] | None:
        return self.envelope.get("meta")

    @property
    def session_id(self) -> str | None:
        return self.envelope.get("session_id")

    @property
    def session_status(self) -> str | None:
        return self.envelope.get("session_status")

    @property
    def result_type(self) -> str:
        """``"complete"`` unless the provider said otherwise (e.g. ``"input_required"``)."""
        return self.envelope.get("result_type") or "complete"

    @property
    def text(self) -> str:
        """The text blocks joined with newlines, else ``str(result)``, else ``""``."""
        return self.envelope.text


# The hot path sets the two slots directly: the frozen dataclass's __init__ costs half a call's decoding.
_set_value = ToolResult.__dict__["value"].__set__
_set_envelope = ToolResult.__dict__["envelope"].__set__
_RESULT_TYPE: type[ToolResult[Any]] = ToolResult


def _result(value: Any, envelope: ToolEnvelope) -> ToolResult[Any]:
    """``ToolResult(value, envelope)``, built faster."""
    result = object.__new__(_RESULT_TYPE)
    _set_value(result, value)
    _set_envelope(result, envelope)
    return result


def _untyped(info: ToolInfo[Any], envelope: Mapping[str, Any]) -> ToolOutput:
    from ._content import tool_output  # the content-block models, on first use

    return tool_output(info, envelope)


# --------------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------------


def _validation_error() -> type[ValidationError]:
    """pydantic's ValidationError; called in an ``except`` clause, so only when something was raised
    (a module that imports pydantic at the top would make every package import pay for it)."""
    from pydantic import ValidationError

    return ValidationError


def _is_str_root(model: type[BaseModel]) -> bool:
    from pydantic import RootModel  # loaded already: ``model`` is a pydantic model

    if not issubclass(model, RootModel):
        return False
    annotation = model.model_fields["root"].annotation
    return annotation is str or annotation == (str | None)


def decode_result(info: ToolInfo[T], raw: object) -> ToolResult[T]:
    """Decode what ``call_tool`` returned for ``info``'s tool.

    Raises the :class:`ToolError` subclass of the envelope's error kind (:class:`ToolCallError`
    when the tool itself reported an error), :class:`ToolInputRequiredError` for an
    ``input_required`` result, and :class:`ToolOutputValidationError` when the output does not
    match ``info.output_model``.
    """
    envelope = normalize_envelope(raw)
    pending = input_round(envelope) if "result_type" in envelope else None  # the key is absent when complete
    if pending is not None:
        raise ToolInputRequiredError(info.name, envelope, *pending)
    return decode_envelope(info, envelope)


def decode_envelope(info: ToolInfo[T], envelope: ToolEnvelope) -> ToolResult[T]:
    if envelope.get("is_error"):
        raise_failure(info.name, envelope)
    if info.inferred_from:
        return decode_inferred(info, envelope)
    model = info.output_model
    if model is None:
        return ToolResult(cast(T, _untyped(info, envelope)), envelope)
    candidate: object = envelope.get("structured_content")
    if info.output_key is not None and not _holds(candidate, info.output_key):
        candidate = _wrapped(info.output_key, envelope)
    if candidate is None:
        candidate = envelope.get("result")
    if isinstance(candidate, str) and not _is_str_root(model):
        parsed = json_or_none(candidate)
        if parsed is None and candidate == joined_text(as_list(envelope.get("content")) or []):
            # The result is the blocks' joined text: look for JSON in each block on its own.
            candidate = json_from_text(envelope.get("content"))
        elif parsed is not None:
            candidate = parsed
    if candidate is None:
        candidate = json_from_text(envelope.get("content"))
    if candidate is None:
        missing = {"type": "missing", "loc": (), "msg": "the result has no structured content or JSON text"}
        raise ToolOutputValidationError(info.name, model, errors=[missing], raw=None, envelope=envelope)
    try:
        # model_validate with its defaults, without the Python-level wrapper (this is the hot path).
        validated: Any = model.__pydantic_validator__.validate_python(candidate)
    except _validation_error() as exc:
        raise ToolOutputValidationError(
            info.name, model, errors=[dict(e) for e in exc.errors()], raw=candidate, envelope=envelope
        ) from exc
    if info.output_key is not None:
        return _result(getattr(validated, info.output_key), envelope)
    return _result(validated.root if info.output_is_root else validated, envelope)


def _holds(value: object, key: str) -> bool:
    # A function, not an inline isinstance: narrowing ``candidate`` to a Mapping of unknown types
    # would make strict pyright flag every later use of it.
    return isinstance(value, Mapping) and key in value


def _wrapped(key: str, envelope: Mapping[str, Any]) -> object:
    """A wrapped plain value sent without structured content (a client or proxy that drops it):
    FastMCP's text block is the value, as JSON or, for a string, as it is."""
    blocks = as_list(envelope.get("content")) or []
    result: object = envelope.get("result")
    if blocks and all(block_tag(block) == "text" for block in blocks):
        text: object = joined_text(blocks)
    else:
        text = result
    if not isinstance(text, str):
        return None if text is None else {key: text}
    parsed: object = json_or_none(text)
    return {key: text if parsed is None else parsed}


# Inferred output types (learned from recorded results; see toolgen's docs/samples.md)


def inferred_candidate(envelope: Mapping[str, Any]) -> object:
    """The JSON value an inferred output type is learned from and decoded from, or None.

    Structured content; else a mapping or list ``result``; else the text of the content when every
    block is text and that text is a JSON object or array. The generator infers from exactly this
    value, so a result of the recorded shape always decodes.
    """
    structured: object = envelope.get("structured_content")
    if structured is not None:
        return structured
    blocks = as_list(envelope.get("content"))
    result: object = envelope.get("result")
    if not blocks:
        if isinstance(result, Mapping | list):
            return cast(object, result)
        text = result if isinstance(result, str) else None
    elif all(block_tag(block) == "text" for block in blocks):
        text = joined_text(blocks)
    else:
        return None
    value: object = None if text is None else json_or_none(text)
    return cast(object, value) if isinstance(value, Mapping | list) else None


def decode_inferred(info: ToolInfo[T], envelope: Mapping[str, Any]) -> ToolResult[T]:
    """Decode a successful result of a tool whose output type was inferred.

    Never raises where an untyped tool would not: the text (for ``output_is_text``), else the
    inferred model when the value fits it exactly (strict validation: no coercion, so the value
    is the recorded data), else the untyped :class:`ToolOutput`. The generated method's return
    type is ``Model | ToolOutput`` (or ``str``), so a type checker makes the caller handle both.
    """
    envelope = as_envelope(envelope)
    if info.output_is_text:
        return ToolResult(cast(T, envelope.text), envelope)
    model = info.output_model
    candidate = inferred_candidate(envelope)
    if model is not None and candidate is not None:
        import json  # here: only inferred types read it (the import of a package does not pay for it)

        try:
            validated = model.model_validate_json(json.dumps(candidate, ensure_ascii=False), strict=True)
        except (TypeError, ValueError):  # pydantic's ValidationError is a ValueError
            pass  # not the recorded shape: the untyped value below
        else:
            value: object = cast("RootModel[Any]", validated).root if info.output_is_root else validated
            if info.output_key is not None:
                value = getattr(validated, info.output_key)
            return ToolResult(cast(T, value), envelope)
    return ToolResult(cast(T, _untyped(info, envelope)), envelope)
