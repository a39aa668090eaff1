"""MCPToolProvider against real MCP servers (the sample server and the misbehaving ones in
tests/servers), over stdio and streamable HTTP on 127.0.0.1. Nothing on the MCP path is mocked.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import secrets
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import free_port, http_config, http_sample_server, stdio_config

from mas.runtime.config import ConfigError, MCPServerConfig
from mas.runtime.contracts.tool_contract import ToolResultEnvelope, ainvoke_call_tool, invoke_call_tool
from mas.runtime.infra import load_infra
from mas.runtime.mcp.provider import LoopThreadError, MCPToolProvider, ToolServerError
from mas.samples import mcp_server as sample

REPO = Path(__file__).resolve().parents[2]
SERVERS = REPO / "tests" / "servers"
DEFAULT_TOOLS = [
    "get_weather",
    "search-docs",
    "notes.create",
    "notes.delete",
    "count_slowly",
    "whoami",
    "list_cities",
    "greet",
    "flaky_lookup",
]
TOKEN_VAR = "TOOLGEN_TEST_MCP_TOKEN"


# --- servers and providers ------------------------------------------------------------------
@pytest.fixture(scope="module")
def http_server() -> Iterator[tuple[str, str]]:
    """The sample server over streamable HTTP (page size 2); yields (url, server token)."""
    token = secrets.token_urlsafe(24)
    port = free_port()
    with http_sample_server(port, token, "--page-size", "2"):
        yield f"http://127.0.0.1:{port}/mcp", token


@pytest.fixture(scope="module")
def stdio_provider() -> Iterator[MCPToolProvider]:
    with MCPToolProvider(stdio_config("sample", "--page-size", "2")) as provider:
        yield provider


@pytest.fixture(scope="module")
def http_provider(http_server: tuple[str, str]) -> Iterator[MCPToolProvider]:
    url, token = http_server
    os.environ[TOKEN_VAR] = token  # module scope: monkeypatch is per test
    try:
        config = http_config("sample", url, headers={"Authorization": f"Bearer env:{TOKEN_VAR}"})
        with MCPToolProvider(config) as provider:
            yield provider
    finally:
        os.environ.pop(TOKEN_VAR, None)


@pytest.fixture(params=["stdio", "http"])
def provider(request: pytest.FixtureRequest) -> MCPToolProvider:
    fixture = "stdio_provider" if request.param == "stdio" else "http_provider"
    result: MCPToolProvider = request.getfixturevalue(fixture)
    return result


def sample_children() -> list[int]:
    """Live (non-zombie) child processes of this test process that run an MCP test server."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        state, ppid = fields[0], int(fields[1])
        if ppid == os.getpid() and state != "Z" and ("mcp_server" in cmdline or "tests/servers" in cmdline):
            pids.append(int(entry.name))
    return pids


def loop_threads(provider: MCPToolProvider) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == f"MCP server {provider.name!r}-loop"]


# --- listing ---------------------------------------------------------------------------------
def test_lists_every_page_in_server_order(provider: MCPToolProvider) -> None:
    raw = provider.list_mcp_tools()
    assert [t["name"] for t in raw] == DEFAULT_TOOLS  # 9 tools over 5 pages of 2; no `crash`
    weather = raw[0]
    assert weather["inputSchema"]["required"] == ["city"]
    assert weather["outputSchema"]["required"] == ["city", "temperature", "conditions", "humidity"]
    assert weather["annotations"] == {"title": "Current weather", "readOnlyHint": True, "openWorldHint": False}

    entries = {e["name"]: e for e in provider.list_tools()}
    assert list(entries) == DEFAULT_TOOLS
    get_weather = entries["get_weather"]
    assert get_weather["title"] == "Current weather"
    assert get_weather["parameters"] == weather["inputSchema"]
    assert get_weather["output_schema"] == weather["outputSchema"]
    assert (get_weather["read_only"], get_weather["open_world"]) == (True, False)
    assert get_weather["annotations"] == {"readOnlyHint": True, "openWorldHint": False}
    assert entries["notes.delete"]["destructive"] is True
    assert "output_schema" not in entries["notes.delete"]
    assert entries["notes.create"]["idempotent"] is False
    assert set(entries["count_slowly"]) == {"name", "description", "parameters"}


