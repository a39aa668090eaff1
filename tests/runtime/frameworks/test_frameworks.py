"""What the framework adapters share (mas/runtime/frameworks/_adapt.py), that the frameworks stay
optional, and that the adapters and a user's agent script type-check (mypy --strict)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mas.runtime.contracts.tool_contract import ToolContract
from mas.runtime.frameworks import MAX_NAME_LENGTH, select_tools
from mas.runtime.frameworks._adapt import framework_names

REPO = Path(__file__).resolve().parents[3]
FRAMEWORKS = ("pydantic_ai", "agents", "langchain_core", "openai")
NAME = r"^[A-Za-z0-9_-]{1,64}$"


def test_names_are_wire_names_made_to_fit_unique_and_stable() -> None:
    wire = ["get_weather", "notes.create", "notes_create", "search-docs", "x" * 70, "é", "a.b/c"]
    names = framework_names(wire)
    assert names[0] == "get_weather" and names[3] == "search-docs"  # a name that fits is kept
    assert names[2] == "notes_create" and names[1].startswith("notes_create_") and len(names[1]) == 21
    assert len(names[4]) == MAX_NAME_LENGTH and names[4].startswith("x" * 55 + "_")
    assert names[5] == "_" and names[6] == "a_b_c"
    assert len(set(names)) == len(names)
    import re

    assert all(re.match(NAME, n) for n in names)
    # Stable: the same wire name gets the same name, whatever else is listed beside it.
    assert framework_names(["notes.create", "notes_create"])[0] == names[1]
    assert framework_names(["notes.create"]) == ["notes_create"]


class _Local(ToolContract):
    name = "local.echo"
    description = "Echo."
    parameters = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    read_only = True
    idempotent = True

    def execute(self, **kwargs: Any) -> Any:
        return {"echo": kwargs["text"]}


def test_any_tool_contract_provider_works_and_filters_read_hints() -> None:
    (tool,) = select_tools(_Local())
    assert (tool.name, tool.wire_name, tool.read_only, tool.needs_approval, tool.retry_safe) == (
        "local_echo", "local.echo", True, False, True
    )  # fmt: skip
    assert tool.retryable("timeout") and tool.retryable("invalid_arguments") and not tool.retryable("tool_error")
    assert select_tools(_Local(), read_only=True) == [tool]
    assert select_tools(_Local(), exclude="local.*") == []
    assert select_tools(_Local(), include=["nothing"]) == []
    with pytest.raises(TypeError, match="include= takes name patterns"):
        select_tools(_Local(), include=[3])  # type: ignore[list-item]


def test_a_tool_without_hints_needs_approval_by_mcps_defaults() -> None:
    class Bare(_Local):
        read_only = None
        idempotent = None

    (tool,) = select_tools(Bare())
    assert tool.needs_approval and not tool.retry_safe and not tool.retryable("timeout")
    assert select_tools(Bare(), destructive=False) == []


@pytest.mark.full  # each adapter keeps a test with its real package in its own file
def test_mas_runtime_and_toolgen_generate_import_no_framework(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "import mas.runtime, mas.runtime.registry, mas.runtime.frameworks, mas.runtime.code_mode\n"
        "from codegen.cli import main\n"
        "rc = main(['generate', '--offline', '--check'])\n"
        f"loaded = sorted(m for m in sys.modules if m.split('.')[0] in {FRAMEWORKS!r})\n"
        "print(rc, loaded)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "0 []"


USER_SCRIPT = """\
import threading

from agents import Agent as OpenAIAgent
from agents import FunctionTool
from langchain_core.tools import BaseTool
from pydantic_ai import Agent, DeferredToolRequests

from mas.runtime.frameworks.langchain import tools
from mas.runtime.frameworks.openai_agents import function_tools
from mas.runtime.frameworks.pydantic_ai import toolset
from mas.runtime.registry import RuntimeRegistry


def build(registry: RuntimeRegistry) -> None:
    agent = Agent("test", toolsets=[toolset(registry, read_only=True)], output_type=[str, DeferredToolRequests])
    result = agent.run_sync("hello")
    output: str | DeferredToolRequests = result.output
    given: list[FunctionTool] = function_tools(registry, exclude="notes.*", timeout_seconds=5)
    assistant = OpenAIAgent(name="assistant", tools=list(given))
    stop = threading.Event()
    chain: list[BaseTool] = list(
        tools(registry, "sample_tools", include=["sample.*"], on_input=lambda requests: {}, cancel_event=stop,
              on_progress=lambda tool, progress, total, message: None)
    )
    print(output, assistant, chain)
