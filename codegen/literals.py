"""Untrusted text and values as Python literals. Nothing here ever emits text that is not a literal."""

from __future__ import annotations

import ast
import math
import unicodedata
from typing import Any

__all__ = ["clean_text", "docstring_literal", "json_default_literal", "str_literal"]

# Control, format (bidi overrides: "Trojan Source") and separator characters never reach a file.
_DROP_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def clean_text(text: str) -> str:
    """Normalise newlines, turn tabs to spaces, drop invisible and control characters."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
    return "".join(c for c in text if c == "\n" or unicodedata.category(c) not in _DROP_CATEGORIES)


def str_literal(value: str | None) -> str:
    """A one-line Python literal for ``value`` (``None`` -> ``None``)."""
    return "None" if value is None else repr(clean_text(value))


def docstring_literal(text: str, indent: int) -> str:
    """A triple-quoted docstring whose value is exactly the cleaned ``text``.

    Backslashes and quotes are escaped so no description can close the string early; the
    result is checked with ``ast.literal_eval`` and falls back to ``repr`` if it ever differs.
    """
    body = clean_text(text).strip("\n")
    escaped = body.replace("\\", "\\\\").replace('"', '\\"')
    pad = " " * indent
    lines = escaped.split("\n")
    indented = "\n".join(lines[:1] + [(pad + line) if line.strip() else "" for line in lines[1:]])
    literal = f'"""{indented}\n{pad}"""' if len(lines) > 1 else f'"""{indented}"""'
    expected = "\n".join(lines[:1] + [(pad + line) if line.strip() else "" for line in body.split("\n")[1:]])
    if len(lines) > 1:
        expected += "\n" + pad
    try:
        ok = ast.literal_eval(literal) == expected
    except (SyntaxError, ValueError):
        ok = False
    return literal if ok else repr(body)


def json_default_literal(value: Any) -> str | None:
    """A literal for a JSON Schema ``default`` that is a scalar; None when it cannot be one."""
    if isinstance(value, str):
        # A default we would have to alter to print is no default at all: the server's applies.
        return repr(value) if clean_text(value) == value else None
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    return None
