"""``benchmarks/layouts.py`` makes each candidate layout of the bench's package, each still
imports and type-checks a call, and the timing table has a row per layout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from corpus import catalog  # noqa: E402
from layouts import LAYOUTS, make_layout  # noqa: E402

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
# The full tier: like the benchmark's smoke test (tests/test_bench.py), cold mypy runs per layout and
# the timing script's checkers and jedi (in the test-full group).
pytestmark = pytest.mark.full


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("layouts")
    (work / "cat.json").write_text(json.dumps({"tools": catalog(20)}), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "codegen", "generate", "--mcp-json", str(work / "cat.json"), "--out",
         str(work / "out"), "--package", "pkg", "--no-cache"],
        cwd=REPO, env=ENV, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return work / "out"


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_each_layout_imports_and_its_stubs_type_a_call(out: Path) -> None:
    """The stubs are the types a checker reads: mypy --strict accepts a call through them and
    infers its result from them; the package still runs (``__getattr__`` or re-exports)."""
    use = "from pkg import Tools\n\n\ndef use(tools: Tools) -> None:\n    reveal_type(tools.cat.list_projects_0001)\n"
    for layout in LAYOUTS:
        root = out.with_name(f"out-{layout}")
        make_layout(out, root, layout)
        stubs = sorted(p.name for p in (root / "pkg").glob("*.pyi"))
        assert stubs == (["_tools.pyi"] if layout == "full" else [
            "_api.pyi", "_t_asynccattools.pyi", "_t_asynccattoolsresults.pyi", "_t_asynccattoolstasks.pyi",
            "_t_cattools.pyi", "_t_cattoolsresults.pyi", "_t_cattoolstasks.pyi",
        ]), layout  # fmt: skip
        assert "return self._call" not in "".join(p.read_text(encoding="utf-8") for p in (root / "pkg").glob("*.pyi"))
        ran = subprocess.run(
            [sys.executable, "-c", "import pkg; print(pkg.Tools(None).cat.list_projects_0001.__doc__.split()[0])"],
            cwd=root, env=ENV, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert ran.returncode == 0 and ran.stdout.strip() == "List", (layout, ran.stderr[-2000:])
        (root / "use.py").write_text(use, encoding="utf-8")
        checked = subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull, "use.py"],
            cwd=root, env=ENV, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert "CatListProjects0001Output" in checked.stdout, (layout, checked.stdout[-2000:])
        assert checked.returncode == 0, (layout, checked.stdout[-2000:])
    facade = (out.with_name("out-facade") / "pkg" / "_t_cattools.py").read_text(encoding="utf-8")
    assert facade == "from ._tools import CatTools as CatTools\n"
    assert "__getattr__" in (out.with_name("out-getattr") / "pkg" / "_t_cattools.py").read_text(encoding="utf-8")
    assert (out.with_name("out-getout") / "pkg" / "outputs" / "__init__.pyi").exists()


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_script_times_every_layout_chosen(out: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "layouts.py"), str(out), "--layouts", "getattr"],
        env=ENV, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    table = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert table[0] == (
        "| layout | mypy | pyright | jedi first (cache empty / on disk) | jedi warm | jedi signature help |"
    )
    assert [line.split(" | ")[0] for line in table[1:]] == ["| base, round 1", "| getattr, round 1"]
    assert all(cell.strip()[0].isdigit() for line in table[1:] for cell in line.strip("|").split("|")[1:])
