"""Typed task handles: a long-running tool call started now, waited for (or cancelled) later.

``tools.tasks.<source>.<tool>(...)`` sends the call with ``allow_claimed=True``: a runtime that
runs it as an MCP task (docs/tasks.md in the toolgen repository) answers at once with a session
envelope (``result_mode: "session"``, ``session_id`` the task id). The handle then names the task
through ``request_state``: ``toolgen-task:<id>`` follows it (with ``allow_claimed=True``, only
asks how it stands), ``toolgen-task-cancel:<id>`` cancels it. Nothing else is needed, so a task
started in one process can be resumed from its id in another (``tools.tasks.resume``).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, cast

from ._base import AsyncToolsBase, ToolsBase, _run_awaitable, _Whole
from ._decode import decode_envelope, normalize_envelope
from ._omit import without_omitted
from ._plan import CallPlan

if TYPE_CHECKING:
    from ._decode import ToolResult
    from ._info import ToolInfo
    from ._options import CallOptions
    from ._plan import InputRequest

__all__ = [
    "TASK_CANCEL_PREFIX",
    "TASK_PREFIX",
    "AsyncToolTask",
    "AsyncToolsTasksBase",
    "TaskStatus",
    "ToolTask",
    "ToolsTasksBase",
]

_A = ParamSpec("_A")  # a value method's parameters

T = TypeVar("T")

#: The runtime's ``request_state`` prefixes that name a task (``mas.runtime._mcp_tasks``).
TASK_PREFIX = "toolgen-task:"
TASK_CANCEL_PREFIX = "toolgen-task-cancel:"
#: Options a follow-up request never repeats: the arguments' answers and the question of consent
#: belong to the call that started the task.
_NOT_REPEATED = ("request_state", "input_responses", "allow_claimed", "confirm")


@dataclass(frozen=True)
class TaskStatus:
    """How a task stands: ``state`` is ``working``, ``input_required``, ``completed``, ``failed``
    or ``cancelled``; ``poll_interval_ms`` is the server's suggestion (None: none)."""

    task_id: str
    state: str
    message: str | None = None
    poll_interval_ms: int | None = None

    @property
    def done(self) -> bool:
        return self.state in ("completed", "failed", "cancelled")


def status_of(info: ToolInfo[Any], raw: object) -> TaskStatus | None:
    """The task a session envelope names, or None when the envelope is an ordinary result (the
    tool ran at once). A failed request raises its ``ToolError``, as any call does."""
    envelope = normalize_envelope(raw)
    if envelope.get("result_mode") != "session" or not isinstance(envelope.get("session_id"), str):
        if envelope.get("is_error"):
            decode_envelope(info, envelope)  # raises the error of its kind
        return None
    metadata = envelope.get("metadata")
    task = cast("Mapping[str, Any]", metadata).get("task") if isinstance(metadata, Mapping) else None
    task = task if isinstance(task, Mapping) else {}
    message = task.get("status_message")
    interval = task.get("poll_interval_ms")
    return TaskStatus(
        task_id=str(envelope["session_id"]),
        state=str(envelope.get("session_status") or task.get("status") or "working"),
        message=message if isinstance(message, str) else None,
        poll_interval_ms=interval if isinstance(interval, int) and not isinstance(interval, bool) else None,
    )


def _follow_up(options: CallOptions, state: str, timeout_seconds: float | None) -> dict[str, Any]:
    out: dict[str, Any] = {k: v for k, v in options.items() if k not in _NOT_REPEATED}
    out["request_state"] = state
    if timeout_seconds is not None:
        out["timeout_seconds"] = timeout_seconds
    return out


