"""Tasks: long-running ``tools/call`` requests that the server runs in the background.

Two dialects exist, and the provider speaks whichever the server advertises (:func:`dialect_of`):

* **2025-11-25** (the core spec of that revision; what the reference "everything" server speaks):
  the server says ``capabilities.tasks.requests.tools.call`` and marks each tool with
  ``execution.taskSupport`` (``forbidden``, ``optional``, ``required``). The client asks for a
  task by sending ``tools/call`` with a ``task`` parameter and gets a ``CreateTaskResult``
  (``{"task": {...}}``); it polls ``tasks/get`` at the task's ``pollInterval``, fetches the
  payload with ``tasks/result`` and may ``tasks/cancel``. A question the server has while the task
  runs (``input_required``) is delivered as an ordinary server-to-client request during a
  ``tasks/result`` call, so it reaches the caller through the same input rounds as a question
  asked during ``tools/call`` (``_mcp_input``).
* **2026-07-28** (the extension ``io.modelcontextprotocol/tasks``, SEP-2663): the client declares
  the extension in its per-request capabilities and the server decides per request; a task comes
  back as a result with ``resultType: "task"`` (a ``ResultClaim`` of the SDK's extension hooks).
  ``tasks/get`` carries the outcome inline (``result`` or ``error``) and, for ``input_required``,
  the questions (``inputRequests``), which the client answers with ``tasks/update``.

Every wait here is bounded: a poll interval is clamped to
[:data:`MIN_POLL_SECONDS`, :data:`MAX_POLL_SECONDS`], a task with no deadline of its own waits at
most :data:`MAX_WAIT_SECONDS`, and ``tasks/cancel`` is given :data:`CANCEL_TIMEOUT_SECONDS`.
Everything here runs on the provider's loop.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import mcp_types as types
from mcp.client.extension import ClaimContext, ResultClaim
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field

from mas.runtime.lockfile import TASK_DIALECTS

__all__ = [
    "CANCEL_TIMEOUT_SECONDS",
    "DIALECTS",
    "MAX_POLL_SECONDS",
    "MAX_WAIT_SECONDS",
    "MIN_POLL_SECONDS",
    "TASKS_EXTENSION",
    "TASK_CANCEL_PREFIX",
    "TASK_PREFIX",
    "TASK_PREFIXES",
    "TERMINAL",
    "CreatedTask",
    "TaskEnded",
    "TaskState",
    "Tasks",
    "client_extension_kwargs",
    "dialect_of",
    "state_of_created",
    "task_support_of",
]

logger = logging.getLogger("mas.runtime.mcp_provider")

#: The 2026-07-28 tasks extension's identifier.
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
#: The task dialects, by the protocol revision that defines them (one list: the lock's).
DIALECTS = TASK_DIALECTS
#: A server's poll interval is honoured within these bounds (seconds): never a busy loop, never
#: a wait so long that a finished task goes unnoticed for minutes.
MIN_POLL_SECONDS = 0.05
MAX_POLL_SECONDS = 5.0
#: The poll interval when the server suggests none.
DEFAULT_POLL_SECONDS = 1.0
#: How long a call waits for a task when it has no ``timeout_seconds`` of its own.
MAX_WAIT_SECONDS = 3600.0
#: ``tasks/cancel`` is sent on a timeout or a cancel and given this long to be acknowledged.
CANCEL_TIMEOUT_SECONDS = 5.0
#: ``request_state`` values that name a task started earlier: follow it (or, with
#: ``allow_claimed=True``, report its status), or cancel it (docs/tasks.md, "Resuming").
TASK_PREFIX = "toolgen-task:"
TASK_CANCEL_PREFIX = "toolgen-task-cancel:"
TASK_PREFIXES = (TASK_PREFIX, TASK_CANCEL_PREFIX)
#: Statuses after which a task never changes.
TERMINAL = frozenset({"completed", "failed", "cancelled"})

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]


# --- the 2026-07-28 wire shapes (the SDK ships only the 2025-11-25 ones) ---------------------------


class _TaskFields(types.Result):
    """What a task is on the wire, in both answers that carry one."""

    task_id: str
    status: TaskStatus
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class CreatedTask(_TaskFields):
    """A ``tools/call`` answered with a task (``resultType: "task"``, the extension's claim)."""

    result_type: Literal["task"] = "task"


class DetailedTask(_TaskFields):
    """A ``tasks/get`` answer: the task, with its outcome or its open questions inline."""

    input_requests: dict[str, types.InputRequest] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class TaskIdParams(types.RequestParams):
    task_id: str


class TaskUpdateParams(TaskIdParams):
    input_responses: dict[str, types.InputResponse] = Field(default_factory=dict)


class _TaskGet(types.Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param: ClassVar[str | None] = "taskId"  # SEP-2663: Mcp-Name carries the task id over HTTP


class _TaskUpdate(types.Request[TaskUpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    name_param: ClassVar[str | None] = "taskId"


class _TaskCancel(types.Request[TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param: ClassVar[str | None] = "taskId"


class _Ack(types.Result):
    """An empty acknowledgement (``tasks/update``, a 2026 ``tasks/cancel``)."""


async def _resolve_unclaimed(result: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
    # The provider drives tasks itself (it calls with allow_claimed=True); this resolver is only
    # what the SDK requires a claim to carry, for a session used without the provider.
    raise RuntimeError(f"task {result.task_id!r} must be followed by the provider (mas.runtime.mcp._tasks)")


def client_extension_kwargs() -> dict[str, Any]:
    """``ClientSession`` keyword arguments that declare the 2026 tasks extension.

    The SDK advertises it only on modern sessions (where its claim is active); a legacy session
    is unchanged.
    """
    claim = ResultClaim(result_type="task", model=CreatedTask, resolve=_resolve_unclaimed)
    return {"extensions": {TASKS_EXTENSION: {}}, "result_claims": {TASKS_EXTENSION: [claim]}}


def dialect_of(session: ClientSession) -> str | None:
    """The task dialect the server advertises on this session, or None when it has no tasks."""
    caps = session.server_capabilities
    if caps is None:
        return None
    if session.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return "2026-07-28" if TASKS_EXTENSION in (caps.extensions or {}) else None
    requests = caps.tasks.requests if caps.tasks is not None else None
    tools = requests.tools if requests is not None else None
    return "2025-11-25" if tools is not None and tools.call is not None else None


def task_support_of(tool: Mapping[str, Any]) -> str:
    """A listed tool's ``execution.taskSupport`` (wire keys); absent means ``forbidden``."""
    execution = tool.get("execution")
    support = execution.get("taskSupport") if isinstance(execution, Mapping) else None
    return support if support in ("optional", "required") else "forbidden"


def poll_seconds(interval_ms: float | None) -> float:
    """The server's suggested poll interval in seconds, within the bounds."""
    if interval_ms is None or not math.isfinite(interval_ms) or interval_ms <= 0:
        return DEFAULT_POLL_SECONDS
    return min(MAX_POLL_SECONDS, max(MIN_POLL_SECONDS, interval_ms / 1000))


@dataclass(frozen=True)
class TaskState:
    """What the client knows of one task: its id, status and how often to ask again."""

    task_id: str
    status: str
    dialect: str
    message: str | None = None
    poll_interval_ms: int | None = None
    ttl_ms: int | None = None

    @property
    def poll_seconds(self) -> float:
        return poll_seconds(self.poll_interval_ms)

    @property
    def done(self) -> bool:
        return self.status in TERMINAL

    def metadata(self) -> dict[str, Any]:
        """The task as envelope ``metadata["task"]`` (snake_case keys; unset ones left out)."""
        out: dict[str, Any] = {"task_id": self.task_id, "status": self.status, "dialect": self.dialect}
        if self.message is not None:
            out["status_message"] = self.message
        if self.poll_interval_ms is not None:
            out["poll_interval_ms"] = self.poll_interval_ms
        if self.ttl_ms is not None:
            out["ttl_ms"] = self.ttl_ms
        return out


class TaskEnded(Exception):
    """The task ended without a result: failed, cancelled, lost, or a protocol fault.

    ``kind`` is the envelope's failure kind (``docs/tool.md``, "Failure kinds").
    """

    def __init__(self, kind: str, detail: str, state: TaskState | None = None) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.state = state


#: Answers one server question (method, the typed request) through the caller's input rounds.
Ask = Callable[[str, types.InputRequest], Awaitable[BaseModel | types.ErrorData]]


def _state_2025(task: types.Task) -> TaskState:
    return TaskState(
        task_id=task.task_id,
        status=task.status,
        dialect="2025-11-25",
        message=task.status_message,
        poll_interval_ms=task.poll_interval,
        ttl_ms=task.ttl,
    )


def _state_2026(task: CreatedTask | DetailedTask) -> TaskState:
    return TaskState(
        task_id=task.task_id,
        status=task.status,
        dialect="2026-07-28",
        message=task.status_message,
        poll_interval_ms=task.poll_interval_ms,
        ttl_ms=task.ttl_ms,
    )


def state_of_created(result: CreatedTask) -> TaskState:
    return _state_2026(result)


class Tasks:
    """The task requests of one dialect on one session, and the loop that follows a task to its end."""

    def __init__(self, session: ClientSession, dialect: str) -> None:
        self.session = session
        self.dialect = dialect

    # --- requests -----------------------------------------------------------------------------
    async def start(
        self,
        name: str,
        arguments: dict[str, Any],
        meta: Mapping[str, Any] | None,
        timeout: float | None,
    ) -> TaskState | types.CallToolResult:
        """2025-11-25: ``tools/call`` with a ``task`` parameter. A server that runs the call at
        once anyway (allowed for a task-optional tool) answers with the result itself."""
        params: dict[str, Any] = {"name": name, "arguments": arguments, "task": {}}
        if meta is not None:
            params["_meta"] = dict(meta)
        raw = await self._raw("tools/call", params, timeout)
        if isinstance(raw.get("task"), Mapping):
            return _state_2025(types.CreateTaskResult.model_validate(raw, by_name=False).task)
        return types.CallToolResult.model_validate(raw, by_name=False)

    async def _raw(self, method: str, params: dict[str, Any], timeout: float | None) -> dict[str, Any]:
        # The SDK checks a tools/call answer against CallToolResult before any result type is
        # applied, and a CreateTaskResult has no `content`: this request goes out the way
        # send_request sends it (the session's own stamp, its dispatcher), without that check.
        data: dict[str, Any] = {"method": method, "params": params}
        options: dict[str, Any] = {}
        self.session._stamp(data, options)  # type: ignore[arg-type]  # noqa: SLF001
        if timeout is not None:
            options["timeout"] = timeout
        raw = await self.session._dispatcher.send_raw_request(method, data["params"], options)  # type: ignore[arg-type]  # noqa: SLF001
        return dict(raw)

    async def get(self, task_id: str, timeout: float | None) -> tuple[TaskState, DetailedTask | None]:
        """``tasks/get``: the task's state (and, in 2026, its outcome or questions)."""
        try:
            if self.dialect == "2025-11-25":
                request = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id))
                got = await self.session.send_request(request, types.GetTaskResult, timeout)
                return self._about(task_id, _state_2025(got)), None
            detailed = await self.session.send_request(
                _TaskGet(params=TaskIdParams(task_id=task_id)), DetailedTask, timeout
            )
        except MCPError as exc:
            raise self._lost(task_id, exc) from None
        return self._about(task_id, _state_2026(detailed)), detailed

    @staticmethod
    def _about(task_id: str, state: TaskState) -> TaskState:
        """The answer must be about the task asked for: another task's state (and result) is never
        followed, or the call would return that task's result under this one's name."""
        if state.task_id != task_id:
            raise TaskEnded(
                "protocol", f"tasks/get about task {task_id!r} was answered about another task, {state.task_id!r}"
            )
        return state

    async def payload(self, task_id: str, timeout: float | None) -> types.CallToolResult:
        """2025-11-25 ``tasks/result``: blocks until the task ends; the server's questions arrive meanwhile."""
        request = types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id))
        try:
            return await self.session.send_request(request, types.CallToolResult, timeout)
        except MCPError as exc:
            raise self._lost(task_id, exc) from None

    async def update(self, task_id: str, responses: dict[str, types.InputResponse], timeout: float | None) -> None:
        """2026 ``tasks/update``: the caller's answers to the task's questions."""
        params = TaskUpdateParams(task_id=task_id, input_responses=responses)
        try:
            await self.session.send_request(_TaskUpdate(params=params), _Ack, timeout)
        except MCPError as exc:
            raise self._lost(task_id, exc) from None

    async def cancel(self, task_id: str) -> TaskState | None:
        """``tasks/cancel``, acknowledged within :data:`CANCEL_TIMEOUT_SECONDS`; never raises.

        Returns the state the server reports (2025-11-25 answers with the task), else None.
        """
        try:
            if self.dialect == "2025-11-25":
                request = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id))
                done = await self.session.send_request(request, types.CancelTaskResult, CANCEL_TIMEOUT_SECONDS)
                return _state_2025(done)
            await self.session.send_request(
                _TaskCancel(params=TaskIdParams(task_id=task_id)), _Ack, CANCEL_TIMEOUT_SECONDS
            )
        except Exception as exc:  # the caller is told the call was cancelled either way
            logger.info("tasks/cancel %r was not acknowledged: %s", task_id, type(exc).__name__)
        return None

    def _lost(self, task_id: str, exc: MCPError) -> TaskEnded | TimeoutError:
        """What a failed ``tasks/*`` request means for the call that follows the task."""
        if exc.code == types.REQUEST_TIMEOUT:
            # Every request made while following a task is bounded by what is left of the call's
            # own deadline: its running out is the call timing out, whichever request was waiting.
            return TimeoutError()
        if exc.code == types.INVALID_PARAMS:  # the spec's answer for an unknown or expired task id
            return TaskEnded("protocol", f"task {task_id!r} is unknown to the server (expired?): {exc.message}")
        if exc.code == types.CONNECTION_CLOSED:
            return TaskEnded("unavailable", f"the connection closed while following task {task_id!r}")
        return TaskEnded("protocol", f"task {task_id!r}: {exc.message} (MCP error {exc.code})")

    # --- following a task to its end ----------------------------------------------------------
    async def follow(self, state: TaskState, deadline: float, ask: Ask) -> types.CallToolResult:
        """Poll until the task ends and return its result (a tool error is a result too).

        Raises :class:`TaskEnded` when it fails, is cancelled or is lost, and
        :class:`TimeoutError` at ``deadline`` (``time.monotonic()``); the caller cancels it then.
        """
        answered: set[str] = set()  # 2026: each question is put to the caller once
        detailed: DetailedTask | None = None
        if self.dialect == "2026-07-28" and state.status != "working":
            # The outcome or the questions travel in tasks/get, not in the state at hand.
            state, detailed = await self.get(state.task_id, max(_left(deadline), MIN_POLL_SECONDS))
        while True:
            if state.status == "completed":
                if self.dialect == "2025-11-25":
                    return await self.payload(state.task_id, _left(deadline))
                assert detailed is not None
                return self._outcome(state, detailed)
            if state.status == "failed":
                reason = _error_text(detailed.error if detailed is not None else None) or state.message
                raise TaskEnded("tool_error", f"task {state.task_id!r} failed: {reason or 'no reason given'}", state)
            if state.status == "cancelled":
                raise TaskEnded("cancelled", f"task {state.task_id!r} was cancelled on the server", state)
            if state.status == "input_required":
                if self.dialect == "2025-11-25":
                    # tasks/result delivers the server's questions (to the input bridge, which hands
                    # them to the caller) and then blocks until the task ends.
                    return await self.payload(state.task_id, _left(deadline))
                if detailed is not None and detailed.input_requests:
                    await self._answer(state.task_id, detailed.input_requests, answered, ask, deadline)
            wait = _left(deadline)
            if wait <= 0:
                raise TimeoutError
            await asyncio.sleep(min(state.poll_seconds, wait))
            state, detailed = await self.get(state.task_id, max(_left(deadline), MIN_POLL_SECONDS))

    async def _answer(
        self,
        task_id: str,
        requests: Mapping[str, types.InputRequest],
        answered: set[str],
        ask: Ask,
        deadline: float,
    ) -> None:
        fresh = [(key, request) for key, request in requests.items() if key not in answered]
        if not fresh:
            return
        answered.update(key for key, _ in fresh)
        answers = await asyncio.gather(*(ask(request.method, request) for _, request in fresh))
        responses: dict[str, types.InputResponse] = {}
        for (key, _), answer in zip(fresh, answers, strict=True):
            if isinstance(answer, types.ErrorData):
                raise TaskEnded(
                    "cancelled", f"task {task_id!r}: its question {key!r} was not answered: {answer.message}"
                )
            responses[key] = answer  # type: ignore[assignment]  # checked against the method by the bridge
        await self.update(task_id, responses, _left(deadline))

    @staticmethod
    def _outcome(state: TaskState, detailed: DetailedTask) -> types.CallToolResult:
        if detailed.result is None:
            raise TaskEnded("protocol", f"task {state.task_id!r} completed without a result", state)
        try:
            return types.CallToolResult.model_validate(detailed.result, by_name=False)
        except ValueError as exc:
            first = str(exc).splitlines()[0]
            raise TaskEnded(
                "protocol", f"task {state.task_id!r} completed with an invalid result: {first}", state
            ) from None


def _left(deadline: float) -> float:
    return deadline - time.monotonic()


def _error_text(error: Mapping[str, Any] | None) -> str | None:
    if not error:
        return None
    message = error.get("message")
    code = error.get("code")
    if isinstance(message, str):
        return f"{message} (MCP error {code})" if isinstance(code, int) else message
    return None
