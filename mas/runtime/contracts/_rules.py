"""The contract's shared rules: what an envelope is, why a call failed, which options a callee gets,
how sync and async callables are called (one dispatch rule, one running-loop policy), how a
message quotes untrusted text (one line) and a place in a document (a JSON pointer), and how a
tool's behaviour hints read in words.

This module is the one place these rules are written. The runtime imports it from
``mas.runtime.contracts._rules``; every generated package carries a byte-identical copy as
``_rules.py``, read from this file when the package is rendered (toolgen's shim imports this very
module; a test checks that every copy equals this file). So it depends on the standard library only.

Envelope rule (``docs/tool.md``, "Results"):

* An object with ``to_dict()`` (the runtime's ``ToolResultEnvelope``) or ``model_dump()`` (an
  MCP ``CallToolResult`` or any pydantic model) is first turned into a dict.
* A dict is an envelope when every key is an envelope key (snake_case, or the MCP wire spelling
  ``isError``/``structuredContent``/``resultType``/``_meta``; ``__dunder__`` recorder keys are
  ignored) and it carries ``result``, ``is_error``, ``structured_content``, a list of content
  blocks, or is an MCP ``input_required`` result. Any other value is a successful ``result``.
* A call failed when ``is_error`` is true or ``status`` is ``"error"``; the other field is set to
  agree. An MCP result without ``result`` gets its structured content, else its joined text.
* Enumerated keys are checked; a bad value raises :class:`ValueError` naming the key.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypedDict, cast

__all__ = [
    "CALL_OPTIONS",
    "CallOptions",
    "ENVELOPE_KEYS",
    "ERROR_KINDS",
    "ERROR_KIND_KEY",
    "EXECUTION_MODES",
    "HINT_WORDS",
    "RESULT_MODES",
    "STATUSES",
    "acall",
    "acall_provider",
    "accepted_options",
    "aclose",
    "checked_options",
    "error_kind",
    "failure_dict",
    "forward_target",
    "forwarded",
    "hint_words",
    "input_requests",
    "is_destructive",
    "is_envelope",
    "joined_text",
    "json_equal",
    "json_type",
    "keywords_taken",
    "one_line",
    "options_for",
    "pointer",
    "pointer_token",
    "pointer_tokens",
    "retry_safe",
    "run_sync",
    "to_envelope",
    "unescape_token",
    "unknown_options",
]

# --------------------------------------------------------------------------------------------
# Envelope keys and values
# --------------------------------------------------------------------------------------------

#: Every ToolResultEnvelope key, in ``to_dict`` order (required keys first).
ENVELOPE_KEYS: tuple[str, ...] = (
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
)
#: Keys that appear only when set (not None): those after the five required ones, but
#: ``result_type``, which appears only when not "complete".
OPTIONAL_KEYS: tuple[str, ...] = tuple(key for key in ENVELOPE_KEYS[5:] if key != "result_type")
STATUSES: tuple[str, ...] = ("success", "error", "pending", "running")
RESULT_MODES: tuple[str, ...] = ("inline", "stream", "session")
EXECUTION_MODES: tuple[str, ...] = ("sync", "async")

# MCP wire spelling -> envelope key.
_WIRE_KEYS: dict[str, str] = {
    "isError": "is_error",
    "structuredContent": "structured_content",
    "resultType": "result_type",
    "_meta": "meta",
}
# Extra wire keys of an MCP InputRequiredResult; such a result travels whole in ``result``.
_INPUT_REQUIRED_KEYS = frozenset({"inputRequests", "requestState"})
_MARKERS = frozenset({"result", "is_error", "structured_content"})
# For the common case (every key already a snake_case envelope key: nothing to rename or skip).
_ENVELOPE_KEY_SET = frozenset(ENVELOPE_KEYS)
_INPUT_REQUIRED_KEY_SET = _ENVELOPE_KEY_SET | _INPUT_REQUIRED_KEYS
_STATUS_SET = frozenset(STATUSES)
_RESULT_MODE_SET = frozenset(RESULT_MODES)
_EXECUTION_MODE_SET = frozenset(EXECUTION_MODES)

# --------------------------------------------------------------------------------------------
# Failure kinds
# --------------------------------------------------------------------------------------------

#: ``metadata[ERROR_KIND_KEY]`` of an error envelope says why the call failed.
ERROR_KIND_KEY = "error_kind"
#: The failure kinds, machine-readable; an error envelope without one counts as ``tool_error``.
ERROR_KINDS: tuple[str, ...] = (
    "tool_error",
    "invalid_arguments",
    "unknown_tool",
    "timeout",
    "cancelled",
    "unavailable",
    "protocol",
)


def error_kind(envelope: Mapping[str, Any]) -> str | None:
    """Why an envelope (dict form) failed, or None when it did not."""
    if not envelope.get("is_error"):
        return None
    metadata: object = envelope.get("metadata")
    kind: object = cast("Mapping[str, object]", metadata).get(ERROR_KIND_KEY) if isinstance(metadata, Mapping) else None
    return kind if isinstance(kind, str) and kind in ERROR_KINDS else "tool_error"


def failure_dict(message: str, kind: str = "tool_error") -> dict[str, Any]:
    """An error envelope (dict form) whose result and text are ``message``."""
    if kind not in ERROR_KINDS:
        raise ValueError(f"error kind must be one of {', '.join(ERROR_KINDS)}, not {kind!r}")
    return {
        "status": "error",
        "result": message,
        "is_error": True,
        "result_mode": "inline",
        "execution_mode": "sync",
        "metadata": {ERROR_KIND_KEY: kind},
        "content": [{"type": "text", "text": message}],
    }


# --------------------------------------------------------------------------------------------
# Recognising and normalising envelopes
# --------------------------------------------------------------------------------------------


def _is_dunder(key: object) -> bool:
    return isinstance(key, str) and key.startswith("__") and key.endswith("__")


def _dumped(item: object) -> object:
    if isinstance(item, Mapping):
        return cast("Mapping[str, object]", item)
    dump: object = getattr(item, "model_dump", None)
    if callable(dump):
        dumped: object = dump(mode="json", by_alias=True, exclude_none=True)
        return dumped
    return item


def _is_block_list(value: object) -> bool:
    if not isinstance(value, list):
        return False
    for item in cast("list[object]", value):
        block = _dumped(item)
        if not (isinstance(block, Mapping) and isinstance(cast("Mapping[str, object]", block).get("type"), str)):
            return False
    return True


def is_envelope(data: Mapping[str, Any]) -> bool:
    """Whether a dict is an envelope (see the module docstring) rather than a plain value."""
    if _ENVELOPE_KEY_SET.issuperset(data):  # already snake_case (the common case): the same test, shorter
        return (
            data.get("result_type") == "input_required"
            or not _MARKERS.isdisjoint(data)
            or ("content" in data and _is_block_list(data.get("content")))
        )
    keys = {_WIRE_KEYS.get(key, key) for key in data if not _is_dunder(key)}
    if data.get("resultType", data.get("result_type")) == "input_required":
        return keys <= _INPUT_REQUIRED_KEY_SET
    if not keys <= _ENVELOPE_KEY_SET:
        return False
    return bool(keys & _MARKERS) or ("content" in keys and _is_block_list(data.get("content")))


# The JSON type of each optional key that has one (``structured_content`` may be any value).
_SHAPES: dict[str, type] = {
    "events": list,
    "session_id": str,
    "session_status": str,
    "metadata": dict,
    "meta": dict,
}


def _checked(key: str, value: object, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"envelope key {key!r} must be one of {', '.join(allowed)}, not {value!r}")
    return str(value)


def joined_text(blocks: list[object]) -> str | None:
    """The texts of the ``text`` blocks (dicts, or models read by duck typing) joined with
    newlines; None when there are none. The one joining of a result's text."""
    texts: list[str] = []
    for block in blocks:
        if isinstance(block, Mapping):
            fields = cast("Mapping[str, object]", block)
            kind, text = fields.get("type"), fields.get("text")
        else:  # a TextContent model (duck-typed: this module imports no models)
            kind, text = getattr(block, "type", None), getattr(block, "text", None)
        if kind == "text" and isinstance(text, str):
            texts.append(text)
    return "\n".join(texts) if texts else None


