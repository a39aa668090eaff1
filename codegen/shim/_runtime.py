"""Runtime support for a toolgen-generated tool package.

This module is copied verbatim into every generated package as ``_runtime.py``. Its canonical
source is ``codegen/shim/_runtime.py`` in the toolgen repository: change it there and
regenerate, never edit a generated copy. It depends only on the standard library and
pydantic 2, so a generated package needs nothing else.

A generated ``Tools`` class subclasses :class:`ToolsBase` (``AsyncTools`` subclasses
:class:`AsyncToolsBase`). Each typed method builds the wire arguments and calls
``self._call(INFO, arguments, omit)``, which

1. drops the optional arguments the caller did not pass (their values equal the omit marker),
2. calls ``provider.call_tool(tool_name, arguments)`` (or ``acall_tool``), forwarding a call
   option only when the provider's method declares it or takes ``**kwargs``,
3. normalizes whatever came back (an MCP ``CallToolResult``, a ToolResultEnvelope, a dict) to a
   snake_case envelope dict and decodes it into a :class:`ToolResult`: a validated output model,
   or a :class:`ToolOutput` with content blocks for tools without an output schema.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Generic, Literal, Protocol, Self, TypeAlias, TypedDict, TypeVar, Unpack, cast

from pydantic import BaseModel, ConfigDict, Discriminator, Field, RootModel, Tag, TypeAdapter, ValidationError

__all__ = [
    "CALL_OPTION_NAMES",
    "Annotations",
    "AsyncToolsBase",
    "AudioContent",
    "BlobResourceContents",
    "CallOptions",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "ResourceLink",
    "SupportsAsyncCallTool",
    "SupportsCallTool",
    "TextContent",
    "TextResourceContents",
    "ToolCallError",
    "ToolError",
    "ToolInfo",
    "ToolOutput",
    "ToolOutputValidationError",
    "ToolResult",
    "ToolsBase",
    "UnknownContent",
    "decode_result",
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
    """The contract's optional ``call_tool`` keyword arguments, in the contract's order.

    An option reaches the provider only when its ``call_tool`` (or ``acall_tool``) declares a
    parameter of that name or takes ``**kwargs``; ``None`` values are never forwarded.
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


#: The names of :class:`CallOptions`, in the contract's order.
CALL_OPTION_NAMES: tuple[str, ...] = (
    "timeout_seconds",
    "progress_callback",
    "cancel_event",
    "meta",
    "input_responses",
    "request_state",
    "allow_input_required",
    "allow_claimed",
    "ctx",
    "user",
)


def _checked_options(options: Mapping[str, object] | None) -> CallOptions:
    if not options:
        return {}
    unknown = sorted(set(options) - set(CALL_OPTION_NAMES))
    if unknown:
        raise TypeError(f"unknown call option(s): {', '.join(unknown)}; known: {', '.join(CALL_OPTION_NAMES)}")
    return cast(CallOptions, dict(options))


@functools.lru_cache(maxsize=256)
def _declared_options(func: Callable[..., object]) -> frozenset[str] | None:
    try:
        parameters = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):  # no introspectable signature: forward nothing
        return frozenset()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    named = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return frozenset(named.intersection(CALL_OPTION_NAMES))


def _accepted_options(func: Callable[..., object]) -> frozenset[str] | None:
    """The call options ``func`` declares, or None when it takes ``**kwargs`` (accepts all)."""
    target: Callable[..., object] = getattr(func, "__func__", func)  # bound method: cache per function
    try:
        return _declared_options(target)
    except TypeError:  # unhashable callable
        return _declared_options.__wrapped__(target)


def _forwarded(func: Callable[..., object], options: Mapping[str, object]) -> dict[str, object]:
    if not options:  # the common case: no signature lookup at all
        return {}
    accepted = _accepted_options(func)
    return {key: value for key, value in options.items() if value is not None and (accepted is None or key in accepted)}


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
        ref = self.output_ref
        if not isinstance(ref, str):
            return ref
        model = self._import("outputs", ref)
        if not issubclass(model, BaseModel):
            raise TypeError(f"tool {self.name!r}: {self.package}.outputs.{ref} is not a pydantic model")
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
    kind = cast(Mapping[str, object], block).get("type") if isinstance(block, Mapping) else getattr(block, "type", None)
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
            fields = cast(Mapping[str, object], block)
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

