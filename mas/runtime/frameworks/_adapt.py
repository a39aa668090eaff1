"""What every framework adapter shares, and no framework is imported here: which tools a model is
given (filtering), under which names, and what one call comes to (``docs/frameworks.md``).

Every call goes through the provider's one ``call_tool(name, arguments)`` path (``acall_tool``
when it has one, by the contract's dispatch rule), so pinning, secret blanking, timeouts and the
typed failure kinds of the registry hold unchanged. An adapter only decides what the framework
sees: a value, a retry, a tool error, an approval to ask, or an input round to answer.
"""

from __future__ import annotations

import asyncio
import fnmatch
import hashlib
import inspect
import json
import re
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, cast

from mas.runtime.contracts._rules import input_requests, is_destructive, joined_text, one_line, retry_safe
from mas.runtime.contracts.tool_contract import (
    ToolResultEnvelope,
    ainvoke_call_tool,
    either_set,
    entry_hints,
    invoke_call_tool,
    validate_arguments,
)

__all__ = [
    "MAX_INPUT_ROUNDS",
    "MAX_NAME_LENGTH",
    "RETRY_KINDS",
    "AgentTool",
    "CodeTool",
    "InputHandler",
    "InputRequest",
    "Outcome",
    "ProgressHandler",
    "Typed",
    "call",
    "code_tools",
    "select_tools",
]

#: The longest tool name every framework here (and the model APIs behind them) accepts: OpenAI's
#: function names are ``^[a-zA-Z0-9_-]{1,64}$``; pydantic-ai and LangChain pass names through.
MAX_NAME_LENGTH = 64
#: Input rounds one call may take (the generated package's ``MAX_INPUT_ROUNDS``).
MAX_INPUT_ROUNDS = 8
#: Failure kinds worth a model retry when the tool is safe to send again (read-only and idempotent):
#: the generated package's ``retries`` rule. ``invalid_arguments`` is always a retry: nothing ran,
#: and the model can fix its arguments.
RETRY_KINDS = frozenset({"timeout", "unavailable"})
_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class InputRequest:
    """One request of an MCP ``input_required`` round; answer it under ``key``.

    ``method`` is the MCP method (``elicitation/create``, ``sampling/createMessage``,
    ``roots/list``) and ``params`` its parameters with the wire keys: the generated package's
    ``InputRequest`` shape, so one ``on_input`` answers both."""

    key: str
    method: str
    params: dict[str, Any]


#: Answers an input round: gets the requests, returns ``{key: response}`` (or an awaitable of it).
InputHandler = Callable[[list[InputRequest]], "Mapping[str, Any] | Awaitable[Mapping[str, Any]]"]
#: Hears each progress update of a call: ``on_progress(tool, progress, total, message)``, ``tool``
#: the wire name (``run_code`` for code mode). A sync one is called from the thread the update
#: arrives on; an ``async def`` one runs on the loop that awaits the call.
ProgressHandler = Callable[[str, float, "float | None", "str | None"], Any]


def _relay(on_progress: ProgressHandler, name: str) -> Callable[..., Any]:
    """The contract's ``progress_callback(progress, total, message)`` for one call, naming its tool."""
    if inspect.iscoroutinefunction(on_progress):

        async def relay_async(progress: float, total: float | None = None, message: str | None = None) -> None:
            await on_progress(name, progress, total, message)

        return relay_async

    def relay(progress: float, total: float | None = None, message: str | None = None) -> None:
        on_progress(name, progress, total, message)

    return relay