def test_follow_pagination_false_returns_only_the_first_page(http_server: tuple[str, str]) -> None:
    with MCPToolProvider(http_config("first-page", http_server[0], follow_pagination=False)) as provider:
        assert [t["name"] for t in provider.list_tools()] == ["get_weather", "search-docs"]


def test_repeating_cursor_is_cut_off_with_a_clear_error() -> None:
    with MCPToolProvider(stdio_config("looper", script=SERVERS / "cursor_loop_server.py")) as provider:
        with pytest.raises(ToolServerError) as info:
            provider.list_tools()
    message = str(info.value)
    assert message == "MCP server 'looper': tools/list repeated cursor 'same-cursor' on page 3; stopped paging"
    assert isinstance(info.value, RuntimeError)


def test_more_pages_than_max_pages_is_an_error(http_server: tuple[str, str]) -> None:
    with MCPToolProvider(http_config("pages", http_server[0], max_pages=2)) as provider:  # 4 pages of 2
        with pytest.raises(ToolServerError) as info:
            provider.list_tools()
    assert str(info.value) == "MCP server 'pages': tools/list returned more than max_pages=2 pages; stopped paging"


def test_explicit_tools_skip_discovery() -> None:
    tool = {"name": "remote_echo", "description": "Echo", "inputSchema": {"type": "object"}, "title": "Echo"}
    config = MCPServerConfig(name="fixed", transport="stdio", command="/nonexistent/mcp-server", tools=(tool,))
    with MCPToolProvider(config) as provider:
        assert provider.list_mcp_tools() == [tool]
        assert provider.list_tools() == [
            {"name": "remote_echo", "description": "Echo", "parameters": {"type": "object"}, "title": "Echo"}
        ]
        # Calling still needs the server, which does not exist: an envelope, not an exception.
        envelope = provider.call_tool("remote_echo", {})
        assert envelope.is_error and "MCP server 'fixed': tools/call 'remote_echo' failed: could not connect" in (
            envelope.result
        )
    bad = MCPServerConfig(name="fixed", transport="stdio", command="x", tools=({"description": "no name"},))
    with MCPToolProvider(bad) as provider, pytest.raises(ToolServerError, match="explicit tools\\[0\\]"):
        provider.list_tools()


def test_listing_cache_per_provider_and_per_process() -> None:
    # The server allows reuse (2026 cache hints): a shorter ttlMs, or a private listing, would win.
    allow = ("--list-ttl-ms", "60000", "--list-cache-scope", "public")
    config = stdio_config("cached", "--with-crash-tool", *allow, cache_ttl_ms=60_000)
    with MCPToolProvider(config) as provider:
        first = provider.list_tools()
        assert provider.call_tool("crash", {}).is_error  # the server is gone now ...
        assert provider.list_tools() == first  # ... yet the cached listing still answers
        first[0]["name"] = "mutated"
        assert provider.list_tools()[0]["name"] == "get_weather"  # callers get copies

    shared = stdio_config("shared", *allow, cache_ttl_ms=60_000, cache_scope="process")
    with MCPToolProvider(shared) as one:
        names = [t["name"] for t in one.list_tools()]
    baseline = sample_children()
    # Same identity, fresh provider: served from the process cache, no server started.
    with MCPToolProvider(shared) as two:
        assert [t["name"] for t in two.list_tools()] == names
        assert sample_children() == baseline


# --- calling ---------------------------------------------------------------------------------
def test_structured_result_is_decoded(provider: MCPToolProvider) -> None:
    envelope = provider.call_tool("get_weather", {"city": "Paris", "units": "fahrenheit"})
    expected = sample.get_weather("Paris", "fahrenheit")
    assert envelope.status == "success" and envelope.is_error is False
    assert envelope.result == expected
    assert envelope.structured_content == expected
    assert envelope.content == [
        {"type": "text", "text": f"Paris: {expected['temperature']} degrees, {expected['conditions']}"}
    ]
    assert envelope.result_type == "complete" and "result_type" not in envelope.to_dict()

    found = provider.call_tool("search-docs", {"query": "mcp pagination", "limit": 2, "filters": {"tags": ["mcp"]}})
    assert found.result == sample.search_docs("mcp pagination", 2, {"tags": ["mcp"]})
    assert found.result["results"][0]["title"] == "Pagination in tools/list"