def _from_mapping(data: Mapping[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any]
    if _ENVELOPE_KEY_SET.issuperset(data):  # already snake_case: nothing to rename or skip
        fields = dict(data)
    else:
        fields = {}
        for key, value in data.items():
            if _is_dunder(key) or key in _INPUT_REQUIRED_KEYS:
                continue
            snake = _WIRE_KEYS.get(key, key)
            if snake != key and snake in data:  # the snake_case spelling wins
                continue
            fields[snake] = value
    if data.get("resultType", data.get("result_type")) == "input_required" and "result" not in data:
        # The whole MCP InputRequiredResult is the result: the caller answers its requests.
        fields["result"] = {k: v for k, v in data.items() if not _is_dunder(k)}
    is_error = fields.get("is_error", False)
    if not isinstance(is_error, bool):
        raise ValueError(f"envelope key 'is_error' must be a boolean, not {is_error!r}")
    # ``value.__class__ is str and value in SET``: the common case, where _checked returns the value as is.
    status = fields.get("status", "success")
    if status.__class__ is not str or status not in _STATUS_SET:
        status = _checked("status", status, STATUSES)
    failed = is_error or status == "error"
    if not _SHAPES.keys().isdisjoint(fields):
        for key, kind in _SHAPES.items():
            value = fields.get(key)
            if value is not None and not isinstance(value, kind):
                raise ValueError(f"envelope key {key!r} must be a {kind.__name__}, not {type(value).__name__}")
    blocks = fields.get("content")
    if blocks is not None:
        if not isinstance(blocks, list):
            raise ValueError(f"envelope key 'content' must be a list of blocks, not {type(blocks).__name__}")
        blocks = fields["content"] = [_dumped(b) for b in cast("list[object]", blocks)]
    if "result" in fields:
        result = fields["result"]
    elif fields.get("structured_content") is not None:
        result = fields["structured_content"]
    elif blocks:
        result = joined_text(blocks) or ""
    else:
        result = None
    result_mode = fields.get("result_mode", "inline")
    if result_mode.__class__ is not str or result_mode not in _RESULT_MODE_SET:
        result_mode = _checked("result_mode", result_mode, RESULT_MODES)
    execution_mode = fields.get("execution_mode", "sync")
    if execution_mode.__class__ is not str or execution_mode not in _EXECUTION_MODE_SET:
        execution_mode = _checked("execution_mode", execution_mode, EXECUTION_MODES)
    out: dict[str, Any] = {
        "status": "error" if failed else status,
        "result": result,
        "is_error": failed,
        "result_mode": result_mode,
        "execution_mode": execution_mode,
    }
    for key in OPTIONAL_KEYS:
        if key in fields:
            value = fields[key]
            if value is not None:
                out[key] = value
    result_type = fields.get("result_type")
    if result_type is not None and not isinstance(result_type, str):
        raise ValueError(f"envelope key 'result_type' must be a string, not {result_type!r}")
    if result_type not in (None, "complete"):
        out["result_type"] = result_type
    return out


def _plain(value: object) -> dict[str, Any]:
    return {"status": "success", "result": value, "is_error": False, "result_mode": "inline", "execution_mode": "sync"}


def to_envelope(raw: object) -> dict[str, Any]:
    """Any ``call_tool`` return value as an envelope dict in ``ToolResultEnvelope.to_dict`` form.

    Raises :class:`ValueError` when an envelope carries a bad enumerated value.
    """
    if isinstance(raw, dict) or isinstance(raw, Mapping):  # dict first: the ABC check costs more
        data = cast("Mapping[str, Any]", raw)
        return _from_mapping(data) if is_envelope(data) else _plain(dict(data))
    to_dict = getattr(raw, "to_dict", None)
    if callable(to_dict):
        converted: object = to_dict()
        if isinstance(converted, dict) or isinstance(converted, Mapping):
            data = cast("Mapping[str, Any]", converted)
            if is_envelope(data):
                return _from_mapping(data)
        return _plain(raw)  # an object with to_dict() that is not an envelope is the value itself
    dump = getattr(raw, "model_dump", None)
    if callable(dump):  # a pydantic model: an MCP CallToolResult, or a value
        dumped: object = dump(mode="json", by_alias=True, exclude_none=True)
        if isinstance(dumped, Mapping) and is_envelope(cast("Mapping[str, Any]", dumped)):
            return _from_mapping(cast("Mapping[str, Any]", dumped))
        return _plain(dump(mode="json", by_alias=True))
    return _plain(raw)


# --------------------------------------------------------------------------------------------
# Forwarding call options
# --------------------------------------------------------------------------------------------


class CallOptions(TypedDict, total=False):
    """The contract's optional ``call_tool`` keyword arguments, in the contract's order: the one
    definition of the call options. ``CALL_OPTIONS`` is read from it; the runtime passes one such
    value from where a call enters (:func:`checked_options`) down to the MCP SDK; a generated
    package's ``CallOptions`` extends it with the options the package acts on itself.

    ``None`` means "not set": it is never forwarded, and :func:`checked_options` drops it.
    """

    timeout_seconds: float | None
    progress_callback: Callable[..., object] | None
    cancel_event: Any
    meta: Mapping[str, Any] | None
    input_responses: Mapping[str, Any] | None
    request_state: str | None
    allow_input_required: bool | None
    allow_claimed: bool | None
    ctx: Any
    user: str | None


#: The call options' names, in the contract's order (:class:`CallOptions`' keys).
CALL_OPTIONS: tuple[str, ...] = tuple(CallOptions.__annotations__)
#: A method whose function has this attribute (a sibling method name) hands its options on to that
#: method; the forwarding rule then looks at the sibling (``ToolContract.acall_tool`` -> ``call_tool``).
FORWARDS_TO = "__forwards_options_to__"


@functools.lru_cache(maxsize=512)
def _declared(func: Callable[..., object]) -> frozenset[str] | None:
    try:
        parameters = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):  # no introspectable signature: it takes nothing by name
        return frozenset()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return frozenset(p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def keywords_taken(func: Callable[..., object]) -> frozenset[str] | None:
    """The keyword arguments ``func`` takes by name, or None when it takes ``**kwargs`` (any):
    the one reading of a callee's signature, wherever something is passed only if it is declared."""
    target: Callable[..., object] = getattr(func, "__func__", func)  # bound method: cache per function
    try:
        return _declared(target)
    except TypeError:  # unhashable callable
        return _declared.__wrapped__(target)


def forward_target(callee: object, method: str) -> Callable[..., object] | None:
    """The callable that finally receives the options of ``callee.<method>``, or None if absent."""
    func: object = getattr(callee, method, None)
    seen = {method}
    while callable(func):
        sibling = getattr(getattr(func, "__func__", func), FORWARDS_TO, None)
        if not isinstance(sibling, str) or sibling in seen:
            return func
        seen.add(sibling)
        nxt: object = getattr(callee, sibling, None)
        if not callable(nxt):
            return func
        func = nxt
    return None


def accepted_options(func: Callable[..., object]) -> frozenset[str] | None:
    """The call options ``func`` declares, or None when it takes ``**kwargs`` (accepts all)."""
    taken = keywords_taken(func)
    return None if taken is None else taken.intersection(CALL_OPTIONS)


def unknown_options(names: Iterable[str], known: tuple[str, ...] = CALL_OPTIONS) -> None:
    """Raise :class:`TypeError` naming every option in ``names`` that is not in ``known``.

    The one check and the one message for a misspelt call option, wherever options enter (the
    registry, a provider, a generated package): a caller bug, raised like any bad keyword argument.
    """
    unknown = sorted(set(names).difference(known))
    if unknown:
        raise TypeError(f"unknown call option(s): {', '.join(unknown)}; known: {', '.join(known)}")


def checked_options(given: Mapping[str, object], known: tuple[str, ...] = CALL_OPTIONS) -> CallOptions:
    """The call options in ``given``, checked: a name not in ``known`` is a :class:`TypeError`
    (:func:`unknown_options`), and ``None`` values ("not set") are dropped.

    The one check where options enter (the contract's ``call_tool`` of the registry, a runtime
    provider or a generated package); past it, the value is passed on whole, never rebuilt.
    """
    if not given:
        return {}
    unknown_options(given, known)
    return cast(CallOptions, {key: value for key, value in given.items() if value is not None})


def forwarded(callee: object, method: str, options: Mapping[str, object]) -> dict[str, object]:
    """The options that reach ``callee.<method>`` (:func:`options_for` the callable that finally
    receives them; all set ones when there is none to read)."""
    if not options:  # the common case: no signature lookup at all
        return {}
    return options_for(forward_target(callee, method), options)


def options_for(func: Callable[..., object] | None, options: Mapping[str, object]) -> dict[str, object]:
    """The call options that reach ``func``: set ones (not None) that it declares, or all of them
    when it takes ``**kwargs`` (or is None: nothing to read). The one filtering of options."""
    if not options:
        return {}
    accepted = None if func is None else accepted_options(func)
    return {
        key: value
        for key, value in options.items()
        if key in CALL_OPTIONS and value is not None and (accepted is None or key in accepted)
    }


# --------------------------------------------------------------------------------------------
# Sync and async callables: the one dispatch rule, and the one running-loop policy
# --------------------------------------------------------------------------------------------
#
# ``asyncio`` is imported inside these functions, not at the top: a generated package imports
# this module at import time, and asyncio costs a third of that import.


async def _await(awaitable: Awaitable[object]) -> object:
    return await awaitable


def run_sync(value: object) -> object:
    """``value``, or what it resolves to when it is awaitable, for sync code: a coroutine is never a result.

    The running-loop policy (one for the runtime and every generated package): when this thread
    runs no event loop the awaitable runs on a fresh one (``asyncio.run``); when it does (a
    notebook, a sync call made from async code) it runs on a fresh loop in a helper thread and the
    caller blocks until it is done, as any sync call does. Refusing instead would make the sync API
    unusable in notebooks, where a loop always runs, and would differ from the MCP provider, whose
    sync calls already run on a loop of their own. The awaitable must not need the caller's loop
    (that loop is blocked); asyncio says so with an error rather than a hang.
    """
    if not inspect.isawaitable(value):
        return value
    import asyncio
    import concurrent.futures

    coro = value if inspect.iscoroutine(value) else _await(value)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="run-sync") as pool:
        return pool.submit(asyncio.run, coro).result()


