"""The schema lock: every live listing used in a build, as canonical JSON. Format: ``docs/lock.md``.

Canonical means: keys sorted, tools sorted by name, two-space indent, a final newline, no
timestamps and nothing but what ``tools/list`` returned (never a URL, header or env value), plus a
format version, a content hash per tool (the hash rule lives in ``mas.runtime.lockfile``) and the
output types the build inferred from samples (``codegen.infer``): the baseline for their drift.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codegen.drift import KINDS, Change, diff_listings, diff_surface
from codegen.errors import GenerateError
from codegen.infer import InferredOutput, inferred_changes
from codegen.versioning import PackageRecord, record_from_data
from mas.runtime.contracts._rules import pointer_token
from mas.runtime.json_file import read_json
from mas.runtime.lockfile import (
    LOCK_VERSION,
    VERSION_KEY,
    canonical_schema,
    canonical_tool,
    lock_version_problem,
    tool_hash,
)
from mas.runtime.lockfile import TASK_DIALECTS as DIALECTS
from mas.runtime.redact import blank_json

__all__ = [
    "LOCK_VERSION",
    "TASKS_KEY",
    "LockChange",
    "Lock",
    "canonical_json",
    "describe_lock",
    "dialect_changes",
    "is_lock",
    "load_lock",
    "lock_drift",
    "parse_lock",
    "relock_inferred",
    "render_lock",
    "skills_drift",
    "drift_between",
    "lock_from_data",
]

#: The key under which the lock keeps the YAML tools (``--tools``) of the build, when there were any.
SKILLS_KEY = "skills"
#: The key, in a source's entry, of the output types inferred for its tools (format 3).
INFERRED_KEY = "inferred"
#: The key, in a server's entry, of the task dialect it advertises (docs/tasks.md); absent: none.
TASKS_KEY = "task_dialect"

#: The keys, in a server's entry, of what it serves besides tools, and the key each item is sorted
#: by (docs/resources-and-prompts.md). A server without any has none of them: its lock is as it was.
SURFACE_KEYS: Mapping[str, str] = {"completions": "id", "prompts": "name", "resource_templates": "uriTemplate",
                                   "resources": "uri"}  # fmt: skip
#: server -> listing (a key of SURFACE_KEYS) -> items
SurfaceByServer = Mapping[str, Mapping[str, Sequence[Mapping[str, Any]]]]

#: source name -> wire name -> the output type inferred from samples
InferredBySource = Mapping[str, Mapping[str, InferredOutput]]


@dataclass(frozen=True)
class Lock:
    path: Path
    servers: Mapping[str, Sequence[Mapping[str, Any]]]
    #: The YAML tools the lock was written with (MCP-shaped); None when the build had none.
    skills: Sequence[Mapping[str, Any]] | None = field(default=None)
    #: The output types the package was generated from, by source (server name or ``skills``) and
    #: tool; None for a lock of format 1 or 2, which did not record them (nothing to compare with).
    inferred: InferredBySource | None = field(default=None)
    #: The task dialect each server advertised (``TASKS_KEY``), by server name; absent: none.
    tasks: Mapping[str, str] = field(default_factory=dict)
    #: The generated package's version and releases (``codegen.versioning``); None: none recorded yet.
    package: PackageRecord | None = field(default=None)
    #: Each server's resources, templates and prompts (``SURFACE_KEYS``), only the non-empty ones.
    surface: SurfaceByServer = field(default_factory=dict)

    def listings(self) -> dict[str, Sequence[Mapping[str, Any]]]:
        """Every listing by source name, skills under ``skills`` (a name no server may take)."""
        out = dict(self.servers)
        if self.skills is not None:
            out[SKILLS_KEY] = self.skills
        return out


def canonical_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _inferred_entry(found: InferredOutput) -> dict[str, Any]:
    entry: dict[str, Any] = {"kind": found.kind, "samples": found.samples}
    if found.schema is not None:
        entry["schema"] = canonical_schema(found.schema)  # `required` sorted: its order means nothing
    return entry


def _entry(
    tools: Sequence[Mapping[str, Any]],
    inferred: Mapping[str, InferredOutput] | None = None,
    task_dialect: str | None = None,
    surface: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
) -> dict[str, Any]:
    # Canonical (mas/runtime/lockfile.py): a server that reorders `required` changes no lock byte.
    ordered = sorted((canonical_tool(t) for t in tools), key=lambda t: str(t.get("name")))
    entry: dict[str, Any] = {"tools": ordered, "hashes": {str(t.get("name")): tool_hash(t) for t in ordered}}
    if inferred:  # a source without inferred types has no key: locks without samples stay as they were
        entry[INFERRED_KEY] = {name: _inferred_entry(found) for name, found in inferred.items()}
    if task_dialect is not None:  # a server without tasks has no key: its lock stays as it was
        entry[TASKS_KEY] = task_dialect
    for key, order in SURFACE_KEYS.items():
        if surface and surface.get(key):  # only what the server has: other locks stay as they were
            entry[key] = sorted((dict(item) for item in surface[key]), key=lambda item: str(item.get(order)))
    return entry


def render_lock(
    servers: Mapping[str, Sequence[Mapping[str, Any]]],
    skills: Sequence[Mapping[str, Any]] | None = None,
    inferred: InferredBySource | None = None,
    tasks: Mapping[str, str] | None = None,
    surface: SurfaceByServer | None = None,
) -> str:
    """The lock text; ``inferred`` (source -> tool -> output) is kept for the sources in the lock,
    ``tasks`` (server -> task dialect) for the servers that advertise tasks, and ``surface``
    (server -> resources, templates, prompts) for the servers that serve any."""
    found = inferred or {}
    dialects = tasks or {}
    served = {name: blank_json(dict(listings)) for name, listings in (surface or {}).items()}
    # The lock is committed: no resolved secret may reach it, whatever a server echoed (the provider
    # blanks listings already; blanked again here, before hashing, so the hashes match the text).
    servers = {name: blank_json(tools) for name, tools in servers.items()}
    skills = blank_json(skills)
    data: dict[str, Any] = {
        VERSION_KEY: LOCK_VERSION,
        "servers": {
            name: _entry(tools, found.get(name), dialects.get(name), served.get(name))
            for name, tools in servers.items()
        },
    }
    if skills:
        data[SKILLS_KEY] = _entry(skills, found.get(SKILLS_KEY))
    return canonical_json(data)


def load_lock(path: Path) -> Lock:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise GenerateError(
            "no lock file yet; run `toolgen generate` once without --offline, with the servers reachable, to create it",
            str(path),
        ) from exc
    except OSError as exc:
        raise GenerateError(f"cannot read: {exc.strerror}", str(path)) from exc
    return parse_lock(text, path)


def is_lock(data: Any) -> bool:
    """Whether parsed JSON claims to be a lock (it may still be of a version we cannot read)."""
    return isinstance(data, Mapping) and VERSION_KEY in data


def parse_lock(text: str, path: Path) -> Lock:
    return lock_from_data(read_json(path, GenerateError, text=text), path)


def lock_from_data(data: Any, path: Path) -> Lock:
    problem = lock_version_problem(data)
    if problem is not None:
        raise GenerateError(problem, str(path), f"/{VERSION_KEY}")
    servers = data.get("servers")
    if not isinstance(servers, Mapping):
        raise GenerateError("'servers' must be an object", str(path), "/servers")
    out: dict[str, Sequence[Mapping[str, Any]]] = {}
    inferred: dict[str, Mapping[str, InferredOutput]] = {}
    entries = {str(name): (entry, f"/servers/{name}") for name, entry in servers.items()}
    tasks: dict[str, str] = {}
    surface: dict[str, dict[str, Sequence[Mapping[str, Any]]]] = {}
    for name, (entry, pointer) in entries.items():
        out[name] = _checked_tools(entry, path, pointer)
        for key in SURFACE_KEYS:
            items = entry.get(key)
            if items is None:
                continue
            if not isinstance(items, list) or not all(isinstance(i, Mapping) for i in items):
                raise GenerateError(f"'{key}' must be an array of objects", str(path), f"{pointer}/{key}")
            surface.setdefault(name, {})[key] = items
        dialect = entry.get(TASKS_KEY)
        if dialect is not None:
            if dialect not in DIALECTS:
                known = ", ".join(DIALECTS)
                raise GenerateError(
                    f"unknown task dialect {dialect!r} (known: {known})", str(path), f"{pointer}/{TASKS_KEY}"
                )
            tasks[name] = dialect
    skills = None
    if SKILLS_KEY in data:
        skills = _checked_tools(data[SKILLS_KEY], path, f"/{SKILLS_KEY}")
        entries[SKILLS_KEY] = (data[SKILLS_KEY], f"/{SKILLS_KEY}")
    for name, (entry, pointer) in entries.items():
        if found := _checked_inferred(entry.get(INFERRED_KEY), path, f"{pointer}/{INFERRED_KEY}"):
            inferred[name] = found
    # Formats 1 and 2 recorded no inferred types: unknown, not "none".
    record = record_from_data(data, path)
    return Lock(path, out, skills, inferred if data[VERSION_KEY] >= 3 else None, tasks, record, surface)


def _checked_inferred(value: Any, path: Path, pointer: str) -> dict[str, InferredOutput]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise GenerateError("'inferred' must be an object", str(path), pointer)
    out: dict[str, InferredOutput] = {}
    for tool, entry in value.items():
        where = f"{pointer}/{pointer_token(str(tool))}"
        kind = entry.get("kind") if isinstance(entry, Mapping) else None
        if kind not in ("model", "text"):
            raise GenerateError('\'kind\' must be "model" or "text"', str(path), f"{where}/kind")
        samples = entry.get("samples")
        if not isinstance(samples, int) or isinstance(samples, bool) or samples < 1:
            raise GenerateError("'samples' must be a positive integer", str(path), f"{where}/samples")
        schema = entry.get("schema")
        if (kind == "model") != isinstance(schema, Mapping):
            message = "a \"model\" needs a 'schema' object" if kind == "model" else "a \"text\" has no 'schema'"
            raise GenerateError(message, str(path), f"{where}/schema")
        out[str(tool)] = InferredOutput(kind, samples, schema)
    return out


def _checked_tools(entry: Any, path: Path, pointer: str) -> Sequence[Mapping[str, Any]]:
    tools = entry.get("tools") if isinstance(entry, Mapping) else None
    if not isinstance(tools, list) or not all(isinstance(t, Mapping) for t in tools):
        raise GenerateError("'tools' must be an array of objects", str(path), f"{pointer}/tools")
    hashes = entry.get("hashes")
    if hashes is None:
        return tools  # format 1 kept no hashes
    if not isinstance(hashes, Mapping):
        raise GenerateError("'hashes' must be an object", str(path), f"{pointer}/hashes")
    for tool in tools:
        name = str(tool.get("name"))
        if hashes.get(name) != tool_hash(tool):
            # The hash is what run-time pinning trusts: a lock edited by hand must be regenerated.
            raise GenerateError(
                "hash does not match the tool; the lock was edited by hand, regenerate it with `toolgen generate`",
                str(path),
                f"{pointer}/hashes/{name}",
            )
    return tools


def drift_between(old: Lock, new: Lock) -> tuple[Change, ...]:
    """Every classified change from ``old`` to ``new``: the listings, and the inferred output types
    when both locks recorded them (format 3)."""
    changes = diff_listings(old.listings(), new.listings()) + dialect_changes(old, new) + surface_changes(old, new)
    if old.inferred is not None and new.inferred is not None:
        changes += inferred_changes(old.listings(), old.inferred, new.listings(), new.inferred)
    return changes


def surface_changes(old: Lock, new: Lock) -> tuple[Change, ...]:
    """What changed in each server's resources, templates and prompts (``codegen.drift.diff_surface``)."""
    out: tuple[Change, ...] = ()
    for name in sorted(set(old.servers) | set(new.servers)):
        out += diff_surface(name, old.surface.get(name, {}), new.surface.get(name, {}))
    return out


