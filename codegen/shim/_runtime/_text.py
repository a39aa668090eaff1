"""An envelope's content read as plain data: block types, joined text, JSON found in text.

Standard library only, so errors and decoding use it without building a content-block model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from .. import _rules

__all__ = ["KNOWN_BLOCK_TYPES", "as_list", "block_tag", "joined_text", "json_from_text", "json_or_none", "one_line"]

#: The content block types with a model of their own; any other type decodes as ``UnknownContent``.
KNOWN_BLOCK_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})


def as_list(value: object) -> list[object] | None:
    return cast("list[object]", value) if isinstance(value, list) else None


def block_tag(block: object) -> str:
    """A block's (dict or model) type when it is a known one, else ``"unknown"``."""
    kind = (
        cast("Mapping[str, object]", block).get("type") if isinstance(block, Mapping) else getattr(block, "type", None)
    )
    return kind if isinstance(kind, str) and kind in KNOWN_BLOCK_TYPES else "unknown"


#: Texts of the ``text`` blocks joined with newlines, None when there are none: the shared rule.
joined_text = _rules.joined_text


def json_or_none(text: str) -> object:
    # json here, not at the top: a typed call decodes structured content and never reads JSON from
    # text, and the json package (with the regexes it compiles) is a tenth of the shim's import.
    import json

    try:
        return cast(object, json.loads(text))
    except ValueError:
        return None


def json_from_text(content: object) -> object:
    """The first JSON value found in the text blocks (all of them joined, then each one)."""
    blocks = as_list(content) or []
    joined = joined_text(blocks)
    if joined is None:
        return None
    attempts = [joined] + [text for block in blocks if (text := joined_text([block])) is not None]
    for text in attempts:
        value = json_or_none(text)
        if value is not None:
            return value
    return None


#: Text as one visible line (the runtime's rule, in ``_rules``).
one_line = _rules.one_line