async def acall(func: Callable[..., object], /, *args: object, **kwargs: object) -> object:
    """``func(*args, **kwargs)`` from async code: a coroutine function is awaited on this loop, a
    sync one runs in a worker thread (the loop is never blocked), and whatever awaitable comes
    back is awaited until it is a value."""
    import asyncio

    result = (
        func(*args, **kwargs) if inspect.iscoroutinefunction(func) else await asyncio.to_thread(func, *args, **kwargs)
    )
    while inspect.isawaitable(result):
        result = await result
    return result


async def acall_provider(
    provider: object, tool_name: str, arguments: dict[str, Any], options: Mapping[str, object]
) -> object:
    """The one dispatch rule for an async call: ``acall_tool`` when the provider has it, else
    ``call_tool`` by :func:`acall` (awaited, or in a worker thread). Each gets the options it
    declares (:func:`forwarded`). A provider with neither is a caller bug: :class:`TypeError`."""
    acall_tool: object = getattr(provider, "acall_tool", None)
    if callable(acall_tool):
        result: object = acall_tool(tool_name, arguments, **forwarded(provider, "acall_tool", options))
        while inspect.isawaitable(result):
            result = await result
        return result
    call_tool: object = getattr(provider, "call_tool", None)
    if not callable(call_tool):
        raise TypeError(f"tool {tool_name!r}: the provider has no call_tool or acall_tool")
    return await acall(call_tool, tool_name, arguments, **forwarded(provider, "call_tool", options))


