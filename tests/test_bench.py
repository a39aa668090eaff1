"""``benchmarks/bench.py --quick`` runs end to end and writes a table with every row."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROWS = (
    "cold generation, 20 tools",
    "cold generation, 8 tools",
    "rerun, nothing changed",
    "`--check`, up to date",
    "one description changed",
    "one input schema changed",
    "`import pkg` (20 tools)",
    "import + first typed call",
    "one hand-written pydantic model: import + first validation",
    "typed call, in-process tool with an output model",
    "MCP over stdio, sync, one at a time",
    "MCP over stdio, async, 200 in flight",
    "pyright on a script using the 20-tool package",
    "mypy on a script using the 20-tool package",
    "jedi on a hand-written package of one method: first completion, new install (parse cache empty)",
    "jedi on a hand-written package of one method: first completion in an editor session (parse cache on disk)",
    "jedi on the 20-tool package: first completion of `tools.cat.`, new install (parse cache empty)",
    "jedi on the 20-tool package: first completion of `tools.cat.` in an editor session (parse cache on disk)",
    "jedi on the 20-tool package: warm completion",
    "jedi on the 20-tool package: signature help",
    "code mode `api()` tokens, shared captures",
    "code mode one `search()` (5 tools) tokens, shared captures",
    "code mode `listing()` (one line per function) tokens, shared captures",
    "code mode `stubs()` of one function tokens, shared captures",
    "code mode whole stubs of every function (not sent at once) tokens, shared captures",
    "code mode `api()` tokens, 98-tool capture (mcp-atlassian)",
    "code mode one `search()` (5 tools) tokens, 98-tool capture (mcp-atlassian)",
    "code mode `listing()` (one line per function) tokens, 98-tool capture (mcp-atlassian)",
    "code mode `stubs()` of one function tokens, 98-tool capture (mcp-atlassian)",
    "code mode whole stubs of every function (not sent at once) tokens, 98-tool capture (mcp-atlassian)",
    "code mode `api()` tokens, 20-tool corpus",
    "code mode one `search()` (5 tools) tokens, 20-tool corpus",
    "code mode `listing()` (one line per function) tokens, 20-tool corpus",
    "code mode `stubs()` of one function tokens, 20-tool corpus",
    "code mode whole stubs of every function (not sent at once) tokens, 20-tool corpus",
    "code mode `check()` cold, 20 tools (pool start, stubs loaded)",
    "code mode `check()` warm, 20 tools",
    "code mode `run()` cold, 20 tools, one call",
    "code mode `run()` warm, 20 tools, one call",
    "one tool call from the sandbox",
    "diff --impact (mypy): 20-tool package, 20 call sites",
    "diff --impact (pyright): 20-tool package, 20 call sites",
    "test kit's part of cold generation, 20 tools",
)


@pytest.mark.full  # every group, real checkers and jedi included: the benchmark's smoke test
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_quick_bench_writes_every_row(tmp_path: Path) -> None:
    out = tmp_path / "results.md"
    # The hand-written profiles below the table are kept when the table is written again.
    profile = "## Where the time goes\n\nA profile written by hand.\n"
    out.write_text(f"# Benchmark results\n\nAn old table.\n\n{profile}", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench.py"), "--quick", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = out.read_text(encoding="utf-8")
    assert text.endswith(f"\n\n{profile}") and "An old table." not in text
    lines = text.removesuffix(profile).splitlines()
    assert "| figure | ours | floor | ratio | goal | met |" in lines
    body = [line for line in lines if line.startswith("| ") and not line.startswith("| figure")]
    assert [line.split(" | ")[0].removeprefix("| ") for line in body] == list(ROWS)
    for line in body:
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert len(cells) == 6
        assert cells[1][0].isdigit()  # a measured median, not a placeholder
        assert cells[5] in {"yes", "no", "—"}


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_only_runs_the_groups_named_and_leaves_the_table_alone(tmp_path: Path) -> None:
    """``--only edits``: the cold run the reruns are measured against, then the reruns; the table is
    printed, and benchmarks/results.md (no --out) is not rewritten with a part of it."""
    results = REPO / "benchmarks" / "results.md"
    before = results.read_bytes()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench.py"), "--quick", "--only", "edits"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    body = [line for line in proc.stdout.splitlines() if line.startswith("| ") and not line.startswith("| figure")]
    assert [line.split(" | ")[0].removeprefix("| ") for line in body] == list(ROWS[:1] + ROWS[2:6])
    assert results.read_bytes() == before


def test_the_committed_results_have_the_impact_rows() -> None:
    """benchmarks/results.md says what ``diff --impact`` costs on the 1,000-tool package with a
    200-call-site project, against one plain run of each checker (issue 32), as medians."""
    lines = (REPO / "benchmarks" / "results.md").read_text(encoding="utf-8").splitlines()
    for checker in ("mypy", "pyright"):
        figure = f"| diff --impact ({checker}): 1000-tool package, 200 call sites |"
        row = next((line for line in lines if line.startswith(figure)), None)
        assert row is not None, figure
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1][0].isdigit() and cells[2].startswith(f"one plain {checker} run over the project: ")
        assert cells[3].endswith(")") and cells[3][0].isdigit()  # a median ratio with its spread


def test_a_bench_of_code_that_is_not_the_checkouts_says_so(tmp_path: Path) -> None:
    """The rows run the installed packages (the bench drops PYTHONPATH, as a user's shell has
    none): ``checkout_drift`` names every module of the checkout the installed copy lacks or has
    other bytes for, and nothing when they are the same."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import bench
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    checkout, site = tmp_path / "checkout", tmp_path / "site"
    files = {
        "codegen/a.py": "x = 1\n",
        "codegen/emit/b.py": "y = 2\n",
        "mas/c.py": "z = 3\n",
        "templates/t.jinja": "{{ x }}",
    }
    for name, text in files.items():  # the wheel keeps the templates inside codegen
        for path in (checkout / name, site / name.replace("templates/", "codegen/templates/")):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    installed = [site / "codegen", site / "mas"]
    assert bench.checkout_drift(installed, checkout) == []
    (checkout / "codegen" / "emit" / "b.py").write_text("y = 3\n")  # edited, not installed again
    (checkout / "mas" / "d.py").write_text("new = 1\n")  # added since
    (site / "mas" / "gone.py").write_text("old = 1\n")  # removed since: nothing runs it
    (checkout / "templates" / "t.jinja").write_text("{{ y }}")
    assert bench.checkout_drift(installed, checkout) == ["codegen/emit/b.py", "mas/d.py", "templates/t.jinja"]