@dataclass(frozen=True)
class AgentTool:
    """One tool as a framework is given it.

    ``name`` is the framework's name for it (the wire name, made to fit the frameworks' rules:
    see :func:`select_tools`); ``wire_name`` is what ``call_tool`` receives. ``input_schema`` and
    ``description`` are the listing's, unchanged; ``output_schema`` is the tool's (or, given a
    package, its output model's when the server declares none: an inferred one), or None.
    ``typed`` is the generated package's reading of its results, when a package was given and
    has the tool."""

    name: str
    wire_name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    title: str | None = None
    source: str | None = None
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None
    typed: Typed | None = field(default=None, repr=False, compare=False)

    @property
    def needs_approval(self) -> bool:
        """MCP's defaults, the generated package's ``confirm`` rule (``_rules.is_destructive``): a
        tool is destructive unless it says it is read-only or not destructive."""
        return is_destructive(self.read_only, self.destructive)

    @property
    def retry_safe(self) -> bool:
        """Only a tool that says it is both read-only and idempotent may run twice (``_rules.retry_safe``)."""
        return retry_safe(self.read_only, self.idempotent, self.destructive)

    def retryable(self, kind: str | None) -> bool:
        """Whether a failure of ``kind`` becomes the framework's retry rather than a tool error."""
        return kind == "invalid_arguments" or (kind in RETRY_KINDS and self.retry_safe)

    @property
    def hints(self) -> dict[str, bool]:
        """The declared hints (those that are set), by the contract's keys."""
        found = {
            "read_only": self.read_only,
            "destructive": self.destructive,
            "idempotent": self.idempotent,
            "open_world": self.open_world,
        }
        return {key: value for key, value in found.items() if value is not None}


@dataclass(frozen=True)
class Outcome:
    """What one call came to: a value, a failure (``kind``), or an input round nobody answered."""

    value: Any = None
    structured: Any = None
    text: str = ""
    kind: str | None = None
    input_requests: list[InputRequest] = field(default_factory=list[InputRequest])
    request_state: str | None = None
    typed: bool = False
    """``value`` is what the generated package's method would return (its output model, validated)."""

    @property
    def ok(self) -> bool:
        return self.kind is None and not self.needs_input

    @property
    def needs_input(self) -> bool:
        return self.kind is None and (bool(self.input_requests) or self.request_state is not None)

    @property
    def message(self) -> str:
        """The failure as the model reads it: ``<kind>: <what the tool said>``."""
        return f"{self.kind}: {self.text}" if self.kind is not None else self.text

    def told(self, *, retryable: bool) -> str:
        """The failure, or the unanswered input round, as the text a framework without a retry or
        a way to ask a person gives the model: a retryable failure (but for arguments, which the
        model fixes anyway) says the call may pass when sent again."""
        if self.needs_input:
            asked = ", ".join(f"{r.key} ({r.method})" for r in self.input_requests) or "state only"
            return f"input_required: the tool needs input nobody here can give: {asked}"
        again = " (the call may succeed if sent again)" if retryable and self.kind != "invalid_arguments" else ""
        return self.message + again

    def model_text(self) -> str:
        """A successful value as the model reads it: the structured value, a typed value (as the
        package's plain data: wire keys) or any value that is not text as JSON, else the text."""
        if self.structured is not None or not isinstance(self.value, str):
            from mas.runtime.code_mode.core import plain_value

            return json.dumps(plain_value(self.value), ensure_ascii=False, default=str)
        return self.value

    @property
    def artifact(self) -> Any:
        """What a program keeps beside the model's text: the typed value, else the structured content."""
        return self.value if self.typed else self.structured


# --- the generated package's reading of results -------------------------------------------------


@dataclass(frozen=True)
class Typed:
    """One tool's results as the generated package reads them: ``decode`` is its runtime's
    ``decode_result`` (what every generated method calls) and ``info`` the tool's ``ToolInfo``;
    ``error`` is the package's ``ToolError``, ``untyped`` its ``ToolOutput`` (a value the package
    could not type, handed over as before)."""

    info: Any
    decode: Callable[[Any, Any], Any]
    error: type[BaseException]
    untyped: type

    def output_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of the output model's data (wire keys), or None for an untyped tool."""
        model = self.info.output_model
        if model is None:
            return None
        schema: dict[str, Any] = model.model_json_schema(mode="serialization", by_alias=True)
        return schema

    def read(self, envelope: ToolResultEnvelope) -> Outcome:
        """A successful envelope decoded by the package: its typed value, or ``invalid_output``
        (the kind the package's ``ToolOutputValidationError`` carries) when it does not fit."""
        try:
            value = self.decode(self.info, envelope).value
        except self.error as exc:
            kind = getattr(exc, "kind", None)
            return Outcome(text=one_line(str(exc)), kind=kind if isinstance(kind, str) else "invalid_output")
        value_, structured, text = _value(envelope)
        if isinstance(value, self.untyped):
            return Outcome(value=value_, structured=structured, text=text)
        return Outcome(value=value, structured=structured, text=text, typed=True)


