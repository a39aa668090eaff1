"""Resource subscriptions against real servers, in both dialects of the protocol.

The sample server with ``--with-subscriptions`` serves ``sample://counter`` both ways
(``resources/subscribe`` on a 2025-11-25 session, ``connect_mode: legacy``; ``subscriptions/listen``
on a 2026-07-28 one, the default ``auto`` handshake) over stdio and streamable HTTP; the npm
"everything" server (TypeScript SDK) sends its simulated updates; an mcp 1.x low-level server in
its own venv; a server without ``resources.subscribe`` (the sample server without the flag, FastMCP
1.x) gets nothing sent and a typed error. Each checks updates arrive, the queue's bound (the oldest
dropped and counted), and the unsubscribe on close and on cancel (the server's own count).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp_helpers import free_port, http_config, http_sample_server, stdio_config
from npm_cache import reference_or_skip

from mas.runtime.contracts.server_contract import SubscribingProvider
from mas.runtime.mcp.provider import MCPToolProvider
from mas.runtime.registry import RuntimeRegistry
from mas.runtime.subscriptions import ResourceSubscription, ResourceUpdate, SubscriptionError

COUNTER = "sample://counter"
FLAGS = ("--with-resources", "--with-subscriptions")
OLD_RESOURCES_SERVER = Path(__file__).resolve().parents[1] / "servers" / "old_sdk_resources_server.py"
OLD_SUBSCRIBE_SERVER = Path(__file__).resolve().parents[1] / "servers" / "old_sdk_subscribe_server.py"
#: The two dialects: ``legacy`` negotiates 2025-11-25 (resources/subscribe), ``auto`` 2026-07-28 (listen).
DIALECTS = {"legacy": "2025-11-25", "auto": "2026-07-28"}


def _subscribers(provider: MCPToolProvider) -> dict[str, int]:
    result: dict[str, int] = provider.call_tool("subscribers", {}).result
    return result


def _eventually(check: Callable[[], bool], seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def _negotiated(provider: MCPToolProvider) -> str | None:
    conn = provider._keeper._conn
    assert conn is not None
    return conn.ready.result().protocol_version


def _held(provider: MCPToolProvider, mode: str) -> int:
    """How many subscriptions the sample server holds in the dialect of ``mode``."""
    return _subscribers(provider)["sessions" if mode == "legacy" else "streams"]


# --- the queue itself ------------------------------------------------------------------------------


def test_a_full_queue_drops_the_oldest_and_counts_it() -> None:
    sub = ResourceSubscription("s", "x://a", max_queued=3)
    for n in range(10):
        sub.push(ResourceUpdate("s", f"x://a/{n}"))
    assert sub.dropped == 7
    assert [sub.get(0).uri for _ in range(3)] == ["x://a/7", "x://a/8", "x://a/9"]  # type: ignore[union-attr]
    assert sub.get(0.01) is None  # a wait that runs out is None, not an error
    sub.end(SubscriptionError("gone", "unavailable"))
    with pytest.raises(SubscriptionError) as lost:
        sub.get(1)
    assert lost.value.kind == "unavailable"
    with pytest.raises(ValueError, match="max_queued must be at least 1"):
        ResourceSubscription("s", "x://a", max_queued=0)


# --- the sample server, both dialects, stdio ---------------------------------------------------------


@pytest.mark.parametrize("mode", sorted(DIALECTS))
def test_updates_arrive_the_bound_holds_and_close_unsubscribes(mode: str) -> None:
    with MCPToolProvider(stdio_config("sample", *FLAGS, connect_mode=mode)) as provider:
        assert isinstance(provider, SubscribingProvider)
        assert COUNTER in [r["uri"] for r in provider.list_resources()]
        sub = provider.subscribe_resource(COUNTER, max_queued=3)
        assert _negotiated(provider) == DIALECTS[mode]
        assert _held(provider, mode) == 1
        provider.call_tool("bump_counter", {"times": 2})
        assert [sub.get(10), sub.get(10)] == [ResourceUpdate("sample", COUNTER)] * 2
        assert sub.get(0.2) is None and sub.dropped == 0
        # A flood past the bound: the 3 newest wait, the 7 oldest are dropped and counted.
        provider.call_tool("bump_counter", {"times": 10})
        assert _eventually(lambda: sub.dropped == 7), sub
        assert [sub.get(1) for _ in range(4)] == [ResourceUpdate("sample", COUNTER)] * 3 + [None]
        assert provider.read_resource(COUNTER).result["contents"][0]["text"] == "12"
        sub.close()
        assert sub.closed and sub.get(0) is None and list(sub) == []
        assert _eventually(lambda: _held(provider, mode) == 0), "close() did not unsubscribe on the server"
        provider.call_tool("bump_counter", {})
        assert sub.get(0.2) is None
        sub.close()  # idempotent
        lost = provider.subscribe_resource(COUNTER)
    # The provider closed: the subscription ended with its connection, a typed error once drained.
    assert lost.closed
    with pytest.raises(SubscriptionError) as ended:
        lost.get(1)
    assert ended.value.kind == "unavailable" and "subscribe again" in str(ended.value)


@pytest.mark.parametrize("mode", sorted(DIALECTS))
def test_two_subscriptions_of_one_uri_and_the_last_close_unsubscribes(mode: str) -> None:
    with MCPToolProvider(stdio_config("sample", *FLAGS, connect_mode=mode)) as provider:
        with provider.subscribe_resource(COUNTER) as first, provider.subscribe_resource(COUNTER) as second:
            provider.call_tool("bump_counter", {})
            assert first.get(10) == second.get(10) == ResourceUpdate("sample", COUNTER)
            first.close()
            provider.call_tool("bump_counter", {})
            assert second.get(10) == ResourceUpdate("sample", COUNTER)  # still subscribed
            assert _held(provider, mode) == 1
        assert _eventually(lambda: _held(provider, mode) == 0)


@pytest.mark.parametrize("mode", sorted(DIALECTS))
def test_a_callback_gets_each_update_and_one_that_raises_does_not_stop_it(mode: str) -> None:
    seen: list[ResourceUpdate] = []

    def record(update: ResourceUpdate) -> None:
        seen.append(update)
        if len(seen) == 1:
            raise RuntimeError("the caller's bug")

    with MCPToolProvider(stdio_config("sample", *FLAGS, connect_mode=mode)) as provider:
        with provider.subscribe_resource(COUNTER, on_update=record):
            provider.call_tool("bump_counter", {"times": 3})
            assert _eventually(lambda: len(seen) == 3), seen
        assert _eventually(lambda: _held(provider, mode) == 0)


@pytest.mark.parametrize("mode", sorted(DIALECTS))
def test_async_iteration_an_async_callback_and_cancel_unsubscribes(mode: str) -> None:
    async def scenario() -> None:
        async with MCPToolProvider(stdio_config("sample", *FLAGS, connect_mode=mode)) as provider:
            seen: list[tuple[str, asyncio.AbstractEventLoop]] = []

            async def on_update(update: ResourceUpdate) -> None:
                seen.append((update.uri, asyncio.get_running_loop()))

            async with await provider.asubscribe_resource(COUNTER, on_update=on_update):
                await provider.acall_tool("bump_counter", {})
                for _ in range(200):
                    if seen:
                        break
                    await asyncio.sleep(0.05)
                assert seen == [(COUNTER, asyncio.get_running_loop())]  # on the caller's loop

            got: list[ResourceUpdate] = []

            async def consume() -> None:
                async with await provider.asubscribe_resource(COUNTER) as sub:
                    async for update in sub:
                        got.append(update)

            key = "sessions" if mode == "legacy" else "streams"
            task = asyncio.ensure_future(consume())
            for _ in range(200):
                if (await provider.acall_tool("subscribers", {})).result[key]:
                    break
                await asyncio.sleep(0.05)
            await provider.acall_tool("bump_counter", {})
            for _ in range(200):
                if got:
                    break
                await asyncio.sleep(0.05)
            task.cancel()  # leaving `async with` on cancel unsubscribes
            with pytest.raises(asyncio.CancelledError):
                await task
            assert got == [ResourceUpdate("sample", COUNTER)]
            held = -1
            for _ in range(200):
                held = (await provider.acall_tool("subscribers", {})).result[
                    "sessions" if mode == "legacy" else "streams"
                ]
                if held == 0:
                    break
                await asyncio.sleep(0.05)
            assert held == 0, "a cancelled consumer left its subscription on the server"

    asyncio.run(asyncio.wait_for(scenario(), 60))


# --- failures: typed, and nothing hangs --------------------------------------------------------------


@pytest.mark.parametrize("mode", sorted(DIALECTS))
def test_a_server_without_the_capability_gets_nothing_sent_and_a_typed_error(mode: str) -> None:
    with MCPToolProvider(stdio_config("sample", "--with-resources", connect_mode=mode)) as provider:
        with pytest.raises(SubscriptionError) as refused:
            provider.subscribe_resource("sample://guide")
        assert refused.value.kind == "protocol"
        assert "does not declare resources.subscribe" in str(refused.value)
        assert str(refused.value).startswith("MCP server 'sample': subscribe to 'sample://guide' not sent")


def test_a_timeout_and_a_closed_provider_are_typed_errors() -> None:
    provider = MCPToolProvider(stdio_config("sample", *FLAGS))
    with provider:
        with pytest.raises(SubscriptionError) as slow:
            provider.subscribe_resource(COUNTER, timeout_seconds=1e-9)
        assert slow.value.kind == "timeout"
        with provider.subscribe_resource(COUNTER) as sub:  # the session survived it
            provider.call_tool("bump_counter", {})
            assert sub.get(10) is not None
    with pytest.raises(SubscriptionError) as closed:
        provider.subscribe_resource(COUNTER)
    assert closed.value.kind == "unavailable" and "closed" in str(closed.value)


def test_a_server_that_exits_ends_its_subscriptions_with_a_typed_error() -> None:
    with MCPToolProvider(stdio_config("sample", *FLAGS, "--with-crash-tool", connect_mode="legacy")) as provider:
        sub = provider.subscribe_resource(COUNTER)
        provider.call_tool("crash", {"code": 3})
        with pytest.raises(SubscriptionError) as lost:
            sub.get(20)
        assert lost.value.kind == "unavailable"
        sub.close()  # nothing left to unsubscribe: returns at once


# --- the registry routes to the owning server -------------------------------------------------------


def test_the_registry_routes_a_subscription_to_the_server_that_lists_the_uri() -> None:
    providers = {
        "plain": MCPToolProvider(stdio_config("plain", "--with-resources")),
        "counting": MCPToolProvider(stdio_config("counting", *FLAGS)),
    }
    with RuntimeRegistry(providers) as registry:
        with registry.subscribe_resource(COUNTER) as sub:
            assert sub.server == "counting"
            registry.call_tool("bump_counter", {})
            assert sub.get(10) == ResourceUpdate("counting", COUNTER)
        with pytest.raises(SubscriptionError) as unknown:
            registry.subscribe_resource("nowhere://x")
        assert unknown.value.kind == "unknown_tool"
        with pytest.raises(SubscriptionError) as refused:
            registry.subscribe_resource("sample://guide", server="plain")
        assert refused.value.kind == "protocol"

        async def twin() -> ResourceUpdate | None:
            async with await registry.asubscribe_resource(COUNTER) as sub:
                await registry.acall_tool("bump_counter", {})
                return await sub.aget(10)

        assert asyncio.run(twin()) == ResourceUpdate("counting", COUNTER)


# --- streamable HTTP, both dialects -----------------------------------------------------------------


@pytest.mark.parametrize("mode", sorted(DIALECTS))
def test_over_streamable_http(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    token = "sub-token"
    monkeypatch.setenv("SUB_TOKEN", token)
    port = free_port()
    with http_sample_server(port, token, *FLAGS):
        headers = {"Authorization": "Bearer env:SUB_TOKEN"}
        config = http_config("web", f"http://127.0.0.1:{port}/mcp", headers=headers, connect_mode=mode)
        with MCPToolProvider(config) as provider:
            with provider.subscribe_resource(COUNTER, max_queued=2) as sub:
                assert _negotiated(provider) == DIALECTS[mode]
                provider.call_tool("bump_counter", {"times": 5})
                assert _eventually(lambda: sub.dropped == 3), sub
                assert [sub.get(10), sub.get(10), sub.get(0.2)] == [ResourceUpdate("web", COUNTER)] * 2 + [None]
            assert _eventually(lambda: _held(provider, mode) == 0)


# --- the reference "everything" server (TypeScript SDK) ----------------------------------------------


@pytest.mark.timeout(600)  # a cold cache installs the server from npm first
def test_the_everything_server_sends_updates_to_a_subscription() -> None:
    programs = reference_or_skip()
    config = stdio_config("everything", "stdio", script=programs.everything, command=str(programs.node), env={})
    with MCPToolProvider(config) as provider:
        uri = provider.list_resources()[0]["uri"]
        with provider.subscribe_resource(uri) as sub:
            # The server sends one update for each subscribed URI at once, then every 5 s.
            assert not provider.call_tool("toggle-subscriber-updates", {}).is_error
            assert sub.get(20) == ResourceUpdate("everything", uri)
        provider.call_tool("toggle-subscriber-updates", {})  # stop its timer


# --- mcp 1.x in its own venv -------------------------------------------------------------------------


def _old(script: Path, version: str) -> MCPToolProvider:
    from old_sdk import old_sdk_python

    python = str(old_sdk_python(version))
    return MCPToolProvider(
        stdio_config("old", script=script, connect_mode="legacy", command=python, env={}, exit_grace_seconds=0.2)
    )


@pytest.mark.timeout(600)  # a cold cache builds the old SDK's venv first
def test_an_old_sdk_server_that_declares_subscribe_sends_updates_and_gets_the_unsubscribe() -> None:
    with _old(OLD_SUBSCRIBE_SERVER, "1.30.0") as provider:
        with provider.subscribe_resource("memo://note") as sub:
            assert json.loads(provider.call_tool("subscribed", {}).text) == 1
            provider.call_tool("touch", {})
            assert sub.get(10) == ResourceUpdate("old", "memo://note")
        assert json.loads(provider.call_tool("subscribed", {}).text) == 0


@pytest.mark.timeout(600)
def test_fastmcp_1x_never_declares_subscribe_so_nothing_is_sent() -> None:
    with _old(OLD_RESOURCES_SERVER, "1.30.0") as provider:
        with pytest.raises(SubscriptionError) as refused:
            provider.subscribe_resource("docs://readme")
        assert refused.value.kind == "protocol"
