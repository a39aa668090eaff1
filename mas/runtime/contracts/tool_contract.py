"""ToolContract: the one boundary for listing and calling tools.

Guide: ``docs/tool.md`` (the contract, its options and its envelope). Every provider (local
classes, YAML skills, MCP servers) exposes ``list_tools()`` and ``call_tool(tool_name, arguments,
**optional kwargs)``; results travel as a :class:`ToolResultEnvelope`.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, TypeVar, runtime_checkable

from mas.runtime.contracts import _rules
from mas.runtime.contracts._rules import ERROR_KIND_KEY, ERROR_KINDS

if TYPE_CHECKING:
    # jsonschema (about 70 ms with referencing and attrs) and asyncio are loaded where they are
    # used: the generator reads this module for its tables and must not pay for the validator.
    import jsonschema.protocols
    from jsonschema.exceptions import ValidationError

__all__ = [
    "ADVERTISE_KEYS",
    "CALL_KWARGS",
    "CANCEL_POLL_SECONDS",
    "CallOptions",
    "ERROR_KINDS",
    "ERROR_KIND_KEY",
    "HINT_KEYS",
    "AsyncToolProvider",
    "CallCancelled",
    "EitherSet",
    "ToolContract",
    "ToolProvider",
    "ToolResultEnvelope",
    "accepted_call_kwargs",
    "acall_with_options",
    "await_with_timeout",
    "ainvoke_call_tool",
    "bound_failure",
    "build_tool_entry",
    "declared_hints",
    "entry_hints",
    "tool_entry_from_mcp",
    "tool_title",
    "call_with_options",
    "describe_argument_error",
    "either_set",
    "invoke_call_tool",
    "resolve_awaitable",
    "run_with_timeout",
    "takes_checked_options",
    "validate_arguments",
    "wrap_result",
]

T = TypeVar("T")

#: The optional keyword arguments of ``call_tool``, in the contract's order.
CALL_KWARGS: tuple[str, ...] = _rules.CALL_OPTIONS

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

# Reading a tool's behaviour hints. A hint means one of three things, each read in one place:
# * declared: what the tool says, ``True``/``False``, or ``None`` when it says nothing (or not a
#   boolean): ``declared_hints`` for an MCP tool (wire form), ``entry_hints`` for a ``list_tools``
#   entry (its own keys, else its mirrored annotations); docstrings word these (``_rules.hint_words``);
# * said: a hint declared true (``hints.get(key) is True``), what a listing's column and code
#   mode's summary line name;
# * policy: what an undeclared hint defaults to under MCP's rules (``_rules.is_destructive``,
#   ``_rules.retry_safe``), who asks first and what may run twice.


def _flag(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def declared_hints(tool: Mapping[str, Any]) -> dict[str, bool | None]:
    """Each behaviour hint (contract key) as an MCP tool (wire form) declares it in ``annotations``."""
    annotations = tool.get("annotations")
    found: Mapping[str, Any] = annotations if isinstance(annotations, Mapping) else {}
    return {key: _flag(found.get(wire)) for key, wire in HINT_KEYS.items()}


def entry_hints(entry: Mapping[str, Any]) -> dict[str, bool | None]:
    """Each behaviour hint as a ``list_tools`` entry declares it: its own key, else its annotation."""
    mirrored = declared_hints(entry)
    return {key: flag if (flag := _flag(entry.get(key))) is not None else mirrored[key] for key in HINT_KEYS}


def tool_title(tool: Mapping[str, Any]) -> str | None:
    """An MCP tool's (wire form) display title, by MCP's precedence: its ``title``, then
    ``annotations.title``; the first that is a non-empty string."""
    annotations = tool.get("annotations")
    found: Mapping[str, Any] = annotations if isinstance(annotations, Mapping) else {}
    return next((t for t in (tool.get("title"), found.get("title")) if isinstance(t, str) and t), None)


ResultMode = Literal["inline", "stream", "session"]


@dataclass(frozen=True)
class ToolResultEnvelope:
    """The result of one ``call_tool``.

    ``to_dict``/``from_dict`` round-trip losslessly: optional keys are present only when set,
    and ``result_type`` only when it is not ``"complete"``. ``status`` and ``is_error`` always
    agree (``_rules``: a call failed when either says so). An error envelope says why in
    ``metadata["error_kind"]`` (one of :data:`ERROR_KINDS`).
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

    def __post_init__(self) -> None:
        failed = self.is_error is True or self.status == "error"
        object.__setattr__(self, "is_error", failed)
        if failed:
            object.__setattr__(self, "status", "error")
        if self.result_type is None:
            object.__setattr__(self, "result_type", "complete")

    @classmethod
    def success(cls, result: Any = None, **extra: Any) -> ToolResultEnvelope:
        return cls(status="success", result=result, is_error=False, **extra)

    @classmethod
    def failure(cls, message: str, *, kind: str = "tool_error", **extra: Any) -> ToolResultEnvelope:
        """An error envelope whose ``result`` is the human-readable message and whose
        ``metadata["error_kind"]`` is ``kind``."""
        if kind not in ERROR_KINDS:
            raise ValueError(f"error kind must be one of {', '.join(ERROR_KINDS)}, not {kind!r}")
        extra.setdefault("content", [{"type": "text", "text": message}])
        extra["metadata"] = {**(extra.get("metadata") or {}), ERROR_KIND_KEY: kind}
        return cls(status="error", result=message, is_error=True, **extra)

    @property
    def error_kind(self) -> str | None:
        """Why the call failed (one of :data:`ERROR_KINDS`), or None when it did not."""
        return _rules.error_kind(self.to_dict())

    @property
    def text(self) -> str:
        """Concatenated text blocks of ``content`` (or ``str(result)`` when there are none)."""
        joined = _rules.joined_text(list(self.content or ()))
        if joined is not None:
            return joined
        return "" if self.result is None else str(self.result)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": self.status,
            "result": self.result,
            "is_error": self.is_error,
            "result_mode": self.result_mode,
            "execution_mode": self.execution_mode,
        }
        for key in _rules.OPTIONAL_KEYS:
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.result_type not in (None, "complete"):
            out["result_type"] = self.result_type
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolResultEnvelope:
        """Build an envelope from its dict form; unknown keys and bad enumerated values are errors."""
        unknown = sorted(set(data) - set(_rules.ENVELOPE_KEYS))
        if unknown:
            raise ValueError(f"unknown ToolResultEnvelope key(s): {', '.join(unknown)}")
        checked = _rules.to_envelope({"result": None, **data})
        return cls(**checked)

    @classmethod
    def coerce(cls, value: Any) -> ToolResultEnvelope:
        """Accept anything ``call_tool`` may return, by the one envelope rule (``_rules.to_envelope``).

        An envelope passes through; an envelope dict, an MCP ``CallToolResult`` (object or wire
        dict) is read as one; any other value is a successful ``result``. A malformed envelope
        becomes a ``protocol`` error envelope.
        """
        if isinstance(value, ToolResultEnvelope):
            return value
        try:
            return cls(**_rules.to_envelope(value))
        except ValueError as exc:
            return cls.failure(f"malformed result: {exc}", kind="protocol")


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


