"""The generated package's version and changelog: recorded in the lock, moved by drift.

Each ``generate`` whose new lock differs from the one on disk in what it classifies (the drift of
``codegen.drift``) bumps the version by the most severe class among the changes: breaking ->
major, review -> minor, compatible -> patch ("the largest bump wins"); no change keeps it. With
``keep_zero_major`` a 0.x version stays 0.x (breaking -> minor, the rest -> patch). The record is
the lock's ``package`` entry (``docs/lock.md``); the package gets it as ``_version.py``
(``__version__``) and ``CHANGELOG.md``. Same inputs and lock, same version, same bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from codegen.drift import SEVERITIES, Change, Severity
from codegen.errors import GenerateError, one_line

__all__ = [
    "DEFAULT_START",
    "PACKAGE_KEY",
    "KeptTool",
    "PackageRecord",
    "Release",
    "bump",
    "changelog",
    "next_record",
    "parse_version",
    "record_from_data",
    "record_json",
    "version_module",
    "with_record",
]

#: The lock's top-level key of the package's record.
PACKAGE_KEY = "package"
#: The version of a package whose lock records none yet (``[tool.toolgen] start_version``).
DEFAULT_START = "0.1.0"
_VERSION = re.compile(r"(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})")
Bump = Literal["major", "minor", "patch"]
_BUMP_BY_SEVERITY: dict[Severity, Bump] = {"breaking": "major", "review": "minor", "compatible": "patch"}
_CHANGE_KEYS = ("source", "tool", "severity", "kind", "message")


def parse_version(text: Any) -> tuple[int, int, int] | None:
    """``"1.2.3"`` -> ``(1, 2, 3)``; anything else (a pre-release, ``v1.2``, a number) -> None."""
    if not isinstance(text, str) or (found := _VERSION.fullmatch(text)) is None:
        return None
    major, minor, patch = (int(g) for g in found.groups())
    return major, minor, patch


def bump(version: str, severities: Sequence[Severity], *, keep_zero_major: bool = False) -> str:
    """The version after changes of these classes: the largest bump wins; none keeps it."""
    parsed = parse_version(version)
    if parsed is None:
        raise ValueError(f"not a version: {version!r}")
    if not severities:
        return version
    major, minor, patch = parsed
    worst = min(severities, key=SEVERITIES.index)
    step = _BUMP_BY_SEVERITY[worst]
    if keep_zero_major and major == 0:
        step = "minor" if step == "major" else "patch"
    if step == "major":
        return f"{major + 1}.0.0"
    if step == "minor":
        return f"{major}.{minor + 1}.0"
    return f"{major}.{minor}.{patch + 1}"


@dataclass(frozen=True)
class Release:
    """One version: the changes that made it (none for the first), each a dict of ``_CHANGE_KEYS``."""

    version: str
    changes: tuple[Mapping[str, str], ...] = ()


@dataclass(frozen=True)
class KeptTool:
    """A tool the server removed, kept in the package as a deprecated method that raises
    ``ToolNotFoundError`` (``[tool.toolgen] keep_removed_tools``): the version that removed it
    and the tool as last listed."""

    removed_in: str
    tool: Mapping[str, Any]


@dataclass(frozen=True)
class PackageRecord:
    """The lock's ``package`` entry: the current version and every release, newest first, and
    the removed tools kept for a while (source -> wire name -> ``KeptTool``)."""

    version: str
    history: tuple[Release, ...]
    kept: Mapping[str, Mapping[str, KeptTool]] = field(default_factory=dict)

    def to_data(self) -> dict[str, Any]:
        releases = [{"changes": [dict(c) for c in r.changes], "version": r.version} for r in self.history]
        data: dict[str, Any] = {"history": releases, "version": self.version}
        if self.kept:  # a record without kept tools stays as it was
            data["kept"] = {
                source: {name: {"removed_in": k.removed_in, "tool": dict(k.tool)} for name, k in tools.items()}
                for source, tools in self.kept.items()
            }
        return data

    def removal(self, source: str, tool: str) -> str:
        """What a kept tool's method says: which version removed it."""
        return (
            f"tool {tool!r} was removed by its server in version {self.kept[source][tool].removed_in} of this package"
        )


