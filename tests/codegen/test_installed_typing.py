"""Agent code outside this repository type-checks against the installed packages, and keeps doing so
when a source is added.

Everything happens in a temporary folder with no pyproject.toml: the checkers see ``mas`` and
``codegen`` only as installed (``py.typed`` decides whether they read them), and the two generated
packages as plain folders. ``one`` is generated from the ``time`` capture alone; ``two`` from
``time`` and ``fetch``. The same agent code runs against both, so a call site that moved when the
second source was added (``tools.get_current_time`` -> ``tools.time.get_current_time``) fails here.
Each checker runs once over both scripts.
"""

from __future__ import annotations

import importlib.resources
import subprocess
import sys
from pathlib import Path

import pytest
from gen_helpers import REPO, generate, pyright_strict

CAPTURES = REPO / "tests" / "fixtures" / "mcp-tools-list"

AGENT = '''\
"""An agent: the runtime registry, typed tools from package {package}."""

from __future__ import annotations

from mas.runtime.registry import RuntimeRegistry

from {package} import AsyncTools, Tools, ToolResult, outputs


def now_in(registry: RuntimeRegistry, zone: str) -> str:
    tools = Tools(registry)
    now: outputs.TimeGetCurrentTimeOutput = tools.time.get_current_time(timezone=zone)
    converted = tools.time.convert_time(source_timezone=zone, target_timezone="UTC", time="12:00")
    whole: ToolResult[outputs.TimeGetCurrentTimeOutput] = tools.results.time.get_current_time(timezone=zone)
    return f"{{now.datetime}} {{converted.time_difference}} {{whole.value.is_dst}}"


async def now_async(registry: RuntimeRegistry) -> bool:
    return (await AsyncTools(registry).time.get_current_time(timezone="UTC")).is_dst


def main() -> None:
    with RuntimeRegistry.from_sources(tools=["tools"]) as registry:
        print(now_in(registry, "Europe/Paris"), [t["name"] for t in registry.list_tools()])
'''


@pytest.mark.parametrize("package", ["mas", "codegen"])
def test_installed_packages_carry_py_typed(package: str) -> None:
    assert importlib.resources.files(package).joinpath("py.typed").is_file()


@pytest.fixture(scope="module")
def agent_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("agent")
    time_json, fetch_json = str(CAPTURES / "time.json"), str(CAPTURES / "fetch.json")
    with pytest.MonkeyPatch.context() as mp:
        assert generate(root, ["--out", ".", "--package", "one", "--mcp-json", time_json], mp) == 0
        two = ["--out", ".", "--package", "two", "--mcp-json", time_json, "--mcp-json", fetch_json]
        assert generate(root, two, mp) == 0
    for package in ("one", "two"):
        (root / f"agent_{package}.py").write_text(AGENT.format(package=package), encoding="utf-8")
    return root


def test_the_first_sources_call_sites_survive_a_second_source(agent_folder: Path) -> None:
    one = (agent_folder / "one" / "_tools.py").read_text()
    two = (agent_folder / "two" / "_tools.py").read_text()
    assert "class Tools(" in one and "self.time = TimeTools(" in one and "self.fetch" not in one
    assert "self.time = TimeTools(" in two and "self.fetch = FetchTools(" in two
    # The time source's own class is the same text whether or not fetch is there.
    start = one.index("class TimeTools(")
    assert one[start : one.index("\nclass ", start + 1)] in two


def test_agent_code_passes_mypy_strict_outside_the_repo(agent_folder: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "agent_one.py", "agent_two.py"],
        cwd=agent_folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "Success: no issues found in 2 source files" in completed.stdout


def test_agent_code_passes_pyright_strict_outside_the_repo(agent_folder: Path) -> None:
    report = pyright_strict(agent_folder, ["agent_one.py", "agent_two.py"])
    assert report["generalDiagnostics"] == []
    assert report["summary"]["filesAnalyzed"] >= 2
