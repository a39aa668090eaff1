"""The test kit's engine: ``FakeTools``, a ToolContract provider that answers as the package's tools.

A generated package's ``testing`` module (``<package>.testing``) subclasses :class:`FakeToolsBase`
with one typed :class:`ToolHandle` per tool at the place of its method (``fake.<source>.<tool>``),
and hands it the tools exactly as they were generated from (the lock's listings, the output schemas,
the newest recorded result of each tool: ``_testing_data.py`` beside this package). Nothing here is
imported by ``import <package>``; ``jsonschema`` (every answer is checked against the tool's output
schema) and ``polyfactory`` (an example answer for a tool with neither a setter nor a recorded result)
are imported on first use.

Every answer, whatever its source (``returns``, ``answers``, a recorded result, an example), is
checked against the tool's output schema before it is returned: a fake that no longer fits the tools
raises :class:`FakeToolsError` naming the tool and the JSON pointer. ``FakeToolsError`` is an
``AssertionError``, never a ``ToolError``: agent code that catches ``ToolError`` cannot swallow it,
and a failure that a caller did swallow (a registry turns a provider's exception into an error
envelope) is kept in :attr:`FakeToolsBase.failures` and raised again by :meth:`FakeToolsBase.check`.
"""

from __future__ import annotations

import copy
import importlib
import json
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, Self, TypeVar, cast

from .. import _rules
from ._errors import ERRORS_BY_KIND, ToolFailedError
from ._task import TASK_CANCEL_PREFIX, TASK_PREFIX
from ._text import one_line

if TYPE_CHECKING:
    from ._info import ToolInfo

__all__ = [
    "CASSETTE_VERSION",
    "FAILURE_KINDS",
    "TASK_STATES",
    "Ask",
    "Behaviour",
    "Call",
    "CallList",
    "FailureKind",
    "FakeSource",
    "FakeToolsBase",
    "FakeToolsError",
    "Recorder",
    "TaskState",
    "ToolHandle",
    "cassette_problem",
    "first_difference",
    "read_cassette",
    "schema_problem",
]

A = TypeVar("A")  # a tool's arguments: its input TypedDict
T = TypeVar("T")  # a tool's value: its method's return type

#: The failure kinds ``fails`` takes: the contract's, each raising its ``ToolFailedError`` subclass.
FailureKind = Literal[
    "tool_error", "invalid_arguments", "unknown_tool", "timeout", "cancelled", "unavailable", "protocol"
]
FAILURE_KINDS: tuple[str, ...] = _rules.ERROR_KINDS
#: The states a task passes through (docs/tasks.md); the last of ``runs_as_task(states=...)`` ends it.
TaskState = Literal["working", "input_required", "completed", "failed", "cancelled"]
TASK_STATES: tuple[str, ...] = ("working", "input_required", "completed", "failed", "cancelled")
_ENDS = ("completed", "failed", "cancelled")
#: The cassette format ``Recorder`` writes and ``FakeToolsBase.replay`` reads.
CASSETTE_VERSION = 1
#: The ``request_state`` of a fake's input round: the call it belongs to and the round.
_ROUND_PREFIX = "toolgen-fake-round:"
_TASK_ID_PREFIX = "fake-task-"


class FakeToolsError(AssertionError):
    """A fake that does not fit the tools, or a call the test did not set up: the test fails.

    An ``AssertionError``, so ``except ToolError`` in agent code never catches it, and pytest shows
    it as a failed assertion. ``tool`` is the wire name (None when no one tool is concerned),
    ``pointer`` the JSON pointer where an answer first departs from the output schema (or "")."""

    def __init__(self, message: str, *, tool: str | None = None, pointer: str = "") -> None:
        super().__init__(message)
        self.tool = tool
        self.pointer = pointer


# --------------------------------------------------------------------------------------------
# Calls, and the one-line assertion
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call(Generic[A]):
    """One call the fake received: the wire name, the arguments as sent (the tool's input TypedDict),
    the contract options given with it, and the answers ``on_input`` gave to its input rounds."""

    tool: str
    arguments: A
    options: Mapping[str, Any] = field(default_factory=dict[str, Any])
    input_responses: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])


def first_difference(expected: object, actual: object, at: str = "") -> str | None:
    """Where ``actual`` first departs from ``expected`` (JSON values), as ``<pointer>: expected X,
    got Y``; None when they are equal."""
    want, got = _mapping(expected), _mapping(actual)
    if want is not None and got is not None:
        for key in sorted(set(want) | set(got), key=str):
            where = f"{at}/{_rules.pointer_token(key)}"
            if key not in got:
                return f"{where}: missing (expected {_shown(want[key])})"
            if key not in want:
                return f"{where}: not expected (got {_shown(got[key])})"
            found = first_difference(want[key], got[key], where)
            if found is not None:
                return found
        return None
    want_list, got_list = _items(expected), _items(actual)
    if want_list is not None and got_list is not None:
        for index, (w, g) in enumerate(zip(want_list, got_list, strict=False)):
            found = first_difference(w, g, f"{at}/{index}")
            if found is not None:
                return found
        if len(want_list) != len(got_list):
            return f"{at or '/'}: expected {len(want_list)} item(s), got {len(got_list)}"
        return None
    if not _rules.json_equal(expected, actual):
        return f"{at or '/'}: expected {_shown(expected)}, got {_shown(actual)}"
    return None


