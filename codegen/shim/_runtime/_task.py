"""Typed task handles: a long-running tool call started now, waited for (or cancelled) later.

``tools.tasks.<source>.<tool>(...)`` sends the call with ``allow_claimed=True``: a runtime that
runs it as an MCP task (docs/tasks.md in the toolgen repository) answers at once with a session
envelope (``result_mode: "session"``, ``session_id`` the task id). The handle then names the task
through ``request_state``: ``toolgen-task:<id>`` follows it (with ``allow_claimed=True``, only
asks how it stands), ``toolgen-task-cancel:<id>`` cancels it. Nothing else is needed, so a task
started in one process can be resumed from its id in another (``tools.tasks.resume``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from ._decode import decode_envelope, normalize_envelope

if TYPE_CHECKING:
    from ._info import ToolInfo
    from ._options import CallOptions

__all__ = ["TASK_CANCEL_PREFIX", "TASK_PREFIX", "AsyncToolTask", "TaskStatus", "ToolTask"]

#: Sends one request for a tool (the tools class's own ``_send``): (info, arguments, options) -> raw.
Send = Callable[["ToolInfo[Any]", dict[str, Any], Mapping[str, object]], object]
#: Follows a task to its value through the plain call path: (info, options) -> the value.
Follow = Callable[["ToolInfo[Any]", "CallOptions"], object]
ASend = Callable[["ToolInfo[Any]", dict[str, Any], Mapping[str, object]], Awaitable[object]]
AFollow = Callable[["ToolInfo[Any]", "CallOptions"], Awaitable[object]]

T = TypeVar("T")

#: The runtime's ``request_state`` prefixes that name a task (``mas.runtime.mcp._tasks``).
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
    metadata: object = envelope.get("metadata")
    found: object = cast("Mapping[str, object]", metadata).get("task") if isinstance(metadata, Mapping) else None
    task: Mapping[str, object] = cast("Mapping[str, object]", found) if isinstance(found, Mapping) else {}
    message = task.get("status_message")
    interval = task.get("poll_interval_ms")
    return TaskStatus(
        task_id=str(envelope["session_id"]),
        state=str(envelope.get("session_status") or task.get("status") or "working"),
        message=message if isinstance(message, str) else None,
        poll_interval_ms=interval if isinstance(interval, int) and not isinstance(interval, bool) else None,
    )


def follow_up(options: CallOptions, state: str, timeout_seconds: float | None) -> dict[str, Any]:
    """The options of a request about a started task: the call's own, naming the task."""
    out: dict[str, Any] = {k: v for k, v in options.items() if k not in _NOT_REPEATED}
    out["request_state"] = state
    if timeout_seconds is not None:
        out["timeout_seconds"] = timeout_seconds
    return out


SendT = TypeVar("SendT", Send, ASend)
FollowT = TypeVar("FollowT", Follow, AFollow)


class _Handle(Generic[T, SendT, FollowT]):
    """What both handles hold and how they name the task; the two flavours differ only in
    whether a request is awaited."""

    def __init__(
        self,
        info: ToolInfo[T],
        task_id: str,
        options: CallOptions,
        send: SendT,
        follow: FollowT,
        status: TaskStatus | None = None,
        done: tuple[T] | None = None,
    ) -> None:
        self._info = info
        self._id = task_id
        self._options = options
        self._send: SendT = send
        self._follow: FollowT = follow
        self._last = status or TaskStatus(task_id, "completed" if done is not None else "working")
        self._value = done

    @property
    def id(self) -> str:
        """The task id (empty for a call the server answered at once); resume with it elsewhere."""
        return self._id

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._info.name!r}, id={self._id!r}, last={self._last.state!r})"

    def _status_options(self) -> dict[str, Any]:
        options = follow_up(self._options, TASK_PREFIX + self._id, None)
        options["allow_claimed"] = True  # only ask how it stands; never wait for the value
        return options

    def _wait_options(self, timeout_seconds: float | None) -> CallOptions:
        return cast("CallOptions", follow_up(self._options, TASK_PREFIX + self._id, timeout_seconds))

    def _cancel_options(self) -> dict[str, Any]:
        return follow_up(self._options, TASK_CANCEL_PREFIX + self._id, None)

    def _seen(self, raw: object, otherwise: TaskStatus) -> TaskStatus:
        self._last = status_of(self._info, raw) or otherwise
        return self._last

    def _finished(self, value: object) -> T:
        self._value = (cast("T", value),)
        self._last = TaskStatus(self._id, "completed", self._last.message, self._last.poll_interval_ms)
        return self._value[0]


class ToolTask(_Handle[T, Send, Follow]):
    """One started task of a tool whose typed result is ``T``."""

    def status(self) -> TaskStatus:
        """Ask the server how the task stands (one ``tasks/get``)."""
        if self._value is not None:
            return self._last
        return self._seen(self._send(self._info, {}, self._status_options()), TaskStatus(self._id, "completed"))

    def wait(self, timeout_seconds: float | None = None) -> T:
        """Wait for the task to end and return its value: the same typed value as the plain method.
        Questions the task asks go to ``on_input``; ``timeout_seconds`` bounds the wait (the runtime
        cancels the task then, and this raises ``ToolTimeoutError``)."""
        if self._value is not None:
            return self._value[0]
        return self._finished(self._follow(self._info, self._wait_options(timeout_seconds)))

    def cancel(self) -> TaskStatus:
        """Cancel the task on the server; returns how it stands afterwards."""
        if self._value is not None:
            return self._last
        return self._seen(self._send(self._info, {}, self._cancel_options()), self._last)


class AsyncToolTask(_Handle[T, ASend, AFollow]):
    """The async ``ToolTask``: ``await task.status()``, ``await task.wait()``, ``await task.cancel()``."""

    async def status(self) -> TaskStatus:
        if self._value is not None:
            return self._last
        raw = await self._send(self._info, {}, self._status_options())
        return self._seen(raw, TaskStatus(self._id, "completed"))

    async def wait(self, timeout_seconds: float | None = None) -> T:
        if self._value is not None:
            return self._value[0]
        return self._finished(await self._follow(self._info, self._wait_options(timeout_seconds)))

    async def cancel(self) -> TaskStatus:
        if self._value is not None:
            return self._last
        return self._seen(await self._send(self._info, {}, self._cancel_options()), self._last)
