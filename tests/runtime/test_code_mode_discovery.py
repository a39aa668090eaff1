"""Discovery in steps and a served API of what can be called, against the repo's generated
``sample_tools``, the real sandbox and (for the served API) ``mas-runtime serve --code-mode`` with a
real MCP SDK client over stdio: the brief API, one line per function, the whole stubs by name,
search with paging, the names inside the sandbox, and a source with nothing behind it left out
with one warning line."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import import_fresh
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_helpers import sample_stdio_infra, stdio_config
from prefork import python_args

from mas.runtime.code_mode import CodeMode
from mas.runtime.mcp.provider import MCPToolProvider
from mas.runtime.registry import RuntimeRegistry

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # a server, a sandbox pool and its type checker


@pytest.fixture(scope="module")
def mode() -> Iterator[CodeMode]:
    package = import_fresh(REPO / "generated", "sample_tools")
    with (
        RuntimeRegistry({"sample": MCPToolProvider(stdio_config("sample"))}) as registry,
        CodeMode(registry, package=package) as code_mode,
    ):
        yield code_mode


def test_the_api_is_brief_and_the_stubs_by_name_are_whole(mode: CodeMode) -> None:
    api = mode.api()
    assert "async def list_cities(*, country: str = ...) -> SampleListCitiesOutput | str:" in api
    assert "ISO country code" not in api  # detail on demand
    whole = mode.stubs(["sample.list_cities"])
    assert "country: ISO country code, e.g. FR" in whole and "class SampleListCitiesOutput(TypedDict)" in whole
    assert whole.count("async def") == 1
    assert mode.stubs(["search_docs"]).count("limit: 1 <= limit <= 50") == 1
    assert mode.stubs(["sample"]).count("async def") == len(mode.modules["sample"])
    assert "# no function or module named 'nope'" in mode.stubs(["get_weather", "nope"])


def test_the_listing_is_one_line_per_function(mode: CodeMode) -> None:
    lines = mode.listing().splitlines()
    assert lines[0] == f"tools.sample: {len(mode.modules['sample'])} function(s)"
    assert "  get_weather: Current weather [read-only]" in lines
    assert len(lines) == len(mode.modules) + sum(len(f) for f in mode.modules.values())
    assert mode.listing("skills").splitlines()[0].startswith("tools.skills:")
    assert "no module 'nope'" in mode.listing("nope")


def test_search_pages_past_its_first_results(mode: CodeMode) -> None:
    first = mode.search("sample tools", limit=2)
    assert first.count("async def") == 2 and "search again with offset=2" in first
    second = mode.search("sample tools", limit=2, offset=2)
    assert second.count("async def") == 2
    names = {line.split("(")[0] for line in (first + second).splitlines() if line.startswith("async def")}
    assert len(names) == 4
    assert "no tool matches" in mode.search("weather", offset=50)


def test_the_sandbox_sees_the_names_of_modules_and_functions(mode: CodeMode) -> None:
    run = mode.run("import tools\nfrom tools import sample\n[tools.MODULES, sample.FUNCTIONS]\n")
    assert run.error is None, run.error
    assert run.value == [list(mode.modules), list(mode.modules["sample"])]


def test_a_source_nothing_answers_is_left_out_with_one_warning_line() -> None:
    """The README's serve command without ``--tools``: the skills have no tool directory behind
    them, so ``tools.skills`` is not served (every call would be ``unknown_tool``)."""
    package = str(REPO / "generated" / "sample_tools")
    infra = sample_stdio_infra()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    errors = REPO / ".pytest-serve-stderr.txt"

    async def talk() -> tuple[str, str, str]:
        params = StdioServerParameters(
            command=sys.executable,
            args=[*python_args("-m", "mas.runtime", "serve", "--code-mode", "--package", package, "--infra", infra)],
            env=env,
            cwd=str(REPO),
        )
        with errors.open("w", encoding="utf-8") as sink:
            async with stdio_client(params, errlog=sink) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                listed = await session.call_tool("list_functions", {})
                tools = await session.list_tools()
                run_code = next(t for t in tools.tools if t.name == "run_code")
                return _text(listed), run_code.description or "", errors.read_text(encoding="utf-8")

    try:
        listing, description, stderr = asyncio.run(talk())
    finally:
        errors.unlink(missing_ok=True)
    assert "tools.sample:" in listing and "tools.skills" not in listing
    assert "from tools import skills" not in description
    warnings = [line for line in stderr.splitlines() if "left out" in line]
    assert warnings == [
        "mas-runtime: warning: tools.skills is left out: no server or tool directory of the registry answers its tools"
    ]


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


class _Nothing:
    def call_tool(self, tool_name: str, arguments: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"nothing is called here, yet {tool_name} was")


def test_a_function_nothing_routes_is_out_of_the_stub_the_api_and_the_check() -> None:
    """``reachable`` keeping part of a module (the framework adapters' filters): the kept
    functions and the classes they need are the module's whole stub, so the API text, discovery
    and the type check know nothing of the rest."""
    package = import_fresh(REPO / "generated", "sample_tools")
    with CodeMode(_Nothing(), package=package, reachable={"get_weather", "search-docs"}.__contains__) as mode:
        assert dict(mode.modules) == {"sample": {"get_weather": "get_weather", "search_docs": "search-docs"}}
        assert mode.left_out == ("skills",)
        api = mode.api()
        assert "async def get_weather(" in api and "class SampleSearchDocsInputFilters(TypedDict)" in api
        assert "list_cities" not in api and "SampleListCities" not in api and "notes_" not in api
        assert api.count("async def") == 2
        assert mode.stubs(["sample"]).count("async def") == 2 and "notes_" not in mode.stubs(["sample"])
        assert "no function or module named 'notes_delete'" in mode.stubs(["notes_delete"])
        assert "list_cities" not in mode.listing() and "list_cities" not in mode.search("cities of a country")
        (problem,) = mode.check("from tools import sample\nawait sample.list_cities()\n")
        assert problem.code == "unresolved-attribute" and "list_cities" in problem.message
        assert mode.check('from tools import sample\nawait sample.get_weather(city="Oslo")\n') == []
