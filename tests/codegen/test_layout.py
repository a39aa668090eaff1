"""The wrapper module is laid out without black; black must agree with every line of it."""

from __future__ import annotations

import ast

import pytest
from gen_helpers import REPO

import codegen.classes as classes
from codegen.build import build_package
from codegen.formatting import format_python
from codegen.layout import call_lines, def_lines
from codegen.model import SourceTools
from codegen.render import _wrappers_fit, render_package

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


SHAPES = [
    _tool("short", {"a": {"type": "string"}}, ["a"]),
    _tool("no_params", {}, []),
    _tool("one_long_param_" + "y" * 40, {"p" * 60: {"type": "integer"}}, ["p" * 60]),
    _tool("enum_param", {"mode": ENUM, "name": {"type": "string"}}, ["name"], output=True),
    _tool(LONG, {"value_" + "z" * 70: {"type": "string", "default": "d" * 120}}, [], output=True),
    _tool("nested", {"filters": {"type": "object", "properties": {"tags": {"type": "array", "items": ENUM}}}}, []),
    _tool("many_" + "w" * 70, {f"argument_number_{i}": {"type": "number"} for i in range(9)}, ["argument_number_0"]),
]


@pytest.mark.parametrize("sources", [1, 2], ids=["flat", "namespaced"])
def test_extreme_shapes_are_laid_out_as_black_would(sources: int, monkeypatch: pytest.MonkeyPatch) -> None:
    settled: list[str] = []
    monkeypatch.setattr(classes, "format_python", lambda text: settled.append(text) or format_python(text))
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
    pkg = build_package(srcs, package="p", header="# h", parallel=False)
    assert settled  # some shapes above are outside the layout rules ...
    assert _wrappers_fit(pkg)  # ... and every such member was settled by black on its own
    text = render_package(pkg)["_tools.py"]
    assert format_python(text) == text


@pytest.mark.parametrize(
    ("params", "fits"),
    [
        (["self"], True),
        (["self", "*", "a: int"], True),
        (["self", "*", *(f"argument_{i}: int = {i}" for i in range(8))], True),
        (["self", "*", LONG + ": int"], True),  # a long line black cannot split either
        (["self", "*", f"p: Literal[{', '.join(repr(c * 30) for c in 'abc')}]"], False),  # black would split it
    ],
)
def test_def_layout_matches_black(params: list[str], fits: bool) -> None:
    laid = def_lines("    ", "def", "method_name_" + "m" * 30, params, "_o.SomeRatherLongOutputModelName")
    assert laid.fits is fits
    source = "class C:\n" + "\n".join(laid.lines) + "\n        pass\n"
    assert (format_python(source) == source) is fits


@pytest.mark.parametrize("width", [1, 3, 8, 20])
def test_call_layout_matches_black(width: int) -> None:
    items = [f'"key_{i}": value_{i}' for i in range(width)]
    laid = call_lines(" " * 8, "result = self._call(", ["_info_some_tool", items, items[: width // 2]])
    source = "class C:\n    def f(self):\n" + "\n".join(laid.lines) + "\n"
    assert laid.fits
    assert format_python(source) == source


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
