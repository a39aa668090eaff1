"""Settings: ``[tool.toolgen]`` in pyproject.toml, overridden by command-line options."""

from __future__ import annotations

import functools
import importlib.util
import keyword
import re
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from codegen.errors import GenerateError

__all__ = ["DEFAULT_PACKAGE", "DEFAULT_SAMPLES", "Settings", "find_pyproject", "load_settings", "split_named"]

DEFAULT_PACKAGE = "toolgen_tools"
#: The samples file every command reads (and ``record`` writes) unless ``samples`` names others;
#: beside the nearest pyproject.toml, else in the working folder, like the cache.
DEFAULT_SAMPLES = Path("toolgen.samples.json")
#: ``NAME=PATH`` names the source of an ``--mcp-json`` file (its namespace). It is split only when
#: what precedes the first ``=`` is spelt like an infra server's name (letters, digits, ``_.-``),
#: so a file whose name has an ``=`` in it is still given as ``./a=b.json``.
_NAMED = re.compile(r"([A-Za-z0-9_-][A-Za-z0-9_.-]{0,63})=(.+)", re.DOTALL)
_LIST_KEYS = ("tools", "infra", "mcp_json")
#: samples and cassettes are not sources: naming one keeps the sources
_PATH_LISTS = (*_LIST_KEYS, "samples", "cassettes")
#: Settings of the package's version and upgrades (docs/drift.md, "Upgrading"), with their types.
_UPGRADE_KEYS: dict[str, type] = {"start_version": str, "keep_zero_major": bool, "keep_removed_tools": int}
_KEYS = {*_PATH_LISTS, "lock", "out", "package", *_UPGRADE_KEYS}
#: Keys of [tool.toolgen] read as another. ``snapshot`` is the lock file's older name: projects'
#: pyproject.toml files still spell it, so it stays readable (both at once is an error).
_ALIASES = {"snapshot": "lock"}


@dataclass(frozen=True)
class Settings:
    tools: tuple[Path, ...] = ()
    infra: tuple[Path, ...] = ()
    mcp_json: tuple[Path, ...] = ()
    #: The source name given to each ``mcp_json`` file (``NAME=PATH``); None: the file's stem.
    mcp_json_names: tuple[str | None, ...] = ()
    #: Samples files to infer output types from. One that does not exist yet is no samples, unless
    #: it was named on the command line (``samples_given``): then it is an error.
    samples: tuple[Path, ...] = (DEFAULT_SAMPLES,)
    samples_given: bool = False
    #: The test kit's cassettes (``Recorder``), files or folders of ``*.json``: ``--check`` reports
    #: a recorded call whose tool, arguments or result no longer fit the package (docs/testing.md).
    cassettes: tuple[Path, ...] = ()
    lock: Path = Path("toolgen.lock.json")
    out: Path = Path("generated")
    package: str = DEFAULT_PACKAGE
    offline: bool = False
    check: bool = False
    diff: bool = False
    strict_schemas: bool = False  # a schema spot typed as Any is an error (exit 2), not a warning
    #: The pyproject.toml whose [tool.toolgen] gave defaults; None when none did.
    config_file: Path | None = None
    #: Where reruns find earlier results (``.toolgen-cache`` beside pyproject.toml); None: no cache.
    cache: Path | None = Path(".toolgen-cache")
    #: The package's version while the lock records none (docs/drift.md, "Upgrading").
    start_version: str = "0.1.0"
    #: A 0.x version stays 0.x: a breaking change bumps the minor, anything else the patch.
    keep_zero_major: bool = False
    #: How many versions a tool the server removed is kept, as a deprecated method (0: not kept).
    keep_removed_tools: int = 0

    @property
    def target(self) -> Path:
        return self.out / self.package

    @property
    def named_mcp_json(self) -> tuple[tuple[str | None, Path], ...]:
        names = self.mcp_json_names or (None,) * len(self.mcp_json)
        return tuple(zip(names, self.mcp_json, strict=True))

    @property
    def samples_to_read(self) -> tuple[Path, ...]:
        """The samples files to read: every one named on the command line, else those that exist."""
        return self.samples if self.samples_given else tuple(p for p in self.samples if p.exists())


