"""``toolgen diff --impact PATH...``: the lines of *your* code a server change breaks.

The package is generated from the live listings into a temporary folder (with a copy of the lock,
so the project's lock and package stay as they are); then the project's type checker (mypy or
pyright: ``--checker``, else what the project configures) runs over PATH twice in one temporary
workspace, once beside the current package and once beside the new one. Only the diagnostics of
the second run that the first did not have are reported, each as ``FILE:LINE:COL`` with the tool
and the drift rule behind it (``codegen.drift``) and the checker's message. Exit 3 when a call
site breaks, 0 when none does (even if the change is breaking in general). docs/drift.md,
"Upgrading".
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from codegen.drift import SEVERITIES, Change
from codegen.drift_report import summary
from codegen.errors import GenerateError, one_line
from codegen.settings import Settings

__all__ = ["CHECKERS", "Broken", "Diagnostic", "attribute", "detect_checker", "impact", "new_diagnostics"]

#: Each checker toolgen can run, and how to install it.
CHECKERS: dict[str, str] = {"mypy": "pip install mypy", "pyright": "pip install pyright"}
#: The project files that configure a checker: copied into the workspace beside the code.
_CONFIG_FILES = ("pyproject.toml", "mypy.ini", ".mypy.ini", "setup.cfg", "pyrightconfig.json")
#: Every checker run is bounded (a project of thousands of modules takes minutes, not hours).
CHECK_TIMEOUT = 1800.0
_MAX_LINES = 200_000  # diagnostics read from one run at most
_MYPY_LINE = re.compile(
    r"(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|note): (?P<msg>.*?)(?:  \[(?P<code>[\w-]+)\])?"
)
_QUOTED = re.compile(r"\"([^\"]{1,200})\"|'([^']{1,200})'")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, order=True)
class Diagnostic:
    file: str  # relative to the project, as given
    line: int
    column: int
    code: str
    message: str


@dataclass(frozen=True)
class Broken:
    """A new diagnostic and the change of a tool behind it (None: no change could be named)."""

    diagnostic: Diagnostic
    change: Change | None

    def line(self, checker: str) -> str:
        d = self.diagnostic
        where = f"{d.file}:{d.line}:{d.column}"
        if self.change is None:
            behind = "no tool change found behind it"
        else:
            c = self.change
            behind = f"tool {one_line(c.source)}/{one_line(c.tool)} ({c.kind}, {c.severity})"
        code = f" [{d.code}]" if d.code else ""
        return f"{where}: {behind}: {checker}: {one_line(d.message)}{code}"


# --- the checker --------------------------------------------------------------------------------
def detect_checker(root: Path) -> str:
    """The checker the project configures: ``[tool.pyright]`` or ``pyrightconfig.json`` -> pyright,
    ``[tool.mypy]`` or a mypy config file -> mypy; neither: mypy."""
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            tool = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {})
        except tomllib.TOMLDecodeError as exc:
            raise GenerateError(f"invalid TOML: {exc}", str(pyproject)) from exc
        if "pyright" in tool:
            return "pyright"
        if "mypy" in tool:
            return "mypy"
    if (root / "pyrightconfig.json").is_file():
        return "pyright"
    return "mypy"


def _command(checker: str) -> list[str]:
    """How to run ``checker`` here; one line naming the install command when it is not installed."""
    if checker == "mypy":
        if importlib.util.find_spec("mypy") is not None:
            return [sys.executable, "-m", "mypy"]
        found = shutil.which("mypy")
    else:
        found = shutil.which("pyright") or _beside_python("pyright")
    if found is None:
        raise GenerateError(f"{checker} is not installed; install it with `{CHECKERS[checker]}`", "--checker")
    return [found]


def _beside_python(name: str) -> str | None:
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else None


def run_checker(
    checker: str, command: Sequence[str], work: Path, paths: Sequence[str], cache: Path
) -> list[Diagnostic]:
    """The checker's errors over ``paths`` (relative to ``work``), in that folder."""
    if checker == "mypy":
        argv = [*command, "--show-column-numbers", "--no-error-summary", "--no-pretty", "--show-error-codes",
                "--hide-error-context", "--no-color-output", "--cache-dir", str(cache), *paths]  # fmt: skip
        env = {**os.environ, "MYPYPATH": str(work)}
    else:
        argv = [*command, "--outputjson", *paths]
        env = dict(os.environ)
    try:
        proc = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=CHECK_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        raise GenerateError(f"{checker} took longer than {CHECK_TIMEOUT:.0f} s", "--impact") from exc
    if checker == "mypy":
        if proc.returncode not in (0, 1):  # 2: mypy itself failed (a bad config, a crash)
            raise GenerateError(f"mypy failed: {one_line(proc.stderr or proc.stdout)[:300]}", "--impact")
        return _mypy_errors(proc.stdout)
    return _pyright_errors(proc.stdout, proc.stderr, work)