_CAMEL_KEYS: dict[str, str] = {
    "isError": "is_error",
    "structuredContent": "structured_content",
    "resultType": "result_type",
    "_meta": "meta",
    "sessionId": "session_id",
    "sessionStatus": "session_status",
    "resultMode": "result_mode",
    "executionMode": "execution_mode",
}
_ENVELOPE_KEYS = frozenset(
    {
        "status",
        "result",
        "is_error",
        "result_mode",
        "execution_mode",
        "events",
        "session_id",
        "session_status",
        "metadata",
        "content",
        "structured_content",
        "result_type",
        "meta",
    }
)


def _as_list(value: object) -> list[object] | None:
    return cast(list[object], value) if isinstance(value, list) else None


def _is_block_list(value: object) -> bool:
    items = _as_list(value)
    if items is None:
        return False
    for item in items:
        if isinstance(item, BaseModel):
            item = item.model_dump()
        if not (isinstance(item, Mapping) and isinstance(cast(Mapping[str, object], item).get("type"), str)):
            return False
    return True


def _looks_like_envelope(data: Mapping[str, object]) -> bool:
    """A mapping is an envelope when it carries an error flag, structured content or content blocks,
    or when it has ``result`` and only envelope keys (``__dunder__`` capture keys aside)."""
    keys = {_CAMEL_KEYS.get(key, key) for key in data if not (key.startswith("__") and key.endswith("__"))}
    if keys & {"is_error", "structured_content"}:
        return True
    if "content" in data and _is_block_list(data["content"]):
        return True
    return "result" in keys and keys <= _ENVELOPE_KEYS


def _envelope_from_mapping(data: Mapping[str, object]) -> dict[str, Any]:
    envelope: dict[str, Any] = {}
    for key, value in data.items():
        snake = _CAMEL_KEYS.get(key, key)
        if snake != key and snake in data:  # the snake_case spelling wins
            continue
        envelope[snake] = value
    blocks = _as_list(envelope.get("content"))
    if blocks is not None:
        envelope["content"] = [
            b.model_dump(mode="json", by_alias=True, exclude_none=True) if isinstance(b, BaseModel) else b
            for b in blocks
        ]
    envelope["is_error"] = bool(envelope.get("is_error") or False)
    return envelope


def normalize_envelope(raw: object) -> dict[str, Any]:
    """Turn what ``call_tool`` returned into a snake_case envelope dict.

    Accepts an envelope dict (snake_case keys, or raw MCP camelCase ``isError`` /
    ``structuredContent`` / ``resultType`` / ``_meta``), an object with ``to_dict()`` (the
    runtime's ToolResultEnvelope) or a pydantic model (an MCP ``CallToolResult``). Anything else,
    including a mapping or model that does not look like an envelope, is a successful
    ``{"result": raw}``. The returned dict always has a bool ``is_error``.
    """
    if isinstance(raw, Mapping):
        data = cast(Mapping[str, object], raw)
        if _looks_like_envelope(data):
            return _envelope_from_mapping(data)
        return {"result": dict(data), "is_error": False}
    if isinstance(raw, BaseModel):
        dumped = raw.model_dump(mode="json", by_alias=True, exclude_none=True)
        if _looks_like_envelope(dumped):
            return _envelope_from_mapping(dumped)
        return {"result": raw.model_dump(mode="json", by_alias=True), "is_error": False}
    to_dict: object = getattr(raw, "to_dict", None)
    if callable(to_dict):
        converted: object = to_dict()
        if isinstance(converted, Mapping) and _looks_like_envelope(cast(Mapping[str, object], converted)):
            return _envelope_from_mapping(cast(Mapping[str, object], converted))
    return {"result": raw, "is_error": False}


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


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