def dialect_changes(old: Lock, new: Lock) -> tuple[Change, ...]:
    """A server whose task dialect changed: each tool it lists in both locks gets one
    ``task-dialect-changed`` (the server decides per call whether a 2026 call becomes a task)."""
    out: list[Change] = []
    for name in sorted(set(old.servers) & set(new.servers)):
        a, b = old.tasks.get(name), new.tasks.get(name)
        if a == b:
            continue
        kept = sorted({str(t.get("name")) for t in old.servers[name]} & {str(t.get("name")) for t in new.servers[name]})
        message = f"the server's task dialect changed from {a or 'none'} to {b or 'none'}"
        severity = KINDS["task-dialect-changed"][0]
        out += [Change(name, tool, severity, "task-dialect-changed", "", a, b, message) for tool in kept]
    return tuple(out)


def lock_drift(path: Path, new_text: str, old: Lock | None = None) -> tuple[Change, ...]:
    """What a new lock text changes against the lock at ``path`` (or ``old``, that lock already
    read; nothing when there is none yet)."""
    if old is None and not path.is_file():
        return ()
    return drift_between(old or load_lock(path), parse_lock(new_text, path))


def relock_inferred(lock: Lock, built: Sequence[str], inferred: InferredBySource) -> str | None:
    """The lock's text with the inferred types of the ``built`` sources replaced by ``inferred``
    (an ``--offline`` build lists no server, so nothing else changes); None when its recorded
    inferred types stay the same, so the file need not be written."""
    locked = lock.listings()
    kept = {name: found for name, found in (lock.inferred or {}).items() if name not in built}
    merged = {**kept, **{name: found for name, found in inferred.items() if name in locked}}
    if lock.inferred is None and not merged:
        return None  # a format 1 or 2 lock and nothing to record: leave it as it is
    if lock.inferred is not None and _recorded(lock.inferred) == _recorded(merged):
        return None
    return render_lock(lock.servers, lock.skills, merged, lock.tasks, lock.surface)


