"""Published servers from PyPI, used as a new user would (issue 30).

Each is installed once, in a cached venv of its own (tests/old_sdk.py, ``published_python``),
since each pins its own mcp or fastmcp; the test skips, saying why, only when PyPI cannot be
reached. math-mcp-learning-server 0.10.3 (fastmcp 4.2, 17 tools over stdio) has a tool
parameter named ``result`` (item 1) and declares the output schema
``{"type": "object", "additionalProperties": true}`` for every tool (item 4).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import generate, import_fresh, pyright_strict
from old_sdk import published_python

from mas.runtime.registry import RuntimeRegistry

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
    assert generate(root, ["--infra", "infra.yaml", "--out", "out", "--package", "math_tools", "-q"]) == 0
    return root, import_fresh(root / "out", "math_tools")


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
