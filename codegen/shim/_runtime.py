"""Runtime support for a toolgen-generated tool package.

This module is copied verbatim into every generated package as ``_runtime.py``. Its canonical
source is ``codegen/shim/_runtime.py`` in the toolgen repository: change it there and
regenerate, never edit a generated copy. It depends only on the standard library and
pydantic 2, so a generated package needs nothing else.

A generated ``Tools`` class subclasses :class:`ToolsBase` (``AsyncTools`` subclasses
:class:`AsyncToolsBase`). Each typed method builds the wire arguments and calls
``self._call(INFO, arguments, omit)``, which

1. drops the optional arguments the caller did not pass (their values equal the omit marker),
2. asks ``confirm`` first when the tool is destructive and that option is set,
3. calls ``provider.call_tool(tool_name, arguments)`` (or ``acall_tool``), forwarding a call
   option only when the callable that finally receives it declares it or takes ``**kwargs``,
4. normalizes whatever came back by the contract's one envelope rule (``_rules.py``, a verbatim
   copy of the runtime's), retries a read-only idempotent tool on ``unavailable``/``timeout``
   when ``retries`` is set, answers ``input_required`` rounds with ``on_input``,
5. raises the :class:`ToolError` subclass of the failure kind, or decodes the envelope into a
   :class:`ToolResult`: a validated output model, or a :class:`ToolOutput` with content blocks
   for tools without an output schema.
"""

from __future__ import annotations

import importlib
import inspect
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Generic, Literal, Protocol, Self, TypeAlias, TypedDict, TypeVar, Unpack, cast

from pydantic import BaseModel, ConfigDict, Discriminator, Field, RootModel, Tag, TypeAdapter, ValidationError

from . import _rules

__all__ = [
    "CALL_OPTION_NAMES",
    "Annotations",
    "AsyncToolsBase",
    "AudioContent",
    "BlobResourceContents",
    "CallOptions",
    "ContentBlock",
    "ElicitationRequest",
    "EmbeddedResource",
    "ImageContent",
    "InputRequest",
    "MAX_INPUT_ROUNDS",
    "PACKAGE_OPTION_NAMES",
    "ResourceLink",
    "RootsRequest",
    "SamplingRequest",
    "SupportsAsyncCallTool",
    "SupportsCallTool",
    "TextContent",
    "TextResourceContents",
    "ToolArgumentsError",
    "ToolCallError",
    "ToolCancelledError",
    "ToolError",
    "ToolInfo",
    "ToolInputRequiredError",
    "ToolNotFoundError",
    "ToolOutput",
    "ToolOutputValidationError",
    "ToolProtocolError",
    "ToolResult",
    "ToolTimeoutError",
    "ToolUnavailableError",
    "ToolsBase",
    "UnknownContent",
    "decode_inferred",
    "decode_result",
    "inferred_candidate",
    "lazy_models",
    "normalize_envelope",
]

T = TypeVar("T")
_P = TypeVar("_P")  # the provider type a tools class accepts


# --------------------------------------------------------------------------------------------
# Providers and call options
# --------------------------------------------------------------------------------------------


class SupportsCallTool(Protocol):
    """Anything with the ToolContract's ``call_tool(tool_name, arguments)``.

    The parameters are positional-only here so that any provider parameter names match; extra
    optional keyword parameters (or ``**kwargs``) on the provider are fine.
    """

    def call_tool(self, tool_name: str, arguments: dict[str, Any], /) -> object: ...


class SupportsAsyncCallTool(Protocol):
    """A provider with the async twin ``acall_tool(tool_name, arguments)``."""

    def acall_tool(self, tool_name: str, arguments: dict[str, Any], /) -> Awaitable[object]: ...


class CallOptions(TypedDict, total=False):
    """The contract's optional ``call_tool`` keyword arguments, in the contract's order, then the
    options this package acts on itself (never sent): ``on_input``, ``retries``, ``confirm``.

    A contract option reaches the provider only when the callable that finally receives it
    declares a parameter of that name or takes ``**kwargs``; ``None`` values are never forwarded.
    """

    timeout_seconds: float
    progress_callback: Callable[..., object]
    cancel_event: object
    meta: dict[str, Any]
    input_responses: object
    request_state: str
    allow_input_required: bool
    allow_claimed: bool
    ctx: object
    user: str
    on_input: Callable[[list[InputRequest]], object]
    """Answers an ``input_required`` result: gets the typed requests, returns ``{key: response}``
    (a dict or an awaitable of one on the async path); the call is repeated with the responses."""
    retries: int
    """How often a read-only and idempotent tool is retried on ``unavailable`` or ``timeout``."""
    confirm: Callable[[ToolInfo[Any], dict[str, Any]], object]
    """Asked ``confirm(info, arguments)`` before a destructive tool runs; falsy refuses."""


