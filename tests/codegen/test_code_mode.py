"""The code-mode stubs of every golden package (the shared captures among them) and of the repo's
``sample_tools`` type-check in the sandbox's own checker: a snippet that calls each tool with
example arguments checks clean, and each result has its declared type (``code_mode_helpers``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from code_mode_helpers import assert_stubs_check
from gen_helpers import golden_package, import_fresh

from mas.runtime.code_mode import CodeMode

REPO = Path(__file__).resolve().parents[2]
GOLDEN = ("captures", "inferred", "samples", "time_tools")  # made importable: golden_package()
PACKAGES = {**{case: REPO / "tests" / "golden" for case in GOLDEN}, "sample_tools": REPO / "generated"}
pytestmark = pytest.mark.slow  # one sandbox pool and a cold checker per package


class NoProvider:
    def call_tool(self, tool_name: str, arguments: dict[str, Any]) -> Any:  # pragma: no cover - never called
        raise AssertionError("checking sends nothing")


@pytest.mark.parametrize("case", sorted(PACKAGES))
def test_every_tool_checks_clean_with_example_arguments(case: str, tmp_path: Path) -> None:
    package = import_fresh(golden_package(case, tmp_path) if case in GOLDEN else PACKAGES[case], case)
    with CodeMode(NoProvider(), package=package) as mode:
        probed = assert_stubs_check(mode, package.code_mode.MODULES)
    assert probed == len(package.TOOLS)


# --- what a stub keeps for the model ---------------------------------------------------------------


def test_the_docstring_keeps_the_description_after_the_title() -> None:
    from codegen.emit.code_mode import summary_line

    hints = {"read_only": True}
    text = summary_line("Current weather", "Get the weather for a city.\n\nMore detail.", hints, full=True)
    assert text == "Current weather [read-only]\n\nGet the weather for a city."
    no_title = summary_line(None, "Look up a key. The first calls are slow.", {}, full=True)
    assert no_title == "Look up a key.\n\nThe first calls are slow."
    assert summary_line(None, "Only one sentence.", {}, full=True) == "Only one sentence."
    long = summary_line("T", "x" * 2_000, {}, full=True)
    assert long.endswith("...") and len(long.split("\n\n")[1]) == 600


def test_parameter_bounds_in_words() -> None:
    from codegen.emit.code_mode import param_constraints

    assert param_constraints("limit", {"type": "integer", "minimum": 1, "maximum": 50}) == "1 <= limit <= 50"
    assert param_constraints("x", {"exclusiveMinimum": 0}) == "0 < x"
    assert param_constraints("s", {"minLength": 2, "maxLength": 3, "pattern": "^[A-Z]+$"}) == (
        "length >= 2; length <= 3; matches '^[A-Z]+$'"
    )
    assert param_constraints("b", {"minimum": True, "format": 3}) == ""  # not numbers, not text: nothing
    assert param_constraints("n", {"type": "string"}) == ""


def test_hostile_descriptions_and_patterns_stay_inside_the_docstring(tmp_path: Path) -> None:
    """A description or pattern with triple quotes, backslashes and code stays text in the stub."""
    import ast

    from codegen.emit.code_mode import param_constraints, summary_line
    from codegen.literals import docstring_literal

    evil = '"""\nimport os\nos.system("x")\n"""\\'
    doc = summary_line(evil, evil, {}, full=True) + "\n\nArgs:\n    p: " + param_constraints("p", {"pattern": evil})
    stub = f"async def f(*, p: str) -> str:\n    {docstring_literal(doc, 4)}\n"
    tree = ast.parse(stub)
    assert len(tree.body) == 1 and isinstance(tree.body[0], ast.AsyncFunctionDef)
    assert len(tree.body[0].body) == 1  # the docstring only: nothing escaped it


def test_the_sample_stubs_carry_descriptions_parameters_and_bounds() -> None:
    stub = (REPO / "generated" / "sample_tools" / "code_mode" / "sample.pyi").read_text(encoding="utf-8")
    assert "Get the current weather for a city (fake, deterministic data)." in stub
    assert "city: City name, e.g. Paris" in stub
    assert "country: ISO country code, e.g. FR" in stub
    assert "limit: 1 <= limit <= 50" in stub


def test_the_atlassian_capture_keeps_every_description_in_its_stubs(tmp_path: Path) -> None:
    """The 98-tool capture of a published server (mcp-atlassian, benchmarks/captures/): each tool's
    description and each parameter's (322 of them) reach its whole stub, and every stub checks clean."""
    from gen_helpers import generate

    capture = REPO / "benchmarks" / "captures" / "mcp-atlassian.json"
    tools = json.loads(capture.read_text(encoding="utf-8"))["tools"]
    assert generate(tmp_path, ["--mcp-json", str(capture), "--out", "out", "--package", "atl"]) == 0
    package = import_fresh(tmp_path / "out", "atl")
    said = 0
    with CodeMode(NoProvider(), package=package) as mode:
        by_wire = {wire: f"{m}.{f}" for m, functions in mode.modules.items() for f, wire in functions.items()}
        assert len(by_wire) == len(tools) == 98
        for tool in tools:
            stub = " ".join(mode.stubs([by_wire[tool["name"]]]).split())
            first = " ".join(tool["description"].split("\n\n")[0].split())
            assert first[:120] in stub, tool["name"]
            for name, prop in tool["inputSchema"].get("properties", {}).items():
                if prop.get("description"):
                    said += 1
                    assert f"{name}: {' '.join(prop['description'].split())[:80]}" in stub, (tool["name"], name)
        assert said == 322
        assert assert_stubs_check(mode, package.code_mode.MODULES) == 98