def test_error_result_keeps_structured_content(provider: MCPToolProvider) -> None:
    created = provider.call_tool("notes.create", {"title": "t", "body": "b", "tags": ["x"]})
    note_id = created.result["id"]
    assert created.result == {"id": note_id, "title": "t"}
    assert provider.call_tool("notes.delete", {"id": note_id}).text == f"deleted note {note_id}"

    missing = provider.call_tool("notes.delete", {"id": note_id})
    assert missing.is_error is True and missing.status == "error"
    assert missing.structured_content == {"code": "not_found", "id": note_id}
    assert missing.result == {"code": "not_found", "id": note_id}
    assert missing.content == [{"type": "text", "text": f"note {note_id} not found"}]


def test_unknown_tool_is_an_error_envelope(provider: MCPToolProvider) -> None:
    envelope = provider.call_tool("no_such_tool", {"a": 1})
    assert envelope.is_error
    assert envelope.result == (
        "MCP server 'sample': tools/call 'no_such_tool' failed: Unknown tool: no_such_tool (MCP error -32602)"
    )


def test_timeout_returns_a_clear_error_and_keeps_the_session(provider: MCPToolProvider) -> None:
    provider.call_tool("get_weather", {"city": "warm-up"})  # connect outside the measured window
    start = time.monotonic()
    envelope = provider.call_tool("count_slowly", {"steps": 100, "delay_seconds": 0.5}, timeout_seconds=1.0)
    elapsed = time.monotonic() - start
    assert envelope.is_error
    assert envelope.result == "MCP server 'sample': tools/call 'count_slowly' timed out after 1.0 s"
    assert 0.9 < elapsed < 3.0
    assert provider.call_tool("get_weather", {"city": "Oslo"}).result == sample.get_weather("Oslo")


def test_progress_reaches_the_callback_in_order(provider: MCPToolProvider) -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    envelope = provider.call_tool(
        "count_slowly", {"steps": 4, "delay_seconds": 0.02}, progress_callback=lambda *a: seen.append(a)
    )
    assert envelope.result == "counted to 4"
    assert seen == [(float(i), 4.0, f"step {i}/4") for i in range(1, 5)]


