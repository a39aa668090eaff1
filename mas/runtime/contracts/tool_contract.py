"""ToolContract: the one boundary for listing and calling tools.

Spec: ``tool-contract.txt``. Every provider (local classes, YAML skills, MCP servers)
exposes ``list_tools()`` and ``call_tool(tool_name, arguments, **optional kwargs)``;
results travel as a :class:`ToolResultEnvelope`.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

import jsonschema
import jsonschema.protocols
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

__all__ = [
    "ADVERTISE_KEYS",
    "CALL_KWARGS",
    "HINT_KEYS",
    "AsyncToolProvider",
    "ToolContract",
    "ToolProvider",
    "ToolResultEnvelope",
    "accepted_call_kwargs",
    "ainvoke_call_tool",
    "build_tool_entry",
    "describe_argument_error",
    "invoke_call_tool",
    "validate_arguments",
    "wrap_result",
]

#: The optional keyword arguments of ``call_tool``, in the contract's order.
CALL_KWARGS: tuple[str, ...] = (
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

#: Optional advertise keys of a ``list_tools`` entry, in the contract's order.
ADVERTISE_KEYS: tuple[str, ...] = (
    "title",
    "output_schema",
    "idempotent",
    "read_only",
    "destructive",
    "open_world",
    "icons",
    "task_support",
    "meta",
    "semantics",
    "timeout_seconds",
)

#: Contract hint key -> MCP annotation key.
HINT_KEYS: dict[str, str] = {
    "idempotent": "idempotentHint",
    "read_only": "readOnlyHint",
    "destructive": "destructiveHint",
    "open_world": "openWorldHint",
}

ResultMode = Literal["inline", "stream", "session"]

# Keys that appear in ``to_dict`` only when set (not None).
_OPTIONAL_ENVELOPE_KEYS: tuple[str, ...] = (
    "events",
    "session_id",
    "session_status",
    "metadata",
    "content",
    "structured_content",
    "meta",
)


@dataclass(frozen=True)
class ToolResultEnvelope:
    """The result of one ``call_tool``.

    ``to_dict``/``from_dict`` round-trip losslessly: optional keys are present only when set,
    and ``result_type`` only when it is not ``"complete"``.
    """

    status: str = "success"
    result: Any = None
    is_error: bool = False
    result_mode: ResultMode = "inline"
    execution_mode: str = "sync"
    events: list[Any] | None = None
    session_id: str | None = None
    session_status: str | None = None
    metadata: dict[str, Any] | None = None
    content: list[dict[str, Any]] | None = None
    structured_content: Any = None
    result_type: str = "complete"
    meta: dict[str, Any] | None = None

    @classmethod
    def success(cls, result: Any = None, **extra: Any) -> ToolResultEnvelope:
        return cls(status="success", result=result, is_error=False, **extra)

    @classmethod
    def failure(cls, message: str, **extra: Any) -> ToolResultEnvelope:
        """An error envelope whose ``result`` is the human-readable message."""
        extra.setdefault("content", [{"type": "text", "text": message}])
        return cls(status="error", result=message, is_error=True, **extra)

    @property
    def text(self) -> str:
        """Concatenated text blocks of ``content`` (or ``str(result)`` when there are none)."""
        texts = [b.get("text", "") for b in self.content or () if b.get("type") == "text"]
        if texts:
            return "\n".join(texts)
        return "" if self.result is None else str(self.result)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": self.status,
            "result": self.result,
            "is_error": self.is_error,
            "result_mode": self.result_mode,
            "execution_mode": self.execution_mode,
        }
        for key in _OPTIONAL_ENVELOPE_KEYS:
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.result_type != "complete":
            out["result_type"] = self.result_type
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolResultEnvelope:
        """Build an envelope from a plain dict; unknown keys are an error, not silently dropped."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown ToolResultEnvelope key(s): {', '.join(unknown)}")
        if "result_mode" in data and data["result_mode"] not in ("inline", "stream", "session"):
            raise ValueError(f"result_mode must be inline, stream or session, not {data['result_mode']!r}")
        return cls(**dict(data))

    @classmethod
    def coerce(cls, value: Any) -> ToolResultEnvelope:
        """Accept what the contract allows ``call_tool`` to return: an envelope or a dict.

        A dict that looks like an envelope (has ``result`` or ``is_error``) is read as one;
        any other value is wrapped as a successful ``result``.
        """
        if isinstance(value, ToolResultEnvelope):
            return value
        if (
            isinstance(value, Mapping)
            and ("is_error" in value or "status" in value)
            and (set(value) <= {f.name for f in fields(cls)})
        ):
            return cls.from_dict(value)
        return cls.success(value)


