"""What may go on the wire as JSON: one check, run before anything is sent.

The MCP SDK serialises requests with pydantic, which writes a float NaN or infinity as ``null``
without a word (pydantic's ``ser_json_inf_nan='null'``), so a call would run with an argument
the caller never gave. JSON has no such numbers; such a value is refused before sending.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from mas.runtime.contracts._rules import pointer_token

__all__ = ["non_json_number"]


def non_json_number(value: Any) -> str | None:
    """``"<JSON pointer>: <what>"`` for the first NaN or infinity in ``value``, else None.

    A loop with a visited set, not a recursion: arguments nested deeply, or holding themselves,
    are walked once and never raise here (the SDK reports what else it cannot serialise)."""
    stack: list[tuple[Any, str]] = [(value, "")]
    seen: set[int] = set()
    while stack:
        item, pointer = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return f"{pointer or '/'}: {item!r} is not a JSON number (NaN and infinity cannot be sent)"
            continue
        if isinstance(item, Mapping | list | tuple):
            if id(item) in seen:
                continue
            seen.add(id(item))
            pairs = item.items() if isinstance(item, Mapping) else enumerate(item)
            # Reversed onto the stack, so the first offending value in document order is named.
            stack.extend((child, f"{pointer}/{pointer_token(key)}") for key, child in reversed(list(pairs)))
    return None
