"""What a tool listing must get right, checked the same way by ``toolgen generate`` and by
``python -m mas.runtime list`` (one rule, one place).

A tool is an MCP tool object (``name``, ``inputSchema``, ``outputSchema``...) or a ToolContract
``list_tools()`` entry (``parameters``, ``output_schema``...). Schema *content* is not checked
here: what cannot be typed degrades in the generator; only the shape that makes a tool callable.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = ["tool_problems"]


def tool_problems(tools: Sequence[Any]) -> Iterator[tuple[str, str]]:
    """``(json pointer, message)`` for every problem, in listing order."""
    seen: dict[str, int] = {}
    for i, tool in enumerate(tools):
        at = f"/tools/{i}"
        if not isinstance(tool, Mapping):
            yield at, "a tool must be an object"
            continue
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            yield f"{at}/name", "tool name must be a non-empty string"
        elif name in seen:
            yield f"{at}/name", f"duplicate tool name {name!r} (also /tools/{seen[name]})"
        else:
            seen[name] = i
        key = "inputSchema" if "inputSchema" in tool or "parameters" not in tool else "parameters"
        schema = tool.get(key)
        if not isinstance(schema, Mapping):
            yield f"{at}/{key}", f"{key} must be an object"
            continue
        if schema.get("type", "object") != "object":
            yield f"{at}/{key}/type", f"{key} type must be 'object'"
        if not isinstance(schema.get("properties", {}), Mapping):
            yield f"{at}/{key}/properties", "properties must be an object"
        required = schema.get("required", [])
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            yield f"{at}/{key}/required", "required must be a list of strings"
        for field in ("title", "description"):
            if tool.get(field) is not None and not isinstance(tool[field], str):
                yield f"{at}/{field}", f"{field} must be a string"
        if tool.get("annotations") is not None and not isinstance(tool["annotations"], Mapping):
            yield f"{at}/annotations", "annotations must be an object"