def _change_entry(change: Change) -> dict[str, str]:
    return {key: str(getattr(change, key)) for key in _CHANGE_KEYS}


def _ordered(changes: Sequence[Change]) -> list[Change]:
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    return sorted(changes, key=lambda c: (rank[c.severity], c.source, c.tool, c.pointer, c.kind, c.message))


def next_record(
    previous: PackageRecord | None,
    drift: Sequence[Change],
    *,
    start: str = DEFAULT_START,
    keep_zero_major: bool = False,
    keep_removed: int = 0,
    old_listings: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
) -> PackageRecord:
    """The record after a generate whose lock changed by ``drift`` (against the lock on disk):
    unchanged when nothing is classified, else one release more, bumped by the worst class.

    With ``keep_removed`` N > 0, a tool the drift removes is kept (as ``old_listings`` had it) for
    the release that removed it and the N - 1 after it; a tool listed again is no longer kept."""
    if previous is None:
        previous = PackageRecord(start, (Release(start),))
    if not drift:
        return previous if keep_removed or not previous.kept else replace(previous, kept={})
    version = bump(previous.version, [c.severity for c in drift], keep_zero_major=keep_zero_major)
    release = Release(version, tuple(_change_entry(c) for c in _ordered(drift)))
    history = (release, *previous.history)
    kept = {source: dict(tools) for source, tools in previous.kept.items()} if keep_removed else {}
    for change in drift:
        if change.kind == "tool-added":
            kept.get(change.source, {}).pop(change.tool, None)
        elif change.kind == "tool-removed" and keep_removed:
            found = [t for t in (old_listings or {}).get(change.source, ()) if t.get("name") == change.tool]
            if found:
                kept.setdefault(change.source, {})[change.tool] = KeptTool(version, found[0])
    position = {r.version: i for i, r in enumerate(history)}
    kept = {
        source: {name: k for name, k in tools.items() if position.get(k.removed_in, keep_removed) < keep_removed}
        for source, tools in kept.items()
    }
    return PackageRecord(version, history, {source: tools for source, tools in kept.items() if tools})


def _bad(path: Path, pointer: str, message: str) -> GenerateError:
    return GenerateError(message, str(path), pointer)


def _version_at(value: Any, path: Path, pointer: str) -> str:
    if parse_version(value) is None:
        shown = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
        raise _bad(path, pointer, f"{one_line(shown)[:60]} is not a version (MAJOR.MINOR.PATCH, such as 1.4.0)")
    return str(value)


def record_from_data(data: Any, path: Path) -> PackageRecord | None:
    """The ``package`` entry of a parsed lock (None when it has none); bad input names its pointer."""
    if not isinstance(data, Mapping) or PACKAGE_KEY not in data:
        return None
    entry = data[PACKAGE_KEY]
    where = f"/{PACKAGE_KEY}"
    if not isinstance(entry, Mapping):
        raise _bad(path, where, "'package' must be an object")
    version = _version_at(entry.get("version"), path, f"{where}/version")
    history = entry.get("history", [])
    if not isinstance(history, list):
        raise _bad(path, f"{where}/history", "'history' must be an array")
    releases: list[Release] = []
    for i, item in enumerate(history):
        at = f"{where}/history/{i}"
        if not isinstance(item, Mapping):
            raise _bad(path, at, "a release must be an object")
        changes = item.get("changes", [])
        ok = isinstance(changes, list) and all(
            isinstance(c, Mapping) and all(isinstance(c.get(k), str) for k in _CHANGE_KEYS) for c in changes
        )
        if not ok:
            raise _bad(path, f"{at}/changes", f"'changes' must be an array of objects with {', '.join(_CHANGE_KEYS)}")
        kept = tuple({k: str(c[k]) for k in _CHANGE_KEYS} for c in changes)
        releases.append(Release(_version_at(item.get("version"), path, f"{at}/version"), kept))
    return PackageRecord(version, tuple(releases), _kept_from(entry.get("kept"), path, f"{where}/kept"))


