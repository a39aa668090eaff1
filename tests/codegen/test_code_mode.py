"""The code-mode stubs of every golden package (the shared captures among them) and of the repo's
``sample_tools`` type-check in the sandbox's own checker: a snippet that calls each tool with
example arguments checks clean, and each result has its declared type (``code_mode_helpers``)."""

from __future__ import annotations

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
