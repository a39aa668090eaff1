"""``kill -9`` during ``generate`` (codegen/write.py) leaves one consistent package + lock pair.

Against the live sample server, a real ``toolgen`` process kills itself at each step of the write
(``TOOLGEN_TEST_KILL_AT``) or is killed from outside at any moment, and the next run finishes or
rolls back what the journal says. The runs around the kills (the two pairs, CI's ``--check`` gate,
the next run) decide from the files alone, so they run in this process: one start-up fewer each.
docs/security.md names each test beside its defence.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gen_helpers import error_line, forked_python, toolgen_in_process, toolgen_process, tree
from tiers import tiered

pytestmark = pytest.mark.slow  # a live server for every run, a toolgen process for every kill


# --- kill -9 during generate leaves a consistent package + lock pair -----------------------------

_KILL_POINTS = ("staged", "committed", "retired", "swapped", "locked")
#: The fast tier kills at two steps (before the journal's commit, and after it) and at one moment
#: from outside; the full tier at every step and moment (docs/tests.md, "Two tiers").
_FAST_POINTS = ("staged", "committed")
_FAST_DELAY = 1.5


def _infra_text(drift: bool) -> str:
    # The server is a fork of the tests' pre-imported interpreter (tests/prefork.py): a real process
    # on toolgen's pipes, without ``import mcp`` at every run.
    args = ["--drift", "param-removed"] if drift else []
    server = {"name": "sample", "protocol": "mcp", "transport": "stdio", "connect_timeout_seconds": 30,
              **forked_python("-m", "mas.samples.mcp_server", *args)}  # fmt: skip
    return json.dumps({"apiVersion": "toolgen/v1", "kind": "ToolServerRegistry", "metadata": {"name": "s"},
                       "spec": {"servers": [server]}})  # fmt: skip


_PAIR_ARGS = ("--infra", "infra.yaml", "--out", "out", "--package", "pkg", "--no-cache")


def _pair(root: Path) -> dict[str, bytes]:
    return {**tree(root / "out" / "pkg"), "LOCK": (root / "toolgen.lock.json").read_bytes()}


def _leftovers(root: Path) -> list[str]:
    """Anything a write leaves only while it runs: staging, retired folders, journal, lock temporaries."""
    return sorted(p.name for p in [*(root / "out").iterdir(), *root.iterdir()] if p.name.startswith("."))


@pytest.fixture(scope="module")
def pairs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes], dict[str, bytes]]:
    """A workspace holding pair A (the server as is), and pair B (the server after a drift)."""
    root = tmp_path_factory.mktemp("pairs")
    (root / "infra.yaml").write_text(_infra_text(drift=False))
    assert toolgen_in_process(root, *_PAIR_ARGS, "-q").returncode == 0
    base = root / "base"
    base.mkdir()
    shutil.copytree(root / "out", base / "out")
    shutil.copy(root / "toolgen.lock.json", base / "toolgen.lock.json")
    a = _pair(root)
    (root / "infra.yaml").write_text(_infra_text(drift=True))
    assert toolgen_in_process(root, *_PAIR_ARGS, "-q").returncode == 0
    b = _pair(root)
    assert a["LOCK"] != b["LOCK"] and a["inputs.py"] != b["inputs.py"]
    return base, a, b


def _workspace(tmp_path: Path, base: Path) -> Path:
    shutil.copytree(base, tmp_path / "w")
    (tmp_path / "w" / "infra.yaml").write_text(_infra_text(drift=True))
    return tmp_path / "w"


@pytest.mark.parametrize("point", tiered(_KILL_POINTS, _FAST_POINTS))
def test_kill_9_at_each_write_step_leaves_one_consistent_pair(
    tmp_path: Path, pairs: tuple[Path, dict[str, bytes], dict[str, bytes]], point: str
) -> None:
    base, a, b = pairs
    root = _workspace(tmp_path, base)
    killed = toolgen_process(root, *_PAIR_ARGS, timeout=120, TOOLGEN_TEST_KILL_AT=point)
    assert killed.returncode == -9, killed.stderr  # SIGKILL, from the process itself at that step
    assert _leftovers(root)  # something was left mid-write
    # CI's gate right after the kill: the pair on disk is consistent (the journal finished first).
    check = toolgen_in_process(root, "--offline", "--check", *_PAIR_ARGS)
    assert check.returncode == 0, check.stdout + check.stderr
    assert _pair(root) == (a if point == "staged" else b)
    assert _leftovers(root) == []
    finished = "finished the write of out/pkg that an interrupted run had committed"
    assert (finished in check.stderr) == (point != "staged")


@pytest.mark.parametrize("delay", tiered((0.3, 0.8, 1.5, 2.5, 4.0), (_FAST_DELAY,)))
def test_kill_9_from_outside_at_any_moment_leaves_one_consistent_pair(
    tmp_path: Path, pairs: tuple[Path, dict[str, bytes], dict[str, bytes]], delay: float
) -> None:
    base, a, b = pairs
    root = _workspace(tmp_path, base)
    proc = subprocess.Popen([sys.executable, "-m", "codegen", "generate", *_PAIR_ARGS, "-q"], cwd=root,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    time.sleep(delay)
    proc.kill()  # SIGKILL
    proc.wait(timeout=30)
    check = toolgen_in_process(root, "--offline", "--check", *_PAIR_ARGS)
    assert check.returncode == 0, check.stdout + check.stderr
    assert _pair(root) in (a, b)
    assert _leftovers(root) == []


def test_staging_left_by_a_killed_run_is_removed_by_the_next(
    tmp_path: Path, pairs: tuple[Path, dict[str, bytes], dict[str, bytes]]
) -> None:
    base, _, b = pairs
    root = _workspace(tmp_path, base)
    for name in (".pkg.new-abc123", ".pkg.old-0badf00d"):  # as the writer of an earlier release left them
        (root / "out" / name).mkdir()
        (root / "out" / name / "__init__.py").write_text("x = 1\n")
    (root / ".toolgen.lock.json.new-xyz").write_text("{}")
    proc = toolgen_in_process(root, *_PAIR_ARGS, "-q")
    assert proc.returncode == 0, proc.stderr
    assert _leftovers(root) == [] and _pair(root) == b


def test_a_planted_journal_cannot_move_files_elsewhere(
    tmp_path: Path, pairs: tuple[Path, dict[str, bytes], dict[str, bytes]]
) -> None:
    base, a, _ = pairs
    root = _workspace(tmp_path, base)
    (root / "victim.txt").write_text("keep\n")
    journal = {"version": 1, "staging": ".pkg.new-x", "retired": ".pkg.old-x", "lock": str(root / "victim.txt"),
               "lock_tmp": ".victim.txt.new-x"}  # fmt: skip
    (root / ".victim.txt.new-x").write_text("overwritten\n")
    (root / "out" / ".pkg.toolgen-journal").write_text(json.dumps(journal))
    proc = toolgen_in_process(root, "--offline", "--check", *_PAIR_ARGS)
    assert error_line(proc).startswith(
        "toolgen: error: out/.pkg.toolgen-journal: an interrupted toolgen run left a journal that does not fit"
    )
    assert (root / "victim.txt").read_text() == "keep\n" and _pair(root) == a
