"""Load: one MCP provider serves 200 concurrent calls from async and threaded sync callers at once.

Against the real sample server over stdio and over streamable HTTP on 127.0.0.1. Every call asks
for a different city and every answer must be that city's (deterministic) weather: an answer that
reached the wrong caller fails the test. Bounded to a few seconds per transport.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from mcp_helpers import free_port, http_config, http_sample_server, stdio_config

from mas.runtime.contracts.tool_contract import ToolResultEnvelope
from mas.runtime.mcp.provider import MCPToolProvider
from mas.samples.mcp_server import get_weather

CALLS = 200
THREADS = 100  # half the calls come from sync callers on their own threads, half from one event loop


@pytest.fixture(scope="module", params=["stdio", "http"])
def provider(request: pytest.FixtureRequest) -> Iterator[MCPToolProvider]:
    if request.param == "stdio":
        with MCPToolProvider(stdio_config("load")) as stdio:
            yield stdio
        return
    port = free_port()
    with (
        http_sample_server(port, "unused-token"),
        MCPToolProvider(http_config("load", f"http://127.0.0.1:{port}/mcp")) as http,
    ):
        yield http


def test_200_concurrent_calls_each_get_their_own_answer(provider: MCPToolProvider) -> None:
    provider.call_tool("get_weather", {"city": "warm-up"})  # connect outside the measured window
    cities = [f"city-{i:03d}" for i in range(CALLS)]
    answers: dict[str, ToolResultEnvelope] = {}
    lock = threading.Lock()
    start = threading.Barrier(THREADS + 1)  # every sync caller and the async side start together

    def sync_caller(city: str) -> None:
        start.wait()
        envelope = provider.call_tool("get_weather", {"city": city})
        with lock:
            answers[city] = envelope

    async def async_callers(batch: list[str]) -> None:
        await asyncio.to_thread(start.wait)
        results = await asyncio.gather(*(provider.acall_tool("get_weather", {"city": c}) for c in batch))
        with lock:
            answers.update(zip(batch, results, strict=True))

    threaded, awaited = cities[:THREADS], cities[THREADS:]
    began = time.monotonic()
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        futures = [pool.submit(sync_caller, city) for city in threaded]
        asyncio.run(async_callers(awaited))
        for future in futures:
            future.result(timeout=60)
    elapsed = time.monotonic() - began

    assert sorted(answers) == cities
    wrong: list[tuple[str, Any]] = []
    for city, envelope in answers.items():
        if envelope.is_error or envelope.structured_content != get_weather(city):
            wrong.append((city, envelope.result))
    assert wrong == []
    assert elapsed < 30, f"{CALLS} calls took {elapsed:.1f} s"


def test_a_call_leaves_no_reference_cycle_behind() -> None:
    """What a call builds (its follower, task, futures, envelope) is freed by reference counting.

    A cycle per call leaves garbage only the collector frees: with 200 in flight that made it run
    so often that it took 0.5-0.9 ms of CPU a call (benchmarks/results.md, "MCP over stdio").
    """
    with MCPToolProvider(stdio_config("cycles")) as provider:

        async def awaited() -> None:
            await asyncio.gather(*(provider.acall_tool("get_weather", {"city": f"a{i}"}) for i in range(5)))

        provider.call_tool("get_weather", {"city": "warm-up"})
        asyncio.run(awaited())  # the first run of each path builds what later ones reuse
        gc.collect()
        gc.disable()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            for i in range(5):
                provider.call_tool("get_weather", {"city": f"s{i}"})
                provider.call_tool("get_weather", {"city": f"c{i}"}, cancel_event=threading.Event())
            asyncio.run(awaited())
            gc.collect()
            left = sorted({type(o).__name__ for o in gc.garbage} & {"PendingCall", "_Follower", "Task", "Future"})
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()
    assert left == [], f"calls left reference cycles holding {left}"