#: The contract's option names, in the contract's order (the runtime's ``CALL_KWARGS``).
CALL_OPTION_NAMES: tuple[str, ...] = _rules.CALL_OPTIONS
#: Options this package handles itself; they never reach the provider.
PACKAGE_OPTION_NAMES: tuple[str, ...] = ("on_input", "retries", "confirm")
#: Input rounds one call may take before it fails with :class:`ToolProtocolError`.
MAX_INPUT_ROUNDS = 8


def _checked_options(options: Mapping[str, object] | None) -> CallOptions:
    if not options:
        return {}
    known = CALL_OPTION_NAMES + PACKAGE_OPTION_NAMES
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise TypeError(f"unknown call option(s): {', '.join(unknown)}; known: {', '.join(known)}")
    retries = options.get("retries")
    if retries is not None and (not isinstance(retries, int) or isinstance(retries, bool) or retries < 0):
        raise TypeError(f"retries must be a non-negative int, not {retries!r}")
    return cast(CallOptions, dict(options))


def _forwarded(provider: object, method: str, options: Mapping[str, object]) -> dict[str, object]:
    """The contract options that reach ``provider.<method>`` (by the callable that finally receives them)."""
    if not options:  # the common case: no signature lookup at all
        return {}
    target = _rules.forward_target(provider, method)
    accepted = None if target is None else _rules.accepted_options(target)
    return {
        key: value
        for key, value in options.items()
        if key in CALL_OPTION_NAMES and value is not None and (accepted is None or key in accepted)
    }


# --------------------------------------------------------------------------------------------
# Tool metadata
# --------------------------------------------------------------------------------------------

_HINT_WORDS: tuple[tuple[str, str, str], ...] = (
    ("read_only", "read-only", "not read-only"),
    ("destructive", "destructive", "not destructive"),
    ("idempotent", "idempotent", "not idempotent"),
    ("open_world", "open-world", "closed-world"),
)


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolInfo(Generic[T]):
    """What a generated method needs to know about one tool; ``T`` is the method's value type."""

    name: str
    """The wire name sent to ``call_tool``."""
    method: str
    """The Python method name in the generated package."""
    namespace: str | None
    title: str | None
    description: str
    input_ref: type[Any] | str
    """The generated TypedDict of the arguments, or its name in ``<package>.inputs``."""
    output_ref: type[BaseModel] | str | None
    """The output model, or its name in ``<package>.outputs``; None: the value is a ToolOutput."""
    output_is_root: bool
    """True when ``output_model`` is a RootModel whose ``.root`` is the value."""
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None
    package: str | None = None
    """The generated package; models named by string are imported from it on first use, so a
    package of a thousand tools imports without building a thousand pydantic models."""
    inferred_from: int = 0
    """How many recorded results the output type was inferred from; 0 when it was declared (or the
    tool is untyped). An inferred type is a guess: a result that does not fit it decodes as a
    :class:`ToolOutput` instead of raising (see ``decode_inferred``)."""
    output_is_text: bool = False
    """True when the inferred value is the result's text (every recorded result was one text block)."""
    output_key: str | None = None
    """The output model's one field whose value is the method's value: FastMCP wraps a plain value
    (``str``, ``int``, a list...) as ``{"result": value}`` and marks its output schema
    ``x-fastmcp-wrap-result``; the method returns the value itself. None: the model is the value."""
    # The output model named by string, once imported (None until then): a call imports nothing.
    _output: object = field(default=None, init=False, repr=False, compare=False)

    def _import(self, module: str, name: str) -> type[Any]:
        if self.package is None:
            raise TypeError(f"tool {self.name!r}: a model named by string needs ToolInfo.package")
        model: type[Any] = getattr(importlib.import_module(f"{self.package}.{module}"), name)
        return model

    @property
    def input_model(self) -> type[Any]:
        """The generated TypedDict of the arguments."""
        ref = self.input_ref
        return self._import("inputs", ref) if isinstance(ref, str) else ref

    @property
    def output_model(self) -> type[BaseModel] | None:
        """The generated output model; None when the tool has no output schema."""
        resolved = self._output
        if resolved is not None:  # resolved before: skip the import machinery on every call
            return cast("type[BaseModel]", resolved)
        ref = self.output_ref
        if not isinstance(ref, str):
            return ref
        model = self._import("outputs", ref)
        if not issubclass(model, BaseModel):
            raise TypeError(f"tool {self.name!r}: {self.package}.outputs.{ref} is not a pydantic model")
        object.__setattr__(self, "_output", model)  # frozen: the cache is not part of the value
        return model

    @property
    def hints(self) -> tuple[str, ...]:
        """The declared behaviour hints in words, e.g. ``("read-only", "closed-world")``."""
        words: list[str] = []
        for attribute, if_true, if_false in _HINT_WORDS:
            value: bool | None = getattr(self, attribute)
            if value is not None:
                words.append(if_true if value else if_false)
        return tuple(words)


def lazy_models(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of a generated ``outputs`` package (PEP 562): a model's module (one per
    tool) is imported when the model is first named, so a call builds only its own tool's models."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__


