"""Published servers from PyPI, used as a new user would (issue 30).

Each is installed once, in a cached venv of its own (tests/old_sdk.py, ``published_python``),
since each pins its own mcp or fastmcp; the test skips, saying why, only when PyPI cannot be
reached. math-mcp-learning-server 0.10.3 (fastmcp 4.2, 17 tools over stdio) has a tool
parameter named ``result`` (item 1) and declares the output schema
``{"type": "object", "additionalProperties": true}`` for every tool (item 4).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import generate, import_fresh, pyright_strict
from old_sdk import published_python

from codegen.cli import main as toolgen
from mas.runtime.registry import RuntimeRegistry

# The full tier: each server is installed from PyPI into a venv of its own (fastmcp and its
# dependencies), which a fresh machine pays on its first run; the fast tier meets real servers of
# other SDKs through the old-SDK venvs (tests/old_sdk.py).
pytestmark = pytest.mark.full

USE_MATH = """\
from math_tools import Tools
from math_tools._runtime import SupportsCallTool


def use(provider: SupportsCallTool) -> object:
    math = Tools(provider).math
    math.save_calculation(name="answer", expression="6 * 7", result=42.0)
    return math.load_variable(name="answer")
"""


def _infra(folder: Path, name: str, command: Path, home: Path) -> Path:
    server = {"name": name, "protocol": "mcp", "transport": "stdio", "command": str(command),
              "env": {"HOME": str(home)}, "connect_timeout_seconds": 60}  # fmt: skip
    infra = folder / "infra.yaml"
    infra.write_text(json.dumps({"kind": "ToolServerRegistry", "spec": {"servers": [server]}}), encoding="utf-8")
    return infra


@pytest.fixture(scope="module")
def math_package(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """math-mcp-learning-server, generated live into ``math_tools`` (its workspace file in a home of its own)."""
    python = published_python("math-mcp-learning-server")
    root = tmp_path_factory.mktemp("math")
    (root / "home").mkdir()
    _infra(root, "math", python.parent / "math-mcp-learning-server", root / "home")
    with pytest.MonkeyPatch.context() as mp:
        out = io.StringIO()
        mp.setattr(sys, "stdout", out)
        assert generate(root, ["--infra", "infra.yaml", "--out", "out", "--package", "math_tools", "-q"]) == 0
    (root / "coverage.txt").write_text(out.getvalue(), encoding="utf-8")
    return root, import_fresh(root / "out", "math_tools")


def test_an_output_schema_that_constrains_nothing_is_a_mapping_and_counted_as_untyped(
    math_package: tuple[Path, Any],
) -> None:
    """Item 4: ``{"type": "object", "additionalProperties": true}`` became a model with no fields,
    counted as declared; only ``.model_extra`` reached the data."""
    root, pkg = math_package
    assert (root / "coverage.txt").read_text().splitlines()[-1] == (
        "toolgen: typed results: declared 0, inferred 0, untyped 17 "
        "(17 with an output schema that constrains nothing: dict[str, Any])"
    )
    assert (
        "def calculate(self, *, expression: str) -> dict[str, Any]:"
        in (root / "out" / "math_tools" / "_tools.py").read_text()
    )
    with RuntimeRegistry.from_sources(infra=[root / "infra.yaml"]) as registry:
        answer = pkg.Tools(registry).math.calculate(expression="2 + 3 * 4")
    assert type(answer) is dict and "= 14.0" in answer["content"][0]["text"], answer


@pytest.mark.slow  # records from the server, then generates again
def test_samples_type_an_output_schema_that_constrains_nothing(math_package: tuple[Path, Any]) -> None:
    """Item 4: ``toolgen record`` could not improve such a tool: inference skipped every tool that declares a schema."""
    root, _ = math_package
    (root / "examples.yaml").write_text("- tool: calculate\n  arguments: {expression: '2 + 3'}\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        assert toolgen(["record", "--examples", "examples.yaml", "--infra", "infra.yaml", "-q"]) == 0
        out = io.StringIO()
        mp.setattr(sys, "stdout", out)
        assert generate(root, ["--infra", "infra.yaml", "--out", "learned", "--package", "math_tools", "-q"]) == 0
    assert out.getvalue().splitlines()[-1] == (
        "toolgen: typed results: declared 0, inferred 1, untyped 16 "
        "(16 with an output schema that constrains nothing: dict[str, Any])"
    )
    pkg = import_fresh(root / "learned", "math_tools")
    with RuntimeRegistry.from_sources(infra=[root / "infra.yaml"]) as registry:
        answer = pkg.Tools(registry).math.calculate(expression="6 * 7")
    assert "= 42" in answer.content[0].text, answer  # a model learned from the recorded result


@pytest.mark.slow  # installs the server once, generates live, runs mypy and pyright
def test_a_parameter_named_result_is_sent_and_the_package_type_checks(math_package: tuple[Path, Any]) -> None:
    """Item 1: ``save_calculation(name, expression, result)`` once gave 6 mypy and 8 pyright errors."""
    root, pkg = math_package
    with RuntimeRegistry.from_sources(infra=[root / "infra.yaml"]) as registry:
        math = pkg.Tools(registry).math
        math.save_calculation(name="answer", expression="6 * 7", result=42.0)
        loaded = math.load_variable(name="answer")
    assert "42" in json.dumps(loaded if isinstance(loaded, dict) else loaded.model_dump(mode="json"))
    out = root / "out"
    (out / "use_it.py").write_text(USE_MATH, encoding="utf-8")
    (out / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--strict", "math_tools", "use_it.py"],
        cwd=out, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
    report = pyright_strict(out, ["math_tools", "use_it.py"])
    assert [d["message"] for d in report["generalDiagnostics"] if d["severity"] in ("error", "warning")] == []
