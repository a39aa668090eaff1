"""An effect plan before running, and confirmation of destructive tools, against the repo's generated
``sample_tools`` (whose ``notes_delete`` is destructive), the sample server over stdio, the real
sandbox, and ``mas-runtime serve --code-mode`` with a real MCP SDK client."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from gen_helpers import import_fresh
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_helpers import sample_stdio_infra, stdio_config
from prefork import python_args
from tiers import tiered

from mas.runtime.code_mode import CodeMode
from mas.runtime.contracts.tool_contract import invoke_call_tool
from mas.runtime.mcp.provider import MCPToolProvider
from mas.runtime.registry import RuntimeRegistry

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # a server, a sandbox pool and its type checker

PLANNED = """\
from tools import sample as s
w = await s.get_weather(city="Paris")
for i in ["a", "b"]:
    await s.notes_delete(id=i)
made = [await s.notes_create(title="t", body="b") for _ in range(2)]
w["city"]
"""


DELETE_ONE = """\
from tools import sample
try:
    await sample.notes_delete(id="n1")
except RuntimeError:
    pass
"done"
"""


class Recording:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[str] = []

    def call_tool(self, tool_name: str, arguments: dict[str, Any], **kwargs: Any) -> Any:
        self.calls.append(tool_name)
        return invoke_call_tool(self.inner, tool_name, arguments, **kwargs)


@pytest.fixture(scope="module")
def registry() -> Iterator[Recording]:
    with RuntimeRegistry({"sample": MCPToolProvider(stdio_config("sample"))}) as inner:
        yield Recording(inner)


def test_the_plan_names_each_call_its_hints_and_whether_it_sits_in_a_loop(registry: Recording) -> None:
    package = import_fresh(REPO / "generated", "sample_tools")
    with CodeMode(registry, package=package) as mode:
        plan = mode.plan(PLANNED)
    assert [(c.line, c.function, c.in_loop) for c in plan] == [
        (2, "tools.sample.get_weather", False),
        (4, "tools.sample.notes_delete", True),
        (5, "tools.sample.notes_create", True),
    ]
    assert [c.risky for c in plan] == [False, True, True]  # read-only; destructive; not idempotent
    assert str(plan[1]) == "line 4: tools.sample.notes_delete (destructive, inside a loop)"
    assert registry.calls == []  # reading the code sends nothing
    assert mode.plan("this is not python(") == []


def test_a_refused_confirmation_sends_nothing_and_the_code_sees_cancelled(registry: Recording) -> None:
    package = import_fresh(REPO / "generated", "sample_tools")
    asked: list[tuple[str, dict[str, Any]]] = []

    def refuse(info: Any, arguments: dict[str, Any]) -> bool:
        asked.append((info.name, arguments))
        return False

    code = (
        "from tools import sample\nw = await sample.get_weather(city='Paris')\ntry:\n"
        "    await sample.notes_delete(id='n1')\nexcept RuntimeError as error:\n    print(error)\nw['city']\n"
    )
    registry.calls.clear()
    with CodeMode(registry, package=package, confirm=refuse) as mode:
        run = mode.run(code)
    assert run.error is None and run.value == "Paris", run.error
    assert run.output.startswith("cancelled:"), run.output
    assert asked == [("sample.notes.delete", {"id": "n1"})]  # asked once, for the destructive tool only
    assert registry.calls == ["get_weather"] and [c.wire_name for c in run.calls] == ["get_weather"]


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


@pytest.mark.parametrize("answer", tiered(["accept", "decline"], ["accept"]))
def test_serve_asks_the_client_before_a_destructive_call(answer: str) -> None:
    package = str(REPO / "generated" / "sample_tools")
    infra = sample_stdio_infra()
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            *python_args("-m", "mas.runtime"),
            "serve",
            "--code-mode",
            "-q",
            "--confirm-destructive",
            "--package",
            package,
            "--infra",
            infra,
        ],  # fmt: skip
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=str(REPO),
    )
    questions: list[str] = []

    async def elicit(context: Any, request: types.ElicitRequestParams) -> types.ElicitResult:
        questions.append(request.message)
        return types.ElicitResult(action=answer, content={} if answer == "accept" else None)

    async def talk() -> None:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, elicitation_callback=elicit) as session,
        ):
            await session.initialize()
            planned = await session.call_tool("run_code", {"code": PLANNED, "plan": True})
            assert not planned.is_error and "2 of them destructive or not idempotent" in _text(planned)
            assert "! line 4: tools.sample.notes_delete (destructive, inside a loop)" in _text(planned)
            code = DELETE_ONE
            reply = await session.call_tool("run_code", {"code": code})
            assert not reply.is_error, _text(reply)
            sent = [c["tool"] for c in (reply.structured_content or {})["calls"]]
            assert sent == (["sample.notes.delete"] if answer == "accept" else [])

    asyncio.run(talk())
    assert len(questions) == 1 and "destructive tool 'sample.notes.delete'" in questions[0]
