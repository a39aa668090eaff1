"""Large catalogs build their models on two cores; the output must not depend on it."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

import pytest
from gen_helpers import REPO

import codegen.datamodels as datamodels
from codegen.build import build_package
from codegen.model import SourceTools
from codegen.render import render_package

CAPTURES = sorted((REPO / "tests" / "fixtures" / "mcp-tools-list").glob("*.json"))


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


def test_forked_model_build_gives_the_same_package(monkeypatch: pytest.MonkeyPatch) -> None:
    if not datamodels._can_fork():
        pytest.fail(f"needs fork, two cores and one thread; threads: {[t.name for t in threading.enumerate()]}")
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
