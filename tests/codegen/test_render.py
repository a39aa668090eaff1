"""The wrapper module as rendered from the templates and formatted once (codegen/emit/render.py): black,
the reference style, agrees with every line of it, and it imports exactly what it uses."""

from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest
from gen_helpers import REPO, black_agrees, black_formatted
from tiers import tiered

from codegen.build import build_package
from codegen.emit.render import render_package, tools_module
from codegen.model import SourceTools

LONG = "x" * 90
ENUM = {"type": "string", "enum": [f"choice_number_{i}" for i in range(12)], "default": "choice_number_0"}


def _tool(name: str, props: dict[str, object], required: list[str], output: bool = False) -> dict[str, object]:
    tool: dict[str, object] = {
        "name": name,
        "inputSchema": {"type": "object", "properties": props, "required": required},
    }
    if output:
        tool["outputSchema"] = {
            "type": "object",
            "properties": {"value": {"type": "array", "items": {"type": "string"}}},
        }
    return tool


#: Shapes the old hand-made layout had rules (and bugs) for; the formatter lays them all out now.
SHAPES = [
    _tool("short", {"a": {"type": "string"}}, ["a"]),
    _tool("no_params", {}, []),
    _tool("one_long_param_" + "y" * 40, {"p" * 40: {"type": "integer"}}, ["p" * 40]),
    _tool("enum_param", {"mode": ENUM, "name": {"type": "string"}}, ["name"], output=True),
    _tool(LONG, {"value_" + "z" * 40: {"type": "string", "default": "d" * 120}}, [], output=True),
    _tool("nested", {"filters": {"type": "object", "properties": {"tags": {"type": "array", "items": ENUM}}}}, []),
    _tool("many_" + "w" * 70, {f"argument_number_{i}": {"type": "number"} for i in range(9)}, ["argument_number_0"]),
]


@pytest.mark.parametrize("sources", tiered([1, 2], [1]), ids=["flat", "namespaced"])  # full: two sources
def test_extreme_shapes_come_out_as_black_lays_them_out(sources: int) -> None:
    srcs = [
        SourceTools(
            name=f"source_with_a_rather_long_name_{i}",
            kind="mcp-json",
            origin="t",
            tools=tuple(SHAPES),
            wire_prefix=f"ns{i}" if sources > 1 else None,
        )
        for i in range(sources)
    ]
    files = render_package(build_package(srcs, package="p", header="# h", parallel=False))
    for name in ("inputs.py", "outputs/__init__.py", "__init__.py"):
        assert black_formatted(files[name]) == files[name], name
    # The long Literal of an optional parameter is the one shape black lays out otherwise (it
    # parenthesises the annotation; gen_helpers.black_agrees). Should ruff ever match black here,
    # the second half fails: then drop that allowance.
    assert black_agrees(files["_tools.py"]) and black_formatted(files["_tools.py"]) != files["_tools.py"]
    assert max(len(line) for line in files["_tools.py"].splitlines()) > 88  # a line nobody can split


@pytest.mark.parametrize("sources", [1, 2], ids=["flat", "namespaced"])
def test_the_wrapper_module_made_of_parts_is_the_module_formatted_whole(sources: int) -> None:
    """Each tool's parts of ``_tools.py`` are formatted apart and placed where placeholders stood
    (render.tools_module): the module is exactly the one formatted in one piece. Every shape above
    (long names, long literals, parameters the formatter splits) and a long docstring, in one
    source and in two, one tool and many."""
    shapes = [*SHAPES, _tool("x" * 200, {"q": {"type": "string", "description": "y " * 300}}, [])]
    for tools in (shapes, shapes[:1], shapes[3:5]):
        srcs = [
            SourceTools(f"source_{i}", "mcp-json", "t", tuple(tools), wire_prefix=f"ns{i}" if sources > 1 else None)
            for i in range(sources)
        ]
        pkg = build_package(srcs, package="p", header="# h", parallel=False)
        assert tools_module(pkg) == tools_module(pkg, whole=True)


def _unused_imports(text: str) -> list[str]:
    """Names imported at module level (an ``if TYPE_CHECKING:`` block included) never used after."""
    tree = ast.parse(text)
    imported: list[str] = []
    for node in tree.body:
        body = node.body if isinstance(node, ast.If) else [node]
        for stmt in body:
            if isinstance(stmt, ast.ImportFrom) and stmt.module != "__future__":
                imported += [a.asname or a.name for a in stmt.names]
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    # With `from __future__ import annotations` annotations stay as written; read their names too.
    for node in ast.walk(tree):
        annotation = getattr(node, "annotation", None) or getattr(node, "returns", None)
        if annotation is not None:
            used |= {n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)}
    return [name for name in imported if name not in used]


@pytest.mark.parametrize("case", ["captures", "samples", "time_tools"])
def test_golden_wrappers_import_nothing_unused(case: str) -> None:
    assert _unused_imports((REPO / "tests" / "golden" / case / "_tools.py").read_text()) == []


def test_package_without_models_imports_nothing_unused() -> None:
    """No nested argument types and no output schema: the type-checking block imports ToolOutput
    alone (a pydantic class: imported for type checkers only), and no model module."""
    only = _tool("ping", {"n": {"type": "integer"}}, [])
    text = render_package(build_package([SourceTools("s", "mcp-json", "t", (only,))], package="p", header="# h"))
    assert "if TYPE_CHECKING:\n    from ._runtime import ToolOutput as _ToolOutput\n\n" in text["_tools.py"]
    assert "from . import" not in text["_tools.py"]
    assert _unused_imports(text["_tools.py"]) == []


def test_package_without_optional_parameters_imports_no_omission_sentinel() -> None:
    only = _tool("ping", {"n": {"type": "integer"}}, ["n"])
    text = render_package(build_package([SourceTools("s", "mcp-json", "t", (only,))], package="p", header="# h"))
    assert "_NOT_GIVEN" not in text["_tools.py"] and "_NotGiven" not in text["_tools.py"]
    assert _unused_imports(text["_tools.py"]) == []


def test_a_formatter_run_left_before_its_result_is_ended_and_its_folder_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """render_package starts ruff on the modules and renders _tools.py meanwhile
    (``formatting.Formatting``); an error in between ends the run still going and leaves no
    scratch folder behind, and a run waited for gives what ``format_files`` gives."""
    from codegen.emit import formatting

    with formatting.Formatting({"m.py": "x  =  1\n"}) as run:
        assert run.result() == formatting.format_files({"m.py": "x  =  1\n"}) == {"m.py": "x = 1\n"}
    slow = tmp_path / "slow-ruff"
    slow.write_text("#!/bin/sh\nexec sleep 60\n")
    slow.chmod(0o755)
    monkeypatch.setattr(formatting, "_ruff", lambda: str(slow))
    started = time.monotonic()
    with pytest.raises(RuntimeError), formatting.Formatting({"m.py": "x = 1\n"}) as run:
        raise RuntimeError("a template failed meanwhile")
    assert run._process is not None and run._process.returncode is not None  # ended, not left running
    assert not run._root.exists()
    assert time.monotonic() - started < 30
