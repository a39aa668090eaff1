"""Code mode end to end: the real sandbox (pydantic-monty), the repo's generated ``sample_tools``
package, and the sample MCP server over stdio and over streamable HTTP on 127.0.0.1.

Every test reads what reached ``call_tool`` through a recording provider in front of the real
registry, so "nothing was sent" and "exactly these wire names and arguments" are facts, not hopes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import import_fresh
from mcp_helpers import free_port, http_config, http_sample_server, stdio_config

from mas.runtime.code_mode import CodeMode, Diagnostic
from mas.runtime.contracts.tool_contract import invoke_call_tool
from mas.runtime.mcp.provider import MCPToolProvider
from mas.runtime.registry import RuntimeRegistry

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # a server, a sandbox pool and its type checker per transport


class Recording:
    """The registry, with every call_tool it receives kept (wire name and arguments)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def call_tool(self, tool_name: str, arguments: dict[str, Any], **kwargs: Any) -> Any:
        self.calls.append((tool_name, dict(arguments)))
        return invoke_call_tool(self.inner, tool_name, arguments, **kwargs)


@pytest.fixture(scope="module")
def package() -> Any:
    return import_fresh(REPO / "generated", "sample_tools")


@pytest.fixture(scope="module", params=["stdio", "http"])
def mode(request: pytest.FixtureRequest, package: Any) -> Iterator[tuple[CodeMode, Recording]]:
    if request.param == "stdio":
        registry = RuntimeRegistry({"sample": MCPToolProvider(stdio_config("sample"))})
        with registry, CodeMode(Recording(registry), package=package) as mode:
            yield mode, mode._provider
    else:
        port = free_port()
        with http_sample_server(port, "unused-token"):
            provider = MCPToolProvider(http_config("sample", f"http://127.0.0.1:{port}/mcp"))
            with RuntimeRegistry({"sample": provider}) as registry, CodeMode(Recording(registry), package=package) as m:
                yield m, m._provider


@pytest.fixture
def recorded(mode: tuple[CodeMode, Recording]) -> tuple[CodeMode, Recording]:
    mode[1].calls.clear()
    return mode


LOOP = """\
from tools import sample
temps = {}
for city in ["Paris", "Berlin", "Osaka"]:
    weather = await sample.get_weather(city=city, units="fahrenheit")
    temps[weather["city"]] = weather["temperature"]
temps
"""


def test_a_loop_over_calls_gives_the_values_and_sends_each_call_as_is(recorded: tuple[CodeMode, Recording]) -> None:
    mode, provider = recorded
    run = mode.run(LOOP)
    assert run.error is None, run.error
    assert run.value == {"Paris": 66.9, "Berlin": 51.6, "Osaka": 82.8}
    sent = [("get_weather", {"city": c, "units": "fahrenheit"}) for c in ("Paris", "Berlin", "Osaka")]
    assert provider.calls == sent
    assert [(c.wire_name, c.arguments, c.error) for c in run.calls] == [(w, a, None) for w, a in sent]


NESTED = """\
from tools import sample
found = await sample.search_docs(query="retries", filters={"tags": ["runtime"]}, limit=2)
cities = await sample.list_cities(country="FR")
names = [c["name"] for c in cities["cities"]] if not isinstance(cities, str) else cities
print(found["total"])
(names, [r["title"] for r in found["results"]])
"""


def test_nested_arguments_and_results_cross_with_their_wire_names(recorded: tuple[CodeMode, Recording]) -> None:
    mode, provider = recorded
    run = mode.run(NESTED)
    assert run.error is None, run.error
    names, titles = run.value
    assert names == ["Paris", "Lyon"]
    assert isinstance(titles, list)
    assert run.output == f"{len(titles)}\n"
    assert provider.calls == [
        ("search-docs", {"query": "retries", "filters": {"tags": ["runtime"]}, "limit": 2}),
        ("list_cities", {"country": "FR"}),
    ]


CAUGHT = """\
from tools import sample
try:
    await sample.notes_delete(id="no-such-note")
    outcome = "deleted"
except RuntimeError as error:
    outcome = str(error)
outcome
"""


def test_a_tool_error_is_caught_in_the_snippet_with_its_kind(recorded: tuple[CodeMode, Recording]) -> None:
    mode, provider = recorded
    run = mode.run(CAUGHT)
    assert run.error is None, run.error
    assert run.value.startswith("tool_error: tool 'sample.notes.delete' reported an error")
    assert provider.calls == [("sample.notes.delete", {"id": "no-such-note"})]
    assert [c.error for c in run.calls] == ["tool_error"]


GATHER = """\
import asyncio
from tools import sample
counted = await asyncio.gather(*[sample.count_slowly(steps=2, delay_seconds=0.5) for _ in range(3)])
len(counted)
"""


def test_gathered_calls_run_side_by_side(recorded: tuple[CodeMode, Recording]) -> None:
    mode, provider = recorded
    start = time.monotonic()
    run = mode.run(GATHER)
    elapsed = time.monotonic() - start
    assert run.error is None, run.error
    assert run.value == 3 and len(provider.calls) == 3
    assert elapsed < 2.4, f"three 1 s calls gathered took {elapsed:.2f} s: they ran one after another"