class ToolError(Exception):
    """Base class of the errors a generated package raises; ``envelope`` is {} when there is none."""

    def __init__(self, message: str, *, tool_name: str, envelope: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.tool_name = tool_name
        self.envelope: dict[str, Any] = {} if envelope is None else envelope


class ToolCallError(ToolError):
    """The tool reported an error (``is_error``).

    ``message`` is the text of its content (or ``str(result)``); ``payload`` is its structured
    content when present, else its ``result``.
    """

    def __init__(self, tool_name: str, envelope: dict[str, Any]) -> None:
        result = envelope.get("result")
        text = _joined_text(_as_list(envelope.get("content")) or [])
        if text is None:
            text = "tool reported an error" if result is None else str(result)
        self.message = text
        structured = envelope.get("structured_content")
        self.payload: Any = structured if structured is not None else result
        super().__init__(
            f"tool {tool_name!r} reported an error: {_one_line(text) or 'tool reported an error'}",
            tool_name=tool_name,
            envelope=envelope,
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

    Raises :class:`ToolCallError` when the tool reported an error and
    :class:`ToolOutputValidationError` when the output does not match ``info.output_model``.
    """
    envelope = normalize_envelope(raw)
    if envelope["is_error"]:
        raise ToolCallError(info.name, envelope)
    model = info.output_model
    if model is None:
        return ToolResult(cast(T, _tool_output(info, envelope)), envelope)
    candidate: object = envelope.get("structured_content")
    if candidate is None:
        candidate = envelope.get("result")
    if isinstance(candidate, str) and not _is_str_root(model):
        parsed = _json_or_none(candidate)
        if parsed is not None:
            candidate = parsed
    if candidate is None:
        candidate = _json_from_text(envelope.get("content"))
    if candidate is None:
        missing = {"type": "missing", "loc": (), "msg": "the result has no structured content or JSON text"}
        raise ToolOutputValidationError(info.name, model, errors=[missing], raw=None, envelope=envelope)
    try:
        validated = model.model_validate(candidate)
    except ValidationError as exc:
        raise ToolOutputValidationError(
            info.name, model, errors=[dict(e) for e in exc.errors()], raw=candidate, envelope=envelope
        ) from exc
    value: object = cast(RootModel[Any], validated).root if info.output_is_root else validated
    return ToolResult(cast(T, value), envelope)


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
        left, right = cast(Sequence[object], value), cast(Sequence[object], marker)
        return len(left) == len(right) and all(_same(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(value, dict):
        left_map, right_map = cast(dict[object, object], value), cast(dict[object, object], marker)
        return left_map.keys() == right_map.keys() and all(_same(left_map[k], right_map[k]) for k in left_map)
    return value == marker


def _without_omitted(arguments: Mapping[str, Any], omit: Mapping[str, object]) -> dict[str, Any]:
    return {key: value for key, value in arguments.items() if not (key in omit and _same(value, omit[key]))}


# --------------------------------------------------------------------------------------------
# Base classes of the generated Tools / AsyncTools
# --------------------------------------------------------------------------------------------


async def _await(awaitable: Awaitable[object]) -> object:
    return await awaitable


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
        call_tool: Callable[..., object] = self._provider.call_tool
        raw = call_tool(info.name, _without_omitted(arguments, omit), **_forwarded(call_tool, self._options))
        if inspect.isawaitable(raw):
            raw = _run_awaitable(info, raw)
        return decode_result(info, raw)


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
        """Await ``acall_tool`` when the provider has it, else ``call_tool`` (in a worker thread
        when it is synchronous, so the event loop is never blocked)."""
        import asyncio

        args = _without_omitted(arguments, omit)
        acall_tool: object = getattr(self._provider, "acall_tool", None)
        raw: object
        if callable(acall_tool):
            raw = acall_tool(info.name, args, **_forwarded(acall_tool, self._options))
        else:
            call_tool: object = getattr(self._provider, "call_tool", None)
            if not callable(call_tool):
                raise ToolError(f"tool {info.name!r}: the provider has no call_tool or acall_tool", tool_name=info.name)
            forwarded = _forwarded(call_tool, self._options)
            if inspect.iscoroutinefunction(call_tool):
                raw = call_tool(info.name, args, **forwarded)
            else:
                raw = await asyncio.to_thread(call_tool, info.name, args, **forwarded)
        if inspect.isawaitable(raw):
            raw = await raw
        return decode_result(info, raw)
