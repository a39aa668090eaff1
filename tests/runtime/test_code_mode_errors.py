"""Code mode's errors as a model reads them, against the real sandbox (pydantic-monty), the repo's
generated ``sample_tools`` and the sample MCP server over stdio: tracebacks of the snippet's own
lines, the right kind for bad arguments, memory and values that are not JSON, advice in terms of
the code (never a host API), and a hint for a forgotten ``await``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import import_fresh
from mcp_helpers import stdio_config

from mas.runtime.code_mode import CodeMode
from mas.runtime.contracts.tool_contract import invoke_call_tool
from mas.runtime.mcp.provider import MCPToolProvider
from mas.runtime.registry import RuntimeRegistry

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # a server, a sandbox pool and its type checker


class Recording:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def call_tool(self, tool_name: str, arguments: dict[str, Any], **kwargs: Any) -> Any:
        self.calls.append((tool_name, dict(arguments)))
        return invoke_call_tool(self.inner, tool_name, arguments, **kwargs)


@pytest.fixture(scope="module")
def mode() -> Iterator[tuple[CodeMode, Recording]]:
    package = import_fresh(REPO / "generated", "sample_tools")
    with RuntimeRegistry({"sample": MCPToolProvider(stdio_config("sample"))}) as registry:
        recording = Recording(registry)
        with CodeMode(recording, package=package) as code_mode:
            yield code_mode, recording


@pytest.fixture
def recorded(mode: tuple[CodeMode, Recording]) -> tuple[CodeMode, Recording]:
    mode[1].calls.clear()
    return mode


def test_a_traceback_shows_the_snippets_lines_one_per_frame_repeats_collapsed(
    recorded: tuple[CodeMode, Recording],
) -> None:
    mode, _ = recorded
    run = mode.run("def f(n):\n    return f(n + 1)\nf(0)\n")
    assert run.error is not None and run.error.kind == "exception"
    assert run.error.message == (
        "Traceback (most recent call last):\n"
        "  line 3, in <module>: f(0)\n"
        "  line 2, in f: return f(n + 1)\n"
        "  [the line above repeated 999 more times]\n"
        "RecursionError: maximum recursion depth exceeded"
    )
    assert "~~" not in run.error.message


def test_a_long_traceback_keeps_its_first_and_last_lines(recorded: tuple[CodeMode, Recording]) -> None:
    mode, _ = recorded
    code = (
        "".join(f"def f{i}():\n    return f{i + 1}()\n" for i in range(12)) + "def f12():\n    return {}['k']\nf0()\n"
    )
    run = mode.run(code)
    assert run.error is not None and run.error.kind == "exception"
    lines = run.error.message.splitlines()
    assert lines[1] == "  line 27, in <module>: f0()" and lines[-1] == "KeyError: k"
    assert lines[-2] == "  line 26, in f12: return {}['k']" and "more lines]" in run.error.message
    assert len(lines) == 1 + 8 + 1 + 1


def test_a_bad_keyword_past_the_checker_is_a_type_error_and_no_call(recorded: tuple[CodeMode, Recording]) -> None:
    mode, provider = recorded
    code = "from tools import sample\ndef call(**kw):\n    return sample.get_weather(**kw)\nawait call(cty='x')\n"
    run = mode.run(code)
    assert run.error is not None and run.error.kind == "exception"
    assert run.error.message.endswith(
        "TypeError: get_weather() got an unexpected keyword argument 'cty'; its parameters: city, units"
    )
    assert "Tools" not in run.error.message and "Results" not in run.error.message  # no host class named
    assert run.calls == [] and provider.calls == []  # no phantom call


def test_a_class_instance_as_an_argument_is_invalid_arguments_not_protocol(
    recorded: tuple[CodeMode, Recording],
) -> None:
    mode, provider = recorded
    code = (
        "from tools import sample\nclass C:\n    pass\ndef call(**kw):\n    return sample.search_docs(**kw)\n"
        "await call(query='a', filters=C())\n"
    )
    run = mode.run(code)
    assert run.error is not None and run.error.kind == "exception"
    assert "RuntimeError: invalid_arguments: search_docs() was not called: the arguments['filters'] is a class" in (
        run.error.message
    )
    assert run.calls == [] and provider.calls == []


def test_a_recursive_argument_is_refused_not_sent_as_text(recorded: tuple[CodeMode, Recording]) -> None:
    mode, provider = recorded
    code = "from tools import sample\nx = []\nx.append(x)\nawait sample.search_docs(query='a', filters={'tags': x})\n"
    run = mode.run(code)
    assert (
        run.error is not None and "invalid_arguments" in run.error.message and "contains itself" in (run.error.message)
    )
    assert provider.calls == []


@pytest.mark.parametrize(
    ("call", "problem"),
    [
        (
            "sample.search_docs(query='a', limit=500)",
            "search_docs() was not called: /limit: 500 is greater than the maximum of 50",
        ),
        ("sample.count_slowly(steps=-1)", "count_slowly() was not called: /steps: -1 is less than the minimum of 0"),
        (
            "call(sample.get_weather, city='Paris', units='kelvin')",
            "get_weather() was not called: /units: 'kelvin' is not one of ['celsius', 'fahrenheit']",
        ),
        ("call(sample.get_weather, city=3)", "get_weather() was not called: /city: 3 is not of type 'string'"),
        (
            "call(sample.search_docs, query='a', filters={'since': 3})",
            "search_docs() was not called: /filters/since: 3 is not of type 'string'",
        ),
    ],
    ids=["maximum", "minimum", "enum", "type", "nested-type"],
)
def test_arguments_that_break_the_input_schema_are_refused_on_the_host_and_never_sent(
    recorded: tuple[CodeMode, Recording], call: str, problem: str
) -> None:
    """Past the checker (bounds it cannot see, values through ``**kw``), the tool's listed input
    schema still holds: the call fails ``invalid_arguments`` naming the parameter and the rule,
    and nothing reaches the server (the recording provider sits in front of the registry)."""
    mode, provider = recorded
    code = f"from tools import sample\ndef call(f, **kw):\n    return f(**kw)\nawait {call}\n"
    run = mode.run(code)
    assert run.error is not None and run.error.kind == "exception", run.error
    assert f"RuntimeError: invalid_arguments: {problem}" in run.error.message
    assert run.calls == [] and provider.calls == []
    # The same call with arguments that fit is sent.
    fine = mode.run("from tools import sample\nawait sample.search_docs(query='a', limit=50)\n")
    assert fine.ok, fine.error
    assert [name for name, _ in provider.calls] == ["search-docs"]


def test_a_100_mb_value_is_memory_with_advice(recorded: tuple[CodeMode, Recording]) -> None:
    mode, _ = recorded
    run = mode.run("'x' * 100_000_000\n")
    assert run.error is not None and run.error.kind == "memory", run.error
    assert "max_memory_bytes" in run.error.message and "keep less at once" in run.error.message


def test_a_forgotten_await_gets_a_hint(recorded: tuple[CodeMode, Recording]) -> None:
    mode, _ = recorded
    diagnostics = mode.check("from tools import sample\nw = sample.get_weather(city='Paris')\nw['city']\n")
    assert diagnostics and "CoroutineType" in diagnostics[0].message
    assert "write `await module.function(...)`" in diagnostics[0].message


def test_advice_names_no_host_api(recorded: tuple[CodeMode, Recording]) -> None:
    mode, _ = recorded
    assert "api()" not in mode.search("zzzzqqq") and "try other words" in mode.search("zzzzqqq")
    from mas.runtime.code_mode.core import _advice

    message = _advice(
        "input_required", "tool 'x' needs input: elicitation; pass on_input=... in with_options to answer it"
    )
    assert "with_options" not in message and "on_input" not in message
    assert message.endswith("code mode cannot answer a tool's questions: call it with arguments that need none")
