"""The pre-commit hook in .pre-commit-hooks.yaml, run by pre-commit itself.

The hook source is this repository as it is now (tracked files, uncommitted edits included), copied
into a temporary git repository so pre-commit can pin it by commit and build its environment once
(with pip, from this source and PyPI). A temporary project uses the hook like any user would: it
passes while the generated package is current, and fails, saying so, once an input changes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gen_helpers import REPO

pytestmark = pytest.mark.full  # pip builds the hook's environment; pre-commit is in the test-full group

TIME = REPO / "tests" / "fixtures" / "mcp-tools-list" / "time.json"
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
}


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    # No .pyc compilation while pip builds the hook's environment: it runs twice and is thrown away.
    pip = {"PIP_NO_COMPILE": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    return env | _GIT_ENV | pip | {"PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}


def _git(cwd: Path, env: dict[str, str], *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def _hook_source(dest: Path, env: dict[str, str]) -> str:
    """This repository's tracked files as they are on disk, committed in ``dest``; the commit id."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = REPO / name
        if source.is_file():  # a tracked file deleted in the work tree is simply left out
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    _git(dest, env, "init", "-q")
    _git(dest, env, "add", "-A")
    _git(dest, env, "commit", "-qm", "hook source")
    return _git(dest, env, "rev-parse", "HEAD").strip()


def _pre_commit(project: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.timeout(900)  # pip builds the hook's environment: about a minute on a quiet machine
@pytest.mark.slow
def test_hook_passes_when_current_and_fails_when_stale(tmp_path: Path) -> None:
    env = _env(tmp_path)
    (tmp_path / "hooks").mkdir()
    rev = _hook_source(tmp_path / "hooks", env)
    project = tmp_path / "project"
    project.mkdir()
    (project / "time.json").write_text(TIME.read_text())
    (project / "pyproject.toml").write_text('[tool.toolgen]\nmcp-json = ["time.json"]\nout = "gen"\npackage = "p"\n')
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {tmp_path / 'hooks'}\n    rev: {rev}\n    hooks:\n      - id: toolgen-check\n"
    )
    generated = subprocess.run(
        [sys.executable, "-m", "codegen", "generate", "-q"], cwd=project, env=env, capture_output=True, text=True
    )
    assert generated.returncode == 0, generated.stderr
    _git(project, env, "init", "-q")
    _git(project, env, "add", "-A")
    _git(project, env, "commit", "-qm", "generated")

    current = _pre_commit(project, env)
    assert current.returncode == 0, current.stdout + current.stderr
    assert "toolgen generated package is current" in current.stdout and "Passed" in current.stdout

    (project / "time.json").write_text(TIME.read_text().replace("Get current time", "Tell the time"))
    stale = _pre_commit(project, env)
    assert stale.returncode == 1, stale.stdout + stale.stderr
    assert "Failed" in stale.stdout
    assert "toolgen: gen/p is stale" in stale.stdout and "changed  _tools.py" in stale.stdout
