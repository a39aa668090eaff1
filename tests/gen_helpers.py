"""Helpers for generator tests: generate into a temporary folder and import the result.

Imported by test modules as ``gen_helpers`` (tests/conftest.py puts tests/ on sys.path).
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import io
import json
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from codegen.cli import main as toolgen_main

REPO = Path(__file__).resolve().parents[1]


def generate(cwd: Path, args: Sequence[str], monkeypatch: pytest.MonkeyPatch | None = None) -> int:
    """Run ``toolgen generate`` in-process with ``cwd`` as the working folder."""
    mp = monkeypatch or pytest.MonkeyPatch()
    try:
        mp.chdir(cwd)
        return toolgen_main(["generate", *args])
    finally:
        if monkeypatch is None:
            mp.undo()


#: The flags of every ``mypy --strict`` run over generated packages here: one set, so that the
#: runs of one test process share their cache of the standard library and pydantic (mypy keeps a
#: module's cache for one set of options; MYPY_CACHE_DIR is the process's, tests/conftest.py).
MYPY_STRICT = ("--config-file", "mypy.ini", "--strict", "--enable-error-code", "deprecated", "--python-version",
               "3.11", "--show-error-codes", "--no-pretty", "--no-color-output", "--no-error-summary")  # fmt: skip


def mypy_strict(folder: Path, *targets: str) -> subprocess.CompletedProcess[str]:
    """``mypy`` with :data:`MYPY_STRICT` over ``targets`` in ``folder``, under an empty config of its
    own (never a user's or the repository's)."""
    (folder / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")
    command = [sys.executable, "-m", "mypy", *MYPY_STRICT, *targets]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=300)


def black_formatted(source: str) -> str:
    """``source`` as black, the reference style, lays it out (the generator formats with ruff)."""
    import black
    from black.mode import TargetVersion
    from black.report import NothingChanged

    mode = black.Mode(target_versions={TargetVersion.PY311}, line_length=88)
    try:
        return black.format_file_contents(source, fast=False, mode=mode)
    except NothingChanged:
        return source


def black_agrees(text: str) -> bool:
    """black leaves the module unchanged, or the module has the one shape where ruff (which formats
    the output) and black are known to differ: a name and its annotation (a parameter, an
    annotated assignment) that with its default or value are wider than the line. black puts the
    annotation in parentheses (and, in a signature, may drop the trailing comma); ruff leaves it
    unparenthesised and splits inside it (a long ``Literal[...]``, or at the ``|`` before
    ``_NotGiven``). Both keep every other line alike (docs/generator.md, "How it is built")."""
    if black_formatted(text) == text:
        return True
    from black.strings import str_width

    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name, annotation, value = node.target.id, node.annotation, node.value
        elif isinstance(node, ast.arg) and node.annotation is not None:
            name, annotation, value = node.arg, node.annotation, None
        else:
            continue
        line = f"{name}: {ast.unparse(annotation)} = {ast.unparse(value) if value else '_NOT_GIVEN,'}"
        if node.col_offset + str_width(line) > 88:
            return True
    return False


def import_fresh(out: Path, package: str) -> ModuleType:
    """Import ``out/package`` freshly (tests generate several packages with the same name)."""
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        del sys.modules[name]
    sys.path.insert(0, str(out))
    try:
        importlib.invalidate_caches()
        return importlib.import_module(package)
    finally:
        sys.path.remove(str(out))


def golden_package(case: str, out: Path) -> Path:
    """A golden tree made importable in ``out``: the golden files plus the runtime copies the golden
    trees leave out (each its source below the package's header, as ``render`` writes them)."""
    from codegen.emit.render import runtime_sources
    from codegen.generate import file_header

    target = out / case
    shutil.copytree(REPO / "tests" / "golden" / case, target, ignore=shutil.ignore_patterns("__pycache__"))
    header = f"{file_header()}\n"
    for name, source in runtime_sources().items():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_text(header + source.read_text(encoding="utf-8"), encoding="utf-8")
    return out


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


class RecordingProvider:
    """A provider that records what reached call_tool and answers with canned envelopes.

    It declares only ``timeout_seconds``: the contract's rule says no other option may reach it.
    """

    def __init__(self, answers: dict[str, Any] | None = None, default: Any = None) -> None:
        self.calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
        self.answers = answers or {}
        self.default = default if default is not None else {"is_error": False, "result": "ok"}

    def call_tool(self, tool_name: str, arguments: dict[str, Any], timeout_seconds: float | None = None) -> Any:
        kwargs = {} if timeout_seconds is None else {"timeout_seconds": timeout_seconds}
        self.calls.append((tool_name, dict(arguments), kwargs))
        return self.answers.get(tool_name, self.default)


#: The runtime copies every generated package carries verbatim (``_runtime/``, ``_rules.py``). pyright
#: still reads them for the types the generated modules use, but does not check each copy again:
#: tests/codegen/test_shim.py checks the source strictly, tests/codegen/test_typecheck.py one copy
#: inside a generated package, and tests/codegen/test_golden.py that each copy equals its source.
#: Checking all 13 files again in every package was two thirds of a pyright run over fuzz packages.
RUNTIME_COPIES = ("**/_runtime", "**/_rules.py")


def runtime_copy(path: Path) -> bool:
    return "_runtime" in path.parts or path.name == "_rules.py"


def checked_modules(root: Path, packages: Sequence[str]) -> int:
    """How many modules of ``packages`` pyright_strict checks by default: all but the runtime copies."""
    found = [f for p in packages for f in [*(root / p).rglob("*.py"), *(root / p).rglob("*.pyi")]]
    return sum(not runtime_copy(f.relative_to(root)) for f in found)


def pyright_strict(
    folder: Path, include: Sequence[str], extra_paths: Sequence[str] = (), exclude: Sequence[str] = RUNTIME_COPIES
) -> dict[str, Any]:
    """Run real pyright in strict mode over ``include`` (relative to ``folder``); its JSON report.

    Files matching ``exclude`` are read where imported, never checked (by default the runtime copies,
    see ``RUNTIME_COPIES``). pyright is a declared test dependency: when it is missing the test fails
    rather than skips, so a type-check test can never pass without checking anything.
    """
    beside = Path(sys.executable).parent / "pyright"
    pyright = str(beside) if beside.exists() else shutil.which("pyright")
    if pyright is None:
        pytest.fail("pyright is not installed (it is in the test dependency group)")
    config: dict[str, Any] = {"typeCheckingMode": "strict", "pythonVersion": "3.11", "include": list(include)}
    if exclude:
        config["exclude"] = list(exclude)
    if extra_paths:
        config["extraPaths"] = list(extra_paths)
    (folder / "pyrightconfig.json").write_text(json.dumps(config), encoding="utf-8")
    completed = subprocess.run(
        [pyright, "--outputjson", "--pythonpath", sys.executable],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    report: dict[str, Any] = json.loads(completed.stdout)
    return report


#: A run that expanded a YAML alias bomb would need gigabytes; a refused one needs far less than this.
_MEMORY_LIMIT = 1536 * 1024 * 1024


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_MEMORY_LIMIT, _MEMORY_LIMIT))