def split_named(text: str) -> tuple[str | None, str]:
    """``"github=github.json"`` -> ``("github", "github.json")``; a plain path -> ``(None, path)``."""
    match = _NAMED.fullmatch(text)
    return (match.group(1), match.group(2)) if match else (None, text)


def find_pyproject(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def _from_table(table: Mapping[str, Any], root: Path, file: Path) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if "lock" in table and "snapshot" in table:
        raise GenerateError("give the lock file once: 'lock' (or its older name 'snapshot')", f"{file}: [tool.toolgen]")
    for raw_key, value in table.items():
        key = _ALIASES.get(raw_key.replace("-", "_"), raw_key.replace("-", "_"))
        where = f"{file}: [tool.toolgen]"
        if key not in _KEYS:
            raise GenerateError(f"unknown key {raw_key!r} (known: {', '.join(sorted(_KEYS))})", where, raw_key)
        if key in _UPGRADE_KEYS:
            values[key] = _upgrade_value(key, value, where, raw_key)
        elif key in _PATH_LISTS:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise GenerateError("must be a list of paths", where, raw_key)
            if key == "mcp_json":  # "NAME=PATH" names the source
                named = [split_named(v) for v in value]
                values["mcp_json_names"] = tuple(n for n, _ in named)
                value = [p for _, p in named]
            values[key] = tuple(root / v for v in value)
        elif not isinstance(value, str):
            raise GenerateError("must be a string", where, raw_key)
        else:
            values[key] = value if key == "package" else root / value
    return values


def _upgrade_value(key: str, value: Any, where: str, raw_key: str) -> Any:
    from codegen.versioning import parse_version

    wanted = _UPGRADE_KEYS[key]
    if type(value) is not wanted:  # bool is an int: compared exactly
        what = {str: "a string", bool: "true or false", int: "an integer"}[wanted]
        raise GenerateError(f"must be {what}", where, raw_key)
    if key == "start_version" and parse_version(value) is None:
        raise GenerateError(f"{value!r} is not a version (MAJOR.MINOR.PATCH, such as 1.4.0)", where, raw_key)
    if key == "keep_removed_tools" and not 0 <= cast(int, value) <= 1000:
        raise GenerateError("must be between 0 and 1000", where, raw_key)
    return value


def load_settings(cwd: Path, overrides: Mapping[str, Any]) -> Settings:
    """Config-file values (paths relative to the pyproject.toml) under command-line ``overrides``.

    The sources (``tools``, ``infra``, ``mcp_json``) are one group: naming any of them on the
    command line replaces all the configured ones, so ``--mcp-json x.json`` inside a configured
    project generates from x.json alone instead of quietly mixing in the project's servers.
    """
    values: dict[str, Any] = {}
    pyproject = find_pyproject(cwd)
    if pyproject is not None:
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise GenerateError(f"invalid TOML: {exc}", str(pyproject)) from exc
        table = data.get("tool", {}).get("toolgen")
        if table is not None:
            values = {**_from_table(table, pyproject.parent, pyproject), "config_file": pyproject}
    given = {k: v for k, v in overrides.items() if v not in (None, [], ()) and k != "no_cache"}
    if any(key in given for key in _LIST_KEYS):
        values = {k: v for k, v in values.items() if k not in (*_LIST_KEYS, "mcp_json_names")}
    root = pyproject.parent if pyproject else cwd
    settings = replace(Settings(samples=(root / DEFAULT_SAMPLES,)), **values)
    if "mcp_json" in given:
        named = [split_named(str(v)) for v in given["mcp_json"]]
        given["mcp_json"], given["mcp_json_names"] = [p for _, p in named], tuple(n for n, _ in named)
    for key in _PATH_LISTS:
        if key in given:
            given[key] = tuple(cwd / Path(p) for p in given[key])
    if "samples" in given:
        given["samples_given"] = True
    for key in ("lock", "out"):
        if key in given:
            given[key] = cwd / Path(given[key])
    settings = replace(settings, **given)
    if overrides.get("no_cache"):
        settings = replace(settings, cache=None)
    else:  # beside the project's pyproject.toml, else in the working folder
        settings = replace(settings, cache=root / ".toolgen-cache")
    _check_package(settings.package)
    settings = _relative_to(settings, cwd)
    _check_inputs_outside(settings)
    return settings


def _check_inputs_outside(settings: Settings) -> None:
    """Every run replaces the package folder whole: an input inside it (a lock, a samples file, a
    tools/list) would be deleted by the run that reads it."""
    target = settings.target.resolve()
    named = [("--lock", settings.lock)]
    named += [(f"--{key.replace('_', '-')}", path) for key in _PATH_LISTS for path in getattr(settings, key)]
    for option, path in named:
        resolved = path.resolve()
        if resolved == target or target in resolved.parents:
            raise GenerateError(
                f"{option} is inside the package folder {settings.target}, which every run replaces; "
                "keep inputs outside it",
                str(path),
            )


def _relative_to(settings: Settings, cwd: Path) -> Settings:
    """Paths under the working folder as relative ones: error messages then show no machine path."""

    def rel(path: Path) -> Path:
        try:
            return path.relative_to(cwd)
        except ValueError:
            return path

    return replace(
        settings,
        tools=tuple(map(rel, settings.tools)),
        infra=tuple(map(rel, settings.infra)),
        mcp_json=tuple(map(rel, settings.mcp_json)),
        samples=tuple(map(rel, settings.samples)),
        cassettes=tuple(map(rel, settings.cassettes)),
        lock=rel(settings.lock),
        out=rel(settings.out),
        cache=None if settings.cache is None else rel(settings.cache),
    )


#: Top-level modules the generated package and toolgen import (with what they import in turn). A
#: package of the same name would shadow it for every program that puts the output folder on
#: sys.path: ``pydantic`` would fail to import, ``json`` would replace the standard module.
_DEPENDENCY_MODULES = frozenset({
    "annotated_types", "anyio", "black", "codegen", "datamodel_code_generator", "genson", "httpx",
    "jinja2", "jsonschema", "mas", "mcp", "pydantic", "pydantic_core", "rich", "ruff", "typing_extensions",
    "typing_inspection", "yaml",
})  # fmt: skip


@functools.cache  # reading every distribution's metadata costs about half a second
def _installed_dependency_modules() -> frozenset[str]:
    """The top-level modules of every distribution toolgen requires, directly or not, as installed
    here (the static list above is the floor, for an environment whose metadata says less)."""
    from importlib import metadata

    def canonical(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    wanted: set[str] = set()
    todo = ["toolgen"]
    while todo:
        dist = canonical(todo.pop())
        if dist in wanted:
            continue
        wanted.add(dist)
        try:
            requirements = metadata.requires(dist) or []
        except metadata.PackageNotFoundError:  # required but not installed (a marker left it out)
            continue
        for requirement in requirements:
            if "extra ==" not in requirement:  # an optional extra is not installed with toolgen
                todo.append(re.split(r"[\s;<>=!~\[(]", requirement, maxsplit=1)[0])
    by_module = metadata.packages_distributions()
    return frozenset(m for m, dists in by_module.items() if any(canonical(d) in wanted for d in dists))


def _shadows_a_dependency(name: str) -> bool:
    # Only a name something installed already answers to can shadow it: the metadata of every
    # distribution is read only then (the usual package name is importable nowhere).
    try:
        importable = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        importable = True
    return importable and name in _installed_dependency_modules()


def _check_package(name: str) -> None:
    if not name.isidentifier() or keyword.iskeyword(name) or not name.isascii():
        raise GenerateError("must be a Python identifier", "--package", repr(name))
    if name in sys.stdlib_module_names or name in _DEPENDENCY_MODULES or _shadows_a_dependency(name):
        what = "the standard library module" if name in sys.stdlib_module_names else "the module"
        raise GenerateError(
            f"would shadow {what} {name!r} for any program that imports the generated package; choose another name",
            "--package",
            repr(name),
        )