async def aclose(resource: object) -> None:
    """Close ``resource`` from async code by the same rule: ``aclose()`` when it has one, else
    ``close()`` by :func:`acall` (a sync one in a worker thread); nothing when it has neither."""
    closer: object = getattr(resource, "aclose", None)
    if not callable(closer):
        closer = getattr(resource, "close", None)
    if callable(closer):
        await acall(closer)


# --------------------------------------------------------------------------------------------
# Text in messages: one line, and JSON pointers
# --------------------------------------------------------------------------------------------


def one_line(text: str) -> str:
    """``text`` as one visible line: every run of white space (newlines too) becomes one space and
    any other control character is shown escaped (``\\x1b``). Untrusted text (names, descriptions,
    server messages) can carry both; a message that quotes it stays one line that says what it got."""
    folded = " ".join(str(text).split())
    if folded.isprintable():  # the common case
        return folded
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in folded)


def pointer_token(part: object) -> str:
    """One RFC 6901 reference token: ``~`` as ``~0`` and ``/`` as ``~1``."""
    return str(part).replace("~", "~0").replace("/", "~1")


def pointer(parts: Iterable[object]) -> str:
    """The RFC 6901 JSON pointer of a path (keys and indexes), ``""`` for the whole document."""
    return "".join("/" + pointer_token(part) for part in parts)