# --------------------------------------------------------------------------------------------
# Content blocks
# --------------------------------------------------------------------------------------------

# Built on first use, not at import: most calls never decode a content block into a model.
_MODEL_CONFIG = ConfigDict(populate_by_name=True, extra="allow", defer_build=True)


def _meta_field() -> Any:
    return Field(default=None, validation_alias="_meta", serialization_alias="_meta")


class Annotations(BaseModel):
    """Optional audience/priority annotations of a content block."""

    model_config = _MODEL_CONFIG

    audience: list[str] | None = None
    priority: float | None = None
    last_modified: str | None = Field(default=None, validation_alias="lastModified", serialization_alias="lastModified")


class TextContent(BaseModel):
    model_config = _MODEL_CONFIG

    type: Literal["text"] = "text"
    text: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = _meta_field()


class ImageContent(BaseModel):
    model_config = _MODEL_CONFIG

    type: Literal["image"] = "image"
    data: str
    """Base64-encoded image bytes."""
    mime_type: str = Field(validation_alias="mimeType", serialization_alias="mimeType")
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = _meta_field()


class AudioContent(BaseModel):
    model_config = _MODEL_CONFIG

    type: Literal["audio"] = "audio"
    data: str
    """Base64-encoded audio bytes."""
    mime_type: str = Field(validation_alias="mimeType", serialization_alias="mimeType")
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = _meta_field()


class ResourceLink(BaseModel):
    model_config = _MODEL_CONFIG

    type: Literal["resource_link"] = "resource_link"
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = Field(default=None, validation_alias="mimeType", serialization_alias="mimeType")
    size: int | None = None
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = _meta_field()


class TextResourceContents(BaseModel):
    model_config = _MODEL_CONFIG

    uri: str
    mime_type: str | None = Field(default=None, validation_alias="mimeType", serialization_alias="mimeType")
    text: str
    meta: dict[str, Any] | None = _meta_field()


class BlobResourceContents(BaseModel):
    model_config = _MODEL_CONFIG

    uri: str
    mime_type: str | None = Field(default=None, validation_alias="mimeType", serialization_alias="mimeType")
    blob: str
    """Base64-encoded bytes."""
    meta: dict[str, Any] | None = _meta_field()


class EmbeddedResource(BaseModel):
    model_config = _MODEL_CONFIG

    type: Literal["resource"] = "resource"
    resource: TextResourceContents | BlobResourceContents
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = _meta_field()


class UnknownContent(BaseModel):
    """A content block of a type this package does not know; its fields are kept as extras."""

    model_config = _MODEL_CONFIG

    type: str


_KNOWN_BLOCK_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})


def _block_tag(block: object) -> str:
    kind = (
        cast("Mapping[str, object]", block).get("type") if isinstance(block, Mapping) else getattr(block, "type", None)
    )
    return kind if isinstance(kind, str) and kind in _KNOWN_BLOCK_TYPES else "unknown"


ContentBlock: TypeAlias = Annotated[
    Annotated[TextContent, Tag("text")]
    | Annotated[ImageContent, Tag("image")]
    | Annotated[AudioContent, Tag("audio")]
    | Annotated[ResourceLink, Tag("resource_link")]
    | Annotated[EmbeddedResource, Tag("resource")]
    | Annotated[UnknownContent, Tag("unknown")],
    Discriminator(_block_tag),
]
"""One MCP content block, chosen by its ``type``; unknown types decode as :class:`UnknownContent`."""

_CONTENT_LIST: TypeAdapter[list[ContentBlock]] = TypeAdapter(list[ContentBlock], config=ConfigDict(defer_build=True))


def _joined_text(blocks: list[object]) -> str | None:
    """Texts of the ``text`` blocks (models or dicts) joined with newlines; None when there are none."""
    texts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContent):
            texts.append(block.text)
        elif isinstance(block, Mapping):
            fields = cast("Mapping[str, object]", block)
            text = fields.get("text")
            if fields.get("type") == "text" and isinstance(text, str):
                texts.append(text)
    return "\n".join(texts) if texts else None


def _no_blocks() -> list[ContentBlock]:
    return []


class ToolOutput(BaseModel):
    """The value of a tool without an output schema: its content blocks and structured content."""

    model_config = ConfigDict(populate_by_name=True, defer_build=True)

    content: list[ContentBlock] = Field(default_factory=_no_blocks)
    structured_content: Any = Field(
        default=None, validation_alias="structuredContent", serialization_alias="structuredContent"
    )

    @property
    def text(self) -> str:
        """The text blocks joined with newlines ("" when there are none)."""
        return _joined_text(list(self.content)) or ""


# --------------------------------------------------------------------------------------------
# Envelopes and results
# --------------------------------------------------------------------------------------------


def _as_list(value: object) -> list[object] | None:
    return cast("list[object]", value) if isinstance(value, list) else None