def typed_results(package: str | ModuleType) -> dict[str, Typed]:
    """The package's tools by wire name, each with the package's own decoding (``Typed``)."""
    import importlib

    module = importlib.import_module(package) if isinstance(package, str) else package
    runtime = importlib.import_module(f"{module.__name__}._runtime")
    decode, error, untyped = runtime.decode_result, module.ToolError, module.ToolOutput
    return {wire: Typed(info, decode, error, untyped) for wire, info in module.TOOLS.items()}


def _typed(found: Mapping[str, Typed], wire: str, source: str | None) -> Typed | None:
    """The package's tool for a listed wire name: by the name, or by ``<source>.<name>`` (the
    qualified name a package calls a dotted name by, routing.py)."""
    from mas.runtime.routing import qualified

    hit = found.get(wire)
    if hit is None and source is not None:
        hit = found.get(qualified(source, wire))
    return hit


# --- which tools, under which names ------------------------------------------------------------


def _source(provider: Any, wire_name: str) -> str | None:
    owner = getattr(provider, "owner_of", None)
    if callable(owner):
        found = owner(wire_name)
        return found if isinstance(found, str) else None
    name = getattr(provider, "name", None)
    return name if isinstance(name, str) and name else None


def _matches(patterns: Iterable[str], tool: AgentTool) -> bool:
    keys = [tool.wire_name]
    if tool.source is not None:
        keys.append(f"{tool.source}.{tool.wire_name}")
        keys.append(f"{tool.source}:{tool.wire_name}")
    return any(fnmatch.fnmatchcase(key, pattern) for pattern in patterns for key in keys)