def test_an_example_call_from_the_schemas_examples(tmp_path: Path) -> None:
    """Each parameter's first ``examples`` value that fits its type makes the stub's example call (a
    required one without an example takes its default); it type-checks against the stubs; a
    parameter with none, or a value that does not fit or is not one plain line, is left out; a
    tool with no example gets no line."""
    import ast

    from gen_helpers import generate

    hostile = '"""\nimport os\n"""'
    listing = {
        "tools": [
            {
                "name": "find_issues",
                "description": "Find issues.",
                "inputSchema": {
                    "type": "object",
                    "required": ["query"],
                    "properties": {
                        "query": {"type": "string", "examples": [3, "label:bug is:open"]},
                        "limit": {"type": "integer", "minimum": 1, "examples": [25]},
                        "state": {"type": "string", "enum": ["open", "closed"], "examples": ["merged", "closed"]},
                        "note": {"type": "string", "examples": [hostile]},
                        "page": {"type": "integer"},
                    },
                },
            },
            {"name": "plain", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}},
        ]
    }
    (tmp_path / "tools.json").write_text(json.dumps(listing), encoding="utf-8")
    assert generate(tmp_path, ["--mcp-json", "tools.json", "--out", "out", "--package", "ex"]) == 0
    package = import_fresh(tmp_path / "out", "ex")
    with CodeMode(NoProvider(), package=package) as mode:
        (module,) = mode.modules
        stub = mode.stubs([f"{module}.find_issues"])
        call = f'await {module}.find_issues(query="label:bug is:open", limit=25, state="closed")'
        assert f"    Example:\n        {call}\n" in stub, stub  # note's example has line breaks: left out
        assert mode.check(f"from tools import {module}\n{call}\n") == []
        assert "Example:" not in mode.stubs([f"{module}.plain"])
    text = (tmp_path / "out" / "ex" / "code_mode" / f"{module}.pyi").read_text(encoding="utf-8")
    tree = ast.parse(text)
    functions = [n for n in tree.body if isinstance(n, ast.AsyncFunctionDef)]
    assert all(len(f.body) == 1 for f in functions)  # the docstring only: the hostile example stayed text


def test_an_example_call_is_bounded_and_keeps_what_is_required() -> None:
    from codegen.emit.code_mode import example_call
    from codegen.model import ParamSpec, ToolSpec

    def param(name: str, required: bool, example: str | None, default: str | None = None) -> ParamSpec:
        return ParamSpec(name, name, "str", required, None, "", schema_default=default, example=example)

    def tool(*params: ParamSpec) -> ToolSpec:
        return ToolSpec("t", "t", "_info_t", "'t'", "'m'", "None", "''", '""""""', params, "'TInput'", "None",
                        False, "str", {})  # fmt: skip

    assert example_call("m", tool(param("a", True, "'x'"), param("b", False, "'y'"))) == "await m.t(a='x', b='y')"
    assert example_call("m", tool(param("a", True, None, "'d'"), param("b", False, "'y'"))) == "await m.t(a='d', b='y')"
    assert example_call("m", tool(param("a", True, None), param("b", False, "'y'"))) == ""  # a required one unknown
    assert example_call("m", tool(param("a", True, None, "'d'"), param("b", False, None))) == ""  # defaults only
    long = "'" + "y" * 300 + "'"
    assert example_call("m", tool(param("a", True, "'x'"), param("b", False, long))) == "await m.t(a='x')"
    assert example_call("m", tool(param("a", True, long))) == ""
