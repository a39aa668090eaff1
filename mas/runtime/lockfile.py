"""The schema lock's format rules, shared by the code generator (which writes the lock) and the
runtime (which pins live tools against it). Format: ``docs/lock.md``.

One rule, one place: the per-tool content hash is defined here only; ``codegen.lock`` writes
it and ``mas.runtime.pinning`` compares with it.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from mas.runtime.contracts._rules import json_equal, pointer_token, pointer_tokens

__all__ = [
    "LOCK_VERSION",
    "READABLE_VERSIONS",
    "VERSION_KEY",
    "SCHEMA_LISTS",
    "SCHEMA_MAPS",
    "SCHEMA_VALUES",
    "SET_KEYWORDS",
    "TASK_DIALECTS",
    "canonical_json",
    "canonical_schema",
    "canonical_tool",
    "first_difference",
    "keep_locked",
    "lock_version_problem",
    "tool_hash",
]

#: The task dialects a server may advertise, by the protocol revision that defines them
#: (docs/tasks.md); the lock records a server's under ``task_dialect``.
TASK_DIALECTS: tuple[str, ...] = ("2025-11-25", "2026-07-28")

#: The version this toolgen writes. 1 had no per-tool hashes (they are computed when read); 1 and 2
#: recorded no inferred output types (codegen compares none with them). Both are still read.
LOCK_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
#: The key of the format version. It keeps the lock's older name, "snapshot": every lock file
#: already committed carries it, and a new key would make them unreadable (or two keys to read).
VERSION_KEY = "toolgen_snapshot"


#: Where JSON Schema keeps subschemas: in a map of them, as the value, or in a list of them. Only
#: there is a value a schema; everything else (``default``, ``examples``, ``const``, ``enum``,
#: ``_meta``, annotations, ``x-*``) is data, kept exactly as sent. The generator walks schemas by
#: the same tables (``codegen/schemas.py``).
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
SCHEMA_VALUES = (
    "items", "additionalProperties", "additionalItems", "not", "if", "then", "else", "contains", "propertyNames",
    "unevaluatedItems", "unevaluatedProperties", "contentSchema",
)  # fmt: skip
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
#: The schema keywords whose value is a set by JSON Schema's meaning: the names ``required`` lists,
#: and those each ``dependentRequired`` entry lists. Their order means nothing, so it is sorted.
#: ``enum`` and ``type`` arrays are sets too, but their order is the order of the generated
#: ``Literal[...]`` and union, so it is kept: a reordering changes the code, and shows.
SET_KEYWORDS = ("required",)


def canonical_schema(schema: Any) -> Any:
    """``schema`` in its canonical form: set-valued keywords sorted wherever a schema is, nothing
    else touched (a value inside ``default``, ``examples``, ``const`` or ``_meta`` keeps its order,
    even under a key named ``required``). Keys are sorted when dumped."""
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for raw_key, value in schema.items():
        key = str(raw_key)
        if key in SCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {str(k): canonical_schema(v) for k, v in value.items()}
        elif key in SCHEMA_LISTS and isinstance(value, list):
            out[key] = [canonical_schema(v) for v in value]
        elif key in SCHEMA_VALUES:
            out[key] = [canonical_schema(v) for v in value] if isinstance(value, list) else canonical_schema(value)
        elif key in SET_KEYWORDS and _names(value):
            out[key] = sorted(value)
        elif key == "dependentRequired" and isinstance(value, Mapping):
            out[key] = {str(k): sorted(v) if _names(v) else v for k, v in value.items()}
        else:
            out[key] = value
    return out


def _names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


#: The keys of an MCP tool object that hold schemas; the rest of a tool is data.
TOOL_SCHEMAS = ("inputSchema", "outputSchema", "parameters", "output_schema")


def canonical_tool(tool: Any) -> Any:
    """A tool object in its canonical form, by JSON Schema's meaning: its ``inputSchema`` and
    ``outputSchema`` through :func:`canonical_schema`, everything else as sent. The one form the
    lock stores, the pin hash is taken of, and drift compares (``toolgen diff``, live ``--check``)."""
    if not isinstance(tool, Mapping):
        return tool
    return {str(k): canonical_schema(v) if k in TOOL_SCHEMAS else v for k, v in tool.items()}


def _parent(node: Any, tokens: list[str]) -> Any:
    for token in tokens:
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def keep_locked(live: Mapping[str, Any], locked: Mapping[str, Any] | None, pointers: Iterable[str]) -> Any:
    """``live`` with the value at each JSON pointer (into the tool object: ``/inputSchema/...``)
    as the lock has it: the lock's value where the lock has one, nothing where it has none. An infra
    entry's ``drift_ignore`` names such known-noisy spots (a default a server rebuilds in random order
    at every start), so drift, live ``--check`` and pinning see no change there. Without a locked
    tool (not locked yet) ``live`` is kept as it is. A copy; ``live`` is not changed."""
    if locked is None:
        return live
    out = copy.deepcopy(dict(live))
    for pointer in pointers:
        tokens = pointer_tokens(pointer)
        if not tokens:
            continue
        parent, key = _parent(out, tokens[:-1]), tokens[-1]
        old_parent = _parent(locked, tokens[:-1])
        has_old = isinstance(old_parent, Mapping) and key in old_parent
        if isinstance(parent, dict):
            if has_old:
                parent[key] = copy.deepcopy(old_parent[key])
            else:
                parent.pop(key, None)
    return out


def canonical_json(value: Any, *, default: Any = None, allow_nan: bool = True) -> str:
    """``value`` as canonical JSON: compact, keys sorted, UTF-8 text as itself (not ``\\u`` escapes).
    The one spelling every hash and identity of JSON data is taken of (the lock's per-tool hash, the
    cache's keys, a sample's identity); ``default`` and ``allow_nan`` as for ``json.dumps``."""
    return json.dumps(
        value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=default, allow_nan=allow_nan
    )


def tool_hash(tool: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of the tool's canonical, compact JSON (UTF-8, keys sorted)."""
    return "sha256:" + hashlib.sha256(canonical_json(canonical_tool(tool)).encode("utf-8")).hexdigest()


def lock_version_problem(data: Any) -> str | None:
    """None when ``data`` is a lock this toolgen reads; else one line saying why not."""
    if not isinstance(data, Mapping) or VERSION_KEY not in data:
        return f"not a toolgen lock (no {VERSION_KEY!r} version)"
    version = data[VERSION_KEY]
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        readable = ", ".join(map(str, READABLE_VERSIONS))
        return f"unknown lock format version {version!r} (this toolgen reads {readable}); upgrade toolgen"
    return None


def first_difference(old: Any, new: Any, pointer: str = "") -> str | None:
    """The JSON pointer of the first place (keys in sorted order) where ``old`` and ``new`` differ."""
    old, new = canonical_tool(old), canonical_tool(new)
    return _first(old, new, pointer)


def _first(old: Any, new: Any, pointer: str) -> str | None:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in sorted(set(old) | set(new)):
            if key not in old or key not in new:
                return f"{pointer}/{pointer_token(key)}"
            found = _first(old[key], new[key], f"{pointer}/{pointer_token(key)}")
            if found is not None:
                return found
        return None
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for index, (a, b) in enumerate(zip(old, new, strict=True)):
            found = _first(a, b, f"{pointer}/{index}")
            if found is not None:
                return found
        return None
    return None if json_equal(old, new) else pointer
