"""Large catalogs build their models on two cores; the output must not depend on it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import REPO

import codegen.datamodels as datamodels
from codegen import build
from codegen.build import build_package
from codegen.emit.render import render_package
from codegen.model import SourceTools

CAPTURES = sorted((REPO / "tests" / "fixtures" / "mcp-tools-list").glob("*.json"))
#: 12 tools (3 input groups of 4 in the tests that share them out), the time server's among them:
#: the tests that build each catalog twice, with runs held back or failing, need no more.
SMALL = [capture for capture in CAPTURES if capture.stem in ("fetch", "memory", "time")]


def _sources() -> list[SourceTools]:
    return [
        SourceTools(name=p.stem, kind="mcp-json", origin=p.name, tools=tuple(json.loads(p.read_text())["tools"]))
        for p in CAPTURES
    ]


class RecordingPool(ProcessPoolExecutor):
    """The real executor, noting what was sent to the worker."""

    submitted: list[str] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        jobs = args[0] if args else []
        RecordingPool.submitted += [job.name for job in jobs]
        return super().submit(fn, *args, **kwargs)


#: How long the test waits for threads an earlier test of its worker left running to end: a call an
#: earlier test timed out keeps running in its daemon thread (Python cannot stop a thread), and a
#: fork is refused while it lives (``datamodels._can_fork``).
LEFTOVER_THREADS_SECONDS = 30.0


def _needs_fork() -> None:
    """Wait for other threads to end (bounded), then fail unless this process may fork."""
    deadline = time.monotonic() + LEFTOVER_THREADS_SECONDS
    for thread in threading.enumerate():
        if thread is not threading.current_thread():
            thread.join(max(deadline - time.monotonic(), 0.0))
    if not datamodels._can_fork():
        pytest.fail(f"needs fork, two cores and one thread; threads: {[t.name for t in threading.enumerate()]}")


def test_forked_model_build_gives_the_same_package(monkeypatch: pytest.MonkeyPatch) -> None:
    _needs_fork()
    monkeypatch.setattr(datamodels, "ProcessPoolExecutor", RecordingPool)
    RecordingPool.submitted = []
    parallel = render_package(build_package(_sources(), package="p", header="# h", parallel=True))
    # The outputs are built here meanwhile; the worker builds the inputs, then the code-mode stubs.
    assert RecordingPool.submitted == ["inputs", "code-mode-outputs"]
    RecordingPool.submitted = []
    sequential = render_package(build_package(_sources(), package="p", header="# h", parallel=False))
    assert RecordingPool.submitted == []
    assert parallel == sequential


def test_size_decides_when_not_told(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(datamodels, "_can_fork", lambda: True)
    monkeypatch.setattr(datamodels, "ProcessPoolExecutor", lambda **_: calls.append("pool") or pytest.fail("forked"))
    small = {"$defs": {f"D{i}": {"type": "object"} for i in range(5)}}
    datamodels.generate_models([small], small)
    assert calls == []


_KILLED_PARENT = """
import os, pathlib
import codegen.datamodels as datamodels
worker = datamodels.ModelWorker()
pathlib.Path("pid").write_text(str(worker._process.pid))
os.kill(os.getpid(), 9)
"""


def test_a_model_worker_whose_parent_is_killed_exits(tmp_path: Path) -> None:
    """A rerun that is killed (kill -9, out of memory) while its warmed worker waits for jobs leaves
    no process behind: the worker sees its pipe close and exits."""
    with open(tmp_path / "stderr", "w+b") as err:  # a file, not a pipe a leftover worker would hold open
        proc = subprocess.run([sys.executable, "-c", _KILLED_PARENT], stdout=subprocess.DEVNULL, stderr=err,
                              cwd=tmp_path, timeout=60)  # fmt: skip
    assert proc.returncode == -9, (tmp_path / "stderr").read_text()
    pid = int((tmp_path / "pid").read_text())
    deadline = time.monotonic() + 30  # it warms up first (imports datamodel-code-generator), then reads EOF
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = _alive(pid)
    if alive:
        os.kill(pid, 9)
    assert not alive, "the model worker outlived its killed parent"


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (an orphan is reaped by init once it exits; a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _one_side_runs_the_groups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slow: str, here: list[str]) -> None:
    """Hold the run ``slow`` back (the stubs' in the worker, or the outputs' here) until the
    other process has run every input group: the parent once it asks for the worker's results,
    the worker once it finds no group left to claim (bounded waits). ``here``: the runs made here."""
    done = tmp_path / ("parent-done" if slow != "outputs" else "worker-done")
    real_run, real_results, real_claim = datamodels._Job.run, datamodels.ModelWorker.results, datamodels._claim

    def run(job: Any) -> Any:
        if job.name == slow:  # in the worker (it forks after this patch) or here
            deadline = time.monotonic() + 60
            while not done.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        here.append(job.name)
        return real_run(job)

    def results(worker: datamodels.ModelWorker) -> Any:
        if slow != "outputs":
            done.touch()
        return real_results(worker)

    def claim(claims: Any, *, front: bool) -> int | None:
        index = real_claim(claims, front=front)
        if index is None and front and slow == "outputs":  # the worker, with nothing left to claim
            done.touch()
        return index

    monkeypatch.setattr(datamodels.ModelWorker, "results", results)
    monkeypatch.setattr(datamodels, "_claim", claim)
    monkeypatch.setattr(datamodels._Job, "run", run)


@pytest.mark.parametrize("slow", ["code-mode-outputs", "outputs"], ids=["worker-slow", "parent-slow"])
def test_a_cold_build_shares_its_model_runs_with_a_worker_forked_before_it_plans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slow: str
) -> None:
    """A cold build of a large catalog forks datamodels.ModelWorker before it plans (here: of any
    catalog), so the model generator's import overlaps the plans; the worker makes the code-mode
    stubs while this process makes the outputs, and the input groups go to whichever is free
    first. The package is byte for byte the one made in one process, whoever ran which group:
    with the worker slowed down this process runs every group, with this process slowed down the
    worker does."""
    from gen_helpers import generate, tree

    _needs_fork()
    args = ["--package", "pkg", "--no-cache"]
    for capture in SMALL:
        args += ["--mcp-json", f"{capture.stem.replace('-', '_')}={capture}"]
    monkeypatch.setattr(datamodels, "COLD_WORKER_TOOLS", 1)
    monkeypatch.setattr(datamodels, "INPUT_GROUP_TOOLS", 4)  # several groups to share
    submitted: list[str] = []
    here: list[str] = []  # the worker's runs append to its own copy
    real_submit, real_run = datamodels.ModelWorker.submit, datamodels._Job.run

    def submit(worker: datamodels.ModelWorker, jobs: list[Any], shared: Any = ()) -> None:
        submitted.extend(job.name for job in [*jobs, *shared])
        real_submit(worker, jobs, shared)

    monkeypatch.setattr(datamodels.ModelWorker, "submit", submit)
    _one_side_runs_the_groups(tmp_path, monkeypatch, slow, here)
    (tmp_path / "two").mkdir()
    assert generate(tmp_path / "two", [*args, "--out", "out"], monkeypatch) == 0
    groups = submitted.count("inputs")
    assert groups > 2 and set(submitted) == {"inputs", "code-mode-outputs"}
    assert here == ["outputs"] + (["inputs"] * groups if slow != "outputs" else [])
    monkeypatch.setattr(datamodels, "_can_fork", lambda: False)  # one process: no worker, no pool
    monkeypatch.setattr(datamodels._Job, "run", real_run)
    (tmp_path / "one").mkdir()
    assert generate(tmp_path / "one", [*args, "--out", "out"], monkeypatch) == 0
    assert tree(tmp_path / "two" / "out" / "pkg") == tree(tmp_path / "one" / "out" / "pkg")


@pytest.mark.parametrize("slow", ["code-mode-outputs", "outputs"], ids=["worker-slow", "parent-slow"])
def test_a_model_run_that_fails_in_either_process_types_its_tool_as_any_as_in_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slow: str
) -> None:
    """An input group the model generator cannot take fails wherever it runs (in the worker, or
    here after the outputs); the build then types that tool's arguments as Any, and the package
    and its warning are the one-process build's."""
    from gen_helpers import generate, tree

    _needs_fork()
    args = ["--package", "pkg", "--no-cache"]
    for capture in SMALL:
        args += ["--mcp-json", f"{capture.stem.replace('-', '_')}={capture}"]
    monkeypatch.setattr(datamodels, "COLD_WORKER_TOOLS", 1)
    monkeypatch.setattr(datamodels, "INPUT_GROUP_TOOLS", 4)
    real, real_run = datamodels.model_code, datamodels._Job.run

    def failing(document: Any, *, kind: str, **more: Any) -> str:
        defs = document.get("$defs", {})
        if kind == "inputs" and any("GetCurrentTimeInput" in n and defs[n] != {"type": "object"} for n in defs):
            for side in ("parent-done", "worker-done"):  # the held-back run goes on: the groups ended
                (tmp_path / side).touch()
            if not (tmp_path / "failed-in").exists():  # the first failure: of the group's batched run
                (tmp_path / "failed-in").write_text(str(os.getpid()))
            raise datamodels.GenerateError("planted: this schema cannot be typed")
        return real(document, kind=kind, **more)

    monkeypatch.setattr(datamodels, "model_code", failing)
    monkeypatch.setattr(build, "model_code", failing)  # the one-tool runs that find the culprit
    here: list[str] = []
    _one_side_runs_the_groups(tmp_path, monkeypatch, slow, here)  # the failing group runs there
    packages = []
    for name, fork in (("two", True), ("one", False)):
        if not fork:
            monkeypatch.setattr(datamodels, "_can_fork", lambda: False)
            monkeypatch.setattr(datamodels._Job, "run", real_run)
        (tmp_path / name).mkdir()
        assert generate(tmp_path / name, [*args, "--out", "out"], monkeypatch) == 0
        packages.append(tree(tmp_path / name / "out" / "pkg"))
    # The first failure was this process's when it ran the groups, else the worker's.
    assert ((tmp_path / "failed-in").read_text() == str(os.getpid())) == (slow != "outputs")
    assert packages[0] == packages[1]
    inputs = packages[0]["inputs.py"].decode()
    assert "class TimeGetCurrentTimeInput(TypedDict):\n    pass" in inputs
