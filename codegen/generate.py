"""The pipeline: parse sources -> build the intermediate form -> render -> write (or check)."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from codegen import __version__
from codegen.cache import Cache
from codegen.drift import Change as DriftChange
from codegen.errors import GenerateError
from codegen.model import SourceTools
from codegen.settings import Settings
from codegen.snapshot import canonical_json, load_snapshot, lock_drift, render_snapshot
from codegen.sources import parse_infra, parse_mcp_json, parse_yaml_tools, read_live, read_snapshot_sources
from codegen.write import GENERATED_MARKER, Change, diff_changes, plan_changes, write_file_atomic, write_package
from mas.runtime.lockfile import canonical_tool

__all__ = ["Outcome", "collect_sources", "header_for", "render_files", "run", "shown"]


@dataclass(frozen=True)
class Outcome:
    changes: tuple[Change, ...]
    snapshot_changed: bool
    #: What the live listings change against the lock on disk, classified (empty when offline).
    drift: tuple[DriftChange, ...] = ()

    @property
    def stale(self) -> bool:
        return bool(self.changes) or self.snapshot_changed


def collect_sources(settings: Settings) -> tuple[list[SourceTools], str | None]:
    """Every source, and the new snapshot text when servers were listed live."""
    sources: list[SourceTools] = []
    if settings.tools:
        sources.append(parse_yaml_tools(settings.tools))
    sources += [parse_mcp_json(p) for p in settings.mcp_json]
    snapshot_text = None
    if settings.infra:
        configs = parse_infra(settings.infra)
        if settings.offline:
            live = read_snapshot_sources(configs, load_snapshot(settings.snapshot))
        else:
            live = read_live(configs)
            skills = sources[0].tools if settings.tools else None
            snapshot_text = render_snapshot({s.name: s.tools for s in live}, skills)
        sources += live
    if not sources:
        raise GenerateError("nothing to generate: give --tools, --infra or --mcp-json, or set them in [tool.toolgen]")
    names = [s.name for s in sources]
    for name in names:
        if names.count(name) > 1:
            raise GenerateError(f"two sources are named {name!r}; rename a file or a server")
    return sources, snapshot_text


def header_for(sources: Sequence[SourceTools], package: str) -> str:
    """File header: generator version and a hash of the inputs (never a path, never a time)."""
    described = [
        {
            "name": s.name,
            "kind": s.kind,
            "prefix": s.wire_prefix,
            "tools": sorted((canonical_tool(t) for t in s.tools), key=lambda t: str(t.get("name"))),
        }
        for s in sources
    ]
    payload = canonical_json({"package": package, "sources": sorted(described, key=lambda s: str(s["name"]))})
    digest = hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]
    return (
        f"# {GENERATED_MARKER} {__version__} from inputs sha256:{digest}. Do not edit.\n"
        "# Regenerate with `toolgen generate` (or `python -m codegen generate`)."
    )


def shown(path: Path) -> str:
    """Paths relative to the working folder in messages: no machine paths in logs."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def render_files(sources: Sequence[SourceTools], package: str, cache: Cache) -> dict[str, str]:
    """The package's files: from the cache when these exact inputs were rendered before by this
    exact generator, else built and rendered (reusing cached model modules) and then stored."""
    key = cache.files_key(sources, package)
    files = cache.get_files(key)
    if files is None:
        # Imported here: a cached run never loads datamodel-code-generator, black or Jinja2.
        from codegen.build import build_package
        from codegen.render import render_package

        pkg = build_package(sources, package=package, header=header_for(sources, package), cache=cache)
        files = render_package(pkg)
        cache.put_files(key, files)
    return files


def run(settings: Settings, out: TextIO = sys.stdout) -> Outcome:
    """Generate, or with ``settings.check`` only compare. Raises GenerateError on bad input, before
    anything is written."""
    sources, snapshot_text = collect_sources(settings)
    files = render_files(sources, settings.package, Cache(settings.cache))
    snapshot_changed = snapshot_text is not None and (
        not settings.snapshot.is_file() or settings.snapshot.read_text(encoding="utf-8") != snapshot_text
    )
    drift = lock_drift(settings.snapshot, snapshot_text) if snapshot_changed and snapshot_text else ()
    if settings.check:
        changes = plan_changes(settings.target, files)
        if settings.diff:
            out.write(diff_changes(settings.target, files, changes))
        return Outcome(tuple(changes), snapshot_changed, drift)
    changes = write_package(settings.target, files)
    if snapshot_text is not None:
        write_file_atomic(settings.snapshot, snapshot_text)
    return Outcome(tuple(changes), snapshot_changed, drift)
