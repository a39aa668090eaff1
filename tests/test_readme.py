"""The README runs as written: the agent snippet, and the CI and drift command lines."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gen_helpers import REPO


def test_readme_snippet_runs_against_the_sample_server() -> None:
    readme = (REPO / "README.md").read_text()
    snippets = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    assert len(snippets) == 2  # this one, and the test kit's (below)
    code = snippets[0]
    assert len([line for line in code.splitlines() if line.strip() and not line.startswith("#")]) <= 6
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, ["generated", os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert float(proc.stdout.strip()) == 19.4  # the sample server's deterministic weather for Paris


def test_readme_test_kit_snippet_runs_without_a_server() -> None:
    """The README's test kit lines (docs/testing.md) run as written against the committed package."""
    code = re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(), flags=re.S)[1]
    assert "from sample_tools.testing import FakeTools" in code
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, ["generated", os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.full  # test_readme_snippet_runs_against_the_sample_server stays fast
def test_readme_ci_and_drift_lines_pass_in_a_copy_of_the_checkout(tmp_path: Path) -> None:
    """The README's CI line and drift line, run as written in a fresh copy of the tracked files."""
    readme = (REPO / "README.md").read_text()
    block = next(b for b in re.findall(r"```sh\n(.*?)```", readme, flags=re.S) if "toolgen diff" in b)
    commands = [line.split("#")[0].split() for line in block.splitlines() if line.strip()]
    assert commands == [["toolgen", "generate", "--offline", "--check"], ["toolgen", "diff"]]
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    for name in filter(None, listed.stdout.split("\0")):
        source = REPO / name
        if source.is_file():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, tmp_path / name)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    for command in commands:
        # `toolgen` is `python -m codegen` (the console script may not be on PATH in a test run).
        argv = [sys.executable, "-m", "codegen", *command[1:]]
        proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, (command, proc.stdout, proc.stderr)


@pytest.mark.full
def test_readme_record_generate_loop_runs_in_three_lines(tmp_path: Path) -> None:
    """The record -> generate -> check loop, run as written in a copy of the project."""
    readme = (REPO / "README.md").read_text()
    block = re.search(r"learned from recorded calls:\n\n```sh\n(.*?)```", readme, flags=re.S)
    assert block is not None
    lines = [line.split("#")[0].strip() for line in block[1].splitlines()]
    assert len(lines) == 3 and all(line.startswith("toolgen ") for line in lines)
    for name in ("pyproject.toml", "toolgen.lock.json", "toolgen.samples.json"):
        shutil.copyfile(REPO / name, tmp_path / name)
    for folder in ("library-samples", "generated"):
        shutil.copytree(REPO / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    before = (tmp_path / "toolgen.samples.json").read_text()
    for line in lines:
        argv = [sys.executable, "-m", "codegen", *shlex.split(line)[1:]]
        proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, (line, proc.stdout, proc.stderr)
    assert (tmp_path / "toolgen.samples.json").read_text() == before  # the same results: duplicates dropped
    assert "up to date" in proc.stdout
