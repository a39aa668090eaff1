"""One strict pyright run over the type-check workspaces of many test modules.

Each pyright process spends about 4 CPU-seconds on the standard library, pydantic and the runtime
copy before it reads a generated module: nine modules paying it each was about 35 of the suite's
540 CPU-seconds. A module declares its workspace instead, with the function that builds it::

    @pyright_workspace(include=["pkg", "use_it.py"])
    def checked(folder: Path) -> None: ...

and asks the session's ``pyright_batch`` fixture (tests/conftest.py) for it: ``built(checked)`` is
the folder (and what the function returned), ``report(checked)`` pyright's diagnostics for it. The
first ``report`` builds every workspace declared so far and checks them all in one run, each
folder an execution environment of its own: imports resolve from that folder, as in a run of
pyright inside it. Declaring happens when the module is imported (collected), and the modules
that declare are in ``FILES``, which tests/conftest.py runs on one pytest-xdist worker.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Generic, TypeVar

import pytest
from gen_helpers import REPO, runtime_copy

T = TypeVar("T")

#: The test modules that declare workspaces: tests/conftest.py schedules them as one unit, so one
#: worker builds and checks them all once (two workers would each build and check every one).
FILES = frozenset(
    {
        "tests/codegen/test_typecheck.py",
        "tests/codegen/test_infer.py",
        "tests/codegen/test_schema_coverage.py",
        "tests/codegen/test_hostile.py",
        "tests/codegen/test_hostile_files.py",
        "tests/codegen/test_fastmcp_wrap.py",
        "tests/codegen/test_typeless_input.py",
        "tests/codegen/test_shim.py",
        "tests/runtime/test_root_outputs.py",
    }
)


@dataclass(eq=False)
class Workspace(Generic[T]):
    name: str  # the folder's name in the batch: module and function
    build: Callable[[Path], T]
    root: str  # the folder pyright runs in (imports resolve from it), relative to the workspace's
    include: tuple[str, ...]  # folders and files, relative to root
    exclude: Callable[[Path], bool]  # read where imported, never checked
    extra_paths: tuple[str, ...]
    full: bool  # built and checked only in the full tier (its tests are marked full)

    def checked(self, folder: Path) -> list[str]:
        """The files pyright checks, relative to root: listed one by one, so its count is exact."""
        base = folder / self.root
        found = []
        for entry in self.include:
            path = base / entry
            files = [*path.rglob("*.py"), *path.rglob("*.pyi")] if path.is_dir() else [path]
            found += [f.relative_to(base).as_posix() for f in files if "__pycache__" not in f.parts]
        return sorted(f for f in set(found) if not self.exclude(Path(f)))


_DECLARED: list[Workspace[Any]] = []
#: A workspace that fails to build fails its own tests (assert and pytest.fail in its function),
#: not the other workspaces' ones.
_BUILD_ERRORS = (Exception, pytest.fail.Exception)


def pyright_workspace(
    include: Sequence[str],
    exclude: Callable[[Path], bool] = runtime_copy,
    extra_paths: Sequence[str] = (),
    root: str = ".",
    full: bool = False,
) -> Callable[[Callable[[Path], T]], Workspace[T]]:
    """Declare a workspace (see the module's docstring); by default the runtime copies are not checked
    (gen_helpers.RUNTIME_COPIES says why). A ``full`` workspace is built and checked only in the full
    tier (docs/tests.md): every test that asks for it must be marked ``full``."""

    def declare(build: Callable[[Path], T]) -> Workspace[T]:
        module = Path(inspect.getfile(build)).resolve().relative_to(REPO).as_posix()
        if module not in FILES:
            raise AssertionError(f"{module} declares a pyright workspace: add it to FILES in tests/pyright_batch.py")
        workspace = Workspace(
            f"{Path(module).stem}-{build.__name__}", build, root, tuple(include), exclude, tuple(extra_paths), full
        )
        _DECLARED.append(workspace)
        return workspace

    return declare


@dataclass
class Batch:
    root: Path
    full: bool = False  # the full tier: the workspaces declared ``full`` are checked too
    _built: dict[Workspace[Any], Any] = field(default_factory=dict)
    _failed: dict[Workspace[Any], BaseException] = field(default_factory=dict)
    _reports: dict[Workspace[Any], dict[str, Any]] = field(default_factory=dict)

    def folder(self, workspace: Workspace[Any]) -> Path:
        return self.root / workspace.name

    def built(self, workspace: Workspace[T]) -> tuple[Path, T]:
        """The workspace's folder and what its function returned, built on first use."""
        if workspace in self._failed:
            raise self._failed[workspace]
        if workspace not in self._built:
            folder = self.folder(workspace)
            shutil.rmtree(folder, ignore_errors=True)  # a half-built folder from a failed attempt
            folder.mkdir(parents=True)
            try:
                self._built[workspace] = workspace.build(folder)
            except _BUILD_ERRORS as error:
                self._failed[workspace] = error
                raise
        return self.folder(workspace), self._built[workspace]

    def report(self, workspace: Workspace[Any]) -> dict[str, Any]:
        """pyright's JSON report restricted to ``workspace``: its ``generalDiagnostics``, and ``checked``,
        the files checked (relative to its root)."""
        if workspace.full and not self.full:
            pytest.fail(f"{workspace.name} is a full-tier workspace: mark the tests that use it `full`")
        if workspace not in self._reports:
            pending = [
                w for w in _DECLARED if w not in self._reports and w not in self._failed and (self.full or not w.full)
            ]
            for w in pending:
                with contextlib.suppress(*_BUILD_ERRORS):  # raised again to that workspace's own tests
                    self.built(w)
            self._check([w for w in pending if w in self._built])
        self.built(workspace)  # raises this workspace's own build error, if it had one
        return self._reports[workspace]

    def _check(self, workspaces: list[Workspace[Any]]) -> None:
        beside = Path(sys.executable).parent / "pyright"
        pyright = str(beside) if beside.exists() else shutil.which("pyright")
        if pyright is None:
            pytest.fail("pyright is not installed (it is in the test dependency group)")
        checked = {w: w.checked(self.folder(w)) for w in workspaces}
        config = {
            "typeCheckingMode": "strict",
            "pythonVersion": "3.11",
            "include": [PurePosixPath(w.name, w.root, f).as_posix() for w in workspaces for f in checked[w]],
            "executionEnvironments": [
                {"root": PurePosixPath(w.name, w.root).as_posix(), "extraPaths": list(w.extra_paths)}
                for w in workspaces
            ],
        }
        (self.root / "pyrightconfig.json").write_text(json.dumps(config), encoding="utf-8")
        completed = subprocess.run(
            [pyright, "--outputjson", "--pythonpath", sys.executable],
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=600,
        )
        try:
            report: dict[str, Any] = json.loads(completed.stdout)
        except json.JSONDecodeError:
            pytest.fail(f"pyright wrote no JSON report: {completed.stdout[-2000:]}{completed.stderr[-2000:]}")
        # Every file listed was checked, once: so each workspace's files were.
        assert report["summary"]["filesAnalyzed"] == len(config["include"]), (report["summary"], config["include"])
        root = self.root.resolve()
        by_workspace: dict[str, list[dict[str, Any]]] = {w.name: [] for w in workspaces}
        for diagnostic in report["generalDiagnostics"]:
            where = Path(diagnostic["file"]).resolve().relative_to(root)
            by_workspace[where.parts[0]].append(diagnostic)
        for w in workspaces:
            self._reports[w] = {"generalDiagnostics": by_workspace[w.name], "checked": checked[w]}