class ToolTask(Generic[T]):
    """One started task of a tool whose typed result is ``T``."""

    def __init__(self, tools: ToolsBase, info: ToolInfo[T], task_id: str, status: TaskStatus | None = None) -> None:
        self._tools = tools
        self._info = info
        self._id = task_id
        self._last = status or TaskStatus(task_id, "working")
        self._value: tuple[T] | None = None

    @classmethod
    def finished(cls, tools: ToolsBase, info: ToolInfo[T], value: T) -> ToolTask[T]:
        """A call the server answered at once: a task that is already done, holding its value."""
        task = cls(tools, info, "", TaskStatus("", "completed"))
        task._value = (value,)
        return task

    @property
    def id(self) -> str:
        """The task id (empty for a call the server answered at once); resume with it elsewhere."""
        return self._id

    def __repr__(self) -> str:
        return f"ToolTask({self._info.name!r}, id={self._id!r}, last={self._last.state!r})"

    def status(self) -> TaskStatus:
        """Ask the server how the task stands (one ``tasks/get``)."""
        if self._value is not None:
            return self._last
        options = _follow_up(self._tools._options, TASK_PREFIX + self._id, None)
        options["allow_claimed"] = True
        raw = self._tools._send(self._info, {}, options)
        self._last = status_of(self._info, raw) or TaskStatus(self._id, "completed")
        return self._last

    def wait(self, timeout_seconds: float | None = None) -> T:
        """Wait for the task to end and return its value: the same typed value as the plain method.
        Questions the task asks go to ``on_input``; ``timeout_seconds`` bounds the wait (the runtime
        cancels the task then, and this raises ``ToolTimeoutError``)."""
        if self._value is not None:
            return self._value[0]
        options = _follow_up(self._tools._options, TASK_PREFIX + self._id, timeout_seconds)
        value = ToolsBase(self._tools._provider, cast("CallOptions", options))._call(self._info, {}, {}).value
        self._value = (value,)
        self._last = TaskStatus(self._id, "completed", self._last.message, self._last.poll_interval_ms)
        return value

    def cancel(self) -> TaskStatus:
        """Cancel the task on the server; returns how it stands afterwards."""
        if self._value is not None:
            return self._last
        options = _follow_up(self._tools._options, TASK_CANCEL_PREFIX + self._id, None)
        self._last = status_of(self._info, self._tools._send(self._info, {}, options)) or self._last
        return self._last


class AsyncToolTask(Generic[T]):
    """The async ``ToolTask``: ``await task.status()``, ``await task.wait()``, ``await task.cancel()``."""

    def __init__(
        self, tools: AsyncToolsBase, info: ToolInfo[T], task_id: str, status: TaskStatus | None = None
    ) -> None:
        self._tools = tools
        self._info = info
        self._id = task_id
        self._last = status or TaskStatus(task_id, "working")
        self._value: tuple[T] | None = None

    @classmethod
    def finished(cls, tools: AsyncToolsBase, info: ToolInfo[T], value: T) -> AsyncToolTask[T]:
        task = cls(tools, info, "", TaskStatus("", "completed"))
        task._value = (value,)
        return task

    @property
    def id(self) -> str:
        return self._id

    def __repr__(self) -> str:
        return f"AsyncToolTask({self._info.name!r}, id={self._id!r}, last={self._last.state!r})"

    async def status(self) -> TaskStatus:
        if self._value is not None:
            return self._last
        options = _follow_up(self._tools._options, TASK_PREFIX + self._id, None)
        options["allow_claimed"] = True
        raw = await self._tools._send(self._info, {}, options)
        self._last = status_of(self._info, raw) or TaskStatus(self._id, "completed")
        return self._last

    async def wait(self, timeout_seconds: float | None = None) -> T:
        if self._value is not None:
            return self._value[0]
        options = _follow_up(self._tools._options, TASK_PREFIX + self._id, timeout_seconds)
        plain = AsyncToolsBase(self._tools._provider, cast("CallOptions", options))
        value = (await plain._call(self._info, {}, {})).value
        self._value = (value,)
        self._last = TaskStatus(self._id, "completed", self._last.message, self._last.poll_interval_ms)
        return value

    async def cancel(self) -> TaskStatus:
        if self._value is not None:
            return self._last
        options = _follow_up(self._tools._options, TASK_CANCEL_PREFIX + self._id, None)
        self._last = status_of(self._info, await self._tools._send(self._info, {}, options)) or self._last
        return self._last