"""


@pytest.mark.full  # each adapter keeps a test with its real package in its own file
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_adapters_and_a_user_script_type_check_strict(tmp_path: Path) -> None:
    for module in ("pydantic_ai", "agents", "langchain_core"):
        pytest.importorskip(module)
    import fcntl
    import hashlib
    import os
    from importlib.metadata import version

    from npm_cache import cache_dir

    script = tmp_path / "agent_script.py"
    script.write_text(USER_SCRIPT, encoding="utf-8")
    adapters = [str(p) for p in sorted((REPO / "mas" / "runtime" / "frameworks").glob("*.py"))]
    # One run over the adapters and the script. Most of its time is mypy reading the three
    # frameworks: their analysis is kept between runs in a cache of its own (outside the repo, one
    # per mypy, framework and Python version; mypy checks every cached module against its source,
    # so a stale entry is re-read, never trusted), one run at a time (a file lock).
    versions = [sys.version, *(version(p) for p in ("mypy", "pydantic-ai-slim", "openai-agents", "langchain-core"))]
    root = cache_dir("mypy-frameworks") / hashlib.sha256("\n".join(versions).encode()).hexdigest()[:16]
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        proc = subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--python-version", "3.11", *adapters, str(script)],
            cwd=REPO, capture_output=True, text=True, timeout=850,
            env={**os.environ, "MYPY_CACHE_DIR": str(root / "cache")},
        )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.full  # each adapter keeps a test with its real package in its own file
def test_the_readme_adapter_lines_build_an_agent_over_the_sample_server() -> None:
    pytest.importorskip("pydantic_ai")
    import os
    import re
    import textwrap

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Agent frameworks\n.*?```py\n(.*?)```", readme, flags=re.S)
    assert block is not None and len(block[1].strip().splitlines()) <= 4
    code = (
        "from mas.runtime.registry import RuntimeRegistry\n"
        "with RuntimeRegistry.from_sources(infra=['library-samples/infra/sample-stdio.yaml'],"
        " tools=['library-samples/tools']) as registry:\n"
        + textwrap.indent(block[1], "    ")
        + "    given = next(t for t in agent.toolsets if type(t).__name__ == 'ToolgenToolset')\n"
        + "    print(sorted(given.tools))\n"
    )
    env = {**os.environ, "OPENAI_API_KEY": "not-used: the agent is built, never run"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    names = proc.stdout.strip().splitlines()[-1]
    assert "'get_weather'" in names and "notes_delete" not in names


class _Asks:
    """A provider whose one tool asks for a name (an MCP input round) and then greets: the round is
    read by the runtime's own ``_rules.input_requests``, as in every framework adapter."""

    def __init__(self) -> None:
        self.options: list[dict[str, Any]] = []

    def list_tools(self) -> list[dict[str, Any]]:
        return [{"name": "greet", "description": "Greet.", "parameters": {"type": "object", "properties": {}},
                 "read_only": True, "idempotent": True}]  # fmt: skip

    def call_tool(self, tool_name: str, arguments: Any, **kwargs: Any) -> Any:
        self.options.append(kwargs)
        answer = (kwargs.get("input_responses") or {}).get("name")
        if answer is None or kwargs.get("request_state") != "greet:1":
            ask = {"method": "elicitation/create", "params": {"message": "Your name?"}}
            wire = {"inputRequests": {"name": ask}, "requestState": "greet:1"}
            return {"status": "success", "result_type": "input_required", "result": wire, "is_error": False}
        return {"status": "success", "result": f"Hello, {answer['content']['name']}!", "is_error": False}


def test_the_adapters_input_round_reads_the_shipped_rule_and_answers_it() -> None:
    import asyncio

    from mas.runtime.frameworks._adapt import call

    provider = _Asks()
    (tool,) = select_tools(provider)
    pending = asyncio.run(call(provider, tool, {}))
    assert pending.needs_input and not pending.ok and pending.kind is None
    assert [(r.key, r.method, r.params) for r in pending.input_requests] == [
        ("name", "elicitation/create", {"message": "Your name?"})
    ]
    assert pending.request_state == "greet:1"
    told = pending.told(retryable=False)
    assert told == "input_required: the tool needs input nobody here can give: name (elicitation/create)"
    asked: list[Any] = []

    def on_input(requests: list[Any]) -> dict[str, Any]:
        asked.extend(requests)
        return {"name": {"action": "accept", "content": {"name": "Ada"}}}

    done = asyncio.run(call(provider, tool, {}, on_input=on_input))
    assert done.ok and done.value == "Hello, Ada!" and [r.key for r in asked] == ["name"]
    sent = {key: value for key, value in provider.options[-1].items() if key != "cancel_event"}
    assert sent == {"input_responses": {"name": {"action": "accept", "content": {"name": "Ada"}}},
                                    "request_state": "greet:1"}  # fmt: skip


def test_the_adapters_use_code_modes_public_dispatch_and_nothing_private() -> None:
    """One dispatch of the code-mode tools (``server.call_code_tool``, ``server.code_mode_tools``),
    the MCP face's and the adapters': no adapter reaches a private name of code mode."""
    import ast

    for path in sorted((REPO / "mas" / "runtime" / "frameworks").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        private = [
            f"{node.value.id}.{node.attr}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id in ("server", "core", "code_mode") and node.attr.startswith("_")
        ]  # fmt: skip
        imported = [
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mas.runtime.code_mode")
            for alias in node.names
            if alias.name.startswith("_")
        ]
        assert private == [] and imported == [], path.name
    source = (REPO / "mas" / "runtime" / "frameworks" / "_adapt.py").read_text(encoding="utf-8")
    assert "server.call_code_tool(" in source and "server.code_mode_tools(" in source
