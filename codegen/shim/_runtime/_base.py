"""The base classes of a generated ``Tools`` (sync) and ``AsyncTools``: one call, sent and decoded."""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, Self, TypeVar, Unpack, cast

from .. import _rules
from ._decode import decode_envelope, decode_result, normalize_envelope
from ._omit import without_omitted
from ._options import CallOptions, SupportsAsyncCallTool, SupportsCallTool, checked_options, forwarded
from ._plan import CallPlan
from ._task import AsyncToolTask, ToolTask, status_of

if TYPE_CHECKING:
    from ._decode import ToolResult
    from ._info import ToolInfo

__all__ = [
    "AsyncToolsBase",
    "AsyncToolsResultsBase",
    "AsyncToolsTasksBase",
    "ToolsBase",
    "ToolsResultsBase",
    "ToolsTasksBase",
]

T = TypeVar("T")
_P = TypeVar("_P")  # the provider type a tools class accepts
_R = TypeVar("_R")  # a whole-result class
# A value method's parameters. Its *args/**kwargs here are spelt with a leading "_", which no
# generated parameter has: pyright reads a parameter named "kwargs" as this **kwargs otherwise.
_A = ParamSpec("_A")


class _ToolsCore(Generic[_P]):
    """What the sync and async bases share: a provider and the call options."""

    def __init__(self, provider: _P, options: CallOptions | None = None) -> None:
        self._provider = provider
        self._options: CallOptions = checked_options(options)

    def with_options(self, **options: Unpack[CallOptions]) -> Self:
        """A new instance of this class with ``options`` merged over the current ones."""
        merged = checked_options({**self._options, **options})
        return type(self)(self._provider, merged)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._provider!r}, {dict(self._options)!r})"

    def _results(self, cls: Callable[[_P, CallOptions], _R]) -> _R:
        """The whole-result twin of this instance (``.results``), made once and kept."""
        twin: _R | None = self.__dict__.get("_results_twin")
        if twin is None:
            twin = self.__dict__["_results_twin"] = cls(self._provider, self._options)
        return twin

    def _tasks(self, cls: Callable[[_P, CallOptions], _R]) -> _R:
        """The task-starting twin of this instance (``.tasks``), made once and kept."""
        twin: _R | None = self.__dict__.get("_tasks_twin")
        if twin is None:
            twin = self.__dict__["_tasks_twin"] = cls(self._provider, self._options)
        return twin


class _Whole:
    """What ``_call`` returns inside a whole-result class: its ``.value`` is the whole
    ``ToolResult``, so a value method's own ``return self._call(...).value`` returns all of it."""

    __slots__ = ("value",)

    def __init__(self, result: object) -> None:
        self.value = result


class ToolsBase(_ToolsCore[SupportsCallTool]):
    """Base of a generated synchronous ``Tools`` class."""

    def _call(self, info: ToolInfo[T], arguments: dict[str, Any]) -> ToolResult[T]:
        if not self._options:  # nothing to confirm, retry or answer: one send, one decode
            # The generated method built ``arguments`` for this call alone: no copy unless some are dropped.
            return decode_result(info, self._send(info, without_omitted(arguments), {}))
        plan = CallPlan(info, without_omitted(arguments), self._options)
        answer = plan.confirmation()
        plan.confirmed(_run_awaitable(info, answer) if inspect.isawaitable(answer) else answer)
        while True:
            envelope = normalize_envelope(self._send(info, plan.arguments, plan.options))
            delay = plan.retry_delay(envelope)
            if delay is not None:
                time.sleep(delay)
                continue
            requests = plan.input_needed(envelope)
            if requests is None:
                return decode_envelope(info, envelope)
            responses = plan.ask(requests)
            plan.answered(_run_awaitable(info, responses) if inspect.isawaitable(responses) else responses)

    def _send(self, info: ToolInfo[Any], arguments: dict[str, Any], options: Mapping[str, object]) -> object:
        call_tool: object = getattr(self._provider, "call_tool", None)
        if not callable(call_tool):  # the caller's mistake, not the tool's: no ToolError
            raise TypeError(f"tool {info.name!r}: the provider has no call_tool")
        if options:
            raw = call_tool(info.name, arguments, **forwarded(self._provider, "call_tool", options))
        else:  # the common case: no options, so no signature lookup at all
            raw = call_tool(info.name, arguments)
        if inspect.isawaitable(raw):
            raw = _run_awaitable(info, raw)
        return raw


def _run_awaitable(info: ToolInfo[Any], awaitable: Awaitable[object]) -> object:
    # The runtime's one running-loop policy (``_rules.run_sync``): a fresh loop, in a helper
    # thread when this thread already runs one (a notebook), so sync Tools work there too.
    return _rules.run_sync(awaitable)


class ToolsResultsBase(ToolsBase):
    """Base of a generated ``...ToolsResults`` class: each method runs the value method of the same
    tool on this instance (a thin wrapper, as ``with_raw_response`` in the Stainless SDKs), and
    returns the whole ``ToolResult`` instead of its value."""

    def _call(self, info: ToolInfo[T], arguments: dict[str, Any]) -> ToolResult[T]:
        return cast("ToolResult[T]", _Whole(super()._call(info, arguments)))

    def _whole(
        self, method: Callable[Concatenate[Any, _A], T], /, *_args: _A.args, **_kwargs: _A.kwargs
    ) -> ToolResult[T]:
        return cast("ToolResult[T]", method(self, *_args, **_kwargs))