def _starting(
    info: ToolInfo[Any], arguments: dict[str, Any], omit: Mapping[str, object], options: CallOptions
) -> CallPlan:
    return CallPlan(info, without_omitted(arguments, omit), cast("CallOptions", {**options, "allow_claimed": True}))


class ToolsTasksBase(ToolsBase):
    """Base of a generated ``...ToolsTasks`` class: each method starts its tool as a task and
    returns a :class:`ToolTask` at once (a thin wrapper over the value method, as ``.results``)."""

    def _call(self, info: ToolInfo[T], arguments: dict[str, Any], omit: Mapping[str, object]) -> ToolResult[T]:
        plan = _starting(info, arguments, omit, self._options)
        if plan.needs_confirmation():
            confirm = cast("Callable[..., object]", plan.options["confirm"])
            answer = confirm(info, dict(plan.arguments))
            if inspect.isawaitable(answer):
                answer = _run_awaitable(info, answer)
            if not answer:
                raise plan.refused()
        while True:  # a server may ask before it decides to start the task
            envelope = normalize_envelope(self._send(info, plan.arguments, plan.options))
            requests = plan.input_needed(envelope)
            if requests is None:
                break
            on_input = cast("Callable[[list[InputRequest]], object]", plan.options["on_input"])
            responses = on_input(requests)
            if inspect.isawaitable(responses):
                responses = _run_awaitable(info, responses)
            plan.answered(responses)
        status = status_of(info, envelope)
        if status is None:  # answered at once: a task that is already done
            task = ToolTask.finished(self, info, decode_envelope(info, envelope).value)
        else:
            task = ToolTask(self, info, status.task_id, status)
        return cast("ToolResult[T]", _Whole(task))

    def _task(self, method: Callable[Concatenate[Any, _A], T], /, *args: _A.args, **kwargs: _A.kwargs) -> ToolTask[T]:
        return cast("ToolTask[T]", method(self, *args, **kwargs))

    def resume(self, info: ToolInfo[T], task_id: str) -> ToolTask[T]:
        """The task ``task_id`` of the tool ``info`` (``TOOLS[wire name]``), started elsewhere."""
        return ToolTask(self, info, task_id)


class AsyncToolsTasksBase(AsyncToolsBase):
    """The async ``ToolsTasksBase``: each method starts the task and returns an :class:`AsyncToolTask`."""

    async def _call(self, info: ToolInfo[T], arguments: dict[str, Any], omit: Mapping[str, object]) -> ToolResult[T]:
        plan = _starting(info, arguments, omit, self._options)
        if plan.needs_confirmation():
            confirm = cast("Callable[..., object]", plan.options["confirm"])
            answer = confirm(info, dict(plan.arguments))
            if inspect.isawaitable(answer):
                answer = await answer
            if not answer:
                raise plan.refused()
        while True:
            envelope = normalize_envelope(await self._send(info, plan.arguments, plan.options))
            requests = plan.input_needed(envelope)
            if requests is None:
                break
            on_input = cast("Callable[[list[InputRequest]], object]", plan.options["on_input"])
            responses = on_input(requests)
            if inspect.isawaitable(responses):
                responses = await responses
            plan.answered(responses)
        status = status_of(info, envelope)
        if status is None:
            task = AsyncToolTask.finished(self, info, decode_envelope(info, envelope).value)
        else:
            task = AsyncToolTask(self, info, status.task_id, status)
        return cast("ToolResult[T]", _Whole(task))

    async def _task(
        self, method: Callable[Concatenate[Any, _A], Awaitable[T]], /, *args: _A.args, **kwargs: _A.kwargs
    ) -> AsyncToolTask[T]:
        return cast("AsyncToolTask[T]", await method(self, *args, **kwargs))

    def resume(self, info: ToolInfo[T], task_id: str) -> AsyncToolTask[T]:
        """The task ``task_id`` of the tool ``info`` (``TOOLS[wire name]``), started elsewhere."""
        return AsyncToolTask(self, info, task_id)
