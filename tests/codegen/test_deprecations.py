"""PEP 702 deprecations: a tool or parameter the server marks ``deprecated: true`` is reported by
real mypy and real pyright at the call sites that use it, and nowhere else (typing snapshots).

The package is generated from ``tests/fixtures/upgrades/deprecations.json``: ``search`` has a
deprecated optional parameter (``limit``), ``old_lookup`` is deprecated whole (``deprecated: true``
on its input schema), ``current`` is not. mypy reports deprecations with ``--enable-error-code
deprecated``; pyright with ``reportDeprecated`` (an error in strict mode).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import REPO, black_agrees, generate

FIXTURE = REPO / "tests" / "fixtures" / "upgrades" / "deprecations.json"
USE = """\
from dep import Tools


def run(tools: Tools) -> None:
    tools.idx.current(key="a")
    tools.idx.search(query="q")
    tools.idx.search(query="q", page_size=3)
    tools.idx.search(query="q", limit=3)  # deprecated parameter
    tools.idx.old_lookup(key="k")  # deprecated tool
    tools.results.idx.old_lookup(key="k")  # deprecated tool, whole result
    tools.tasks.idx.search(query="q", limit=3)  # deprecated parameter, as a task
"""
# (line, what is deprecated) of every diagnostic each checker must report, and nothing else.
EXPECTED = [
    (8, "parameter 'limit' of tool 'search' is deprecated by its server"),
    (9, "tool 'old_lookup' is deprecated by its server"),
    (10, "tool 'old_lookup' is deprecated by its server"),
    (11, "parameter 'limit' of tool 'search' is deprecated by its server"),
]


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("deprecations")
    mp = pytest.MonkeyPatch()
    try:
        assert generate(root, ["--mcp-json", f"idx={FIXTURE}", "--out", ".", "--package", "dep", "--no-cache"], mp) == 0
    finally:
        mp.undo()
    (root / "use.py").write_text(USE, encoding="utf-8")
    return root


def test_mypy_reports_exactly_the_deprecated_call_sites(package: Path) -> None:
    argv = [sys.executable, "-m", "mypy", "--strict", "--enable-error-code", "deprecated", "--no-incremental"]
    proc = subprocess.run([*argv, "use.py", "dep"], cwd=package, capture_output=True, text=True, timeout=600)
    found = []
    for line in proc.stdout.splitlines():
        if ": error: " in line:
            where, message = line.split(": error: ", 1)
            assert where.startswith("use.py:"), line  # never inside the generated package
            found.append((int(where.split(":")[1]), message.split(" is deprecated: ")[1].rsplit("  [", 1)[0]))
            assert message.endswith("[deprecated]"), line
    assert found == EXPECTED, proc.stdout


def test_pyright_reports_exactly_the_deprecated_call_sites(package: Path) -> None:
    pyright = shutil.which("pyright") or str(Path(sys.executable).parent / "pyright")
    (package / "pyrightconfig.json").write_text(
        json.dumps({"typeCheckingMode": "strict", "reportDeprecated": "error", "include": ["use.py", "dep"]})
    )
    proc = subprocess.run([pyright, "--outputjson"], cwd=package, capture_output=True, text=True, timeout=600)
    report: dict[str, Any] = json.loads(proc.stdout)
    found = []
    for d in report["generalDiagnostics"]:
        if d["severity"] != "error":
            continue
        assert Path(d["file"]).name == "use.py" and d["rule"] == "reportDeprecated", d
        found.append((d["range"]["start"]["line"] + 1, d["message"].splitlines()[-1].strip()))
    assert found == EXPECTED, report["generalDiagnostics"]


def test_a_deprecated_method_warns_when_called_and_still_calls(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(package))
    for name in [m for m in sys.modules if m == "dep" or m.startswith("dep.")]:
        monkeypatch.delitem(sys.modules, name)
    from dep import Tools  # type: ignore[import-not-found]

    sent: list[tuple[str, Any]] = []

    class Provider:
        def call_tool(self, tool_name: str, arguments: Any, **_: Any) -> dict[str, Any]:
            sent.append((tool_name, dict(arguments)))
            return {"status": "success", "result": "found", "metadata": {}}

    tools = Tools(Provider())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tools.idx.old_lookup(key="k")
        tools.idx.current(key="a")
    assert [str(w.message) for w in caught] == ["tool 'old_lookup' is deprecated by its server"]
    assert [name for name, _ in sent] == ["old_lookup", "current"]


def test_the_docstrings_the_api_page_and_the_layout_say_so(package: Path) -> None:
    tools = (package / "dep" / "_tools.py").read_text(encoding="utf-8")
    assert "Deprecated: the server marks this tool deprecated" in tools
    assert "limit: Use page_size. (deprecated by the server)" in tools
    assert black_agrees(tools)
    api = (package / "dep" / "api.md").read_text(encoding="utf-8")
    assert "# Look a key up (use search). [deprecated]" in api
    assert "# Search the index. [deprecated parameter(s): limit]" in api
