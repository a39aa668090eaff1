"""Every row of docs/schema-coverage.md, backed by a case in tests/fixtures/schema-coverage.json.

Each case is a JSON Schema keyword of 2020-12 or draft-07 used as the schema of one required
property ``v``, in both the input and the output schema of one tool. One package is generated from
all cases; per case the test checks what the keyword became in Python (the wrapper's parameter
annotation and the output model's field annotation), which warning kinds fired, and that a valid
value goes out exactly and decodes back. The package passes mypy --strict and pyright strict, and
the table in the docs is the one these cases render. ``TOOLGEN_UPDATE_GOLDEN=1`` rewrites the
expected columns of the fixture (review the diff).
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from gen_helpers import REPO, RecordingProvider, generate, import_fresh
from pyright_batch import Batch, pyright_workspace

FIXTURE = REPO / "tests" / "fixtures" / "schema-coverage.json"
DOC = REPO / "docs" / "schema-coverage.md"
DATA: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
CASES: list[dict[str, Any]] = DATA["cases"]
UPDATE = os.environ.get("TOOLGEN_UPDATE_GOLDEN") == "1"
PACKAGE = "coverage_tools"


def _tool_name(case: dict[str, Any]) -> str:
    return "kw_" + case["id"].replace("-", "_")


def listing() -> dict[str, Any]:
    tools = []
    for case in CASES:
        schema = {"type": "object", "properties": {"v": case["schema"]}, "required": ["v"], "$defs": DATA["defs"]}
        if "definitions" in case:
            schema["definitions"] = case["definitions"]
        tools.append({"name": _tool_name(case), "inputSchema": schema, "outputSchema": schema})
    return {"tools": tools}


@pyright_workspace(include=[PACKAGE], full=True)
def checked(folder: Path) -> list[str]:
    """The package of a tool per case; the warnings `generate` printed."""
    (folder / "coverage.json").write_text(json.dumps(listing()), encoding="utf-8")
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert generate(folder, ["--mcp-json", "coverage.json", "--out", ".", "--package", PACKAGE]) == 0
    return err.getvalue().splitlines()


@pytest.fixture(scope="module")
def generated(pyright_batch: Batch) -> tuple[Path, ModuleType, list[str]]:
    folder, warnings = pyright_batch.built(checked)
    result = folder, import_fresh(folder, PACKAGE), warnings
    if UPDATE:  # accept an intended change: rewrite the expected columns, then review the diff
        _update_expected_columns(result)
    return result


@functools.cache
def _outputs_tree(folder: Path) -> ast.Module:
    """Every output model module of the package, parsed once (each of the 70 cases reads it)."""
    outputs = sorted((folder / PACKAGE / "outputs").glob("*.py"))  # one model module per tool
    return ast.parse("\n".join(f.read_text(encoding="utf-8") for f in outputs))


def _observed(folder: Path, package: ModuleType, warnings: list[str], case: dict[str, Any]) -> dict[str, Any]:
    name = _tool_name(case)
    method = getattr(package._tools.CoverageTools, package.TOOLS[name].method)  # the source's namespace
    annotation = inspect.signature(method).parameters["v"].annotation
    tree = _outputs_tree(folder)
    cls = "Coverage" + "".join(w[:1].upper() + w[1:] for w in name.split("_")) + "Output"
    output = next(  # None: no output model (the result is untyped)
        (
            ast.unparse(s.annotation)
            for c in tree.body
            if isinstance(c, ast.ClassDef) and c.name == cls
            for s in c.body
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.target.id == "v"
        ),
        None,
    )
    kinds = sorted({w.rsplit("[", 1)[1].rstrip("]") for w in warnings if f"tool {name!r}:" in w})
    return {"input": annotation, "output": output, "warnings": kinds}


def _update_expected_columns(generated: tuple[Path, ModuleType, list[str]]) -> None:
    """With TOOLGEN_UPDATE_GOLDEN=1: write what each case becomes into the fixture and the docs."""
    for case in CASES:
        case.update(_observed(*generated, case))
    FIXTURE.write_text(json.dumps(DATA, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    text = DOC.read_text(encoding="utf-8")
    start, end = text.index(_BEGIN), text.index(_END)
    DOC.write_text(text[:start] + _BEGIN + "\n" + render_table() + text[end:], encoding="utf-8")


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_keyword_becomes_what_the_table_says(
    generated: tuple[Path, ModuleType, list[str]], case: dict[str, Any]
) -> None:
    folder, package, warnings = generated
    observed = _observed(folder, package, warnings, case)
    expected = {k: case.get(k) for k in ("input", "output", "warnings")}
    assert observed == expected
    # A valid value goes out exactly, and comes back decoded by the output model.
    name = _tool_name(case)
    value = case["value"]
    provider = RecordingProvider(
        default={"is_error": False, "result": {"v": value}, "structured_content": {"v": value}}
    )
    result = getattr(package.Tools(provider).coverage, package.TOOLS[name].method)(v=value)
    assert provider.calls == [(name, {"v": value}, {})]
    if case["output"] is None:  # untyped: the structured content as it came
        assert result.structured_content == {"v": value}
    else:
        assert "v" in result.model_dump(mode="json", by_alias=True, exclude_unset=True)


def test_every_warning_kind_is_one_line(generated: tuple[Path, ModuleType, list[str]]) -> None:
    _, _, warnings = generated
    assert warnings and all(w.startswith("toolgen: warning: coverage.json: tool 'kw_") for w in warnings)


@pytest.mark.full
@pytest.mark.slow  # mypy and pyright over a tool per keyword
def test_coverage_package_type_checks(generated: tuple[Path, ModuleType, list[str]], pyright_batch: Batch) -> None:
    folder, _, _ = generated
    (folder / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--strict", "--python-version", "3.11",
         "--no-pretty", "--no-color-output", "--no-error-summary", PACKAGE],
        cwd=folder, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout + completed.stderr
    report = pyright_batch.report(checked)
    found = [d["message"] for d in report["generalDiagnostics"] if d["severity"] in ("error", "warning")]
    assert found == []
    importlib.invalidate_caches()


_BEGIN = "<!-- coverage table: generated from tests/fixtures/schema-coverage.json -->"
_END = "<!-- end of coverage table -->"


def _cell(text: str) -> str:
    return "`" + text.replace("|", "\\|") + "`" if text else ""


def render_table() -> str:
    rows = ["| Keyword (case) | Draft | Parameter type | Output field type | Warning |", "|---|---|---|---|---|"]
    for case in CASES:
        schema = json.dumps(case["schema"], ensure_ascii=False)
        rows.append(
            f"| {case['id']}: {_cell(schema)} | {case['draft']} | {_cell(case.get('input') or '')} "
            f"| {_cell(case.get('output') or '')} | {', '.join(case.get('warnings') or []) or '-'} |"
        )
    return "\n".join(rows) + "\n"


def test_docs_table_is_the_fixtures() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert text[text.index(_BEGIN) + len(_BEGIN) + 1 : text.index(_END)] == render_table()