def test_async_progress_callback_runs_on_the_callers_loop(stdio_provider: MCPToolProvider) -> None:
    async def main() -> list[tuple[float, float | None, bool]]:
        caller = asyncio.get_running_loop()
        seen: list[tuple[float, float | None, bool]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            await asyncio.sleep(0)
            seen.append((progress, total, asyncio.get_running_loop() is caller))

        envelope = await stdio_provider.acall_tool(
            "count_slowly", {"steps": 3, "delay_seconds": 0.02}, progress_callback=on_progress
        )
        assert envelope.result == "counted to 3"
        return seen

    assert asyncio.run(main()) == [(1.0, 3.0, True), (2.0, 3.0, True), (3.0, 3.0, True)]


def test_cancel_event_stops_a_slow_call(provider: MCPToolProvider) -> None:
    event = threading.Event()
    timer = threading.Timer(0.3, event.set)
    timer.start()
    start = time.monotonic()
    envelope = provider.call_tool("count_slowly", {"steps": 100, "delay_seconds": 0.5}, cancel_event=event)
    elapsed = time.monotonic() - start
    assert envelope.is_error
    assert (
        envelope.result == "MCP server 'sample': tools/call 'count_slowly' was cancelled by the caller (cancel_event)"
    )
    assert elapsed < 5  # the call it cancels would count for 50 s
    already = provider.call_tool("get_weather", {"city": "Rome"}, cancel_event=event)
    assert already.is_error and "cancelled before it started" in already.result
    assert provider.call_tool("get_weather", {"city": "Rome"}).is_error is False


def test_asyncio_cancel_event_with_acall_tool(http_provider: MCPToolProvider) -> None:
    async def main() -> tuple[ToolResultEnvelope, float]:
        event = asyncio.Event()
        asyncio.get_running_loop().call_later(0.3, event.set)
        start = time.monotonic()
        envelope = await http_provider.acall_tool(
            "count_slowly", {"steps": 100, "delay_seconds": 0.5}, cancel_event=event
        )
        return envelope, time.monotonic() - start

    envelope, elapsed = asyncio.run(main())
    assert envelope.is_error and "was cancelled by the caller" in envelope.result
    assert elapsed < 5  # the call it cancels would count for 50 s


def test_cancelling_the_awaiting_task_cancels_the_call(http_provider: MCPToolProvider) -> None:
    async def main() -> float:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(http_provider.acall_tool("count_slowly", {"steps": 100, "delay_seconds": 0.5}), 0.3)
        start = time.monotonic()
        assert (await http_provider.acall_tool("get_weather", {"city": "Lagos"})).result == sample.get_weather("Lagos")
        return time.monotonic() - start

    assert asyncio.run(main()) < 1.0  # the session was not left busy or broken


def test_server_exit_mid_call_is_reported_and_the_next_call_reconnects() -> None:
    with MCPToolProvider(stdio_config("crashy", "--with-crash-tool")) as provider:
        baseline = set(sample_children())
        assert provider.list_mcp_tools()[-1]["name"] == "crash"
        before = set(sample_children()) - baseline
        assert len(before) == 1
        envelope = provider.call_tool("crash", {"code": 3})
        assert envelope.is_error
        assert envelope.result == (
            "MCP server 'crashy': tools/call 'crash' failed: the connection to the server closed "
            "(did it exit?); the next call reconnects"
        )
        again = provider.call_tool("get_weather", {"city": "Lima"})
        assert again.is_error is False and again.result == sample.get_weather("Lima")
        after = set(sample_children()) - baseline
        assert len(after) == 1 and after != before  # a new server process


@pytest.mark.slow  # three HTTP server starts; with --dist loadfile the whole file starts early
def test_http_server_exit_mid_call_then_reconnect_after_restart() -> None:
    port = free_port()
    provider = MCPToolProvider(http_config("web", f"http://127.0.0.1:{port}/mcp"))
    try:
        with http_sample_server(port, "unused", "--with-crash-tool") as proc:
            assert provider.call_tool("get_weather", {"city": "Baku"}).result == sample.get_weather("Baku")
            crashed = provider.call_tool("crash", {})
            assert crashed.result == (
                "MCP server 'web': tools/call 'crash' failed: the connection to the server closed "
                "(did it exit?); the next call reconnects"
            )
            assert proc.wait(5) == 1
        down = provider.call_tool("get_weather", {"city": "Baku"})
        assert down.is_error and down.result.startswith("MCP server 'web': tools/call 'get_weather' failed: could not")
        with http_sample_server(port, "unused"):
            assert provider.call_tool("get_weather", {"city": "Baku"}).result == sample.get_weather("Baku")
    finally:
        provider.close()


def test_sse_transport_lists_calls_and_sends_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    port, token = free_port(), secrets.token_urlsafe(16)
    monkeypatch.setenv(TOKEN_VAR, token)
    config = MCPServerConfig(
        name="legacy",
        transport="sse",
        url=f"http://127.0.0.1:{port}/sse",
        headers={"Authorization": f"Bearer env:{TOKEN_VAR}"},
        connect_timeout_seconds=10,
    )
    with http_sample_server(port, token, "--page-size", "4", transport="sse"), MCPToolProvider(config) as provider:
        assert [t["name"] for t in provider.list_tools()] == DEFAULT_TOOLS
        assert provider.call_tool("whoami", {}).result["authorized"] is True
        seen: list[str | None] = []
        done = provider.call_tool(
            "count_slowly", {"steps": 2, "delay_seconds": 0.01}, progress_callback=lambda p, t, m: seen.append(m)
        )
        assert done.result == "counted to 2" and seen == ["step 1/2", "step 2/2"]


# --- secrets ---------------------------------------------------------------------------------
def test_env_header_reaches_the_server_and_never_leaks(
    http_server: tuple[str, str], caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.DEBUG)
    url, token = http_server
    monkeypatch.setenv("TOOLGEN_TEST_AUTH", f"Bearer {token}")
    messages: list[str] = []
    config = http_config("secure", url, headers={"Authorization": "env:TOOLGEN_TEST_AUTH"})
    with MCPToolProvider(config) as provider:
        who = provider.call_tool("whoami", {})
        assert who.result == {
            "authorized": True,
            "header_sha256": hashlib.sha256(f"Bearer {token}".encode()).hexdigest(),
        }
        messages += [repr(provider), str(who.to_dict()), str(provider.list_tools())]

    monkeypatch.setenv("TOOLGEN_TEST_AUTH", "Bearer wrong-token")
    with MCPToolProvider(config) as provider:
        assert provider.call_tool("whoami", {}).result["authorized"] is False

    # A failing connection with the real secret configured: errors must not carry it.
    monkeypatch.setenv("TOOLGEN_TEST_AUTH", f"Bearer {token}")
    dead = http_config("secure", f"http://127.0.0.1:{free_port()}/mcp", headers=config.headers)
    with MCPToolProvider(dead) as provider:
        failed = provider.call_tool("whoami", {})
        assert failed.is_error and "MCP server 'secure': tools/call 'whoami' failed: could not connect" in failed.result
        with pytest.raises(ToolServerError) as info:
            provider.list_tools()
        messages += [str(failed.to_dict()), str(info.value), repr(info.value)]

    assert caplog.records, "expected the SDK's debug logging to be captured"
    for text in [caplog.text, *messages, *(r.getMessage() for r in caplog.records)]:
        assert token not in text


def test_missing_env_var_is_named_without_connecting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLGEN_TEST_UNSET", raising=False)
    config = http_config("secure", "http://127.0.0.1:9/mcp", headers={"Authorization": "Bearer env:TOOLGEN_TEST_UNSET"})
    expected = "header 'Authorization' needs environment variable TOOLGEN_TEST_UNSET, which is not set (or empty)"
    with MCPToolProvider(config) as provider:
        with pytest.raises(ToolServerError) as info:
            provider.list_tools()
        assert str(info.value) == f"MCP server 'secure': {expected}"
        envelope = provider.call_tool("whoami", {})
        assert envelope.result == f"MCP server 'secure': tools/call 'whoami' failed: {expected}"


# --- threads, loops and lifecycle ------------------------------------------------------------
def test_sync_call_from_plain_code_and_from_a_worker_thread_of_a_running_loop(
    stdio_provider: MCPToolProvider,
) -> None:
    assert stdio_provider.call_tool("get_weather", {"city": "Kyiv"}).result == sample.get_weather("Kyiv")

    async def main() -> Any:
        # A sync caller inside async code must go through a worker thread.
        envelope = await asyncio.to_thread(stdio_provider.call_tool, "get_weather", {"city": "Accra"})
        return envelope.result

    assert asyncio.run(main()) == sample.get_weather("Accra")


def test_sync_call_on_the_providers_own_loop_thread_raises(stdio_provider: MCPToolProvider) -> None:
    errors: list[BaseException] = []

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        # Progress callbacks run on the provider's loop thread: a blocking call here would deadlock.
        try:
            stdio_provider.call_tool("get_weather", {"city": "Nuuk"})
        except LoopThreadError as exc:
            errors.append(exc)

    envelope = stdio_provider.call_tool("count_slowly", {"steps": 1, "delay_seconds": 0}, progress_callback=on_progress)
    assert envelope.result == "counted to 1"
    assert len(errors) == 1 and "use acall_tool()" in str(errors[0])


def test_the_background_loop_hands_back_results_errors_and_cancellations() -> None:
    """BackgroundLoop.submit completes its future from the task's last step (not a done callback),
    keeping run_coroutine_threadsafe's contract: results, errors, cancelling either side."""
    import concurrent.futures

    from mas.runtime.mcp._loop import BackgroundLoop

    runner = BackgroundLoop("test")
    started = threading.Event()
    try:

        async def value() -> int:
            await asyncio.sleep(0)
            return 7

        async def fails() -> None:
            raise ValueError("no")

        async def waits() -> None:
            started.set()
            await asyncio.sleep(60)

        async def cancels_itself() -> None:
            raise asyncio.CancelledError

        assert runner.run(value()) == 7
        with pytest.raises(ValueError, match="no"):
            runner.run(fails())
        with pytest.raises(concurrent.futures.CancelledError):  # an Exception: call_tool makes it an envelope
            runner.run(cancels_itself())
        future = runner.submit(waits())
        assert started.wait(5)
        future.cancel()  # as run() does on Ctrl-C: the task on the loop is cancelled too
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not all(t.done() for t in asyncio.all_tasks(runner.loop)):
            time.sleep(0.01)
        assert all(t.done() for t in asyncio.all_tasks(runner.loop)), asyncio.all_tasks(runner.loop)

        async def awaits_from_another_loop() -> int:
            return await runner.arun(value())

        assert asyncio.run(awaits_from_another_loop()) == 7
    finally:
        runner.close()


def test_await_future_hands_over_results_errors_and_cancellations_in_one_wake_up() -> None:
    """_loop.await_future, as ``asyncio.wrap_future`` does, plus: results finished on another thread
    while the caller's loop was busy reach it in one wake-up (one handle on its loop, not one each)."""
    import concurrent.futures

    from mas.runtime.mcp._loop import await_future

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        futures: list[concurrent.futures.Future[int]] = [concurrent.futures.Future() for _ in range(5)]
        waiting = [asyncio.ensure_future(await_future(f)) for f in futures]
        await asyncio.sleep(0)  # every waiter is registered
        handles = len(loop._ready)  # type: ignore[attr-defined]

        def finish() -> None:  # on another thread, while this loop does not run
            for i, future in enumerate(futures):
                future.set_result(i)

        threading.Thread(target=finish).start()
        time.sleep(0.2)  # blocks this loop: all five finish before it can hand any over
        assert len(loop._ready) == handles + 1  # type: ignore[attr-defined]
        assert await asyncio.gather(*waiting) == [0, 1, 2, 3, 4]

        failing: concurrent.futures.Future[int] = concurrent.futures.Future()
        threading.Timer(0.01, lambda: failing.set_exception(ValueError("no"))).start()
        with pytest.raises(ValueError, match="no"):
            await await_future(failing)

        abandoned: concurrent.futures.Future[int] = concurrent.futures.Future()
        task = asyncio.ensure_future(await_future(abandoned))
        await asyncio.sleep(0)
        task.cancel()  # the caller stops waiting: the work it waited for is cancelled too
        with pytest.raises(asyncio.CancelledError):
            await task
        assert abandoned.cancelled()

        dropped: concurrent.futures.Future[int] = concurrent.futures.Future()
        waiter = asyncio.ensure_future(await_future(dropped))
        await asyncio.sleep(0)
        dropped.cancel()  # the other side gave up
        with pytest.raises(asyncio.CancelledError):
            await waiter

    asyncio.run(scenario())


def test_contract_dispatch_helpers_forward_options(stdio_provider: MCPToolProvider) -> None:
    seen: list[float] = []
    envelope = invoke_call_tool(
        stdio_provider,
        "count_slowly",
        {"steps": 2, "delay_seconds": 0.01},
        timeout_seconds=10,
        progress_callback=lambda p, t, m: seen.append(p),
        user="ignored",
    )
    assert envelope.result == "counted to 2" and seen == [1.0, 2.0]
    timed_out = asyncio.run(
        ainvoke_call_tool(stdio_provider, "count_slowly", {"steps": 50, "delay_seconds": 0.5}, timeout_seconds=0.3)
    )
    assert timed_out.result == "MCP server 'sample': tools/call 'count_slowly' timed out after 0.3 s"


def test_concurrent_acall_tool_from_an_event_loop(http_provider: MCPToolProvider) -> None:
    cities = ["Cairo", "Delhi", "Quito"]

    async def main() -> list[Any]:
        envelopes = await asyncio.gather(*(http_provider.acall_tool("get_weather", {"city": c}) for c in cities))
        return [e.result for e in envelopes]

    assert asyncio.run(main()) == [sample.get_weather(c) for c in cities]


def test_close_leaves_no_child_process_or_thread() -> None:
    baseline = sample_children()
    provider = MCPToolProvider(stdio_config("closing"))
    assert provider.call_tool("get_weather", {"city": "Bern"}).is_error is False
    assert len(sample_children()) == len(baseline) + 1 and len(loop_threads(provider)) == 1
    provider.close()
    assert sample_children() == baseline
    assert loop_threads(provider) == []
    after = provider.call_tool("get_weather", {"city": "Bern"})
    assert after.result == "MCP server 'closing': tools/call 'get_weather' failed: the provider is closed"
    with pytest.raises(ToolServerError, match="^MCP server 'closing': the provider is closed$"):
        provider.list_tools()
    provider.close()  # idempotent


def test_aclose_during_an_in_flight_call() -> None:
    baseline = sample_children()
    provider = MCPToolProvider(stdio_config("hang", script=SERVERS / "hang_server.py"))
    results: list[ToolResultEnvelope] = []

    async def main() -> float:
        assert [t["name"] for t in await provider.alist_tools()] == ["hang"]
        # A sync caller blocked in a call that never returns, then the owner closes the provider.
        caller = threading.Thread(target=lambda: results.append(provider.call_tool("hang", {})))
        caller.start()
        await asyncio.sleep(0.5)
        start = time.monotonic()
        async with provider:
            pass  # __aexit__ -> aclose()
        await asyncio.to_thread(caller.join, 5)
        return time.monotonic() - start

    assert asyncio.run(main()) < 5
    assert len(results) == 1 and results[0].is_error
    assert results[0].result.startswith("MCP server 'hang': tools/call 'hang' failed: ")
    assert sample_children() == baseline and loop_threads(provider) == []


def test_connect_timeout_bounds_connect_and_initialize() -> None:
    baseline = sample_children()
    config = stdio_config("mute", "--mute", script=SERVERS / "hang_server.py", connect_timeout_seconds=1.0)
    start = time.monotonic()
    with MCPToolProvider(config) as provider:
        with pytest.raises(ToolServerError) as info:
            provider.list_tools()
    assert str(info.value) == (
        "MCP server 'mute': connect + initialize timed out after 1.0 s (server/discover got no answer; "
        "a server on the mcp 1.x SDK needs `connect_mode: legacy`)"
    )
    assert time.monotonic() - start < 5
    assert sample_children() == baseline


def _closed(tmp_path: Path, linger: float, **settings: Any) -> list[str]:
    """What a server that stays ``linger`` seconds after its stdin closes saw of a provider's close."""
    record = tmp_path / "record.jsonl"
    raw = SERVERS / "raw_jsonrpc_server.py"
    config = stdio_config("slow-exit", "--linger", str(linger), "--record", str(record), script=raw, **settings)
    with MCPToolProvider(config) as provider:
        assert [t["name"] for t in provider.list_tools()] == ["echo", "shout"]
    lines = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    return [key for line in lines for key in ("eof", "sigterm") if line.get(key)]


def test_exit_grace_seconds_is_how_long_a_stdio_server_may_take_to_exit(tmp_path: Path) -> None:
    """Closing waits ``exit_grace_seconds`` for the server to exit after its stdin closes, then
    stops it: a server that would take 1.5 s gets SIGTERM after a 0.1 s grace (the default 2 s lets
    it exit by itself), so a suite of servers that never exit on EOF closes quickly."""
    assert _closed(tmp_path, 1.5, exit_grace_seconds=0.1) == ["eof", "sigterm"]
    (tmp_path / "record.jsonl").unlink()
    assert _closed(tmp_path, 0.2) == ["eof"]  # the default grace outlasts a server that is merely slow
    infra = tmp_path / "infra.yaml"
    stdio = "    - {name: s, protocol: mcp, transport: stdio, command: node, exit_grace_seconds: 0.5}\n"
    infra.write_text("kind: ToolServerRegistry\nspec:\n  servers:\n" + stdio, encoding="utf-8")
    assert [c.exit_grace_seconds for c in load_infra(infra)] == [0.5]
    http = "    - {name: h, protocol: mcp, transport: sse, url: 'http://127.0.0.1:9/sse', exit_grace_seconds: 0.5}\n"
    infra.write_text(infra.read_text(encoding="utf-8") + http, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_infra(tmp_path / "infra.yaml")
    assert str(caught.value).endswith(
        "infra.yaml:5: spec.servers[1]: `exit_grace_seconds` is for a stdio server's process; an HTTP server has none"
    )
