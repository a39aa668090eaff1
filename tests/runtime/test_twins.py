"""Sync and async twins follow one rule: closing (``close``/``aclose``), the dispatch of a call to
sync or async callables (``_rules.acall_provider``), the running-loop policy (``_rules.run_sync``)
and the call options (``CallOptions``, checked once, one message)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from mcp_helpers import stdio_config

from mas.runtime.contracts import _rules
from mas.runtime.contracts.tool_contract import (
    CALL_KWARGS,
    CallOptions,
    ToolContract,
    acall_with_options,
    call_with_options,
    resolve_awaitable,
)
from mas.runtime.local import LocalToolRegistry
from mas.runtime.mcp.provider import MCPToolProvider
from mas.runtime.registry import RuntimeRegistry


class AsyncFailingClose(ToolContract):
    name = "async_failing"

    def execute(self, **kwargs: Any) -> str:
        return "ok"

    def close(self) -> None:
        raise RuntimeError("async_failing: its sync close failed")

    async def aclose(self) -> None:
        raise RuntimeError("async_failing: its aclose failed")


class FailingClose(ToolContract):
    name = "failing"

    def execute(self, **kwargs: Any) -> str:
        return "ok"

    def close(self) -> None:
        raise RuntimeError("failing: its close failed")


def _three_providers() -> tuple[RuntimeRegistry, MCPToolProvider]:
    server = MCPToolProvider(stdio_config("ok"))
    providers = {
        "ok": server,
        "async_failing": LocalToolRegistry([AsyncFailingClose()], name="async_failing"),
        "failing": LocalToolRegistry([FailingClose()], name="failing"),
    }
    return RuntimeRegistry(providers), server  # listing starts the sample server over stdio


def _closed(server: MCPToolProvider) -> bool:
    envelope = server.call_tool("echo", {"text": "still there?"})
    return envelope.error_kind == "unavailable" and "the provider is closed" in envelope.text


@pytest.mark.parametrize("how", ["close", "aclose"])
def test_close_and_aclose_close_every_provider_and_raise_the_first_error(how: str) -> None:
    registry, server = _three_providers()
    assert not _closed(server)
    with pytest.raises(RuntimeError) as info:
        if how == "close":
            registry.close()
        else:
            asyncio.run(registry.aclose())
    # Last opened first: "failing" is closed first and its error is the one raised; the other is kept.
    assert str(info.value) == "failing: its close failed"
    twin = "its sync close failed" if how == "close" else "its aclose failed"
    assert info.value.__notes__ == [f"also failed while closing: RuntimeError: async_failing: {twin}"]
    assert _closed(server)  # the real server behind the first provider was stopped all the same


class Recorder:
    """Records which thread and which method served a call."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, dict[str, Any]]] = []


class SyncOnly(Recorder):
    def call_tool(self, tool_name: str, arguments: dict[str, Any], *, timeout_seconds: float | None = None) -> str:
        self.seen.append(("call_tool", threading.current_thread().name, {"timeout_seconds": timeout_seconds}))
        return "sync"


class CoroutineOnly(Recorder):
    async def call_tool(self, tool_name: str, arguments: dict[str, Any], **options: Any) -> str:
        self.seen.append(("call_tool", threading.current_thread().name, options))
        return "coroutine"


class Both(Recorder):
    def call_tool(self, tool_name: str, arguments: dict[str, Any]) -> str:
        raise AssertionError("acall_tool is preferred")

    async def acall_tool(self, tool_name: str, arguments: dict[str, Any], *, user: str = "") -> str:
        self.seen.append(("acall_tool", threading.current_thread().name, {"user": user}))
        return "async"


@pytest.mark.parametrize(
    ("provider", "method", "on_loop_thread", "received"),
    [
        (SyncOnly, "call_tool", False, {"timeout_seconds": 2.0}),
        (CoroutineOnly, "call_tool", True, {"timeout_seconds": 2.0, "user": "u"}),
        (Both, "acall_tool", True, {"user": "u"}),
    ],
)
def test_one_dispatch_rule_prefers_acall_tool_else_awaits_or_threads_call_tool(
    provider: type[Recorder], method: str, on_loop_thread: bool, received: dict[str, Any]
) -> None:
    callee = provider()

    async def run() -> tuple[object, str]:
        options = {"timeout_seconds": 2.0, "user": "u", "meta": None}
        return await _rules.acall_provider(callee, "t", {}, options), threading.current_thread().name

    value, loop_thread = asyncio.run(run())
    assert value in ("sync", "coroutine", "async")
    [(called, thread, options)] = callee.seen
    assert (called, thread == loop_thread, options) == (method, on_loop_thread, received)


