"""Every test the docs name as proof of a promise exists, so the references cannot rot."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCS = sorted([*(REPO / "docs").glob("*.md"), REPO / "README.md"])
#: `tests/<path>.py::test_name`, optionally `::Class::test_name`, optionally with a `[param id]`.
REFERENCE = re.compile(r"`(tests/[\w/]+\.py)((?:::\w+)+)(?:\[[^\]`]*\])?`")
#: Sections whose promises must each name their proof (docs file, heading or paragraph start).
PROVED_SECTIONS = [
    ("generator.md", "Exit codes:"),
    ("generator.md", "## The lock"),
    ("generator.md", "## Untrusted text"),
    ("tool-server-registry.md", "## Secrets in headers"),
]
#: docs/security.md: every row of its threat tables names the test that proves the defence.
SECURITY = REPO / "docs" / "security.md"
SECURITY_SECTIONS = ("## The runtime", "## The toolchain")  # each must exist and hold a table


@functools.cache  # the docs name hundreds of tests in a few dozen files: each file is parsed once
def _defined(path: Path) -> frozenset[str]:
    """``name`` for module-level test functions and ``Class::name`` for methods."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names |= {
                f"{node.name}::{item.name}"
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            }
    return frozenset(names)


def references(text: str) -> list[tuple[str, str]]:
    return [(path, test.removeprefix("::")) for path, test in REFERENCE.findall(text)]


def test_every_named_test_exists() -> None:
    found = [(doc.name, path, test) for doc in DOCS for path, test in references(doc.read_text(encoding="utf-8"))]
    assert len(found) >= 30, "the docs should name the tests that prove their promises"
    missing = [
        f"{doc}: {path}::{test}"
        for doc, path, test in found
        if not (REPO / path).is_file() or test not in _defined(REPO / path)
    ]
    assert missing == []


def test_each_promise_section_names_its_proof() -> None:
    for doc, start in PROVED_SECTIONS:
        text = (REPO / "docs" / doc).read_text(encoding="utf-8")
        assert start in text, (doc, start)
        begin = text.index(start)
        end = text.find("\n## ", begin + 1)
        section = text[begin : end if end != -1 else None]
        assert "Proved by" in section and references(section), (doc, start)


def test_the_reference_pattern_reads_every_form() -> None:
    text = "see `tests/a/test_b.py::test_c`, `tests/test_d.py::TestE::test_f[x y]` and `tests/x.py` (no test)"
    assert references(text) == [("tests/a/test_b.py", "test_c"), ("tests/test_d.py", "TestE::test_f")]


def _table_rows(section: str) -> list[str]:
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return [row for row in rows[1:] if not row.startswith("| ---")]  # without the header


def test_every_security_row_names_a_test_that_exists() -> None:
    text = SECURITY.read_text(encoding="utf-8")
    sections = {part.split("\n", 1)[0]: part for part in text.split("\n## ")[1:]}
    for start in SECURITY_SECTIONS:
        assert any(title.startswith(start.removeprefix("## ")) for title in sections), start
    for title, section in sections.items():  # every table, including ones added later
        for row in _table_rows(section):
            named = references(row)
            assert named, f"{title}: a row names no test: {row[:80]}"
            for path, test in named:
                assert (REPO / path).is_file() and test in _defined(REPO / path), (path, test)


def test_every_codegen_module_has_its_tests_named() -> None:
    """docs/tests.md: the tests of ``codegen/[emit/]<module>.py`` are ``tests/codegen/test_<module>*.py``,
    or its row in the table names them; every file a row names exists."""
    text = (REPO / "docs" / "tests.md").read_text(encoding="utf-8")
    rows = {}
    for row in _table_rows(text.split("\n## ", 1)[0]):  # the table above the first section
        module, tests = (cell.strip() for cell in row.strip("|").split("|"))
        rows[module.strip("`")] = re.findall(r"`(tests/[\w/]+\.py)`", tests)
    for module, files in rows.items():
        assert (REPO / module).exists(), f"docs/tests.md names {module}, which does not exist"
        assert files and all((REPO / f).is_file() for f in files), (module, files)
    tests = REPO / "tests" / "codegen"
    shim = REPO / "codegen" / "shim"  # a row of its own
    modules = [path for path in sorted((REPO / "codegen").rglob("*.py")) if shim not in path.parents]
    assert REPO / "codegen" / "emit" / "render.py" in modules  # subpackages too
    unfound = [
        path.relative_to(REPO).as_posix()
        for path in modules
        if path.stem not in ("__init__", "__main__")
        and not any(tests.glob(f"test_{path.stem}.py"))
        and not any(tests.glob(f"test_{path.stem}_*.py"))
        and path.relative_to(REPO).as_posix() not in rows
    ]
    assert unfound == [], "docs/tests.md: name where the tests of these modules are"


#: Each module map: the doc, the section it starts at, the folder it maps, and what it leaves out.
MODULE_MAPS = [
    ("generator.md", "## How it is built", REPO / "codegen", REPO / "codegen" / "shim"),
    ("runtime.md", "## Module map", REPO / "mas" / "runtime", None),
]


def _section(doc: str, start: str) -> str:
    text = (REPO / "docs" / doc).read_text(encoding="utf-8")
    assert start in text, (doc, start)
    begin = text.index(start)
    end = text.find("\n## ", begin + 1)
    return text[begin : end if end != -1 else None]


def test_the_module_maps_name_every_module() -> None:
    """docs/generator.md maps every module of codegen (the shim aside), docs/runtime.md every module
    of mas/runtime: each named in backquotes by its path inside the folder, and no name is stale."""
    for doc, start, folder, left_out in MODULE_MAPS:
        named = set(re.findall(r"^\| `([\w/]+\.py)` \|", _section(doc, start), flags=re.MULTILINE))
        modules = {
            path.relative_to(folder).as_posix()
            for path in folder.rglob("*.py")
            if path.name != "__init__.py" and (left_out is None or left_out not in path.parents)
        }
        assert sorted(modules - named) == [], f"docs/{doc}: map these modules"
        assert sorted(named - modules) == [], f"docs/{doc}: these modules are gone"