def normalize_envelope(raw: object) -> dict[str, Any]:
    """Turn what ``call_tool`` returned into an envelope dict, by the contract's one rule.

    The rule lives in ``_rules.py`` (``to_envelope``; ``docs/tool.md`` has its table): a
    ToolResultEnvelope, an envelope dict (snake_case or MCP wire keys), an MCP ``CallToolResult``
    object or wire dict, or any other value (a successful ``result``). The dict has the form of
    the runtime's ``ToolResultEnvelope.to_dict()``. A malformed envelope becomes a ``protocol``
    error envelope.
    """
    try:
        return _rules.to_envelope(raw)
    except ValueError as exc:
        return _rules.failure_dict(f"malformed result: {exc}", "protocol")


@dataclass(frozen=True, slots=True)
class ToolResult(Generic[T]):
    """A decoded tool result: the typed ``value`` plus the whole normalized ``envelope``."""

    value: T
    envelope: dict[str, Any]

    @property
    def content(self) -> list[ContentBlock]:
        """The content blocks, decoded (unknown block types as :class:`UnknownContent`)."""
        return _CONTENT_LIST.validate_python(self.envelope.get("content") or [])

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
        joined = _joined_text(_as_list(self.envelope.get("content")) or [])
        if joined is not None:
            return joined
        result = self.envelope.get("result")
        return "" if result is None else str(result)


# The hot path sets the two slots directly: the frozen dataclass's __init__ costs half a call's decoding.
_set_value = ToolResult.__dict__["value"].__set__
_set_envelope = ToolResult.__dict__["envelope"].__set__
_RESULT_TYPE: type[ToolResult[Any]] = ToolResult


def _result(value: Any, envelope: dict[str, Any]) -> ToolResult[Any]:
    """``ToolResult(value, envelope)``, built faster."""
    result = object.__new__(_RESULT_TYPE)
    _set_value(result, value)
    _set_envelope(result, envelope)
    return result


# --------------------------------------------------------------------------------------------
# Input rounds (MCP input_required)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class InputRequest:
    """One request of an ``input_required`` result; answer it under ``key``.

    ``method`` is the MCP method (``elicitation/create``, ``sampling/createMessage``,
    ``roots/list``); ``params`` its parameters with MCP wire keys.
    """

    key: str
    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ElicitationRequest(InputRequest):
    """The server asks the user for data; answer ``{"action": "accept", "content": {...}}``
    (or ``{"action": "decline"}`` / ``{"action": "cancel"}``)."""

    @property
    def message(self) -> str:
        text = self.params.get("message")
        return text if isinstance(text, str) else ""

    @property
    def requested_schema(self) -> dict[str, Any] | None:
        schema = self.params.get("requestedSchema")
        return cast("dict[str, Any]", schema) if isinstance(schema, dict) else None


@dataclass(frozen=True, slots=True)
class SamplingRequest(InputRequest):
    """The server asks for an LLM completion; answer an MCP ``CreateMessageResult`` dict."""


@dataclass(frozen=True, slots=True)
class RootsRequest(InputRequest):
    """The server asks for the client's roots; answer ``{"roots": [{"uri": ...}, ...]}``."""


_REQUEST_TYPES: dict[str, type[InputRequest]] = {
    "elicitation/create": ElicitationRequest,
    "sampling/createMessage": SamplingRequest,
    "roots/list": RootsRequest,
}


def _input_round(envelope: dict[str, Any]) -> tuple[list[InputRequest], str | None] | None:
    """The requests and state of an ``input_required`` envelope; None for any other envelope."""
    if envelope.get("result_type") != "input_required" or envelope.get("is_error"):
        return None
    result: object = envelope.get("result")
    wire: Mapping[str, object] = cast("Mapping[str, object]", result) if isinstance(result, Mapping) else {}
    raw_requests: object = wire.get("inputRequests") or {}
    requests: list[InputRequest] = []
    if isinstance(raw_requests, Mapping):
        for key, request in cast("Mapping[str, object]", raw_requests).items():
            body: Mapping[str, object] = cast("Mapping[str, object]", request) if isinstance(request, Mapping) else {}
            method = body.get("method")
            params = body.get("params")
            method_name = method if isinstance(method, str) else ""
            kind = _REQUEST_TYPES.get(method_name, InputRequest)
            requests.append(kind(str(key), method_name, dict(cast("Mapping[str, Any]", params or {}))))
    state = wire.get("requestState")
    if not requests and not isinstance(state, str):
        return None  # MCP requires one of the two: without either there is nothing to answer
    return requests, state if isinstance(state, str) else None


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


class ToolError(Exception):
    """Base class of the errors a generated package raises; ``envelope`` is {} when there is none.

    ``payload`` is what the failure carried (structured content, else ``result``), or None.
    """

    def __init__(
        self, message: str, *, tool_name: str, envelope: dict[str, Any] | None = None, payload: Any = None
    ) -> None:
        super().__init__(message)
        self.tool_name = tool_name
        self.envelope: dict[str, Any] = {} if envelope is None else envelope
        self.payload: Any = payload


