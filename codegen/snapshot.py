"""The schema lock: every live listing used in a build, as canonical JSON. Format: ``docs/lock.md``.

Canonical means: keys sorted, tools sorted by name, two-space indent, a final newline, no
timestamps and nothing but what ``tools/list`` returned (never a URL, header or env value), plus a
format version and a content hash per tool (the hash rule lives in ``mas.runtime.lockfile``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codegen.drift import Change, diff_listings
from codegen.errors import GenerateError
from mas.runtime.lockfile import LOCK_VERSION, VERSION_KEY, lock_version_problem, tool_hash

__all__ = [
    "SNAPSHOT_VERSION",
    "LockChange",
    "Snapshot",
    "canonical_json",
    "describe_lock",
    "is_lock",
    "load_snapshot",
    "lock_drift",
    "parse_snapshot",
    "render_snapshot",
    "skills_drift",
    "snapshot_from_data",
]

SNAPSHOT_VERSION = LOCK_VERSION
#: The key under which the lock keeps the YAML tools (``--tools``) of the build, when there were any.
SKILLS_KEY = "skills"


@dataclass(frozen=True)
class Snapshot:
    path: Path
    servers: Mapping[str, Sequence[Mapping[str, Any]]]
    #: The YAML tools the lock was written with (MCP-shaped); None when the build had none.
    skills: Sequence[Mapping[str, Any]] | None = field(default=None)

    def listings(self) -> dict[str, Sequence[Mapping[str, Any]]]:
        """Every listing by source name, skills under ``skills`` (a name no server may take)."""
        out = dict(self.servers)
        if self.skills is not None:
            out[SKILLS_KEY] = self.skills
        return out


def canonical_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _entry(tools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    ordered = sorted(tools, key=lambda t: str(t.get("name")))
    return {"tools": ordered, "hashes": {str(t.get("name")): tool_hash(t) for t in ordered}}


def render_snapshot(
    servers: Mapping[str, Sequence[Mapping[str, Any]]], skills: Sequence[Mapping[str, Any]] | None = None
) -> str:
    data: dict[str, Any] = {
        VERSION_KEY: SNAPSHOT_VERSION,
        "servers": {name: _entry(tools) for name, tools in servers.items()},
    }
    if skills:
        data[SKILLS_KEY] = _entry(skills)
    return canonical_json(data)


def load_snapshot(path: Path) -> Snapshot:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise GenerateError(
            "no lock file yet; run `toolgen generate` once without --offline, with the servers reachable, to create it",
            str(path),
        ) from exc
    except OSError as exc:
        raise GenerateError(f"cannot read: {exc.strerror}", str(path)) from exc
    return parse_snapshot(text, path)


def is_lock(data: Any) -> bool:
    """Whether parsed JSON claims to be a lock (it may still be of a version we cannot read)."""
    return isinstance(data, Mapping) and VERSION_KEY in data


def parse_snapshot(text: str, path: Path) -> Snapshot:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GenerateError(f"not JSON: {exc.msg}", f"{path}:{exc.lineno}") from exc
    except RecursionError as exc:
        raise GenerateError("JSON nested too deeply", str(path)) from exc
    return snapshot_from_data(data, path)


def snapshot_from_data(data: Any, path: Path) -> Snapshot:
    problem = lock_version_problem(data)
    if problem is not None:
        raise GenerateError(problem, str(path), f"/{VERSION_KEY}")
    servers = data.get("servers")
    if not isinstance(servers, Mapping):
        raise GenerateError("'servers' must be an object", str(path), "/servers")
    out: dict[str, Sequence[Mapping[str, Any]]] = {}
    for name, entry in servers.items():
        out[str(name)] = _checked_tools(entry, path, f"/servers/{name}")
    skills = _checked_tools(data[SKILLS_KEY], path, f"/{SKILLS_KEY}") if SKILLS_KEY in data else None
    return Snapshot(path, out, skills)


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


def lock_drift(path: Path, new_text: str) -> tuple[Change, ...]:
    """What a new lock text changes against the lock at ``path`` (nothing when there is none yet)."""
    if not path.is_file():
        return ()
    old = load_snapshot(path)
    return diff_listings(old.listings(), parse_snapshot(new_text, path).listings())


def skills_drift(path: Path, skills: Sequence[Mapping[str, Any]]) -> tuple[Change, ...]:
    """What tool YAML changes against the skills recorded in the lock at ``path``: the offline
    counterpart of ``lock_drift`` (nothing when there is no lock, or it recorded no skills)."""
    if not path.is_file():
        return ()
    locked = load_snapshot(path).skills
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
    counts = {name: len(tools) for name, tools in parse_snapshot(new_text, path).listings().items()}
    return LockChange(path, dict(sorted(counts.items())), existed, changed)