def build_tool_entry(name: str, description: str, parameters: Mapping[str, Any], **optional: Any) -> dict[str, Any]:
    """One ``list_tools`` entry: advertise keys only when set, hints mirrored as MCP annotations."""
    unknown = sorted(set(optional) - set(ADVERTISE_KEYS))
    if unknown:
        raise TypeError(f"unknown advertise key(s): {', '.join(unknown)}")
    entry: dict[str, Any] = {"name": name, "description": description, "parameters": dict(parameters)}
    annotations: dict[str, Any] = {}
    for key in ADVERTISE_KEYS:
        value = optional.get(key)
        if value is None:
            continue
        entry[key] = value
        if key in HINT_KEYS:
            annotations[HINT_KEYS[key]] = value
    if annotations:
        entry["annotations"] = annotations
    return entry


@functools.lru_cache(maxsize=1024)
def _validator_for(schema_key: str) -> jsonschema.protocols.Validator:
    import json

    schema = json.loads(schema_key)
    cls = jsonschema.validators.validator_for(schema, default=Draft202012Validator)
    return cls(schema)


def _pointer(error: ValidationError) -> str:
    return "/" + "/".join(str(p) for p in error.absolute_path) if error.absolute_path else ""


def describe_argument_error(error: ValidationError) -> str:
    """One line naming the bad field: ``/items/0/name: 3 is not of type 'string'``."""
    where = _pointer(error)
    if error.validator == "required" and isinstance(error.instance, Mapping):
        required: Any = error.validator_value
        missing = [k for k in required if k not in error.instance]
        if missing:
            return f"{where or '/'}: missing required argument {missing[0]!r}"
    if error.validator == "additionalProperties" and isinstance(error.instance, Mapping):
        return f"{where or '/'}: {error.message}"
    return f"{where or '/'}: {error.message}"


#: id(schema) -> (the schema, a deep copy of it, its validator). A tool passes the same schema
#: object on every call; one equality check against the copy (no JSON dump) proves it unchanged.
_COMPILED: dict[int, tuple[Mapping[str, Any], Any, jsonschema.protocols.Validator]] = {}


def _compiled(parameters: Mapping[str, Any]) -> jsonschema.protocols.Validator:
    hit = _COMPILED.get(id(parameters))
    if hit is not None and hit[0] is parameters and hit[1] == parameters:
        return hit[2]
    import copy
    import json

    validator = _validator_for(json.dumps(parameters, sort_keys=True, default=str))
    try:
        frozen = copy.deepcopy(parameters)
    except Exception:  # a schema holding something that cannot be copied: compiled per call, as before
        return validator
    if len(_COMPILED) >= 1024:
        _COMPILED.clear()
    _COMPILED[id(parameters)] = (parameters, frozen, validator)  # held, so its id stays unique
    return validator


def validate_arguments(parameters: Mapping[str, Any], arguments: Any) -> str | None:
    """Validate ``arguments`` against a JSON Schema; return one error line or None."""
    if not isinstance(arguments, Mapping):
        return f"/: arguments must be an object, not {type(arguments).__name__}"
    validator = _compiled(parameters)
    error = best_match(validator.iter_errors(dict(arguments)))
    return None if error is None else describe_argument_error(error)