def _kept_from(value: Any, path: Path, where: str) -> dict[str, dict[str, KeptTool]]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(v, Mapping) for v in value.values()):
        raise _bad(path, where, "'kept' must be an object of objects (source -> tool -> entry)")
    out: dict[str, dict[str, KeptTool]] = {}
    for source, tools in value.items():
        for name, entry in tools.items():
            at = f"{where}/{source}/{name}"
            tool = entry.get("tool") if isinstance(entry, Mapping) else None
            if not isinstance(tool, Mapping) or tool.get("name") != name:
                raise _bad(path, f"{at}/tool", "must be the tool object as it was last listed, of the same name")
            removed_in = _version_at(entry.get("removed_in"), path, f"{at}/removed_in")
            out.setdefault(str(source), {})[str(name)] = KeptTool(removed_in, tool)
    return out


def record_json(record: PackageRecord) -> str:
    """The entry as the lock holds it: canonical, indented one level under the lock's object."""
    text = json.dumps(record.to_data(), indent=2, sort_keys=True, ensure_ascii=False)
    return text.replace("\n", "\n  ")


def with_record(lock_text: str, record: PackageRecord) -> str:
    """A lock text (canonical, without a ``package`` entry) with ``record`` in it. ``package``
    sorts before every other top-level key, so it is spliced in first instead of encoding the
    whole lock again (megabytes at 1,000 tools)."""
    assert lock_text.startswith("{\n") and f'"{PACKAGE_KEY}"' not in lock_text.split("\n", 2)[1]
    return '{\n  "' + PACKAGE_KEY + '": ' + record_json(record) + ",\n" + lock_text[2:]


# --- what the package gets ----------------------------------------------------------------------
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")


def md_text(text: str) -> str:
    """Server text shown in Markdown as text: one line, every character that could mark up escaped."""
    return _MD_SPECIAL.sub(r"\\\1", one_line(text))


def _where(source: str) -> str:
    from codegen.model import YAML_SOURCE_NAME

    return "YAML skills" if source == YAML_SOURCE_NAME else f"server {md_text(source)}"


def changelog(record: PackageRecord | None, package: str, *, start: str = DEFAULT_START) -> str:
    """``CHANGELOG.md``: one section per version, newest first, each change with its class and tool."""
    history = record.history if record is not None else (Release(start),)
    lines = [
        f"# Changelog of {package}",
        "",
        "Written by toolgen from the drift between the lock and each regeneration (breaking -> major,",
        "review -> minor, compatible -> patch; the largest bump wins). Do not edit.",
    ]
    for release in history:
        lines += ["", f"## {release.version}", ""]
        if not release.changes:
            lines.append("First version.")
            continue
        counts = ", ".join(f"{sum(c['severity'] == s for c in release.changes)} {s}" for s in SEVERITIES)
        lines += [f"{len(release.changes)} change(s): {counts}.", ""]
        for c in release.changes:
            lines.append(
                f"- **{c['severity']}** {_where(c['source'])}, tool {md_text(c['tool'])}: "
                f"{md_text(c['message'])} ({md_text(c['kind'])})"
            )
    return "\n".join(lines) + "\n"


def version_module(header: str, version: str) -> str:
    """``_version.py``: the one place the package's version is written."""
    doc = "The package's version, recorded in the lock and moved by drift (toolgen's docs/drift.md)."
    return f'{header}\n"""{doc}"""\n\n__version__ = "{version}"\n'