def tool_entry_from_mcp(tool: Mapping[str, Any]) -> dict[str, Any]:
    """One contract ``list_tools`` entry from an MCP tool object (wire keys): the MCP client's
    listings, the pin's locked tools and the generated testing kit's fakes all read tools this way."""
    execution: Mapping[str, Any] = tool.get("execution") or {}
    return build_tool_entry(
        tool["name"],
        tool.get("description") or "",
        tool.get("inputSchema") or {"type": "object", "properties": {}},
        title=tool_title(tool),
        output_schema=tool.get("outputSchema"),
        icons=tool.get("icons"),
        task_support=execution.get("taskSupport"),
        meta=tool.get("_meta"),
        **declared_hints(tool),
    )


@functools.lru_cache(maxsize=1024)
def _validator_for(schema_key: str) -> jsonschema.protocols.Validator:
    import json

    import jsonschema.validators

    schema = json.loads(schema_key)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.validators.Draft202012Validator)
    return cls(schema)


def describe_argument_error(error: ValidationError) -> str:
    """One line naming the bad field: ``/items/0/name: 3 is not of type 'string'``."""
    where = _rules.pointer(error.absolute_path)
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
    from jsonschema.exceptions import best_match

    validator = _compiled(parameters)
    # jsonschema's "object" is a dict: another Mapping is read through a copy, a dict as it is.
    error = best_match(validator.iter_errors(arguments if isinstance(arguments, dict) else dict(arguments)))
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
        # Only the tool's own docstring: inherited ones (ToolContract's) describe something else.
        return self.description or inspect.cleandoc(type(self).__dict__.get("__doc__") or "")

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

    def _checked_arguments(
        self, tool_name: str, arguments: Mapping[str, Any] | None
    ) -> Mapping[str, Any] | ToolResultEnvelope:
        if tool_name != self.get_name():
            return ToolResultEnvelope.failure(
                f"tool {tool_name!r} is not provided here (this is {self.get_name()!r})", kind="unknown_tool"
            )
        # Not copied: ``execute(**args)`` gets its own dict, and validation only reads.
        args = {} if arguments is None else arguments
        problem = validate_arguments(self.get_parameters(), args)
        if problem is not None:
            return ToolResultEnvelope.failure(
                f"invalid arguments for tool {tool_name!r}: {problem}", kind="invalid_arguments"
            )
        return args

    def _failed(self, tool_name: str, exc: Exception) -> ToolResultEnvelope:
        return ToolResultEnvelope.failure(f"tool {tool_name!r} failed: {type(exc).__name__}: {exc}")

    def call_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any) -> ToolResultEnvelope:
        """Validate ``arguments`` and run :meth:`execute` (awaited when it is ``async def``).

        The optional kwargs are ignored here (the contract's default); errors come back as envelopes.
        """
        return self.call_checked(tool_name, arguments, {})

    def call_checked(
        self, tool_name: str, arguments: Mapping[str, Any] | None, options: CallOptions
    ) -> ToolResultEnvelope:
        """:meth:`call_tool` with the options checked already (the runtime's one value; ignored here)."""
        args = self._checked_arguments(tool_name, arguments)
        if isinstance(args, ToolResultEnvelope):
            return args
        try:
            value = resolve_awaitable(self.execute(**args))
        except Exception as exc:  # a tool error never crashes the caller
            return self._failed(tool_name, exc)
        return wrap_result(value, has_output_schema=self.get_output_schema() is not None)

    async def acall_tool(
        self, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any
    ) -> ToolResultEnvelope:
        """Async twin of :meth:`call_tool`, which receives the options (see ``FORWARDS_TO``).

        An ``async def execute`` is awaited on the caller's loop; an overridden ``async def
        call_tool`` is awaited; a sync one runs in a worker thread.
        """
        return await self.acall_checked(tool_name, arguments, _rules.checked_options(kwargs))

    async def acall_checked(
        self, tool_name: str, arguments: Mapping[str, Any] | None, options: CallOptions
    ) -> ToolResultEnvelope:
        """:meth:`acall_tool` with the options checked already: ``call_tool`` gets those it declares."""
        if type(self).call_tool is ToolContract.call_tool and inspect.iscoroutinefunction(self.execute):
            args = self._checked_arguments(tool_name, arguments)
            if isinstance(args, ToolResultEnvelope):
                return args
            try:
                value = await self.execute(**args)
            except Exception as exc:
                return self._failed(tool_name, exc)
            return wrap_result(value, has_output_schema=self.get_output_schema() is not None)
        call_tool = self.call_tool
        result = await _rules.acall(call_tool, tool_name, arguments, **_rules.options_for(call_tool, options))
        return ToolResultEnvelope.coerce(result)

    # The options given to acall_tool are meant for call_tool: the forwarding rule looks there.
    setattr(acall_tool, _rules.FORWARDS_TO, "call_tool")  # noqa: B010

    def execute(self, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.execute is not implemented")


def wrap_result(value: Any, *, has_output_schema: bool) -> ToolResultEnvelope:
    """Turn what a local tool returned into an envelope.

    An envelope (or envelope-shaped dict) passes through; a value of a tool with an output
    schema is also exposed as ``structured_content``, the way MCP carries structured results.
    """
    if isinstance(value, ToolResultEnvelope):
        return value
    if isinstance(value, Mapping) and _rules.is_envelope(value):
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


def accepted_call_kwargs(func: Callable[..., Any]) -> frozenset[str] | None:
    """The optional kwargs ``func`` declares, or None when it takes ``**kwargs`` (accepts all)."""
    return _rules.accepted_options(func)


#: The call options as one value (``_rules.CallOptions``, their one definition): checked once where
#: a call enters (``_rules.checked_options``), then passed whole; an unset option is absent.
CallOptions = _rules.CallOptions

#: The runtime's providers that take a checked :class:`CallOptions` value whole
#: (``call_checked``/``acall_checked``), and ``ToolContract``; a subclass too while it keeps their
#: ``call_tool`` and ``acall_tool`` (:func:`_takes_checked`). Filled by :func:`takes_checked_options`.
_TAKES_CHECKED: set[type] = set()


def takes_checked_options(cls: type[T]) -> type[T]:
    """Mark a runtime provider class whose ``call_checked(tool_name, arguments, options)`` and
    ``acall_checked`` do what its ``call_tool``/``acall_tool`` do, with the options checked already."""
    _TAKES_CHECKED.add(cls)
    return cls


takes_checked_options(ToolContract)


#: :func:`_takes_checked` per class, found once (classes are few, and never freed before exit).
_CHECKED_BY_TYPE: dict[type, bool] = {}


def _takes_checked(cls: type) -> bool:
    """Whether ``cls`` takes a checked value: its ``call_tool`` and ``acall_tool`` are those of a
    marked class (a subclass that overrides either is called through it, with keyword options)."""
    known = _CHECKED_BY_TYPE.get(cls)
    if known is None:
        marked = next((base for base in cls.__mro__ if base in _TAKES_CHECKED), None)
        known = _CHECKED_BY_TYPE[cls] = (
            marked is not None
            and getattr(cls, "call_tool", None) is getattr(marked, "call_tool", None)
            and getattr(cls, "acall_tool", None) is getattr(marked, "acall_tool", None)
        )
    return known


# --- coroutines from sync code, and time limits -----------------------------------------------


def resolve_awaitable(value: Any) -> Any:
    """``value``, or what it resolves to when it is awaitable: a coroutine is never a result.

    The running-loop policy is ``_rules.run_sync``'s (a helper thread when this thread runs a loop).
    """
    return _rules.run_sync(value)


class CallCancelled(Exception):
    """The caller's ``cancel_event`` was set while an in-process call was waited for."""


class EitherSet:
    """A ``cancel_event`` set when either of two is (anything with ``is_set()``): a call's own
    event (set when its awaiting task is cancelled) and the one its caller gave."""

    def __init__(self, own: Any, other: Any) -> None:
        self._own = own
        self._other = other

    def is_set(self) -> bool:
        return bool(self._own.is_set()) or bool(self._other.is_set())


def either_set(own: Any, other: Any) -> Any:
    """``own``, or :class:`EitherSet` of both when the caller gave an ``other`` (not None)."""
    return own if other is None else EitherSet(own, other)


#: How often an in-process call polls its ``cancel_event`` (the MCP provider polls as often).
CANCEL_POLL_SECONDS = 0.05


def bound_failure(tool_name: str, limit: float | None, exc: TimeoutError | CallCancelled) -> ToolResultEnvelope:
    """The envelope of an in-process call stopped by its time limit or its ``cancel_event``
    (:func:`run_with_timeout`, :func:`await_with_timeout`)."""
    if isinstance(exc, CallCancelled):
        return ToolResultEnvelope.failure(f"tool {tool_name!r} was {exc}", kind="cancelled")
    return ToolResultEnvelope.failure(f"tool {tool_name!r} timed out after {limit} s", kind="timeout")


def run_with_timeout(func: Callable[[], Any], limit: float | None, cancel_event: Any = None) -> Any:
    """``func()``, raising :class:`TimeoutError` after ``limit`` seconds (None: no limit; 0: at once)
    and :class:`CallCancelled` once ``cancel_event`` (anything with ``is_set()``) is set.

    The call runs in a daemon thread; one that overruns or is cancelled keeps running there
    (Python cannot stop a thread), but the caller gets its answer on time.
    """
    if limit is None and cancel_event is None:
        return func()
    if cancel_event is not None and cancel_event.is_set():
        raise CallCancelled("cancelled before it started")
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            outcome["value"] = func()
        except BaseException as exc:  # handed to the caller below
            outcome["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="tool-call", daemon=True).start()
    deadline = None if limit is None else time.monotonic() + max(limit, 0.0)
    while True:
        left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        step = left if cancel_event is None else min(CANCEL_POLL_SECONDS, left if left is not None else math.inf)
        if done.wait(step):
            break
        if cancel_event is not None and cancel_event.is_set():
            raise CallCancelled("cancelled by the caller (cancel_event)")
        if deadline is not None and time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {limit} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


async def await_with_timeout(awaitable: Awaitable[Any], limit: float | None, cancel_event: Any = None) -> Any:
    """Async twin of :func:`run_with_timeout`: the awaitable is cancelled on timeout or cancel."""
    import asyncio  # loaded already: this runs in an event loop

    if cancel_event is None:
        return await asyncio.wait_for(awaitable, limit)
    if cancel_event.is_set():
        if inspect.iscoroutine(awaitable):
            awaitable.close()
        raise CallCancelled("cancelled before it started")
    task = asyncio.ensure_future(awaitable)
    deadline = None if limit is None else time.monotonic() + max(limit, 0.0)
    try:
        while True:
            left = math.inf if deadline is None else max(deadline - time.monotonic(), 0.0)
            await asyncio.wait({task}, timeout=min(CANCEL_POLL_SECONDS, left))
            if task.done():
                return task.result()
            if cancel_event.is_set():
                raise CallCancelled("cancelled by the caller (cancel_event)")
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"timed out after {limit} s")
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


def invoke_call_tool(callee: Any, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any) -> Any:
    """Call ``callee.call_tool`` forwarding each optional kwarg only when it is declared.

    ``None`` values mean "not set" and are never forwarded. An awaitable result (an ``async def
    call_tool``) is run to completion, so a coroutine is never returned as a result.
    """
    return call_with_options(callee, tool_name, arguments, _rules.checked_options(kwargs))


async def ainvoke_call_tool(callee: Any, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any) -> Any:
    """Async twin of :func:`invoke_call_tool`, by the one dispatch rule (``_rules.acall_provider``).

    Prefers ``acall_tool``; awaits ``call_tool`` when it is a coroutine function; otherwise runs
    the sync ``call_tool`` in a worker thread so the event loop is never blocked. The options are
    filtered by the callable that finally receives them (``ToolContract.acall_tool`` hands them to
    ``call_tool``).
    """
    return await acall_with_options(callee, tool_name, arguments, _rules.checked_options(kwargs))


def call_with_options(callee: Any, tool_name: str, arguments: Mapping[str, Any] | None, options: CallOptions) -> Any:
    """:func:`invoke_call_tool` with options already checked (one :class:`CallOptions` value).

    A runtime provider or local tool (:func:`takes_checked_options`) gets the value and the
    arguments as they are; any other provider gets the options its ``call_tool`` declares (``_rules.options_for``)
    and its own copy of the arguments, which it may keep or change without touching the caller's.
    """
    if _takes_checked(type(callee)):
        return callee.call_checked(tool_name, arguments, options)
    func = callee.call_tool
    return resolve_awaitable(func(tool_name, dict(arguments or {}), **_rules.options_for(func, options)))


async def acall_with_options(
    callee: Any, tool_name: str, arguments: Mapping[str, Any] | None, options: CallOptions
) -> Any:
    """Async twin of :func:`call_with_options`, by the one dispatch rule (``_rules.acall_provider``)."""
    if _takes_checked(type(callee)):
        return await callee.acall_checked(tool_name, arguments, options)
    return await _rules.acall_provider(callee, tool_name, dict(arguments or {}), options)