def _patterns(value: str | Iterable[str] | None, option: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    found = (value,) if isinstance(value, str) else tuple(value)
    for pattern in found:
        if not isinstance(pattern, str):
            raise TypeError(f"{option}= takes name patterns (str), not {type(pattern).__name__}")
    return found


def framework_names(wire_names: list[str]) -> list[str]:
    """Each wire name as a name every framework accepts, in order, unique and stable.

    A name that fits (``[A-Za-z0-9_-]``, at most :data:`MAX_NAME_LENGTH` characters) is kept as is.
    Otherwise each other character becomes ``_``; when that is too long or meets another tool's
    name, it is cut and ends in ``_`` and 8 hex digits of the wire name's SHA-256, so it depends on
    the wire name alone (a name that fits is never the one renamed).
    """
    fitted = [_NOT_NAME.sub("_", wire) or "tool" for wire in wire_names]
    taken = {wire for wire, fit in zip(wire_names, fitted, strict=True) if wire == fit and len(fit) <= MAX_NAME_LENGTH}
    out: list[str] = []
    seen: set[str] = set()
    for wire, fit in zip(wire_names, fitted, strict=True):
        if fit != wire or len(fit) > MAX_NAME_LENGTH:
            if len(fit) > MAX_NAME_LENGTH or fit in taken or fit in seen:
                digest = hashlib.sha256(wire.encode("utf-8")).hexdigest()[:8]
                fit = f"{fit[: MAX_NAME_LENGTH - 9]}_{digest}"
        seen.add(fit)
        out.append(fit)
    return out


def select_tools(
    provider: Any,
    *,
    include: str | Iterable[str] | None = None,
    exclude: str | Iterable[str] | None = None,
    read_only: bool = False,
    destructive: bool = True,
    package: str | ModuleType | None = None,
) -> list[AgentTool]:
    """The tools of ``provider`` (its ``list_tools()``, in order) a model is given.

    ``include``/``exclude``: glob patterns (``fnmatch``, case-sensitive) matched against a tool's
    wire name and against ``<source>.<wire name>`` (the source is the registry's provider: an infra
    server's name, ``skills`` or ``local``): ``"sample.*"`` is every tool of the server ``sample``,
    ``"notes.*"`` every tool whose name starts ``notes.``. A tool is kept when ``include`` is None
    or one of its patterns matches, and none of ``exclude`` matches. ``read_only=True`` keeps only
    tools that say they are read-only; ``destructive=False`` drops every tool that would need
    approval (:attr:`AgentTool.needs_approval`, MCP's defaults). With the generated ``package``,
    each tool it has reads its results through the package's output model (``AgentTool.typed``).
    """
    listing = provider.list_tools()
    found = typed_results(package) if package is not None else {}
    kept_in = _patterns(include, "include")
    kept_out = _patterns(exclude, "exclude") or ()
    entries: list[Mapping[str, Any]] = [e for e in listing if isinstance(e, Mapping) and isinstance(e.get("name"), str)]
    names = framework_names([str(e["name"]) for e in entries])
    tools: list[AgentTool] = []
    for entry, name in zip(entries, names, strict=True):
        wire = str(entry["name"])
        schema = entry.get("parameters", entry.get("inputSchema"))
        output = entry.get("output_schema", entry.get("outputSchema"))
        title = entry.get("title")
        source = _source(provider, wire)
        typed = _typed(found, wire, source)
        declared = dict(output) if isinstance(output, Mapping) else None
        tool = AgentTool(
            name=name,
            wire_name=wire,
            description=str(entry.get("description") or ""),
            input_schema=dict(schema) if isinstance(schema, Mapping) else {"type": "object", "properties": {}},
            output_schema=declared if declared is not None or typed is None else typed.output_schema(),
            title=title if isinstance(title, str) else None,
            source=source,
            **entry_hints(entry),
            typed=typed,
        )
        if kept_in is not None and not _matches(kept_in, tool):
            continue
        if _matches(kept_out, tool):
            continue
        if read_only and tool.read_only is not True:
            continue
        if not destructive and tool.needs_approval:
            continue
        tools.append(tool)
    return tools


# --- one call ----------------------------------------------------------------------------------


def _input_round(envelope: ToolResultEnvelope) -> tuple[list[InputRequest], str | None] | None:
    """The requests and state of an ``input_required`` envelope (``_rules.input_requests``)."""
    found = input_requests(envelope.to_dict())
    if found is None:
        return None
    requests, state = found
    return [InputRequest(key, method, params) for key, method, params in requests], state


def _value(envelope: ToolResultEnvelope) -> tuple[Any, Any, str]:
    """The value a model is given (structured content, else the text, else the plain result), the
    structured content, and the text."""
    joined = joined_text(list(envelope.content or ()))
    text = joined or ""
    if envelope.structured_content is not None:
        return envelope.structured_content, envelope.structured_content, text
    if joined is not None or envelope.result is None or isinstance(envelope.result, str):
        return text or envelope.text, None, text or envelope.text
    return envelope.result, None, envelope.text


def _outcome(envelope: ToolResultEnvelope, typed: Typed | None = None) -> Outcome:
    pending = _input_round(envelope)
    if pending is not None:
        return Outcome(input_requests=pending[0], request_state=pending[1])
    if envelope.is_error:
        kind = envelope.error_kind or "tool_error"
        return Outcome(text=envelope.text or "the tool reported an error", kind=kind)
    if typed is not None:
        return typed.read(envelope)
    value, structured, text = _value(envelope)
    return Outcome(value=value, structured=structured, text=text)


async def call(
    provider: Any,
    tool: AgentTool,
    arguments: Mapping[str, Any],
    *,
    on_input: InputHandler | None = None,
    input_responses: Mapping[str, Any] | None = None,
    request_state: str | None = None,
    timeout_seconds: float | None = None,
    cancel_event: Any = None,
    on_progress: ProgressHandler | None = None,
) -> Outcome:
    """Call ``tool`` with ``arguments`` through ``provider``'s one ``call_tool`` path.

    Arguments that do not match the tool's input schema are refused here (``invalid_arguments``,
    nothing sent: the contract's ``validate_arguments``). An input round is answered by
    ``on_input`` and sent again (at most :data:`MAX_INPUT_ROUNDS`); without it the outcome carries
    the requests, and the caller sends ``input_responses`` and ``request_state`` in a new call.
    ``timeout_seconds`` is the contract's call option (each send's limit; a tool the server runs as
    a task is followed through the runtime's task path until then, and cancelled there past it).
    The contract's ``cancel_event`` is the call's own, set when the awaiting task is cancelled (a
    framework's run cancelled), or the caller's ``cancel_event`` is: the call stops at once (an
    MCP request or task is cancelled on the server). ``on_progress`` hears the call's progress.
    """
    problem = validate_arguments(tool.input_schema, arguments)
    if problem is not None:
        return Outcome(text=f"invalid arguments for tool {tool.wire_name!r}: {problem}", kind="invalid_arguments")
    own = threading.Event()
    options: dict[str, Any] = {"cancel_event": either_set(own, cancel_event)}
    if on_progress is not None:
        options["progress_callback"] = _relay(on_progress, tool.wire_name)
    if timeout_seconds is not None:
        options["timeout_seconds"] = timeout_seconds
    if input_responses is not None:
        options["input_responses"] = dict(input_responses)
    if request_state is not None:
        options["request_state"] = request_state
    rounds = 0
    while True:
        try:
            # Not copied here: the provider copies them where it must (acall_with_options, MCPToolProvider).
            raw = await ainvoke_call_tool(provider, tool.wire_name, arguments, **options)
        except asyncio.CancelledError:  # the framework's run was cancelled: so is the call
            own.set()
            raise
        except Exception as exc:  # a provider that raised: a tool error never crashes the agent
            return Outcome(text=one_line(f"{type(exc).__name__}: {exc}"), kind="tool_error")
        outcome = _outcome(ToolResultEnvelope.coerce(raw), tool.typed)
        if not outcome.needs_input or on_input is None:
            return outcome
        rounds += 1
        if rounds > MAX_INPUT_ROUNDS:
            return Outcome(text=f"still input_required after {MAX_INPUT_ROUNDS} input rounds", kind="protocol")
        answer = on_input(list(outcome.input_requests))
        responses = await answer if inspect.isawaitable(answer) else answer
        if not isinstance(responses, Mapping):
            raise TypeError(f"on_input must return a dict of responses by request key, not {type(responses).__name__}")
        options["input_responses"] = dict(responses)
        options["request_state"] = outcome.request_state


# --- code mode as one tool ---------------------------------------------------------------------


def _addresses(tools: Iterable[AgentTool]) -> frozenset[str]:
    """The names the selected tools answer to: the wire name, and ``<source>.<wire name>`` (the
    registry's qualified name, which a generated package calls for a dotted name: routing.py)."""
    from mas.runtime.routing import qualified

    names = {tool.wire_name for tool in tools}
    names |= {qualified(tool.source, tool.wire_name) for tool in tools if tool.source is not None}
    return frozenset(names)


class _Selected:
    """The provider as code mode sees it: only the selected tools answer; any other is refused
    (``unknown_tool``) before anything is sent."""

    def __init__(self, provider: Any, allowed: frozenset[str]) -> None:
        self._provider = provider
        self._allowed = allowed

    def call_tool(self, tool_name: str, arguments: dict[str, Any], **kwargs: Any) -> Any:
        if tool_name not in self._allowed:
            return ToolResultEnvelope.failure(
                f"tool {tool_name!r} is not among the tools given to this agent", kind="unknown_tool"
            )
        return invoke_call_tool(self._provider, tool_name, arguments, **kwargs)


#: The MCP face's discovery tools, given beside run_code when the API is too large for its description.
DISCOVERY_TOOLS = ("search_tools", "list_functions", "get_stubs")


@dataclass(frozen=True)
class CodeTool:
    """One code-mode tool, the MCP face's own (``docs/code-mode.md``, ``code_mode/server.py``): its
    name, description and input schema. ``run_code``, and the discovery tools (``search_tools``,
    ``list_functions``, ``get_stubs``) when the API is too large to go whole into ``run_code``'s
    description, which then names them. The API, the description and the discovery tools show
    only the selected tools (``CodeMode(reachable=...)``).

    ``needs_approval`` (``run_code`` only) is True when any selected tool needs approval: the person
    approves the snippet, which may call it. :meth:`run` gives the outcome of one call (the MCP
    face's own dispatch, ``server.call_code_tool``): the model reads the MCP face's reply text;
    for ``run_code``, ``structured`` has the value, the output, the calls and the error for the
    program. Arguments that do not match the schema, or a snippet that does not type-check, are
    ``invalid_arguments`` (the model fixes them; nothing ran); a run that stopped is ``tool_error``
    (``cancelled`` when ``cancel_event`` stopped it)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    needs_approval: bool
    _mode: Any = field(repr=False)

    async def run(
        self,
        arguments: Mapping[str, Any],
        *,
        cancel_event: Any = None,
        on_progress: ProgressHandler | None = None,
        timeout_seconds: float | None = None,
    ) -> Outcome:
        """One call. ``cancel_event`` (anything with ``is_set()``) stops a run at once, as does
        cancelling the awaiting task; ``on_progress("run_code", count, None, message)`` hears each
        progress update of the run's tool calls; ``timeout_seconds`` is the run's limit (else code
        mode's default)."""
        from mas.runtime.code_mode import server

        problem = validate_arguments(self.input_schema, arguments)
        if problem is not None:
            return Outcome(text=f"invalid arguments for tool {self.name!r}: {problem}", kind="invalid_arguments")
        limits: dict[str, Any] = {} if timeout_seconds is None else {"timeout_seconds": timeout_seconds}
        progress = None
        if on_progress is not None and self.name == "run_code":
            progress = _run_progress(on_progress, asyncio.get_running_loop())
        reply = await server.call_code_tool(
            self._mode, self.name, arguments, cancel_event=cancel_event, progress_callback=progress, **limits
        )
        result = reply.result
        text = "\n".join(getattr(block, "text", "") for block in result.content)
        structured = dict(result.structured_content or {})
        if reply.run is not None:
            structured = {"value": reply.run.value, "output": reply.run.output, **structured}
        if not result.is_error:
            return Outcome(value=text, structured=structured or None, text=text)
        error = structured.get("error")
        kind = error.get("kind") if isinstance(error, Mapping) else "invalid_arguments"  # discovery: arguments only
        if kind in ("check", "invalid_arguments"):
            return Outcome(text=text, kind="invalid_arguments", structured=structured or None)
        return Outcome(text=text, kind="cancelled" if kind == "cancelled" else "tool_error", structured=structured)


def _run_progress(on_progress: ProgressHandler, loop: asyncio.AbstractEventLoop) -> Callable[[int, str], None]:
    """Code mode's ``progress_callback(count, message)`` (called from the run's threads) as
    ``on_progress("run_code", count, None, message)``; an async one runs on ``loop``."""
    relay = _relay(on_progress, "run_code")

    def progress(count: int, message: str) -> None:
        result = relay(float(count), None, message)
        if inspect.isawaitable(result):
            asyncio.run_coroutine_threadsafe(cast("Coroutine[Any, Any, None]", result), loop)

    return progress


def code_tools(provider: Any, package: str | ModuleType | None, tools: list[AgentTool]) -> list[CodeTool]:
    """Code mode over ``tools`` (the selection) of the generated ``package``: ``run_code``, and the
    discovery tools when the API of the selected tools is longer than the MCP face's
    ``WHOLE_API_MAX_CHARS``. The package's functions of tools the selection left out are not in
    the API, the descriptions or the discovery tools' answers, and are refused if called."""
    if package is None:
        raise TypeError("code_mode=True needs package= (the generated package: its import name or module)")
    from mas.runtime.code_mode import CodeMode, server

    allowed = _addresses(tools)
    mode = CodeMode(_Selected(provider, allowed), package=package, reachable=allowed.__contains__)
    listed = {tool.name: tool for tool in server.code_mode_tools(mode)}
    names = ["run_code"]
    if len(mode.api()) > server.WHOLE_API_MAX_CHARS:
        names += [name for name in DISCOVERY_TOOLS if name in listed]
    return [
        CodeTool(
            name=name,
            description=listed[name].description or "",
            input_schema=dict(listed[name].input_schema),
            needs_approval=name == "run_code" and any(t.needs_approval for t in tools),
            _mode=mode,
        )
        for name in names
    ]
