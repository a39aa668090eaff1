"""FastMCP's wrapped results (issue 16, item 3), against a real stdio server that answers on the
wire as FastMCP does (tests/servers/fastmcp_wrap_server.py).

An output schema marked ``x-fastmcp-wrap-result`` types the method as the value itself (``str``,
``int``, ``list[str]``, a model), and decoding unwraps ``{"result": value}``; the same for a type
inferred from recorded results of that shape. The package and code using it type-check.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import RecordingProvider, forked_python, generate, import_fresh
from pyright_batch import Batch, pyright_workspace

from codegen.cli import main as toolgen
from mas.runtime.registry import RuntimeRegistry

SERVER = Path(__file__).resolve().parents[1] / "servers" / "fastmcp_wrap_server.py"
USE = """\
from fm import Tools, ToolOutput
from fm._runtime import SupportsCallTool
from fm.outputs import FmPointOutputPoint


def use(provider: SupportsCallTool) -> int:
    tools = Tools(provider).fm
    greeting: str = tools.greet(name="Ada")
    total: int = tools.add()
    cities: list[str] = tools.cities()
    point: FmPointOutputPoint = tools.point()
    legacy = tools.legacy_cities()
    count = len(legacy) if not isinstance(legacy, ToolOutput) else 0
    return len(greeting) + total + len(cities) + point.x + count
"""


@pyright_workspace(include=["fm", "use_it.py"], root="out", full=True)
def checked(root: Path) -> None:
    """The package generated from the live server (recorded examples too), and code using it."""
    server = {"name": "fm", "protocol": "mcp", "transport": "stdio", **forked_python(str(SERVER)),
              "connect_timeout_seconds": 20}  # fmt: skip
    infra = {"apiVersion": "toolgen/v1", "kind": "ToolServerRegistry", "metadata": {"name": "f"},
             "spec": {"servers": [server]}}  # fmt: skip
    (root / "infra.yaml").write_text(json.dumps(infra))
    (root / "examples.yaml").write_text("- tool: legacy_cities\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        assert toolgen(["record", "--examples", "examples.yaml", "--infra", "infra.yaml", "-q"]) == 0
        assert generate(root, ["--infra", "infra.yaml", "--out", "out", "--package", "fm", "-q"], mp) == 0
    (root / "out" / "use_it.py").write_text(USE)


@pytest.fixture(scope="module")
def fm(pyright_batch: Batch) -> tuple[Path, Any]:
    root = pyright_batch.built(checked)[0]
    return root, import_fresh(root / "out", "fm")


def test_wrapped_results_return_the_value_itself(fm: tuple[Path, Any]) -> None:
    root, pkg = fm
    assert {n: i.output_key for n, i in pkg.TOOLS.items()} == {
        "add": "result", "cities": "result", "greet": "result", "legacy_cities": "result", "point": "result",
    }  # fmt: skip
    with RuntimeRegistry.from_sources(infra=[root / "infra.yaml"]) as registry:
        tools = pkg.Tools(registry).fm
        assert tools.greet(name="Ada") == "hello Ada"
        total = tools.add()
        assert total == 42 and type(total) is int
        assert tools.cities() == ["Paris", "Lyon"]
        assert tools.point().x == 3
        assert tools.legacy_cities() == ["Kyoto", "Osaka"]  # inferred from the recorded result
        assert tools.results.add().structured_content == {"result": 42}  # the whole result is still there


def test_the_annotations_are_the_values(fm: tuple[Path, Any]) -> None:
    root, _ = fm
    code = (root / "out" / "fm" / "_tools.py").read_text()
    for line in (
        "_info_fm__greet: _ToolInfo[str]",
        "_info_fm__add: _ToolInfo[int]",
        "_info_fm__cities: _ToolInfo[list[str]]",
        "_info_fm__point: _ToolInfo[_o.FmPointOutputPoint]",
        "_info_fm__legacy_cities: _ToolInfo[list[str] | _ToolOutput]",
    ):
        assert line in code


def test_a_wrapped_value_without_structured_content_is_read_from_its_text(fm: tuple[Path, Any]) -> None:
    _, pkg = fm
    answers = {
        "greet": {"is_error": False, "result": "hi", "content": [{"type": "text", "text": "hi"}]},
        "add": {"is_error": False, "result": "7", "content": [{"type": "text", "text": "7"}]},
    }
    tools = pkg.Tools(RecordingProvider(answers)).fm
    assert tools.greet() == "hi"
    assert tools.add() == 7


@pytest.mark.full
@pytest.mark.slow
def test_the_package_and_code_using_the_values_type_check(fm: tuple[Path, Any], pyright_batch: Batch) -> None:
    root, _ = fm
    out = root / "out"
    (out / "mypy.ini").write_text("[mypy]\n")
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--strict", "fm",
         "use_it.py"],
        cwd=out, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
    report = pyright_batch.report(checked)
    assert [d["message"] for d in report["generalDiagnostics"] if d["severity"] in ("error", "warning")] == []
