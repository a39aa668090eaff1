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