class AsyncToolsBase(_ToolsCore[SupportsCallTool | SupportsAsyncCallTool]):
    """Base of a generated ``AsyncTools`` class; works with sync and async providers."""

    async def _call(self, info: ToolInfo[T], arguments: dict[str, Any]) -> ToolResult[T]:
        if not self._options:  # nothing to confirm, retry or answer: one send, one decode
            return decode_result(info, await self._send(info, without_omitted(arguments), {}))
        plan = CallPlan(info, without_omitted(arguments), self._options)
        answer = plan.confirmation()
        plan.confirmed(await answer if inspect.isawaitable(answer) else answer)
        while True:
            envelope = normalize_envelope(await self._send(info, plan.arguments, plan.options))
            delay = plan.retry_delay(envelope)
            if delay is not None:
                import asyncio

                await asyncio.sleep(delay)
                continue
            requests = plan.input_needed(envelope)
            if requests is None:
                return decode_envelope(info, envelope)
            responses = plan.ask(requests)
            plan.answered(await responses if inspect.isawaitable(responses) else responses)

    async def _send(self, info: ToolInfo[Any], arguments: dict[str, Any], options: Mapping[str, object]) -> object:
        """The runtime's one dispatch rule (``_rules.acall_provider``): await ``acall_tool`` when the
        provider has it, else ``call_tool`` (in a worker thread when it is synchronous, so the event
        loop is never blocked)."""
        return await _rules.acall_provider(self._provider, info.name, arguments, options)


class AsyncToolsResultsBase(AsyncToolsBase):
    """The async ``ToolsResultsBase``: each method awaits the value method on this instance."""

    async def _call(self, info: ToolInfo[T], arguments: dict[str, Any]) -> ToolResult[T]:
        return cast("ToolResult[T]", _Whole(await super()._call(info, arguments)))

    async def _whole(
        self, method: Callable[Concatenate[Any, _A], Awaitable[T]], /, *_args: _A.args, **_kwargs: _A.kwargs
    ) -> ToolResult[T]:
        return cast("ToolResult[T]", await method(self, *_args, **_kwargs))


def _starting(info: ToolInfo[Any], arguments: dict[str, Any], options: CallOptions) -> CallPlan:
    return CallPlan(info, without_omitted(arguments), cast("CallOptions", {**options, "allow_claimed": True}))


class ToolsTasksBase(ToolsBase):
    """Base of a generated ``...ToolsTasks`` class: each method starts its tool as a task and
    returns a ``ToolTask`` at once (a thin wrapper over the value method, as ``.results``)."""

    def _call(self, info: ToolInfo[T], arguments: dict[str, Any]) -> ToolResult[T]:
        plan = _starting(info, arguments, self._options)
        answer = plan.confirmation()
        plan.confirmed(_run_awaitable(info, answer) if inspect.isawaitable(answer) else answer)
        while True:  # a server may ask before it decides to start the task
            envelope = normalize_envelope(self._send(info, plan.arguments, plan.options))
            requests = plan.input_needed(envelope)
            if requests is None:
                break
            responses = plan.ask(requests)
            plan.answered(_run_awaitable(info, responses) if inspect.isawaitable(responses) else responses)
        status = status_of(info, envelope)
        if status is None:  # answered at once: a task that is already done
            done = (decode_envelope(info, envelope).value,)
            return cast(
                "ToolResult[T]", _Whole(ToolTask(info, "", self._options, self._send, self._follow, None, done))
            )
        task = ToolTask(info, status.task_id, self._options, self._send, self._follow, status)
        return cast("ToolResult[T]", _Whole(task))

    def _follow(self, info: ToolInfo[Any], options: CallOptions) -> object:
        return ToolsBase(self._provider, options)._call(info, {}).value

    def _task(self, method: Callable[Concatenate[Any, _A], T], /, *_args: _A.args, **_kwargs: _A.kwargs) -> ToolTask[T]:
        return cast("ToolTask[T]", method(self, *_args, **_kwargs))

    def resume(self, info: ToolInfo[T], task_id: str) -> ToolTask[T]:
        """The task ``task_id`` of the tool ``info`` (``TOOLS[wire name]``), started elsewhere."""
        return ToolTask(info, task_id, self._options, self._send, self._follow)


class AsyncToolsTasksBase(AsyncToolsBase):
    """The async ``ToolsTasksBase``: each method starts the task and returns an ``AsyncToolTask``."""

    async def _call(self, info: ToolInfo[T], arguments: dict[str, Any]) -> ToolResult[T]:
        plan = _starting(info, arguments, self._options)
        answer = plan.confirmation()
        plan.confirmed(await answer if inspect.isawaitable(answer) else answer)
        while True:
            envelope = normalize_envelope(await self._send(info, plan.arguments, plan.options))
            requests = plan.input_needed(envelope)
            if requests is None:
                break
            responses = plan.ask(requests)
            plan.answered(await responses if inspect.isawaitable(responses) else responses)
        status = status_of(info, envelope)
        if status is None:
            done = (decode_envelope(info, envelope).value,)
            task = AsyncToolTask(info, "", self._options, self._send, self._follow, None, done)
            return cast("ToolResult[T]", _Whole(task))
        return cast(
            "ToolResult[T]",
            _Whole(AsyncToolTask(info, status.task_id, self._options, self._send, self._follow, status)),
        )

    async def _follow(self, info: ToolInfo[Any], options: CallOptions) -> object:
        return (await AsyncToolsBase(self._provider, options)._call(info, {})).value

    async def _task(
        self, method: Callable[Concatenate[Any, _A], Awaitable[T]], /, *_args: _A.args, **_kwargs: _A.kwargs
    ) -> AsyncToolTask[T]:
        return cast("AsyncToolTask[T]", await method(self, *_args, **_kwargs))

    def resume(self, info: ToolInfo[T], task_id: str) -> AsyncToolTask[T]:
        """The task ``task_id`` of the tool ``info`` (``TOOLS[wire name]``), started elsewhere."""
        return AsyncToolTask(info, task_id, self._options, self._send, self._follow)
