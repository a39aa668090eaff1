"""``mas-runtime serve --code-mode`` under load, as an operator runs it: the installed command in a
child process, the repo's generated package, the sample server (stdio, started by the infra
file), and a real MCP SDK client over stdio and streamable HTTP on 127.0.0.1. Hostile runs cannot
hold up a well-behaved one past its own limit plus the queue bound; a request the client abandons
stops its run; a flood of output comes back cut, once."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_helpers import free_port, sample_stdio_infra, served
from prefork import python_args, python_command
from tiers import tiered

REPO = Path(__file__).resolve().parents[2]
PACKAGE = str(REPO / "generated" / "sample_tools")
INFRA = sample_stdio_infra()
TOOLS = str(REPO / "library-samples" / "tools")
SOURCES = ["--infra", INFRA, "--tools", TOOLS, "--package", PACKAGE]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
pytestmark = pytest.mark.slow  # child processes: the command, the sample server, the sandbox

HOSTILE = "n = 0\nwhile True:\n    n += 1\n"
WEATHER = "from tools import sample\nw = await sample.get_weather(city='Paris')\nw['city']\n"


@asynccontextmanager
async def stdio_face(*extra: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=[*python_args("-m", "mas.runtime", "serve", "--code-mode", "-q", *SOURCES, *extra)],
        env=ENV,
        cwd=str(REPO),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def http_face(*extra: str) -> AsyncIterator[ClientSession]:
    port = free_port()
    command = python_command(
        "-m", "mas.runtime", "serve", "--code-mode", "-q", "--http", "--port", str(port), *SOURCES, *extra,
        pythonpath=ENV.get("PYTHONPATH"),
    )  # fmt: skip
    proc = subprocess.Popen(command, cwd=REPO, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with served(proc, port, "code-mode server", 60):
        async with (
            streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


FACES: dict[str, Callable[..., AbstractAsyncContextManager[ClientSession]]] = {"stdio": stdio_face, "http": http_face}


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


@pytest.mark.parametrize("face", tiered(sorted(FACES), ["http"]))  # stdio: the full tier
def test_hostile_runs_cannot_hold_up_a_good_run_past_its_limit_and_the_queue_bound(face: str) -> None:
    """The issue's reproduction: ``--timeout 2`` (the default 4 runs at once, 10 s queue), 8 endless
    loops at once, then one run of a single call: it waits for its turn, then has its 2 s."""

    async def talk() -> None:
        async with FACES[face]("--timeout", "2") as session:
            await session.call_tool("run_code", {"code": WEATHER})  # warm: the checker and the server

            async def hostile() -> Any:
                return await session.call_tool("run_code", {"code": HOSTILE})

            tasks = [asyncio.create_task(hostile()) for _ in range(8)]
            await asyncio.sleep(0.3)
            start = time.monotonic()
            good = await session.call_tool("run_code", {"code": WEATHER})
            elapsed = time.monotonic() - start
            assert not good.is_error, _text(good)
            assert _text(good) == 'value: "Paris"'
            assert elapsed < 2 + 10 + 3, elapsed
            for done in await asyncio.gather(*tasks):
                assert done.is_error and (done.structured_content or {})["error"]["kind"] == "timeout"

    asyncio.run(talk())


@pytest.mark.parametrize("face", tiered(sorted(FACES), ["http"]))  # stdio: the full tier
def test_a_request_the_client_abandons_stops_its_run(face: str) -> None:
    """One run at a time, a 4 s queue: the endless loop a client gave up on after 1 s must stop,
    or the next run (sent at once) would wait out its 30 s limit and be refused "busy"."""

    async def talk() -> None:
        extra = ("--timeout", "30", "--max-concurrent-runs", "1", "--max-queue-seconds", "4")
        async with FACES[face](*extra) as session:
            await session.call_tool("run_code", {"code": WEATHER})
            with pytest.raises(Exception):  # noqa: B017, PT011 - the SDK's read timeout
                await session.call_tool("run_code", {"code": HOSTILE}, read_timeout_seconds=1.0)
            start = time.monotonic()
            good = await session.call_tool("run_code", {"code": WEATHER})
            assert not good.is_error, _text(good)
            assert time.monotonic() - start < 4.0

    asyncio.run(talk())


@pytest.mark.parametrize("face", tiered(sorted(FACES), ["http"]))  # stdio: the full tier
def test_a_flood_of_output_comes_back_cut_and_once(face: str) -> None:
    async def talk() -> None:
        async with FACES[face]() as session:
            code = "for i in range(100):\n    print('x' * 1_000_000)\n'done'\n"
            reply = await session.call_tool("run_code", {"code": code})
            assert not reply.is_error, _text(reply)
            text = _text(reply)
            assert text.startswith('value: "done"\noutput:\n' + "x" * 20_000 + "\n[output cut: 99,980,100 more")
            structured = reply.structured_content or {}
            assert "output" not in structured and "value" not in structured  # each once: in the text
            assert len(json.dumps(reply.model_dump(mode="json"))) < 25_000

            big = await session.call_tool("run_code", {"code": "['x' * 1000 for i in range(1000)]"})
            assert big.is_error and (big.structured_content or {})["error"]["kind"] == "output"
            assert len(_text(big)) < 1_000

    asyncio.run(talk())


@pytest.mark.parametrize("face", tiered(sorted(FACES), ["http"]))  # stdio: the full tier
def test_a_huge_search_query_is_refused_and_holds_up_no_one(face: str) -> None:
    async def talk() -> None:
        async with FACES[face]() as session:
            words = " ".join(f"word{i}" for i in range(140_000))  # ~1 MB, every word new
            start = time.monotonic()
            huge, good = await asyncio.gather(
                session.call_tool("search_tools", {"query": words}),
                session.call_tool("run_code", {"code": WEATHER}),
            )
            assert huge.is_error and "at most 1,000" in _text(huge)
            assert not good.is_error, _text(good)
            assert time.monotonic() - start < 10.0
            many = " ".join(["weather"] + [f"w{i}" for i in range(300)])[:1_000]  # within the limit, many words
            found = await session.call_tool("search_tools", {"query": many, "limit": 1})
            assert not found.is_error and "async def get_weather(" in _text(found)

    asyncio.run(talk())
