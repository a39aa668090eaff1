"""A deterministic tool catalog shaped like real servers' listings.

Half the tools are the shared ``tools/list`` captures under new names; the other half are
synthetic tools with the shapes those small captures lack and large servers have: objects in
arrays in ``$defs``, ``$ref`` chains, enums, nullable unions, and long descriptions. Nothing is
random: tool ``i`` is the same on every machine, so runs compare.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["CAPTURES", "catalog", "synthetic_tool"]

CAPTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "mcp-tools-list"

_WORDS = (
    "account project issue comment label milestone repository branch commit review "
    "deployment environment secret variable workflow artifact release asset package team"
).split()
_PARAGRAPH = (
    "Returns the matching records. Results are paginated: pass the cursor from the previous "
    "page to continue. Fields that the caller lacks permission to read are omitted rather than "
    "reported as errors, and archived records are excluded unless asked for. "
)


def _word(i: int) -> str:
    return _WORDS[i % len(_WORDS)]


def _record(i: int, depth: int) -> dict[str, Any]:
    """An object with scalars, an enum, a nullable field and (while depth lasts) an array of objects."""
    w = _word(i)
    props: dict[str, Any] = {
        "id": {"type": "string", "description": f"The {w}'s id."},
        "name": {"type": "string", "minLength": 1, "maxLength": 200},
        "state": {"type": "string", "enum": ["open", "closed", "archived"], "default": "open"},
        "count": {"type": "integer", "minimum": 0},
        "score": {"type": ["number", "null"]},
        "tags": {"type": "array", "items": {"type": "string"}},
    }
    if depth > 0:
        props["children"] = {"type": "array", "items": _record(i + 1, depth - 1)}
        props["owner"] = {"$ref": "#/$defs/Person"}
    return {"type": "object", "properties": props, "required": ["id", "name"]}


def synthetic_tool(i: int) -> dict[str, Any]:
    """A tool whose schemas nest three levels deep and share definitions through ``$defs``."""
    w = _word(i)
    person = {
        "type": "object",
        "properties": {
            "login": {"type": "string"},
            "email": {"type": ["string", "null"]},  # no "format": email: pydantic would need email-validator
            "roles": {"type": "array", "items": {"type": "string", "enum": ["admin", "member", "guest"]}},
        },
        "required": ["login"],
    }
    filters = {
        "type": "object",
        "properties": {
            "states": {"type": "array", "items": {"type": "string", "enum": ["open", "closed", "archived"]}},
            "created_after": {"type": "string", "format": "date-time"},
            "labels": {"type": "array", "items": {"$ref": "#/$defs/Label"}},
        },
    }
    label = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "color": {"type": "string", "pattern": "^[0-9a-f]{6}$"}},
        "required": ["name"],
    }
    input_schema = {
        "type": "object",
        "properties": {
            "owner": {"type": "string", "description": f"Owner of the {w}."},
            "query": {"type": "string", "description": _PARAGRAPH},
            "filters": {"$ref": "#/$defs/Filters"},
            "page_size": {"type": "integer", "minimum": 1, "maximum": 100, "default": 30},
            "cursor": {"type": ["string", "null"]},
            "include_archived": {"type": "boolean", "default": False},
            "sort": {"type": "string", "enum": ["created", "updated", "name"]},
        },
        "required": ["owner", "query"],
        "$defs": {"Filters": filters, "Label": label},
    }
    output_schema = {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": _record(i, 2)},
            "next_cursor": {"type": ["string", "null"]},
            "total": {"type": "integer"},
        },
        "required": ["items", "total"],
        "$defs": {"Person": person},
    }
    return {
        "name": f"list_{w}s_{i:04d}",
        "title": f"List {w}s",
        "description": f"List the {w}s visible to the caller.\n\n" + _PARAGRAPH * 6,
        "inputSchema": input_schema,
        "outputSchema": output_schema,
        "annotations": {"readOnlyHint": True, "openWorldHint": True},
    }


def catalog(n: int) -> list[dict[str, Any]]:
    """``n`` tools: even positions from the captures (renamed), odd positions synthetic."""
    base = [t for p in sorted(CAPTURES.glob("*.json")) for t in json.loads(p.read_text("utf-8"))["tools"]]
    out = []
    for i in range(n):
        if i % 2:
            out.append(synthetic_tool(i))
        else:
            tool = base[(i // 2) % len(base)]
            out.append({**tool, "name": f"{tool['name']}_{i:04d}"})
    return out