# Functions, not inline isinstance checks: narrowing an ``object`` to a Mapping of unknown types
# would make strict pyright flag every later use of it.
def _mapping(value: object) -> Mapping[str, object] | None:
    return cast("Mapping[str, object]", value) if isinstance(value, Mapping) else None


def _items(value: object) -> list[object] | None:
    return cast("list[object]", value) if isinstance(value, list) else None


def _shown(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr, sort_keys=True)
    return one_line(text if len(text) <= 80 else text[:77] + "...")


class CallList(list[Call[A]]):
    """The calls of one tool (or of all tools), in order, with one-line assertions."""

    def assert_calls(self, *expected: A) -> None:
        """The calls had exactly these arguments, in this order; else one line naming the first
        difference (``get_weather: call 2 of 3: /city: expected 'Berlin', got 'Osaka'``)."""
        __tracebackhide__ = True
        for index, (want, call) in enumerate(zip(expected, self, strict=False), start=1):
            found = first_difference(want, call.arguments)
            if found is not None:
                raise FakeToolsError(
                    f"{call.tool}: call {index} of {len(self)}: {found}", tool=call.tool, pointer=found.split(":")[0]
                )
        if len(expected) != len(self):
            tools = sorted({c.tool for c in self})
            name = tools[0] if len(tools) == 1 else "calls"
            raise FakeToolsError(f"{name}: expected {len(expected)} call(s), got {len(self)}")

    def assert_called_once_with(self, arguments: A) -> None:
        """Exactly one call, with these arguments."""
        __tracebackhide__ = True
        self.assert_calls(arguments)


# --------------------------------------------------------------------------------------------
# One tool's behaviour
# --------------------------------------------------------------------------------------------


@dataclass
class Ask:
    """One input round ``asks`` set: the question put to ``on_input``."""

    message: str
    schema: Mapping[str, Any] | None
    method: str


@dataclass
class _Task:
    """A started task: the call that started it and the states still to pass through."""

    task_id: str
    call: Call[Any]
    states: list[str]
    state: str


@dataclass
class Behaviour:
    """What one tool was set to do (a handle's ``behaviour``): its answer (None: the default), the
    questions it asks first, and the task states it passes through (None: it answers inline)."""

    answer: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    asks: list[Ask] = field(default_factory=list["Ask"])
    task_states: tuple[str, ...] | None = None


class ToolHandle(Generic[A, T]):
    """What the fake does when one tool is called. ``A`` is the tool's input TypedDict, ``T`` its
    method's return type, so a type checker rejects a ``returns`` of the wrong type and an
    ``answers`` function that takes the wrong arguments. Every setter returns the handle."""

    def __init__(self, fake: FakeToolsBase, info: ToolInfo[T]) -> None:
        self._fake = fake
        self._info = info
        #: What the tool was set to do.
        self.behaviour = Behaviour()
        self.calls: CallList[A] = CallList()

    @property
    def tool(self) -> str:
        """The wire name ``call_tool`` receives."""
        return self._info.name

    def __repr__(self) -> str:
        return f"ToolHandle({self._info.name!r}, calls={len(self.calls)})"

    def returns(self, value: T) -> Self:
        """Answer every call with ``value`` (checked against the tool's output schema now)."""
        __tracebackhide__ = True  # pytest shows the test's line, not the kit's
        envelope = self._fake.envelope_for(self._info, value)
        self.behaviour.answer = lambda arguments: envelope
        return self

    def answers(self, fn: Callable[[A], T]) -> Self:
        """Answer each call with ``fn(arguments)``; ``fn`` may raise one of the package's
        ``ToolFailedError`` classes, which the caller then gets as from a real failure."""

        def answer(arguments: dict[str, Any]) -> dict[str, Any]:
            __tracebackhide__ = True
            try:
                value = fn(cast("A", arguments))
            except ToolFailedError as exc:  # the class says the kind when its envelope does not
                return _rules.failure_dict(exc.message, type(exc).kind if exc.kind == "tool_error" else exc.kind)
            return self._fake.envelope_for(self._info, value)

        self.behaviour.answer = answer
        return self

    def fails(self, kind: FailureKind, message: str | None = None) -> Self:
        """Fail every call with ``kind``: the method raises that kind's ``ToolFailedError`` subclass."""
        if kind not in ERRORS_BY_KIND:
            raise TypeError(f"fails: kind must be one of {', '.join(FAILURE_KINDS)}, not {kind!r}")
        envelope = _rules.failure_dict(message or f"{kind} (fake)", kind)
        self.behaviour.answer = lambda arguments: envelope
        return self

    def asks(
        self, message: str, schema: Mapping[str, Any] | None = None, *, method: str = "elicitation/create"
    ) -> Self:
        """Before answering, put a question to the caller (an ``input_required`` round: the
        package's ``on_input`` gets an ``ElicitationRequest``); each ``asks`` adds one round. The
        answers are kept on the call (``calls[i].input_responses``)."""
        self.behaviour.asks.append(Ask(message, dict(schema) if schema is not None else None, method))
        return self

    def runs_as_task(self, states: Sequence[TaskState] = ("working", "completed")) -> Self:
        """Run each call as a task that passes through ``states`` (one per status request; the last
        ends it: ``completed``, ``failed`` or ``cancelled``). ``tools.tasks.<source>.<tool>(...)``
        gets its handle; a plain call waits for the end (``input_required`` on the way asks
        ``on_input``)."""
        bad = [s for s in states if s not in TASK_STATES]
        if not states or bad or states[-1] not in _ENDS:
            raise TypeError(
                f"runs_as_task: states must be some of {', '.join(TASK_STATES)} and end with one of "
                f"{', '.join(_ENDS)}, not {list(states)!r}"
            )
        self.behaviour.task_states = tuple(states)
        return self

    def reset(self) -> Self:
        """Forget what was set and the calls made."""
        self.behaviour = Behaviour()
        self.calls.clear()
        return self

    @property
    def is_set(self) -> bool:
        """Whether the test set an answer (``returns``, ``answers`` or ``fails``)."""
        return self.behaviour.answer is not None

    @property
    def info(self) -> ToolInfo[T]:
        """The tool's ``ToolInfo`` (``TOOLS[wire name]``)."""
        return self._info