class _FailedCall(ToolError):
    """A call whose envelope reports an error; the subclass says why (the envelope's error kind).

    ``message`` is the text of its content (or ``str(result)``); ``payload`` is its structured
    content when present, else its ``result``.
    """

    _what = "reported an error"

    def __init__(self, tool_name: str, envelope: dict[str, Any]) -> None:
        result = envelope.get("result")
        text = _joined_text(_as_list(envelope.get("content")) or [])
        if text is None:
            text = f"tool {self._what}" if result is None else str(result)
        self.message = text
        structured = envelope.get("structured_content")
        super().__init__(
            f"tool {tool_name!r} {self._what}: {_one_line(text) or f'tool {self._what}'}",
            tool_name=tool_name,
            envelope=envelope,
            payload=structured if structured is not None else result,
        )


class ToolCallError(_FailedCall):
    """The tool itself reported an error (error kind ``tool_error``)."""


class ToolArgumentsError(_FailedCall):
    """The arguments were refused (error kind ``invalid_arguments``)."""

    _what = "refused its arguments"


class ToolNotFoundError(_FailedCall):
    """No provider serves the tool (error kind ``unknown_tool``)."""

    _what = "was not found"


class ToolTimeoutError(_FailedCall):
    """The call ran out of time (error kind ``timeout``)."""

    _what = "timed out"


class ToolCancelledError(_FailedCall):
    """The call was cancelled, or ``confirm`` refused it before it was sent (error kind ``cancelled``)."""

    _what = "was cancelled"


class ToolUnavailableError(_FailedCall):
    """The server could not be reached, died or the transport failed (error kind ``unavailable``)."""

    _what = "is unavailable"


class ToolProtocolError(_FailedCall):
    """The reply was malformed, or input rounds did not end (error kind ``protocol``)."""

    _what = "got a malformed reply"


_ERRORS_BY_KIND: dict[str, type[_FailedCall]] = {
    "tool_error": ToolCallError,
    "invalid_arguments": ToolArgumentsError,
    "unknown_tool": ToolNotFoundError,
    "timeout": ToolTimeoutError,
    "cancelled": ToolCancelledError,
    "unavailable": ToolUnavailableError,
    "protocol": ToolProtocolError,
}


def _raise_failure(tool_name: str, envelope: dict[str, Any]) -> None:
    kind = _rules.error_kind(envelope)
    if kind is not None:
        raise _ERRORS_BY_KIND[kind](tool_name, envelope)


class ToolInputRequiredError(ToolError):
    """The tool needs input (``input_required``) and no ``on_input`` handler was given.

    ``requests`` are the typed requests and ``request_state`` the state to echo: answer them with
    ``with_options(input_responses={key: response, ...}, request_state=error.request_state)``.
    """

    def __init__(
        self, tool_name: str, envelope: dict[str, Any], requests: list[InputRequest], request_state: str | None
    ) -> None:
        self.requests = requests
        self.request_state = request_state
        kinds = ", ".join(f"{r.key} ({r.method})" for r in requests) or "no requests, only state"
        super().__init__(
            f"tool {tool_name!r} needs input: {kinds}; pass on_input=... in with_options to answer it",
            tool_name=tool_name,
            envelope=envelope,
            payload=envelope.get("result"),
        )


class ToolOutputValidationError(ToolError):
    """The tool's output does not match its generated output model.

    ``errors`` is pydantic's error list; ``raw`` is the value that was validated (None when the
    result carried nothing to validate).
    """

    def __init__(
        self,
        tool_name: str,
        model: type[BaseModel],
        *,
        errors: list[dict[str, Any]],
        raw: object,
        envelope: dict[str, Any],
    ) -> None:
        self.errors = errors
        self.raw = raw
        self.model = model
        first = errors[0] if errors else {}
        where = ".".join(str(part) for part in first.get("loc", ())) or "/"
        count = f"{len(errors)} validation error{'s' if len(errors) != 1 else ''}"
        message = _one_line(f"{where}: {first.get('msg', 'invalid')}")
        super().__init__(
            f"tool {tool_name!r} returned output that does not match {model.__name__} ({count}; {message})",
            tool_name=tool_name,
            envelope=envelope,
        )


# --------------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------------


def _is_str_root(model: type[BaseModel]) -> bool:
    if not issubclass(model, RootModel):
        return False
    annotation = model.model_fields["root"].annotation
    return annotation is str or annotation == (str | None)


def _json_or_none(text: str) -> object:
    try:
        return cast(object, json.loads(text))
    except ValueError:
        return None


def _json_from_text(content: object) -> object:
    """The first JSON value found in the text blocks (all of them joined, then each one)."""
    blocks = _as_list(content) or []
    joined = _joined_text(blocks)
    if joined is None:
        return None
    attempts = [joined] + [text for block in blocks if (text := _joined_text([block])) is not None]
    for text in attempts:
        value = _json_or_none(text)
        if value is not None:
            return value
    return None