def _recorded(inferred: InferredBySource) -> dict[str, Any]:
    return {source: {t: _inferred_entry(f) for t, f in found.items()} for source, found in inferred.items() if found}


def skills_drift(path: Path, skills: Sequence[Mapping[str, Any]]) -> tuple[Change, ...]:
    """What tool YAML changes against the skills recorded in the lock at ``path``: the offline
    counterpart of ``lock_drift`` (nothing when there is no lock, or it recorded no skills)."""
    if not path.is_file():
        return ()
    locked = load_lock(path).skills
    if locked is None:
        return ()
    return diff_listings({SKILLS_KEY: locked}, {SKILLS_KEY: skills})


@dataclass(frozen=True)
class LockChange:
    """What writing a lock does: each source locked with its tool count, and whether the file changes.
    What changed inside is the drift (``lock_drift``), reported next to it."""

    path: Path
    sources: Mapping[str, int]  # server name (and ``skills``) -> tools locked
    existed: bool
    changed: bool


def describe_lock(path: Path, new_text: str) -> LockChange:
    existed = path.is_file()
    changed = not existed or path.read_text(encoding="utf-8") != new_text
    counts = {name: len(tools) for name, tools in parse_lock(new_text, path).listings().items()}
    return LockChange(path, dict(sorted(counts.items())), existed, changed)