def unescape_token(token: str) -> str:
    """The key or index an RFC 6901 reference token stands for (``a~1b`` -> ``a/b``)."""
    return token.replace("~1", "/").replace("~0", "~")


def pointer_tokens(text: str) -> list[str]:
    """The unescaped tokens of a JSON pointer (``"/a~1b/0"`` -> ``["a/b", "0"]``)."""
    return [unescape_token(token) for token in text.split("/")[1:]]


# --------------------------------------------------------------------------------------------
# JSON values: the name of a value's type, and strict equality


def json_type(value: object) -> str:
    """The JSON Schema name of a JSON value's type (``integer`` apart from ``number``, a bool is a
    ``boolean``), else the Python type's name: the one wording of "got ..." in messages and the
    one reading of a value's type against a schema's ``type``."""
    if value is None:
        return "null"
    for kind, name in _JSON_TYPE_NAMES:
        if isinstance(value, kind):
            return name
    return type(value).__name__


_JSON_TYPE_NAMES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),  # before int: a bool is an int to Python
    (str, "string"),
    (int, "integer"),
    (float, "number"),
    (list, "array"),
    (tuple, "array"),
    (Mapping, "object"),
)


def json_equal(left: object, right: object) -> bool:
    """JSON equality that tells ``1`` from ``true`` and from ``1.0`` (``==`` does not), at every
    depth; an object's keys in any order."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        a, b = cast("dict[object, object]", left), cast("dict[object, object]", right)
        return a.keys() == b.keys() and all(json_equal(a[key], b[key]) for key in a)
    if isinstance(left, list | tuple):
        x, y = cast("Sequence[object]", left), cast("Sequence[object]", right)
        return len(x) == len(y) and all(json_equal(i, j) for i, j in zip(x, y, strict=True))
    return bool(left == right)


# --------------------------------------------------------------------------------------------
# Behaviour hints in words

#: Each behaviour hint (a contract hint key), worded when true and when false: the one wording of
#: a method's docstring (``Hints: ...``), of code mode's summary line and of ``ToolInfo.hints``.
HINT_WORDS: tuple[tuple[str, str, str], ...] = (
    ("read_only", "read-only", "not read-only"),
    ("destructive", "destructive", "not destructive"),
    ("idempotent", "idempotent", "not idempotent"),
    ("open_world", "open-world", "closed-world"),
)


def hint_words(hints: Mapping[str, bool | None]) -> tuple[str, ...]:
    """The declared hints in words, in ``HINT_WORDS`` order; an undeclared (None) hint says nothing."""
    words: list[str] = []
    for key, if_true, if_false in HINT_WORDS:
        value = hints.get(key)
        if value is not None:
            words.append(if_true if value else if_false)
    return tuple(words)


def is_destructive(read_only: bool | None, destructive: bool | None) -> bool:
    """MCP's defaults: a tool is destructive unless it says it is read-only or not destructive. The
    one rule of who asks first: a generated package's ``confirm`` and the framework adapters'
    approval (``mas/runtime/frameworks``)."""
    if destructive is not None:
        return destructive and read_only is not True
    return read_only is not True


def retry_safe(read_only: bool | None, idempotent: bool | None, destructive: bool | None) -> bool:
    """Only a tool that says it is both read-only and idempotent may run twice: a generated
    package's ``retries`` and the framework adapters' retry of a transient failure."""
    return read_only is True and idempotent is True and destructive is not True


# --------------------------------------------------------------------------------------------
# Input rounds


def input_requests(envelope: Mapping[str, Any]) -> tuple[list[tuple[str, str, dict[str, Any]]], str | None] | None:
    """The requests (``key``, MCP ``method``, ``params`` with wire keys) and the state of an
    ``input_required`` envelope (dict form); None for any other envelope. The one reading of an
    input round: a generated package's ``input_round`` and the framework adapters'."""
    if envelope.get("result_type") != "input_required" or envelope.get("is_error"):
        return None
    result: object = envelope.get("result")
    wire: Mapping[str, object] = cast("Mapping[str, object]", result) if isinstance(result, Mapping) else {}
    raw_requests: object = wire.get("inputRequests") or {}
    requests: list[tuple[str, str, dict[str, Any]]] = []
    if isinstance(raw_requests, Mapping):
        for key, request in cast("Mapping[str, object]", raw_requests).items():
            body: Mapping[str, object] = cast("Mapping[str, object]", request) if isinstance(request, Mapping) else {}
            method = body.get("method")
            params = body.get("params")
            method_name = method if isinstance(method, str) else ""
            requests.append((str(key), method_name, dict(cast("Mapping[str, Any]", params or {}))))
    state = wire.get("requestState")
    if not requests and not isinstance(state, str):
        return None  # MCP requires one of the two: without either there is nothing to answer
    return requests, state if isinstance(state, str) else None
