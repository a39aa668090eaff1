"""One peer's code mode on the repo's sample MCP server, timed; run inside the peer's own venv.

``python peer_code_mode.py harness|fastmcp --server PYTHON --repeat N`` prints one JSON object:
``run`` (ms, each warm run of the 3-call task), ``check`` (ms, each warm run of a snippet with a
type error; ``null`` when the peer does not type-check) and ``value``/``refused`` (what the runs
returned, so the caller can see the task really ran); for the harness also ``turn`` (ms, an agent
turn in which the model calls no tool: the floor its runs include). ``PYTHON`` is toolgen's interpreter: the
sample server (``-m mas.samples.mcp_server``) is started with it over stdio, once, and kept.

- ``harness``: pydantic-ai-harness's ``CodeMode`` capability on a pydantic-ai ``Agent`` whose
  toolset is the sample server (``MCPToolset`` over a stdio transport). No LLM: a ``FunctionModel`` asks for one
  ``run_code`` call with the snippet, then ends the turn; a run is that whole agent turn.
- ``fastmcp``: FastMCP's ``CodeMode`` transform on a proxy of the sample server, called in memory
  through ``fastmcp.Client``: a run is one ``execute`` call. FastMCP's sandbox checks no types, so
  the snippet with a type error runs, and its call fails at the server.

Only this file's code runs the peers, through their documented APIs; nothing of theirs is copied.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any

#: The task: three calls on the sample server, one after another, and a value made of them.
HARNESS_TASK = """\
paris = await get_weather(city='Paris')
tokyo = await get_weather(city='Tokyo')
cities = await list_cities(country='FR')
[paris['temperature'], tokyo['temperature'], len(cities)]
"""
HARNESS_BAD = "await get_weather(city=3)\n"
FASTMCP_TASK = """\
paris = await call_tool('get_weather', {'city': 'Paris'})
tokyo = await call_tool('get_weather', {'city': 'Tokyo'})
cities = await call_tool('list_cities', {'country': 'FR'})
[paris['temperature'], tokyo['temperature'], len(cities)]
"""
FASTMCP_BAD = "await call_tool('get_weather', {'city': 3})\n"


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


async def harness(server: list[str], repeat: int) -> dict[str, Any]:
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.messages import (
        ModelMessage,
        ModelResponse,
        RetryPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai_harness import CodeMode

    seen: list[Any] = []

    def model(code: str) -> FunctionModel:
        def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            last = messages[-1]
            if any(getattr(p, "part_kind", "") in ("tool-return", "retry-prompt") for p in last.parts):
                kinds = (ToolReturnPart, RetryPromptPart)
                seen.append(next(p for p in last.parts if isinstance(p, kinds)))
                return ModelResponse(parts=[TextPart("done")])
            return ModelResponse(parts=[ToolCallPart("run_code", {"code": code})])

        return FunctionModel(answer)

    mcp = MCPToolset(StdioTransport(server[0], server[1:]), init_timeout=60)
    agent = Agent(toolsets=[mcp], capabilities=[CodeMode()])

    def no_tool(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("done")])

    run, check, turn = [], [], []
    async with agent:
        for i in range(repeat + 1):  # the first of each is the cold one, left out
            start = time.perf_counter()
            await agent.run("task", model=FunctionModel(no_tool))
            if i:
                turn.append(_ms(start))
            start = time.perf_counter()
            await agent.run("task", model=model(HARNESS_TASK))
            if i:
                run.append(_ms(start))
            value = seen[-1]
            start = time.perf_counter()
            await agent.run("task", model=model(HARNESS_BAD))
            if i:
                check.append(_ms(start))
            refused = seen[-1]
    return {
        "run": run,
        "check": check,
        "turn": turn,
        "value": str(getattr(value, "content", value))[:200],
        "refused": f"{getattr(refused, 'part_kind', '')}: {getattr(refused, 'content', refused)}"[:300],
    }


async def fastmcp(server: list[str], repeat: int) -> dict[str, Any]:
    from fastmcp import Client
    from fastmcp.experimental.transforms.code_mode import CodeMode
    from fastmcp.server import create_proxy

    config = {"mcpServers": {"sample": {"command": server[0], "args": server[1:], "transport": "stdio"}}}
    proxy = create_proxy(Client(config))
    proxy.add_transform(CodeMode())
    run, failed = [], []
    value: Any = None
    refused: Any = None
    async with Client(proxy) as client:
        for i in range(repeat + 1):
            start = time.perf_counter()
            result = await client.call_tool("execute", {"code": FASTMCP_TASK})
            if i:
                run.append(_ms(start))
            value = result.data if result.data is not None else result.content
            start = time.perf_counter()
            try:
                bad = await client.call_tool("execute", {"code": FASTMCP_BAD}, raise_on_error=False)
                refused = bad.content
            except Exception as exc:  # the call's failure, as the client raises it
                refused = f"{type(exc).__name__}: {exc}"
            if i:
                failed.append(_ms(start))
    return {"run": run, "check": None, "failed_call": failed, "value": str(value)[:200], "refused": str(refused)[:300]}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("peer", choices=("harness", "fastmcp"))
    parser.add_argument("--server", required=True, help="toolgen's python: it runs the sample server")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    server = [args.server, "-m", "mas.samples.mcp_server"]
    found = asyncio.run((harness if args.peer == "harness" else fastmcp)(server, args.repeat))
    json.dump(found, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
