"""Any parameter name a schema can have generates a method that imports, calls and type-checks
(issue 30, item 1).

A generated method's body once bound a local ``result`` (``result = self._call(...)`` then
``return result.value``), so a tool with a parameter named ``result`` (math-mcp-learning-server's
``save_calculation``) failed ``mypy --strict`` and strict pyright in every package that held it.
The body now binds no name of its own, and ``self`` is reserved. The hypothesis test draws
parameter names from every identifier the generated wrapper module and the runtime shim use
(locals, arguments, module names: ``result``, ``arguments``, ``info``, ``omit``, ``method``,
``kwargs``, ...), keywords, builtins and random text, and requires the package to import, send
each argument under its wire key, and pass ``mypy --strict`` and strict pyright with code calling it.
The published server itself is checked in tests/runtime/test_published_servers.py.
"""

from __future__ import annotations

import ast
import json
import keyword
import subprocess
import sys
from functools import cache
from typing import Any

import pytest
from gen_helpers import REPO, RecordingProvider, generate, import_fresh, pyright_strict
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from codegen.naming import assign_names

SHIM = REPO / "codegen" / "shim" / "_runtime"
GOLDEN_TOOLS = REPO / "tests" / "golden" / "captures" / "_tools.py"

#: JSON Schema types a parameter may have, and a value of each for the call.
_TYPES: dict[str, tuple[dict[str, Any], Any]] = {
    "string": ({"type": "string"}, "s"),
    "integer": ({"type": "integer"}, 3),
    "number": ({"type": "number"}, 2.5),
    "boolean": ({"type": "boolean"}, True),
    "array": ({"type": "array", "items": {"type": "string"}}, ["a"]),
}


@cache
def code_names() -> tuple[str, ...]:
    """Every identifier the wrapper module and the shim bind or read: their locals, arguments,
    attributes and module names, the names a parameter could shadow."""
    found: set[str] = {"result", "self", "arguments", "value"}
    for path in [GOLDEN_TOOLS, *SHIM.glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Name):
                found.add(node.id)
            elif isinstance(node, ast.arg):
                found.add(node.arg)
            elif isinstance(node, ast.Attribute):
                found.add(node.attr)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.add(node.name)
    return tuple(sorted(found))


def wire_names() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(code_names()),
        st.sampled_from(sorted([*keyword.kwlist, *keyword.softkwlist])),
        st.sampled_from(["str", "int", "float", "bool", "list", "dict", "type", "id", "object", "print", "super"]),
        st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True),
        st.text(min_size=1, max_size=6),
    )


def listing(params: list[tuple[str, str, bool]]) -> dict[str, Any]:
    """Two tools: ``store`` with the drawn parameters (a FastMCP-wrapped value as its result, so the
    method returns a value) and ``plain`` with the same parameters all optional."""
    props = {name: _TYPES[kind][0] for name, kind, _ in params}
    required = sorted(name for name, _, needed in params if needed)
    wrapped = {
        "type": "object",
        "properties": {"result": {"type": "string"}},
        "required": ["result"],
        "x-fastmcp-wrap-result": True,
    }
    return {
        "tools": [
            {"name": "store", "inputSchema": {"type": "object", "properties": props, "required": required},
             "outputSchema": wrapped},
            {"name": "plain", "inputSchema": {"type": "object", "properties": props}},
        ]
    }  # fmt: skip


def use_it(params: list[tuple[str, str, bool]]) -> str:
    """Code calling both tools with every parameter by its Python name, for the type checkers."""
    py = assign_names([name for name, _, _ in params], prefix="arg", reserved={"self"}, builtins_ok=True)
    given = ", ".join(f"{py[name]}={_TYPES[kind][1]!r}" for name, kind, _ in params)
    return (
        "from pn import Tools, AsyncTools, ToolOutput\n"
        "from pn._runtime import SupportsCallTool\n\n\n"
        "def use(provider: SupportsCallTool) -> str:\n"
        f"    stored: str = Tools(provider).pn.store({given})\n"
        f"    plain: ToolOutput = Tools(provider).pn.plain({given})\n"
        f"    whole = Tools(provider).results.pn.store({given})\n"
        "    return stored + plain.text + whole.value\n\n\n"
        "async def use_async(provider: SupportsCallTool) -> str:\n"
        f"    return await AsyncTools(provider).pn.store({given})\n"
    )


_KINDS = st.sampled_from(sorted(_TYPES))
_PARAMS = st.lists(st.tuples(wire_names(), _KINDS, st.booleans()), min_size=1, max_size=8, unique_by=lambda p: p[0])
_DANGEROUS = ["result", "self", "arguments", "info", "omit", "method", "kwargs", "args", "value", "envelope",
              "options", "provider", "cls", "str", "class", "_NOT_GIVEN", "TOOLS", "_info_pn__store",
              "Tools"]  # fmt: skip


@pytest.mark.full  # a cold mypy and a pyright run per list; the fast tier's checker runs: test_typecheck.py
@pytest.mark.slow
@settings(max_examples=3, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@example(params=[(name, kind, n % 2 == 0) for n, (name, kind) in
                 enumerate(zip(_DANGEROUS, [*sorted(_TYPES)] * 4, strict=False))])  # fmt: skip
@given(params=_PARAMS)
def test_any_parameter_name_generates_a_package_that_imports_calls_and_type_checks(
    params: list[tuple[str, str, bool]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("names")
    (root / "tools.json").write_text(json.dumps(listing(params)), encoding="utf-8")
    assert generate(root, ["--mcp-json", "pn=tools.json", "--out", "out", "--package", "pn", "-q", "--no-cache"]) == 0
    pkg = import_fresh(root / "out", "pn")
    provider = RecordingProvider(default={"is_error": False, "structured_content": {"result": "kept"}})
    py = assign_names([name for name, _, _ in params], prefix="arg", reserved={"self"}, builtins_ok=True)
    values = {name: _TYPES[kind][1] for name, kind, _ in params}
    assert pkg.Tools(provider).pn.store(**{py[name]: value for name, value in values.items()}) == "kept"
    assert provider.calls[-1][:2] == ("store", values)  # every argument under its wire key, none lost
    (root / "out" / "use_it.py").write_text(use_it(params), encoding="utf-8")
    (root / "out" / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--strict", "--cache-dir",
         str(tmp_path_factory.getbasetemp() / "mypy-cache"), "pn", "use_it.py"],
        cwd=root / "out", capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert mypy.returncode == 0, (params, mypy.stdout + mypy.stderr)
    report = pyright_strict(root / "out", ["pn", "use_it.py"])
    problems = [d["message"] for d in report["generalDiagnostics"] if d["severity"] in ("error", "warning")]
    assert problems == [], params


def test_the_method_body_binds_no_name_a_parameter_could_shadow() -> None:
    """The value methods' bodies bind nothing (the call's result is returned at once): a parameter
    named like anything else the body reads would be a module name, which is never lower-case
    without a leading underscore."""
    tree = ast.parse(GOLDEN_TOOLS.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                bound = isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store)
                assert not bound, (node.name, ast.unparse(inner))