WEATHER = "from tools import sample\n"
BAD = {
    "misspelt argument": (WEATHER + "\nw = await sample.get_weather(cty='Paris')\n", 3, "unknown-argument", "`cty`"),
    "unknown result key": (
        WEATHER + "w = await sample.get_weather(city='Paris')\nw['temp']\n",
        3,
        "invalid-key",
        '"temp"',
    ),
    "wrong argument type": (
        WEATHER + "await sample.search_docs(query='x', limit='2')\n",
        2,
        "invalid-argument-type",
        "int",
    ),
    "unknown tool": (WEATHER + "\n\nawait sample.get_wether(city='Paris')\n", 4, "unresolved-attribute", "get_wether"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_snippet_gets_a_diagnostic_on_its_line_and_sends_nothing(
    case: str, recorded: tuple[CodeMode, Recording]
) -> None:
    mode, provider = recorded
    code, line, rule, fragment = BAD[case]
    diagnostics = mode.check(code)
    hit = [d for d in diagnostics if d.code == rule]
    assert hit and hit[0].line == line and fragment in hit[0].message, diagnostics
    run = mode.run(code)
    assert run.error is not None and run.error.kind == "check"
    assert run.error.diagnostics == tuple(diagnostics)
    assert provider.calls == [] and run.calls == []


def test_a_diagnostic_is_one_line() -> None:
    assert str(Diagnostic(3, 11, "unknown-argument", "Argument `cty`")) == "3:11: unknown-argument: Argument `cty`"


ESCAPES = {
    "os.system": "import os\nos.system('echo hi')",
    "open": "open('/etc/passwd').read()",
    "__import__": "__import__('os')",
    "socket": "import socket\nsocket.create_connection(('127.0.0.1', 80))",
    "subprocess": "import subprocess\nsubprocess.run(['ls'])",
    "environment": "import os\nos.getenv('HOME')",
    "environ": "import os\nos.environ['SAMPLE_SERVER_TOKEN']",
    "pathlib": "from pathlib import Path\nPath('/etc/passwd').read_text()",
}


@pytest.mark.parametrize("case", sorted(ESCAPES))
def test_escapes_are_refused(case: str, recorded: tuple[CodeMode, Recording]) -> None:
    mode, provider = recorded
    run = mode.run(ESCAPES[case])
    assert run.error is not None, f"{case} ran: {run.value!r}"
    assert run.error.kind in ("check", "exception")
    assert provider.calls == []


def test_an_endless_loop_stops_at_the_time_limit(recorded: tuple[CodeMode, Recording]) -> None:
    mode, _ = recorded
    start = time.monotonic()
    run = mode.run("n = 0\nwhile True:\n    n += 1\n", timeout_seconds=1.0)
    assert run.error is not None and run.error.kind == "timeout", run.error
    assert time.monotonic() - start < 4.0


def test_a_memory_bomb_stops_at_the_memory_limit(recorded: tuple[CodeMode, Recording]) -> None:
    mode, _ = recorded
    run = mode.run("blocks = []\nwhile True:\n    blocks.append('x' * 1_000_000)\n", max_memory_bytes=32_000_000)
    assert run.error is not None and run.error.kind == "memory", run.error


def test_a_call_count_overrun_stops_at_the_limit_and_sends_no_more(recorded: tuple[CodeMode, Recording]) -> None:
    mode, provider = recorded
    code = "from tools import sample\nfor i in range(50):\n    await sample.get_weather(city=f'c{i}')\n"
    run = mode.run(code, max_tool_calls=3)
    assert run.error is not None and run.error.kind == "tool_calls", run.error
    assert len(provider.calls) == 3 and len(run.calls) == 3


def test_an_exception_in_the_snippet_is_the_run_error(recorded: tuple[CodeMode, Recording]) -> None:
    mode, _ = recorded
    run = mode.run("x = {'a': 1}\nx.get('b', 0) + 1\nraise ValueError('stop here')\n")
    assert run.error is not None and run.error.kind == "exception"
    assert "ValueError: stop here" in run.error.message


def test_search_ranks_by_name_title_and_description(mode: tuple[CodeMode, Recording]) -> None:
    code_mode, _ = mode
    found = code_mode.search("weather", limit=1)
    assert "async def get_weather(" in found and "class SampleGetWeatherOutput(TypedDict)" in found
    assert "async def" in found and found.count("async def") == 1
    notes = code_mode.search("delete a note")
    assert notes.index("def notes_delete") < notes.index("def notes_create")
    assert "no tool matches" in code_mode.search("zzzzqqq")


def test_api_has_every_module_and_function(mode: tuple[CodeMode, Recording], package: Any) -> None:
    code_mode, _ = mode
    text = code_mode.api()
    for module, functions in package.code_mode.MODULES.items():
        assert f"from tools import {module}" in text
        for function in functions:
            assert f"async def {function}(" in text
    assert "Generated by toolgen" not in text  # the header is for the file, not the model


def test_sleeps_are_waited_out_within_the_time_limit(recorded: tuple[CodeMode, Recording]) -> None:
    mode, _ = recorded
    assert mode.run("import asyncio\nawait asyncio.sleep(0.1)\n'slept'").value == "slept"
    start = time.monotonic()
    run = mode.run("import time\nwhile True:\n    time.sleep(0.5)\n", timeout_seconds=1.0)
    assert run.error is not None and run.error.kind == "timeout", run.error
    assert time.monotonic() - start < 4.0
