"""What may go on the wire as JSON: one check, run before anything is sent.

The MCP SDK serialises requests with pydantic, which writes a float NaN or infinity as ``null``
without a word (pydantic's ``ser_json_inf_nan='null'``), so a call would run with an argument
the caller never gave. JSON has no such numbers; such a value is refused before sending.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from mas.runtime.contracts._rules import pointer

__all__ = ["non_json_number"]


def non_json_number(value: Any) -> str | None:
    """``"<JSON pointer>: <what>"`` for the first NaN or infinity in ``value``, else None.

    A loop with a visited set, not a recursion: arguments nested deeply, or holding themselves,
    are walked once and never raise here (the SDK reports what else it cannot serialise). It runs
    before every call, so the common leaves are passed over first and a value's path is kept as
    links (parent path, key), spelled as a pointer only for the value it reports."""
    if value is None:  # meta and input_responses, mostly
        return None
    stack: list[tuple[Any, Any]] = [(value, None)]
    seen: set[int] = set()
    while stack:
        item, path = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return f"{_spelled(path) or '/'}: {item!r} is not a JSON number (NaN and infinity cannot be sent)"
            continue
        if item is None or isinstance(item, str | int):
            continue
        if isinstance(item, dict | Mapping):  # dict first: a plain check, before the ABC's slower one
            pairs: Any = item.items()
        elif isinstance(item, list | tuple):
            pairs = enumerate(item)
        else:
            continue
        if id(item) in seen:
            continue
        seen.add(id(item))
        # Reversed onto the stack, so the first offending value in document order is named.
        stack.extend((child, (path, key)) for key, child in reversed(list(pairs)))
    return None


def _spelled(path: Any) -> str:
    """The JSON pointer of a linked path ``(parent path, key)``; None is the whole value."""
    keys: list[object] = []
    while path is not None:
        path, key = path
        keys.append(key)
    return pointer(reversed(keys))