def run_module(cwd: Path, module: str, *args: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m MODULE ARGS`` in ``cwd`` as a user runs it (a process of its own, in 1.5 GB of address
    space), with ``env`` added to the environment."""
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **env},
        preexec_fn=_limited,
    )


def toolgen_process(cwd: Path, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``toolgen generate ARGS`` as a process of its own (see ``run_module``)."""
    return run_module(cwd, "codegen", "generate", *args, **kwargs)


def toolgen_in_process(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``toolgen generate ARGS`` in this process, with ``env`` added to the environment; its exit code and
    output in the shape ``toolgen_process`` returns. For a test of what the generator decides (an
    error line, what it writes or refuses): the generator's libraries are imported once per test
    process instead of once per run. Tests of the process itself (kill -9, memory limits, launch
    styles, exit codes as a shell sees them) keep ``toolgen_process``."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        mp.chdir(cwd)
        for name, value in env.items():
            mp.setenv(name, value)
        code = toolgen_main(["generate", *args])
    return subprocess.CompletedProcess(["toolgen", "generate", *args], code, stdout.getvalue(), stderr.getvalue())


def forked_python(*args: str) -> dict[str, Any]:
    """The fields of an infra server entry that run ``python ARGS`` as a fork of the tests'
    pre-imported interpreter (tests/prefork.py, whose zygote runs with this PYTHONPATH): a real
    process on the runtime's pipes that does not pay ``import mcp`` at every start."""
    from prefork import python_args

    return {"command": "python", "args": list(python_args(*args)), "env": {"PYTHONPATH": str(REPO)}}


def error_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The one line a refused run prints (it must exit 2 and print exactly one line)."""
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, (proc.returncode, proc.stderr[-2000:])
    return lines[0]
