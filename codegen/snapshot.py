"""The schema lock: every live listing used in a build, as canonical JSON.

Canonical means: keys sorted, tools sorted by name, two-space indent, a final newline, no
timestamps and nothing but what ``tools/list`` returned (never a URL, header or env value).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codegen.errors import GenerateError

__all__ = ["SNAPSHOT_VERSION", "Snapshot", "canonical_json", "load_snapshot", "render_snapshot"]

SNAPSHOT_VERSION = 1


@dataclass(frozen=True)
class Snapshot:
    path: Path
    servers: Mapping[str, Sequence[Mapping[str, Any]]]


def canonical_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render_snapshot(servers: Mapping[str, Sequence[Mapping[str, Any]]]) -> str:
    return canonical_json(
        {
            "toolgen_snapshot": SNAPSHOT_VERSION,
            "servers": {
                name: {"tools": sorted(tools, key=lambda t: str(t.get("name")))} for name, tools in servers.items()
            },
        }
    )


def load_snapshot(path: Path) -> Snapshot:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise GenerateError("no snapshot file; run once without --offline to create it", str(path)) from exc
    except json.JSONDecodeError as exc:
        raise GenerateError(f"not JSON: {exc.msg}", f"{path}:{exc.lineno}") from exc
    except RecursionError as exc:
        raise GenerateError("JSON nested too deeply", str(path)) from exc
    if not isinstance(data, Mapping) or data.get("toolgen_snapshot") != SNAPSHOT_VERSION:
        raise GenerateError(f"not a toolgen snapshot (version {SNAPSHOT_VERSION})", str(path), "/toolgen_snapshot")
    servers = data.get("servers")
    if not isinstance(servers, Mapping):
        raise GenerateError("'servers' must be an object", str(path), "/servers")
    out: dict[str, Sequence[Mapping[str, Any]]] = {}
    for name, entry in servers.items():
        tools = entry.get("tools") if isinstance(entry, Mapping) else None
        if not isinstance(tools, list):
            raise GenerateError("'tools' must be an array", str(path), f"/servers/{name}/tools")
        out[str(name)] = tools
    return Snapshot(path, out)