def _tool_output(info: ToolInfo[Any], envelope: dict[str, Any]) -> ToolOutput:
    blocks = _as_list(envelope.get("content")) or []
    result = envelope.get("result")
    if not blocks and result is not None:
        text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
        blocks = [{"type": "text", "text": text}]
    try:
        return ToolOutput(
            content=_CONTENT_LIST.validate_python(blocks), structured_content=envelope.get("structured_content")
        )
    except ValidationError as exc:
        raise ToolOutputValidationError(
            info.name, ToolOutput, errors=[dict(e) for e in exc.errors()], raw=blocks, envelope=envelope
        ) from exc


def decode_result(info: ToolInfo[T], raw: object) -> ToolResult[T]:
    """Decode what ``call_tool`` returned for ``info``'s tool.

    Raises the :class:`ToolError` subclass of the envelope's error kind (:class:`ToolCallError`
    when the tool itself reported an error), :class:`ToolInputRequiredError` for an
    ``input_required`` result, and :class:`ToolOutputValidationError` when the output does not
    match ``info.output_model``.
    """
    envelope = normalize_envelope(raw)
    pending = _input_round(envelope) if "result_type" in envelope else None  # the key is absent when complete
    if pending is not None:
        raise ToolInputRequiredError(info.name, envelope, *pending)
    return _decode_envelope(info, envelope)


def _decode_envelope(info: ToolInfo[T], envelope: dict[str, Any]) -> ToolResult[T]:
    if envelope.get("is_error"):
        _raise_failure(info.name, envelope)
    if info.inferred_from:
        return decode_inferred(info, envelope)
    model = info.output_model
    if model is None:
        return ToolResult(cast(T, _tool_output(info, envelope)), envelope)
    candidate: object = envelope.get("structured_content")
    if info.output_key is not None and not _holds(candidate, info.output_key):
        candidate = _wrapped(info.output_key, envelope)
    if candidate is None:
        candidate = envelope.get("result")
    if isinstance(candidate, str) and not _is_str_root(model):
        parsed = _json_or_none(candidate)
        if parsed is None and candidate == _joined_text(_as_list(envelope.get("content")) or []):
            # The result is the blocks' joined text: look for JSON in each block on its own.
            candidate = _json_from_text(envelope.get("content"))
        elif parsed is not None:
            candidate = parsed
    if candidate is None:
        candidate = _json_from_text(envelope.get("content"))
    if candidate is None:
        missing = {"type": "missing", "loc": (), "msg": "the result has no structured content or JSON text"}
        raise ToolOutputValidationError(info.name, model, errors=[missing], raw=None, envelope=envelope)
    try:
        # model_validate with its defaults, without the Python-level wrapper (this is the hot path).
        validated: Any = model.__pydantic_validator__.validate_python(candidate)
    except ValidationError as exc:
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
    blocks = _as_list(envelope.get("content")) or []
    result: object = envelope.get("result")
    if blocks and all(_block_tag(block) == "text" for block in blocks):
        text: object = _joined_text(blocks)
    else:
        text = result
    if not isinstance(text, str):
        return None if text is None else {key: text}
    parsed: object = _json_or_none(text)
    return {key: text if parsed is None else parsed}


# --------------------------------------------------------------------------------------------
# Inferred output types (learned from recorded results; see toolgen's docs/samples.md)
# --------------------------------------------------------------------------------------------


def inferred_candidate(envelope: Mapping[str, Any]) -> object:
    """The JSON value an inferred output type is learned from and decoded from, or None.

    Structured content; else a mapping or list ``result``; else the text of the content when every
    block is text and that text is a JSON object or array. The generator infers from exactly this
    value, so a result of the recorded shape always decodes.
    """
    structured: object = envelope.get("structured_content")
    if structured is not None:
        return structured
    blocks = _as_list(envelope.get("content"))
    result: object = envelope.get("result")
    if not blocks:
        if isinstance(result, Mapping | list):
            return cast(object, result)
        text = result if isinstance(result, str) else None
    elif all(_block_tag(block) == "text" for block in blocks):
        text = _joined_text(blocks)
    else:
        return None
    value: object = None if text is None else _json_or_none(text)
    return cast(object, value) if isinstance(value, Mapping | list) else None


def decode_inferred(info: ToolInfo[T], envelope: dict[str, Any]) -> ToolResult[T]:
    """Decode a successful result of a tool whose output type was inferred.

    Never raises where an untyped tool would not: the text (for ``output_is_text``), else the
    inferred model when the value fits it exactly (strict validation: no coercion, so the value
    is the recorded data), else the untyped :class:`ToolOutput`. The generated method's return
    type is ``Model | ToolOutput`` (or ``str``), so a type checker makes the caller handle both.
    """
    if info.output_is_text:
        return ToolResult(cast(T, ToolResult(None, envelope).text), envelope)
    model = info.output_model
    candidate = inferred_candidate(envelope)
    if model is not None and candidate is not None:
        try:
            validated = model.model_validate_json(json.dumps(candidate, ensure_ascii=False), strict=True)
        except (ValidationError, TypeError, ValueError):
            pass  # not the recorded shape: the untyped value below
        else:
            value: object = cast("RootModel[Any]", validated).root if info.output_is_root else validated
            if info.output_key is not None:
                value = getattr(validated, info.output_key)
            return ToolResult(cast(T, value), envelope)
    return ToolResult(cast(T, _tool_output(info, envelope)), envelope)