# --------------------------------------------------------------------------------------------
# The fake provider
# --------------------------------------------------------------------------------------------


def _load(data: str | Mapping[str, Any]) -> dict[str, Any]:
    loaded: object = json.loads(data) if isinstance(data, str) else copy.deepcopy(dict(data))
    if not isinstance(loaded, dict):
        raise TypeError("the testing data must be a JSON object")
    return cast("dict[str, Any]", loaded)


class FakeToolsBase:
    """A ToolContract provider that answers as the package's tools, from what each handle was set
    to do. ``<package>.testing.FakeTools`` is this with the package's tools and typed handles."""

    def __init__(
        self,
        package: str,
        tools: Mapping[str, ToolInfo[Any]],
        data: str | Mapping[str, Any],
        *,
        strict: bool = False,
        seed: int = 0,
    ) -> None:
        self.package = package
        self.strict = strict
        self.seed = seed
        self._tools = tools
        self._data = _load(data)
        self._listed: dict[str, dict[str, Any]] = self._data["tools"]
        self._handles: dict[str, ToolHandle[Any, Any]] = {}
        self._rounds: dict[str, tuple[Call[Any], ToolHandle[Any, Any], int]] = {}
        self._tasks: dict[str, _Task] = {}
        self._replay: list[dict[str, Any]] | None = None
        self._replayed = 0
        self._examples: dict[str, dict[str, Any]] = {}
        #: Every call, all tools, in order.
        self.calls: CallList[Any] = CallList()
        #: Every ``FakeToolsError`` raised from a call, even one a caller swallowed (see ``check``).
        self.failures: list[FakeToolsError] = []

    # --- handles ----------------------------------------------------------------------------
    def handle(self, tool: str) -> ToolHandle[Any, Any]:
        """The handle of the tool ``tool`` (its wire name); the typed ones are ``fake.<source>.<tool>``."""
        found = self._handles.get(tool)
        if found is None:
            info = self._tools.get(tool)
            if info is None:
                raise KeyError(f"{self.package} has no tool {tool!r}")
            found = self._handles[tool] = ToolHandle(self, info)
        return found

    def check(self) -> None:
        """Raise the first ``FakeToolsError`` a call raised, also when its caller swallowed it (the
        pytest fixture calls this when the test ends)."""
        __tracebackhide__ = True
        if self.failures:
            raise self.failures[0]

    # --- the contract -------------------------------------------------------------------------
    def list_tools(self) -> list[dict[str, Any]]:
        """The package's tools, as the runtime lists them (contract entries; wire names)."""
        return [copy.deepcopy(entry["entry"]) for _, entry in sorted(self._listed.items())]

    def list_mcp_tools(self) -> list[dict[str, Any]]:
        """The tools as ``tools/list`` gave them (what the lock holds), for run-time pinning."""
        return [copy.deepcopy(entry["mcp"]) for _, entry in sorted(self._listed.items())]

    def call_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **options: Any) -> dict[str, Any]:
        """One call, answered as the handle says (the envelope in the contract's dict form)."""
        __tracebackhide__ = True
        try:
            return self._call(tool_name, dict(arguments or {}), options)
        except FakeToolsError as exc:
            self.failures.append(exc)
            raise

    async def acall_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **options: Any) -> dict[str, Any]:
        """The async twin of :meth:`call_tool` (the same answers)."""
        return self.call_tool(tool_name, arguments, **options)

    def _call(self, tool_name: str, arguments: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
        __tracebackhide__ = True
        state = options.get("request_state")
        if isinstance(state, str) and state.startswith((TASK_PREFIX, TASK_CANCEL_PREFIX)):
            return self._task_request(tool_name, state, options)
        if isinstance(state, str) and state.startswith(_ROUND_PREFIX) and state in self._rounds:
            call, handle, done = self._rounds.pop(state)
            responses: object = options.get("input_responses")
            call.input_responses.append(
                dict(cast("Mapping[str, Any]", responses)) if isinstance(responses, Mapping) else {}
            )
            return self._after_rounds(call, handle, done + 1, options)
        if self._replay is not None:
            return self._replayed_call(tool_name, arguments, options)
        if tool_name not in self._tools or tool_name not in self._listed:
            return _rules.failure_dict(f"unknown tool {tool_name!r} ({self.package} has no such tool)", "unknown_tool")
        problem = self._argument_problem(tool_name, arguments)
        if problem is not None:
            return _rules.failure_dict(f"invalid arguments for tool {tool_name!r}: {problem}", "invalid_arguments")
        handle = self.handle(tool_name)
        kept = {k: v for k, v in options.items() if k in _rules.CALL_OPTIONS and not callable(v)}
        made: Call[Any] = Call(tool_name, arguments, kept)
        handle.calls.append(made)
        self.calls.append(made)
        if self.strict and not handle.is_set:
            raise FakeToolsError(
                f"tool {tool_name!r} was called but the test set nothing for it (FakeTools(strict=True)); "
                "set it with .returns(...), .answers(...) or .fails(...)",
                tool=tool_name,
            )
        return self._after_rounds(made, handle, 0, options)

    def _after_rounds(
        self, call: Call[Any], handle: ToolHandle[Any, Any], done: int, options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The next input round of ``call``, else its answer (or its task)."""
        __tracebackhide__ = True
        if done < len(handle.behaviour.asks):
            return self._round(call, handle, done)
        if handle.behaviour.task_states is not None:
            return self._start_task(call, handle, options)
        return self._respond(handle, call)

    def _round(self, call: Call[Any], handle: ToolHandle[Any, Any], done: int) -> dict[str, Any]:
        ask = handle.behaviour.asks[done]
        state = f"{_ROUND_PREFIX}{len(self._rounds) + len(self.calls)}:{done}"
        self._rounds[state] = (call, handle, done)
        params: dict[str, Any] = {"message": ask.message}
        if ask.schema is not None:
            params["requestedSchema"] = dict(ask.schema)
        return _input_required({f"q{done + 1}": {"method": ask.method, "params": params}}, state)

    # --- tasks --------------------------------------------------------------------------------
    def _start_task(self, call: Call[Any], handle: ToolHandle[Any, Any], options: Mapping[str, Any]) -> dict[str, Any]:
        __tracebackhide__ = True
        states = list(handle.behaviour.task_states or ())
        task = _Task(f"{_TASK_ID_PREFIX}{len(self._tasks) + 1}", call, states[1:], states[0])
        self._tasks[task.task_id] = task
        if options.get("allow_claimed"):
            return _session(task)
        return self._follow(task, handle, options)

    def _task_request(self, tool_name: str, state: str, options: Mapping[str, Any]) -> dict[str, Any]:
        cancel = state.startswith(TASK_CANCEL_PREFIX)
        task_id = state.removeprefix(TASK_CANCEL_PREFIX if cancel else TASK_PREFIX)
        task = self._tasks.get(task_id)
        if task is None:
            return _rules.failure_dict(f"unknown task {task_id!r} (the fake started no such task)", "protocol")
        handle = self.handle(task.call.tool)
        if cancel:
            if task.state not in _ENDS:
                task.state, task.states = "cancelled", []
            return _session(task)
        if options.get("allow_claimed"):  # how it stands: one step further
            if task.states and task.state not in _ENDS:
                task.state = task.states.pop(0)
            return _session(task)
        return self._follow(task, handle, options)

    def _follow(self, task: _Task, handle: ToolHandle[Any, Any], options: Mapping[str, Any]) -> dict[str, Any]:
        """Follow ``task`` to its end: an ``input_required`` state on the way asks ``on_input``
        once (answered when the request comes back with ``input_responses``)."""
        __tracebackhide__ = True
        answered = options.get("input_responses") is not None
        while True:
            if task.state == "input_required":
                if not answered:
                    params = {"message": f"the task of {task.call.tool!r} needs input (fake)"}
                    request = {"q1": {"method": "elicitation/create", "params": params}}
                    return _input_required(request, TASK_PREFIX + task.task_id)
                responses: object = options.get("input_responses")
                task.call.input_responses.append(
                    dict(cast("Mapping[str, Any]", responses)) if isinstance(responses, Mapping) else {}
                )
                answered = False
            if task.state in _ENDS:
                break
            task.state = task.states.pop(0) if task.states else "completed"
        if task.state == "cancelled":
            return _rules.failure_dict(f"task {task.task_id} was cancelled", "cancelled")
        if task.state == "failed":
            return _rules.failure_dict(f"task {task.task_id} failed (fake)", "tool_error")
        envelope = dict(self._respond(handle, task.call))
        if not envelope.get("is_error"):
            envelope["execution_mode"] = "async"
            envelope["metadata"] = {**(envelope.get("metadata") or {}), "task_id": task.task_id}
        return envelope

    # --- answers --------------------------------------------------------------------------------
    def _respond(self, handle: ToolHandle[Any, Any], call: Call[Any]) -> dict[str, Any]:
        __tracebackhide__ = True
        answer = handle.behaviour.answer
        if answer is not None:
            return answer(dict(cast("Mapping[str, Any]", call.arguments)))
        return self.default_envelope(handle.info)

    def envelope_for(self, info: ToolInfo[Any], value: object) -> dict[str, Any]:
        """The envelope a server would send for ``value`` (the tool's typed value), checked against
        the tool's output schema in the lock: a value that does not fit raises ``FakeToolsError``."""
        __tracebackhide__ = True
        envelope = _envelope_of(info, value)
        self._checked(info.name, envelope, "the answer")
        return envelope

    def default_envelope(self, info: ToolInfo[Any]) -> dict[str, Any]:
        """A tool nobody set: its newest recorded result, else a schema-valid example."""
        __tracebackhide__ = True
        listed = self._listed[info.name]
        sample: object = listed.get("sample")
        if isinstance(sample, Mapping):
            envelope = _rules.to_envelope(dict(cast("Mapping[str, Any]", sample)))
            self._checked(info.name, envelope, "its newest recorded result")
            return envelope
        found = self._examples.get(info.name)
        if found is None:
            found = self._examples[info.name] = self._example(info)
        return copy.deepcopy(found)

    def _example(self, info: ToolInfo[Any]) -> dict[str, Any]:
        __tracebackhide__ = True
        model = info.output_model
        if info.output_is_text or model is None:
            return _text_envelope(f"{info.name} (fake)")
        try:
            from polyfactory.factories.pydantic_factory import ModelFactory
        except ImportError as exc:  # pragma: no cover - polyfactory comes with toolgen
            raise FakeToolsError(
                f"tool {info.name!r}: an example answer needs polyfactory (pip install polyfactory), "
                "or set the tool with .returns(...)",
                tool=info.name,
            ) from exc
        factory = ModelFactory.create_factory(model, __allow_none_optionals__=False)
        # One seed per tool: a tool's example does not depend on which tools were called before.
        factory.seed_random(zlib.crc32(f"{self.seed}:{info.name}".encode()))
        try:
            built = factory.build()
        except Exception as exc:  # polyfactory cannot build every schema: say so, and what to do
            raise FakeToolsError(
                f"tool {info.name!r}: no example answer could be built ({type(exc).__name__}: {one_line(str(exc))}); "
                "set it with .returns(...)",
                tool=info.name,
            ) from exc
        value: object = built
        if info.output_key is not None:
            value = getattr(built, info.output_key)
        elif info.output_is_root:
            value = cast(Any, built).root
        envelope = _envelope_of(info, value)
        self._checked(info.name, envelope, "the example built from its schema (set it with .returns(...))")
        return envelope

    def _checked(self, tool: str, envelope: Mapping[str, Any], what: str) -> None:
        """Raise when ``envelope`` (a success) does not fit the tool's output schema in the lock."""
        __tracebackhide__ = True
        schema: object = self._listed[tool].get("output")
        if not isinstance(schema, Mapping) or envelope.get("is_error"):
            return
        from ._decode import inferred_candidate

        candidate = inferred_candidate(envelope)
        pointer_, message = schema_problem(cast("Mapping[str, Any]", schema), candidate)
        if message is not None:
            raise FakeToolsError(
                f"tool {tool!r}: {what} does not fit the output schema of the lock at {pointer_ or '/'}: {message}",
                tool=tool,
                pointer=pointer_,
            )

    def _argument_problem(self, tool: str, arguments: Mapping[str, Any]) -> str | None:
        schema: object = self._listed[tool]["entry"].get("parameters")
        if not isinstance(schema, Mapping):
            return None
        where, message = schema_problem(cast("Mapping[str, Any]", schema), dict(arguments))
        return None if message is None else f"{where or '/'}: {message}"

    # --- sources, as their servers ------------------------------------------------------------------
    def source(self, name: str) -> FakeSource:
        """The tools of the source ``name`` alone, under the names its server gives them: a provider
        for one infra entry (``RuntimeRegistry.from_sources(infra=..., mcp_factory=lambda config:
        fake.source(config.name))``), so the registry's routing and pinning run as with the server."""
        if not any(entry["source"] == name for entry in self._data["tools"].values()):
            raise KeyError(f"{self.package} has no source {name!r}")
        return FakeSource(self, name)

    def source_tools(self, name: str, *, listed: bool = True) -> dict[str, str]:
        """The tools of the source ``name``: the server's name of each -> its wire name here; with
        ``listed``, only those the listing still shows (``with_listing_change``)."""
        tools: dict[str, dict[str, Any]] = self._listed if listed else self._data["tools"]
        return {str(entry["mcp"]["name"]): wire for wire, entry in sorted(tools.items()) if entry["source"] == name}

    def mcp_tool(self, tool: str) -> dict[str, Any]:
        """The MCP tool object of ``tool`` (its wire name) as the listing shows it now."""
        return copy.deepcopy(self._listed[tool]["mcp"])

    # --- drift ----------------------------------------------------------------------------------
    def with_listing_change(
        self,
        tool: str,
        *,
        remove: bool = False,
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | None = None,
        description: str | None = None,
    ) -> Self:
        """This fake serving a listing that differs from the lock for ``tool`` (its wire name):
        removed, or with another input schema, output schema or description. ``list_tools`` and
        ``list_mcp_tools`` show the change, so run-time pinning (``pin: refuse``) refuses the tool;
        calls are answered as before."""
        if tool not in self._listed:
            raise KeyError(f"{self.package} has no tool {tool!r}")
        if remove:
            del self._listed[tool]
            return self
        entry, mcp = self._listed[tool]["entry"], self._listed[tool]["mcp"]
        if input_schema is not None:
            entry["parameters"] = mcp["inputSchema"] = copy.deepcopy(dict(input_schema))
        if output_schema is not None:
            entry["output_schema"] = mcp["outputSchema"] = copy.deepcopy(dict(output_schema))
        if description is not None:
            entry["description"] = mcp["description"] = description
        return self

    # --- replay -----------------------------------------------------------------------------------
    def load_cassette(self, path: str | Path) -> Self:
        """Answer the calls of the cassette at ``path`` in order (see ``Recorder``): each call must be
        the next one recorded, with the same tool and arguments, else one line names the first
        difference (in strict mode; otherwise a call not recorded is answered as usual)."""
        self._replay = read_cassette(path, self.package)
        self._replayed = 0
        return self

    def _replayed_call(self, tool_name: str, arguments: dict[str, Any], options: Mapping[str, Any]) -> dict[str, Any]:
        __tracebackhide__ = True
        replay = self._replay or []
        index = self._replayed
        expected = replay[index] if index < len(replay) else None
        problem: str | None = None
        if expected is None:
            problem = f"call {index + 1}: {tool_name!r} was not recorded (the cassette has {len(replay)} call(s))"
        elif expected["tool"] != tool_name:
            problem = f"call {index + 1}: expected tool {expected['tool']!r}, got {tool_name!r}"
        else:
            found = first_difference(expected["arguments"], arguments)
            if found is not None:
                problem = f"call {index + 1} ({tool_name}): arguments {found}"
        if problem is not None or expected is None:
            if self.strict:
                raise FakeToolsError(f"replay: {problem}", tool=tool_name)
            saved, self._replay = self._replay, None
            try:
                return self._call(tool_name, arguments, dict(options))
            finally:
                self._replay = saved
        self._replayed += 1
        if tool_name in self._tools:
            made: Call[Any] = Call(tool_name, arguments, {k: v for k, v in options.items() if not callable(v)})
            self.handle(tool_name).calls.append(made)
            self.calls.append(made)
        envelope = cast("dict[str, Any]", copy.deepcopy(expected["envelope"]))
        if tool_name in self._listed:
            self._checked(tool_name, envelope, f"call {index + 1} of the cassette")
        return envelope

    def assert_replayed(self) -> None:
        """Every call of the cassette was made; else one line naming the first one that was not."""
        __tracebackhide__ = True
        replay = self._replay or []
        if self._replayed < len(replay):
            missing = replay[self._replayed]
            raise FakeToolsError(
                f"replay: call {self._replayed + 1} of {len(replay)} ({missing['tool']!r}) was never made",
                tool=str(missing["tool"]),
            )


class FakeSource:
    """One source of a fake, served as its server would: ``list_mcp_tools`` (what pinning compares
    with the lock), ``list_tools`` and ``call_tool`` under the server's own tool names."""

    def __init__(self, fake: FakeToolsBase, name: str) -> None:
        self.fake = fake
        self.name = name

    def __repr__(self) -> str:
        return f"FakeSource({self.name!r})"

    def list_mcp_tools(self) -> list[dict[str, Any]]:
        return [self.fake.mcp_tool(wire) for wire in self.fake.source_tools(self.name).values()]

    def list_tools(self) -> list[dict[str, Any]]:
        entries = {entry["name"]: entry for entry in self.fake.list_tools()}
        out: list[dict[str, Any]] = []
        for inner, wire in self.fake.source_tools(self.name).items():
            out.append({**entries[wire], "name": inner})
        return out

    def call_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **options: Any) -> dict[str, Any]:
        wire = self.fake.source_tools(self.name, listed=False).get(tool_name)
        if wire is None:
            return _rules.failure_dict(
                f"unknown tool {tool_name!r} (source {self.name!r} has no such tool)", "unknown_tool"
            )
        return self.fake.call_tool(wire, arguments, **options)

    async def acall_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **options: Any) -> dict[str, Any]:
        return self.call_tool(tool_name, arguments, **options)

    def close(self) -> None:
        """Nothing to close: a registry closes its providers."""


# --------------------------------------------------------------------------------------------
# Envelopes
# --------------------------------------------------------------------------------------------


def _text_envelope(text: str) -> dict[str, Any]:
    return _rules.to_envelope({"content": [{"type": "text", "text": text}], "isError": False})


def _input_required(requests: Mapping[str, Any], state: str) -> dict[str, Any]:
    return _rules.to_envelope({"resultType": "input_required", "inputRequests": dict(requests), "requestState": state})


def _session(task: _Task) -> dict[str, Any]:
    ended = task.state in _ENDS
    return {
        "status": "success" if ended else "running",
        "result": None,
        "is_error": False,
        "result_mode": "session",
        "execution_mode": "async",
        "session_id": task.task_id,
        "session_status": task.state,
        "metadata": {"task": {"task_id": task.task_id, "status": task.state, "dialect": "fake", "poll_interval_ms": 1}},
    }


def _envelope_of(info: ToolInfo[Any], value: object) -> dict[str, Any]:
    """The envelope a server sends for ``value``: structured content (and its JSON as text) for a
    model, one text block for a text value, the blocks of a ``ToolOutput``."""
    __tracebackhide__ = True
    from pydantic import BaseModel, ValidationError

    from ._content import ToolOutput

    if isinstance(value, ToolOutput):
        dumped = value.model_dump(mode="json", by_alias=True, exclude_none=True, warnings=False)
        return _rules.to_envelope({**dumped, "isError": False})
    model = info.output_model
    if isinstance(value, str) and (info.output_is_text or model is None):
        return _text_envelope(value)
    if model is None:
        raise FakeToolsError(
            f"tool {info.name!r} has no output schema: answer with a ToolOutput or a str, not {type(value).__name__}",
            tool=info.name,
        )
    try:
        if info.output_key is not None:
            instance: BaseModel = model.model_validate({info.output_key: value})
        elif info.output_is_root:
            instance = model.model_validate(value)
        elif isinstance(value, model):
            instance = value
        else:
            raise FakeToolsError(
                f"tool {info.name!r} answers with {model.__name__}, not {type(value).__name__}", tool=info.name
            )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = _rules.pointer(first["loc"])
        raise FakeToolsError(
            f"tool {info.name!r}: the answer does not fit {model.__name__} at {where or '/'}: {first['msg']}",
            tool=info.name,
            pointer=where,
        ) from exc
    # No warnings: a value that breaks its model (``model_construct``) is reported below, by pointer.
    data = instance.model_dump(mode="json", by_alias=True, exclude_unset=True, warnings=False)
    text = json.dumps(data, ensure_ascii=False)
    return _rules.to_envelope(
        {"content": [{"type": "text", "text": text}], "structuredContent": data, "isError": False}
    )


def schema_problem(schema: Mapping[str, Any], value: object) -> tuple[str, str | None]:
    """The JSON pointer and message of the first way ``value`` breaks ``schema`` (jsonschema's best
    match), or ``("", None)`` when it fits."""
    # Imported by name and used as Any: the kit runs where toolgen is installed (jsonschema is
    # one of its dependencies), and a package's type check need not know jsonschema's types.
    validators: Any = importlib.import_module("jsonschema.validators")
    exceptions: Any = importlib.import_module("jsonschema.exceptions")
    cls: Any = validators.validator_for(schema, default=validators.Draft202012Validator)
    try:
        error: Any = exceptions.best_match(cls(schema).iter_errors(value))
    except Exception as exc:  # an unresolvable $ref (nothing is fetched), a schema jsonschema refuses
        return "", f"cannot check: {type(exc).__name__}: {one_line(str(exc))}"
    if error is None:
        return "", None
    where: list[object] = list(error.absolute_path)
    return _rules.pointer(where), one_line(str(error.message))


# --------------------------------------------------------------------------------------------
# Cassettes: Recorder and replay
# --------------------------------------------------------------------------------------------


def read_cassette(path: str | Path, package: str | None = None) -> list[dict[str, Any]]:
    """The calls of a cassette; a malformed one raises ``FakeToolsError`` naming the file and pointer."""
    where = Path(path)
    try:
        data: object = json.loads(where.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FakeToolsError(f"{where}: cannot read the cassette: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise FakeToolsError(f"{where}: the cassette is not JSON: {exc}") from exc
    problem = cassette_problem(data)
    if problem is not None:
        raise FakeToolsError(f"{where}: {problem}")
    calls = cast("list[dict[str, Any]]", cast("Mapping[str, Any]", data)["calls"])
    return calls


def cassette_problem(data: object) -> str | None:
    """What is wrong with a cassette's JSON (``<pointer>: <what>``), or None."""
    if not isinstance(data, Mapping):
        return "/: a cassette is a JSON object"
    doc = cast("Mapping[str, object]", data)
    if doc.get("version") != CASSETTE_VERSION:
        return f"/version: expected {CASSETTE_VERSION}, got {doc.get('version')!r}"
    calls = doc.get("calls")
    if not isinstance(calls, list):
        return "/calls: expected a list of calls"
    for index, item in enumerate(cast("list[object]", calls)):
        if not isinstance(item, Mapping):
            return f"/calls/{index}: expected an object"
        call = cast("Mapping[str, object]", item)
        if not isinstance(call.get("tool"), str):
            return f"/calls/{index}/tool: expected the tool's wire name"
        if not isinstance(call.get("arguments"), Mapping):
            return f"/calls/{index}/arguments: expected an object"
        if not isinstance(call.get("envelope"), Mapping):
            return f"/calls/{index}/envelope: expected an envelope object"
    return None


#: The options a cassette keeps: those that change what a call means (not callbacks, not events).
_RECORDED_OPTIONS = ("timeout_seconds", "request_state", "allow_input_required", "allow_claimed", "user")


class Recorder:
    """Wraps any provider (a ``RuntimeRegistry``, an MCP provider, a fake): every ``call_tool``
    goes through to it and the exchange (tool, arguments, the options that matter, the envelope)
    is kept, then written to ``path`` by :meth:`save` (or on leaving a ``with`` block).

    Secrets are blanked with the runtime's redaction (``mas.runtime.redact``: the values of the
    registry's ``env:`` and credential headers) when it is importable; ``blank`` replaces it."""

    def __init__(
        self,
        provider: Any,
        path: str | Path,
        *,
        package: str | None = None,
        blank: Callable[[Any], Any] | None = None,
    ) -> None:
        self.provider = provider
        self.path = Path(path)
        self.package = package
        self.exchanges: list[dict[str, Any]] = []
        self._blank = blank

    def list_tools(self) -> list[dict[str, Any]]:
        listed: list[dict[str, Any]] = self.provider.list_tools()
        return listed

    def call_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **options: Any) -> Any:
        raw = self.provider.call_tool(tool_name, arguments, **options)
        self._keep(tool_name, arguments, options, raw)
        return raw

    async def acall_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **options: Any) -> Any:
        raw = await _rules.acall_provider(self.provider, tool_name, dict(arguments or {}), options)
        self._keep(tool_name, arguments, options, raw)
        return raw

    def _keep(
        self, tool_name: str, arguments: Mapping[str, Any] | None, options: Mapping[str, Any], raw: object
    ) -> None:
        try:
            envelope = _rules.to_envelope(raw)
        except ValueError:
            envelope = _rules.failure_dict("malformed result", "protocol")
        kept = {k: options[k] for k in _RECORDED_OPTIONS if options.get(k) is not None}
        exchange = {"tool": tool_name, "arguments": dict(arguments or {}), "options": kept, "envelope": envelope}
        self.exchanges.append(self._blanked(json.loads(json.dumps(exchange, default=str))))

    def _blanked(self, value: Any) -> Any:
        if self._blank is not None:
            return self._blank(value)
        try:
            from mas.runtime.redact import blank_json  # the runtime's redaction, when it is installed
        except ImportError:  # pragma: no cover - a package used without toolgen's runtime
            return value
        return blank_json(value)

    def save(self) -> Path:
        """Write the cassette (canonical JSON: keys sorted, two-space indent, one newline at the end)."""
        doc: dict[str, Any] = {"version": CASSETTE_VERSION, "calls": self.exchanges}
        if self.package is not None:
            doc["package"] = self.package
        text = json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(self.path)
        return self.path

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.save()


def envelopes(calls: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The envelopes of a cassette's calls, in order."""
    return [cast("Mapping[str, Any]", call["envelope"]) for call in calls]
