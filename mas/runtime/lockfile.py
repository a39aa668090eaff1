"""The schema lock's format rules, shared by the code generator (which writes the lock) and the
runtime (which pins live tools against it). Format: ``docs/lock.md``.

One rule, one place: the per-tool content hash is defined here only; ``codegen.snapshot`` writes
it and ``mas.runtime.pinning`` compares with it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

__all__ = [
    "LOCK_VERSION",
    "READABLE_VERSIONS",
    "VERSION_KEY",
    "canonical_tool",
    "first_difference",
    "lock_version_problem",
    "tool_hash",
]

#: The version this toolgen writes. 1 had no per-tool hashes (they are computed when read); 1 and 2
#: recorded no inferred output types (codegen compares none with them). Both are still read.
LOCK_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
VERSION_KEY = "toolgen_snapshot"


def canonical_tool(value: Any, key: str = "") -> Any:
    """A tool object without the order that carries no meaning: ``required`` lists are sorted
    (object keys are sorted when dumped)."""
    if isinstance(value, Mapping):
        return {str(k): canonical_tool(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        items = [canonical_tool(v) for v in value]
        return sorted(items) if key == "required" and all(isinstance(v, str) for v in items) else items
    return value


def tool_hash(tool: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of the tool's canonical, compact JSON (UTF-8, keys sorted)."""
    text = json.dumps(canonical_tool(tool), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def lock_version_problem(data: Any) -> str | None:
    """None when ``data`` is a lock this toolgen reads; else one line saying why not."""
    if not isinstance(data, Mapping) or VERSION_KEY not in data:
        return f"not a toolgen lock (no {VERSION_KEY!r} version)"
    version = data[VERSION_KEY]
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        readable = ", ".join(map(str, READABLE_VERSIONS))
        return f"unknown lock format version {version!r} (this toolgen reads {readable}); upgrade toolgen"
    return None


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def first_difference(old: Any, new: Any, pointer: str = "") -> str | None:
    """The JSON pointer of the first place (keys in sorted order) where ``old`` and ``new`` differ."""
    old, new = canonical_tool(old), canonical_tool(new)
    return _first(old, new, pointer)


def _first(old: Any, new: Any, pointer: str) -> str | None:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in sorted(set(old) | set(new)):
            if key not in old or key not in new:
                return f"{pointer}/{_escape(key)}"
            found = _first(old[key], new[key], f"{pointer}/{_escape(key)}")
            if found is not None:
                return found
        return None
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for index, (a, b) in enumerate(zip(old, new, strict=True)):
            found = _first(a, b, f"{pointer}/{index}")
            if found is not None:
                return found
        return None
    return None if old == new and type(old) is type(new) else pointer