# --------------------------------------------------------------------------------------------
# Argument omission
# --------------------------------------------------------------------------------------------


def _same(value: object, marker: object) -> bool:
    """Strict equality: same type and equal, recursively (so True is not 1 and 1.0 is not 1)."""
    if value is None or marker is None:
        return value is marker
    if type(value) is not type(marker):
        return False
    if isinstance(value, list | tuple):
        left, right = cast("Sequence[object]", value), cast("Sequence[object]", marker)
        return len(left) == len(right) and all(_same(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(value, dict):
        left_map, right_map = cast("dict[object, object]", value), cast("dict[object, object]", marker)
        return left_map.keys() == right_map.keys() and all(_same(left_map[k], right_map[k]) for k in left_map)
    return value == marker


def _without_omitted(arguments: Mapping[str, Any], omit: Mapping[str, object]) -> dict[str, Any]:
    if not omit:  # a tool without optional arguments
        return dict(arguments)
    return {key: value for key, value in arguments.items() if not (key in omit and _same(value, omit[key]))}


# --------------------------------------------------------------------------------------------
# Base classes of the generated Tools / AsyncTools
# --------------------------------------------------------------------------------------------


async def _await(awaitable: Awaitable[object]) -> object:
    return await awaitable


_RETRYABLE = frozenset({"unavailable", "timeout"})


def _retry_safe(info: ToolInfo[Any]) -> bool:
    """Only a tool that says it is both read-only and idempotent may run twice."""
    return info.read_only is True and info.idempotent is True and info.destructive is not True


def _is_destructive(info: ToolInfo[Any]) -> bool:
    """MCP's defaults: a tool is destructive unless it says it is read-only or not destructive."""
    if info.destructive is not None:
        return info.destructive and info.read_only is not True
    return info.read_only is not True


def _backoff(attempt: int) -> float:
    return min(0.05 * 2.0**attempt, 1.0)


class _Round:
    """One call's plan across attempts: what to send next, and what an envelope means.

    The sync and async bases run the same plan; they differ only in how they send, wait and ask.
    """

    def __init__(self, info: ToolInfo[Any], arguments: dict[str, Any], options: CallOptions) -> None:
        self.info = info
        self.arguments = arguments
        self.options: dict[str, object] = dict(options)
        retries = options.get("retries")
        self.retries_left = retries if retries is not None and _retry_safe(info) else 0
        self.attempt = 0
        self.rounds = 0

    def needs_confirmation(self) -> bool:
        return self.options.get("confirm") is not None and _is_destructive(self.info)

    def refused(self) -> ToolCancelledError:
        message = f"confirm refused destructive tool {self.info.name!r}; nothing was sent"
        return ToolCancelledError(self.info.name, _rules.failure_dict(message, "cancelled"))

    def retry_delay(self, envelope: dict[str, Any]) -> float | None:
        """Seconds to wait before sending again, or None when this envelope is final."""
        if self.retries_left <= 0 or _rules.error_kind(envelope) not in _RETRYABLE:
            return None
        self.retries_left -= 1
        self.attempt += 1
        return _backoff(self.attempt)

    def input_needed(self, envelope: dict[str, Any]) -> list[InputRequest] | None:
        """The requests to answer before sending again; raises when nobody can answer them."""
        pending = _input_round(envelope)
        if pending is None:
            return None
        requests, state = pending
        if self.options.get("on_input") is None:
            raise ToolInputRequiredError(self.info.name, envelope, requests, state)
        self.rounds += 1
        if self.rounds > MAX_INPUT_ROUNDS:
            message = f"still input_required after {MAX_INPUT_ROUNDS} input rounds"
            raise ToolProtocolError(self.info.name, _rules.failure_dict(message, "protocol"))
        self.options["request_state"] = state
        return requests

    def answered(self, responses: object) -> None:
        if not isinstance(responses, Mapping):
            raise TypeError(f"on_input must return a dict of responses by request key, not {type(responses).__name__}")
        self.options["input_responses"] = dict(cast("Mapping[str, object]", responses))


class _ToolsCore(Generic[_P]):
    """What the sync and async bases share: a provider and the call options."""

    def __init__(self, provider: _P, options: CallOptions | None = None) -> None:
        self._provider = provider
        self._options: CallOptions = _checked_options(options)

    def with_options(self, **options: Unpack[CallOptions]) -> Self:
        """A new instance of this class with ``options`` merged over the current ones."""
        merged = _checked_options({**self._options, **options})
        return type(self)(self._provider, merged)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._provider!r}, {dict(self._options)!r})"