def _mypy_errors(text: str) -> list[Diagnostic]:
    out = []
    for line in text.splitlines()[:_MAX_LINES]:
        found = _MYPY_LINE.fullmatch(line)
        if found is not None and found["sev"] == "error":
            path = found["file"].replace(os.sep, "/")
            out.append(Diagnostic(path, int(found["line"]), int(found["col"]), found["code"] or "", found["msg"]))
    return out


def _pyright_errors(text: str, err: str, work: Path) -> list[Diagnostic]:
    try:
        report = json.loads(text)
        found = report["generalDiagnostics"]
    except (ValueError, KeyError, TypeError) as exc:
        raise GenerateError(f"pyright failed: {one_line(err or text)[:300]}", "--impact") from exc
    out = []
    base = work.resolve()
    for d in found[:_MAX_LINES]:
        if d.get("severity") != "error":
            continue
        try:
            path = Path(d["file"]).resolve().relative_to(base).as_posix()
        except ValueError:
            continue  # outside the workspace: a library's
        start = d["range"]["start"]
        message = str(d["message"]).replace("\n", " ").replace("\u00a0", " ")
        out.append(Diagnostic(path, start["line"] + 1, start["character"] + 1, str(d.get("rule", "")), message))
    return out


def new_diagnostics(old: Iterable[Diagnostic], new: Iterable[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics of ``new`` that ``old`` does not have (each counted: two alike on one
    line are two)."""
    left: dict[Diagnostic, int] = {}
    for d in old:
        left[d] = left.get(d, 0) + 1
    out = []
    for d in sorted(new):
        if left.get(d, 0):
            left[d] -= 1
        else:
            out.append(d)
    return out


# --- which change is behind a diagnostic --------------------------------------------------------
@dataclass(frozen=True)
class _ToolNames:
    source: str
    wire: str
    method: str
    output: str | None  # the output model's class name


def tool_names(package: Path) -> list[_ToolNames]:
    """Each tool's source, wire name, method and output class, from the ``ToolInfo`` constants of
    the package's ``_tools.py`` (read as data: literals only)."""
    path = package / "_tools.py"
    if not path.is_file():
        return []
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "_ToolInfo":
            values: dict[str, Any] = {}
            for kw in node.keywords:
                if kw.arg in ("name", "method", "namespace", "output_ref"):
                    try:
                        values[kw.arg] = ast.literal_eval(kw.value)
                    except ValueError:
                        values[kw.arg] = None
            if all(isinstance(values.get(k), str) for k in ("name", "method", "namespace")):
                output = values.get("output_ref")
                out.append(_ToolNames(values["namespace"], values["name"], values["method"],
                                      output if isinstance(output, str) else None))  # fmt: skip
    return out


def _names_in(change: Change) -> set[str]:
    """The parameter or field names a change is about: the tokens after each ``properties``."""
    tokens = change.pointer.split("/")
    return {tokens[i + 1] for i, t in enumerate(tokens[:-1]) if t == "properties"}


def attribute(
    diagnostic: Diagnostic, source_line: str, changes: Sequence[Change], tools: Sequence[_ToolNames]
) -> Change | None:
    """The change behind a new diagnostic: of a tool whose method the line calls (or whose output
    class the message names), the one about a name the message quotes, else its most severe."""
    quoted = {a or b for a, b in _QUOTED.findall(diagnostic.message)}
    words = set(_IDENT.findall(source_line)) | quoted
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    by_tool: dict[tuple[str, str], list[Change]] = {}
    for c in changes:
        by_tool.setdefault((c.source, c.tool), []).append(c)
    matched: list[Change] = []
    for t in tools:
        if t.method not in words and (t.output is None or t.output not in quoted):
            continue
        for (source, tool), found in by_tool.items():
            # The wire name may carry a routing prefix (``sample.notes.create`` for ``notes.create``).
            if source == t.source and (t.wire == tool or t.wire.endswith(f".{tool}")):
                matched += [c for c in found if c not in matched]
    if not matched:
        return None
    about = [c for c in matched if _names_in(c) & quoted]
    return min(about or matched, key=lambda c: (rank[c.severity], c.pointer, c.kind))


# --- the whole run ------------------------------------------------------------------------------
def _user_paths(paths: Sequence[str], root: Path) -> list[str]:
    out = []
    for given in paths:
        path = (root / given).resolve()
        if not path.exists():
            raise GenerateError("no such file or folder", "--impact", given)
        try:
            out.append(path.relative_to(root.resolve()).as_posix() or ".")
        except ValueError as exc:
            raise GenerateError("must be inside the project (the working folder)", "--impact", given) from exc
    return out


def _copy_code(root: Path, paths: Sequence[str], work: Path, package: str) -> None:
    ignore = shutil.ignore_patterns("__pycache__", ".mypy_cache", ".toolgen-cache", ".git", package)
    for name in _CONFIG_FILES:
        if (root / name).is_file():
            shutil.copyfile(root / name, work / name)
    for rel in paths:
        source, target = root / rel, work / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=ignore, dirs_exist_ok=True)
        else:
            shutil.copyfile(source, target)


def _place(package: Path, work: Path, name: str) -> None:
    target = work / name
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(package, target, ignore=shutil.ignore_patterns("__pycache__"))


@dataclass(frozen=True)
class SavedListings:
    """The two-file form: two saved ``tools/list`` results of one source (``source`` names it) or
    two locks (``source`` None: each builds the package the settings describe, offline), and what
    changed between them."""

    old: Path
    new: Path
    source: str | None
    changes: tuple[Change, ...]


def _seeded(out: Path, package: str, previous: Path | None) -> None:
    """Start ``out/package`` as a copy of ``previous``: the build then formats only the modules
    that change and takes every unchanged tool's part of ``_tools.py`` as it is (codegen/cache.py)."""
    if previous is not None and (previous / "__init__.py").is_file():
        shutil.copytree(previous, out / package, ignore=shutil.ignore_patterns("__pycache__"))


def _from_listing(settings: Settings, listing: Path, source: str, out: Path, previous: Path | None = None) -> Path:
    from codegen.generate import run

    _seeded(out, settings.package, previous)
    run(replace(settings, tools=(), infra=(), mcp_json=(listing,), mcp_json_names=(source,), out=out,
                lock=out.parent / f"{out.name}.lock.json", offline=False, check=False, diff=False))  # fmt: skip
    return out / settings.package


def _from_lock(settings: Settings, lock: Path, out: Path, previous: Path | None = None) -> Path:
    """The package the settings describe, generated offline from (a copy of) ``lock``."""
    from codegen.generate import run

    _seeded(out, settings.package, previous)
    copy = out.parent / f"{out.name}.lock.json"
    shutil.copyfile(lock, copy)
    run(replace(settings, out=out, lock=copy, offline=True, check=False, diff=False))
    return out / settings.package


def impact(
    settings: Settings,
    paths: Sequence[str],
    checker: str | None,
    out: TextIO,
    *,
    root: Path | None = None,
    saved: SavedListings | None = None,
) -> tuple[int, list[Broken]]:
    """Generate the new package, check ``paths`` against it and the current one, report the new
    diagnostics. Returns the exit code (3 when a call site breaks, else 0) and what broke. With
    ``saved``, both packages come from the two saved listings (or locks) instead of the lock and the
    servers."""
    from codegen.generate import run

    root = root or Path.cwd()
    rel_paths = _user_paths(paths, root)
    checker = checker or detect_checker(root)
    command = _command(checker)
    with tempfile.TemporaryDirectory(prefix="toolgen-impact-") as tmp_name:
        tmp = Path(tmp_name)
        if saved is not None:
            if saved.source is None:  # two locks
                current = _from_lock(settings, saved.old, tmp / "old")
                fresh_package = _from_lock(settings, saved.new, tmp / "new", current)
            else:
                current = _from_listing(settings, saved.old, saved.source, tmp / "old")
                fresh_package = _from_listing(settings, saved.new, saved.source, tmp / "new", current)
            changes = saved.changes
        else:
            lock = tmp / "lock.json"
            if settings.lock.is_file():
                shutil.copyfile(settings.lock, lock)
            # The new package, from the live listings: the project's lock and package stay as they are.
            _seeded(tmp / "new", settings.package, settings.target)
            outcome = run(replace(settings, out=tmp / "new", lock=lock, offline=False, check=False, diff=False))
            changes, fresh_package = outcome.drift, tmp / "new" / settings.package
            current = settings.target
            if not (current / "__init__.py").is_file():
                if not settings.lock.is_file():
                    raise GenerateError("no current package and no lock to generate it from", str(current))
                current = _from_lock(settings, settings.lock, tmp / "old")
        work, cache = tmp / "work", tmp / "checker-cache"
        work.mkdir()
        _copy_code(root, rel_paths, work, settings.package)
        _place(current, work, settings.package)
        before = run_checker(checker, command, work, rel_paths, cache)
        _place(fresh_package, work, settings.package)
        after = run_checker(checker, command, work, rel_paths, cache)
        fresh = [d for d in new_diagnostics(before, after) if not d.file.startswith(f"{settings.package}/")]
        tools = tool_names(current) + tool_names(fresh_package)
        broken = []
        for d in fresh:
            lines = _lines(work / d.file)
            text = lines[d.line - 1] if 0 < d.line <= len(lines) else ""
            broken.append(Broken(d, attribute(d, text, changes, tools)))
    for b in broken:
        out.write(b.line(checker) + "\n")
    counts = summary(changes) if changes else "no change"
    if broken:
        out.write(f"toolgen: {len(broken)} call site(s) break ({checker}); the servers: {counts}\n")
        return 3, broken
    out.write(f"toolgen: no call site breaks ({checker}); the servers: {counts}\n")
    return 0, broken


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