def test_a_provider_without_call_tool_is_a_caller_bug() -> None:
    with pytest.raises(TypeError, match="the provider has no call_tool or acall_tool"):
        asyncio.run(_rules.acall_provider(object(), "t", {}, {}))


async def _answer() -> str:
    await asyncio.sleep(0)
    return "answered"


def test_a_coroutine_from_sync_code_runs_without_a_loop_and_inside_a_running_one() -> None:
    assert resolve_awaitable(_answer()) == "answered"
    assert resolve_awaitable("plain") == "plain"

    async def inside() -> object:
        return _rules.run_sync(_answer())  # a sync call made from async code: a helper thread runs it

    assert asyncio.run(inside()) == "answered"


def test_call_options_are_the_contract_options_checked_once_with_one_message() -> None:
    assert CallOptions is _rules.CallOptions  # one definition, for the runtime and every package
    assert tuple(CallOptions.__annotations__) == CALL_KWARGS
    assert _rules.checked_options({"timeout_seconds": 0, "user": None}) == {"timeout_seconds": 0}
    with pytest.raises(TypeError) as info:
        _rules.checked_options({"retries": 2, "colour": "red"})
    assert str(info.value) == f"unknown call option(s): colour, retries; known: {', '.join(CALL_KWARGS)}"


class Counted(ToolContract):
    name = "counted"

    def __init__(self) -> None:
        self.entered: list[str] = []
        self.arguments: list[object] = []

    def execute(self, **kwargs: Any) -> str:
        return "ran"

    def call_checked(self, tool_name: str, arguments: Any, options: CallOptions) -> Any:
        self.entered.append("call_checked")
        self.arguments.append(arguments)
        return super().call_checked(tool_name, arguments, options)


class OverridesCallTool(Counted):
    def call_tool(self, tool_name: str, arguments: Any, *, timeout_seconds: float | None = None) -> Any:
        self.entered.append(f"call_tool {timeout_seconds}")
        return super().call_tool(tool_name, arguments)


def test_a_checked_value_goes_whole_to_a_tool_unless_it_overrides_call_tool() -> None:
    """The registry's one value reaches a runtime provider or a plain ToolContract through
    ``call_checked`` (no second check or filtering); a tool that overrides ``call_tool`` is still
    called through it, with the options it declares."""
    options: CallOptions = {"timeout_seconds": 2.0, "user": "u"}
    arguments: dict[str, Any] = {}
    plain, overriding = Counted(), OverridesCallTool()
    assert call_with_options(plain, "counted", arguments, options).result == "ran"
    assert asyncio.run(acall_with_options(plain, "counted", arguments, options)).result == "ran"
    assert plain.entered == ["call_checked", "call_checked"]
    assert all(seen is arguments for seen in plain.arguments)  # not copied on the way
    assert call_with_options(overriding, "counted", {}, options).result == "ran"
    assert asyncio.run(acall_with_options(overriding, "counted", {}, options)).result == "ran"
    assert overriding.entered == ["call_tool 2.0", "call_checked", "call_tool 2.0", "call_checked"]


class AsyncOnly:
    async def acall_tool(self, tool_name: str, arguments: dict[str, Any], **options: Any) -> str:
        await asyncio.sleep(0)
        return f"{tool_name}: {arguments}"


def test_code_modes_sync_adapter_over_an_async_provider_follows_the_running_loop_policy() -> None:
    from mas.runtime.code_mode.core import _sync_provider

    adapter = _sync_provider(AsyncOnly())
    assert adapter.call_tool("t", {"a": 1}) == "t: {'a': 1}"

    async def inside() -> object:
        return adapter.call_tool("t", {"a": 2})  # from a thread that runs a loop: a helper thread

    assert asyncio.run(inside()) == "t: {'a': 2}"
    with pytest.raises(TypeError, match="the provider has no call_tool or acall_tool"):
        _sync_provider(object())