class ToolsBase(_ToolsCore[SupportsCallTool]):
    """Base of a generated synchronous ``Tools`` class."""

    def _call(self, info: ToolInfo[T], arguments: dict[str, Any], omit: Mapping[str, object]) -> ToolResult[T]:
        if not self._options:  # nothing to confirm, retry or answer: one send, one decode
            # The generated method built ``arguments`` for this call alone: no copy unless some are dropped.
            return decode_result(info, self._send(info, _without_omitted(arguments, omit) if omit else arguments, {}))
        plan = _Round(info, _without_omitted(arguments, omit), self._options)
        if plan.needs_confirmation():
            confirm = cast("Callable[..., object]", plan.options["confirm"])
            answer = confirm(info, dict(plan.arguments))
            if inspect.isawaitable(answer):
                answer = _run_awaitable(info, answer)
            if not answer:
                raise plan.refused()
        while True:
            envelope = normalize_envelope(self._send(info, plan.arguments, plan.options))
            delay = plan.retry_delay(envelope)
            if delay is not None:
                time.sleep(delay)
                continue
            requests = plan.input_needed(envelope)
            if requests is None:
                return _decode_envelope(info, envelope)
            on_input = cast("Callable[[list[InputRequest]], object]", plan.options["on_input"])
            responses = on_input(requests)
            if inspect.isawaitable(responses):
                responses = _run_awaitable(info, responses)
            plan.answered(responses)

    def _send(self, info: ToolInfo[Any], arguments: dict[str, Any], options: Mapping[str, object]) -> object:
        call_tool: Callable[..., object] = self._provider.call_tool
        if options:
            raw = call_tool(info.name, arguments, **_forwarded(self._provider, "call_tool", options))
        else:  # the common case: no options, so no signature lookup at all
            raw = call_tool(info.name, arguments)
        if inspect.isawaitable(raw):
            raw = _run_awaitable(info, raw)
        return raw


def _run_awaitable(info: ToolInfo[Any], awaitable: Awaitable[object]) -> object:
    import asyncio  # here, not at the top: it costs a third of an import of the package

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(awaitable))
    if inspect.iscoroutine(awaitable):
        awaitable.close()  # never awaited: close it so Python does not warn about it
    raise ToolError(
        f"tool {info.name!r}: the provider's call_tool is async and an event loop is running; "
        "use AsyncTools and await the call",
        tool_name=info.name,
    )


class AsyncToolsBase(_ToolsCore[SupportsCallTool | SupportsAsyncCallTool]):
    """Base of a generated ``AsyncTools`` class; works with sync and async providers."""

    async def _call(self, info: ToolInfo[T], arguments: dict[str, Any], omit: Mapping[str, object]) -> ToolResult[T]:
        if not self._options:  # nothing to confirm, retry or answer: one send, one decode
            return decode_result(
                info, await self._send(info, _without_omitted(arguments, omit) if omit else arguments, {})
            )
        plan = _Round(info, _without_omitted(arguments, omit), self._options)
        if plan.needs_confirmation():
            confirm = cast("Callable[..., object]", plan.options["confirm"])
            answer = confirm(info, dict(plan.arguments))
            if inspect.isawaitable(answer):
                answer = await answer
            if not answer:
                raise plan.refused()
        while True:
            envelope = normalize_envelope(await self._send(info, plan.arguments, plan.options))
            delay = plan.retry_delay(envelope)
            if delay is not None:
                import asyncio

                await asyncio.sleep(delay)
                continue
            requests = plan.input_needed(envelope)
            if requests is None:
                return _decode_envelope(info, envelope)
            on_input = cast("Callable[[list[InputRequest]], object]", plan.options["on_input"])
            responses = on_input(requests)
            if inspect.isawaitable(responses):
                responses = await responses
            plan.answered(responses)

    async def _send(self, info: ToolInfo[Any], arguments: dict[str, Any], options: Mapping[str, object]) -> object:
        """Await ``acall_tool`` when the provider has it, else ``call_tool`` (in a worker thread
        when it is synchronous, so the event loop is never blocked)."""
        import asyncio  # here, not at the top: it costs a third of an import of the package

        acall_tool: object = getattr(self._provider, "acall_tool", None)
        raw: object
        if callable(acall_tool):
            raw = acall_tool(info.name, arguments, **_forwarded(self._provider, "acall_tool", options))
        else:
            call_tool: object = getattr(self._provider, "call_tool", None)
            if not callable(call_tool):
                raise ToolError(f"tool {info.name!r}: the provider has no call_tool or acall_tool", tool_name=info.name)
            forwarded = _forwarded(self._provider, "call_tool", options)
            if inspect.iscoroutinefunction(call_tool):
                raw = call_tool(info.name, arguments, **forwarded)
            else:
                raw = await asyncio.to_thread(call_tool, info.name, arguments, **forwarded)
        while inspect.isawaitable(raw):
            raw = await raw
        return raw