class ToolContract:
    """Base class for one in-process tool.

    Subclasses set ``name``, ``description`` and ``parameters`` (and any optional advertise
    attribute) and implement :meth:`execute`. The default :meth:`call_tool` validates the
    arguments against ``parameters`` and never raises into the caller.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    title: ClassVar[str | None] = None
    output_schema: ClassVar[dict[str, Any] | None] = None
    idempotent: ClassVar[bool | None] = None
    read_only: ClassVar[bool | None] = None
    destructive: ClassVar[bool | None] = None
    open_world: ClassVar[bool | None] = None
    icons: ClassVar[list[dict[str, Any]] | None] = None
    task_support: ClassVar[str | None] = None
    meta: ClassVar[dict[str, Any] | None] = None
    semantics: ClassVar[dict[str, Any] | None] = None
    timeout_seconds: ClassVar[float | None] = None

    # --- the contract's getters -------------------------------------------------------------
    def get_title(self) -> str | None:
        return self.title

    def get_output_schema(self) -> dict[str, Any] | None:
        return self.output_schema

    def is_idempotent(self) -> bool | None:
        return self.idempotent

    def is_read_only(self) -> bool | None:
        return self.read_only

    def is_destructive(self) -> bool | None:
        return self.destructive

    def is_open_world(self) -> bool | None:
        return self.open_world

    def get_icons(self) -> list[dict[str, Any]] | None:
        return self.icons

    def get_task_support(self) -> str | None:
        return self.task_support

    def get_meta(self) -> dict[str, Any] | None:
        return self.meta

    def get_semantics(self) -> dict[str, Any] | None:
        return self.semantics

    def get_timeout_seconds(self) -> float | None:
        return self.timeout_seconds

    def get_name(self) -> str:
        return self.name or type(self).__name__

    def get_description(self) -> str:
        return self.description or inspect.getdoc(type(self)) or ""

    def get_parameters(self) -> dict[str, Any]:
        return self.parameters

    # --- listing and calling ----------------------------------------------------------------
    def list_tools(self) -> list[dict[str, Any]]:
        return [
            build_tool_entry(
                self.get_name(),
                self.get_description(),
                self.get_parameters(),
                title=self.get_title(),
                output_schema=self.get_output_schema(),
                idempotent=self.is_idempotent(),
                read_only=self.is_read_only(),
                destructive=self.is_destructive(),
                open_world=self.is_open_world(),
                icons=self.get_icons(),
                task_support=self.get_task_support(),
                meta=self.get_meta(),
                semantics=self.get_semantics(),
                timeout_seconds=self.get_timeout_seconds(),
            )
        ]

    def call_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any) -> ToolResultEnvelope:
        """Validate ``arguments`` and run :meth:`execute`; errors come back as envelopes."""
        if tool_name != self.get_name():
            return ToolResultEnvelope.failure(f"tool {tool_name!r} is not provided here (this is {self.get_name()!r})")
        args = {} if arguments is None else arguments
        problem = validate_arguments(self.get_parameters(), args)
        if problem is not None:
            return ToolResultEnvelope.failure(f"invalid arguments for tool {tool_name!r}: {problem}")
        try:
            value = self.execute(**dict(args))
        except Exception as exc:  # a tool error never crashes the caller
            return ToolResultEnvelope.failure(f"tool {tool_name!r} failed: {type(exc).__name__}: {exc}")
        return wrap_result(value, has_output_schema=self.get_output_schema() is not None)

    async def acall_tool(
        self, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any
    ) -> ToolResultEnvelope:
        return await asyncio.to_thread(self.call_tool, tool_name, arguments, **kwargs)

    def execute(self, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.execute is not implemented")


def wrap_result(value: Any, *, has_output_schema: bool) -> ToolResultEnvelope:
    """Turn what a local tool returned into an envelope.

    An envelope (or envelope-shaped dict) passes through; a value of a tool with an output
    schema is also exposed as ``structured_content``, the way MCP carries structured results.
    """
    if isinstance(value, ToolResultEnvelope):
        return value
    if isinstance(value, Mapping) and {"is_error", "result"} <= set(value):
        return ToolResultEnvelope.coerce(value)
    if hasattr(value, "model_dump") and callable(value.model_dump):
        value = value.model_dump(mode="json", by_alias=True)
    if has_output_schema:
        return ToolResultEnvelope.success(value, structured_content=value)
    text = value if isinstance(value, str) else None
    content = [{"type": "text", "text": text}] if text is not None else None
    return ToolResultEnvelope.success(value, content=content)


@runtime_checkable
class ToolProvider(Protocol):
    """Anything with the contract's surface."""

    def list_tools(self) -> list[dict[str, Any]]: ...

    def call_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any) -> Any: ...


@runtime_checkable
class AsyncToolProvider(ToolProvider, Protocol):
    async def acall_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any) -> Any: ...


@functools.lru_cache(maxsize=512)
def _accepted_for(func: Callable[..., Any]) -> frozenset[str] | None:
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature: forward nothing
        return frozenset()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    named = {
        p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    }
    return frozenset(named & set(CALL_KWARGS))


def accepted_call_kwargs(func: Callable[..., Any]) -> frozenset[str] | None:
    """The optional kwargs ``func`` declares, or None when it takes ``**kwargs`` (accepts all)."""
    target = getattr(func, "__func__", func)  # bound methods: cache on the underlying function
    try:
        return _accepted_for(target)
    except TypeError:  # unhashable callable
        return _accepted_for.__wrapped__(target)


def _forwardable(func: Callable[..., Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(kwargs) - set(CALL_KWARGS))
    if unknown:
        raise TypeError(f"unknown call_tool option(s): {', '.join(unknown)}; known: {', '.join(CALL_KWARGS)}")
    accepted = accepted_call_kwargs(func)
    return {key: value for key, value in kwargs.items() if value is not None and (accepted is None or key in accepted)}


def invoke_call_tool(callee: Any, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any) -> Any:
    """Call ``callee.call_tool`` forwarding each optional kwarg only when it is declared.

    ``None`` values mean "not set" and are never forwarded.
    """
    func = callee.call_tool
    return func(tool_name, dict(arguments or {}), **_forwardable(func, kwargs))


async def ainvoke_call_tool(callee: Any, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any) -> Any:
    """Async twin of :func:`invoke_call_tool`.

    Prefers ``acall_tool``; awaits ``call_tool`` when it is a coroutine function; otherwise runs
    the sync ``call_tool`` in a worker thread so the event loop is never blocked.
    """
    args = dict(arguments or {})
    acall = getattr(callee, "acall_tool", None)
    if acall is not None:
        return await acall(tool_name, args, **_forwardable(acall, kwargs))
    func = callee.call_tool
    forwarded = _forwardable(func, kwargs)
    if inspect.iscoroutinefunction(func):
        return await func(tool_name, args, **forwarded)
    result = await asyncio.to_thread(func, tool_name, args, **forwarded)
    if inspect.isawaitable(result):
        return await result
    return result
