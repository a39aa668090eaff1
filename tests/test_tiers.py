"""The two tiers of the suite (docs/tests.md, "Two tiers") stay as documented.

- docs/tests.md's table of the full tier names exactly the test modules that put tests in it (a
  ``full`` mark, or a size read from ``TOOLGEN_TESTS_FULL``);
- every test docs/tests.md names as the fast tier's part of an area exists and is not marked
  ``full``, nor is its module;
- the README's test command is the fast tier's (`nox -s tests`), CI (`.ci/run`) runs it verbatim,
  the README names the full tier's session, and the noxfile's sessions pass ``--full`` only there.
"""

from __future__ import annotations

import ast
import re

from gen_helpers import REPO

TESTS = REPO / "tests"
DOC = REPO / "docs" / "tests.md"
README_TEST_COMMAND = 'python3 -m pip install "nox[uv]" && python3 -m nox -s tests'
FULL_COMMAND = "python3 -m nox -s tests_full"


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def _uses_full(node: ast.AST) -> bool:
    """``pytest.mark.full`` anywhere below ``node``."""
    return any(
        isinstance(n, ast.Attribute) and n.attr == "full" and ast.unparse(n.value) == "pytest.mark"
        for n in ast.walk(node)
    )


def _reads_the_tier(tree: ast.Module) -> bool:
    """Imports what tests/tiers.py says about the tier: a module that sizes its work by it."""
    return any(isinstance(n, ast.ImportFrom) and n.module == "tiers" for n in ast.walk(tree))


def _tiered_modules() -> set[str]:
    found = set()
    for path in TESTS.rglob("test_*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if _uses_full(tree) or _reads_the_tier(tree):
            found.add(path.relative_to(REPO).as_posix())
    return found


def test_the_docs_list_every_module_with_tests_in_the_full_tier() -> None:
    table = _section(DOC.read_text(encoding="utf-8"), "Two tiers")
    listed = set(re.findall(r"^\| `(tests/[^`]+\.py)` \|", table, re.MULTILINE))
    found = _tiered_modules()
    assert found - listed == set(), f"add a row to docs/tests.md's full-tier table: {sorted(found - listed)}"
    assert listed - found == set(), f"no test of these is in the full tier: {sorted(listed - found)}"


def _kept() -> list[str]:
    section = _section(DOC.read_text(encoding="utf-8"), "Two tiers")
    kept = section[section.index("### What the fast tier keeps") :]
    return re.findall(r"`(tests/[^`:]+\.py::[A-Za-z0-9_]+)`", kept)


def test_the_fast_tiers_part_of_every_area_is_not_marked_full() -> None:
    kept = _kept()
    assert len(kept) >= 10, kept
    for node in kept:
        file, name = node.split("::")
        tree = ast.parse((REPO / file).read_text(encoding="utf-8"))
        module_marks = [n for n in tree.body if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "pytestmark"]
        assert not any(_uses_full(m) for m in module_marks), f"{file} is in the full tier as a whole"
        tests = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
        assert tests, f"{node}: no such test"
        # Marked as a whole; a parameter marked full (the fast tier keeps the others) is fine.
        assert not any(ast.unparse(d) == "pytest.mark.full" for d in tests[0].decorator_list), f"{node} is marked full"


def test_the_readme_and_ci_run_the_fast_tier_and_the_readme_names_the_full_one() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    # The first code block, under "Two commands", is what a user sees first.
    section = _section(readme, "Two commands")
    block = section.split("```")[1]
    assert readme.index(block) == readme.index("```") + 3, "the two commands are the first code block"
    lines = [line.split("#")[0].strip() for line in block.splitlines()]
    assert README_TEST_COMMAND in lines, block
    assert f"`{FULL_COMMAND}`" in section and FULL_COMMAND not in block, section
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert ci[-1] == README_TEST_COMMAND  # verbatim, and the last thing it does
    noxfile = ast.parse((REPO / "noxfile.py").read_text(encoding="utf-8"))
    sessions = {n.name: n for n in noxfile.body if isinstance(n, ast.FunctionDef)}

    def tiers_run(session: str) -> list[list[object]]:
        calls = [n for n in ast.walk(sessions[session]) if isinstance(n, ast.Call) and ast.unparse(n.func) == "_pytest"]
        return [[a.value for a in call.args if isinstance(a, ast.Constant)] for call in calls]

    assert tiers_run("tests") == [[]]
    assert tiers_run("tests_full") == [["--full"]]
