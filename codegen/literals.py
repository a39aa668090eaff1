"""Untrusted text and values as Python literals. Nothing here ever emits text that is not a literal.

Literals come out in the formatter's normal form (double quotes unless that needs more escapes;
docstrings stripped and re-indented as black and ruff do), so a literal reads the same in a
formatted module and in a code-mode stub, which is not formatted.
"""

from __future__ import annotations

import ast
import math
import re
import textwrap
import unicodedata
from typing import Any

__all__ = [
    "INVISIBLE_CATEGORIES",
    "clean_text",
    "docstring_literal",
    "docstring_text",
    "json_default_literal",
    "str_literal",
    "wire_literal",
]

# Control, format (bidi overrides: "Trojan Source") and separator characters never reach a file.
INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


#: In ASCII the invisible characters are exactly the controls (category Cc); "\n" stays.
_ASCII_CONTROLS = {code: None for code in (*range(0x20), 0x7F) if code != 0x0A}


def clean_text(text: str) -> str:
    """Normalise newlines, turn tabs to spaces, drop invisible and control characters."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
    if text.isascii():  # most text: one C-level pass instead of a category lookup per character
        return text.translate(_ASCII_CONTROLS)
    return "".join(c for c in text if c == "\n" or unicodedata.category(c) not in INVISIBLE_CATEGORIES)


#: In a single-quoted ``repr`` body: an escaped backslash, an escaped single quote, a double quote.
_REQUOTE = re.compile(r"\\\\|\\'|\"")
_REQUOTED = {"\\\\": "\\\\", "\\'": "'", '"': '\\"'}


def _quoted(value: str) -> str:
    """``repr(value)`` in double quotes unless that takes more escapes (black's and ruff's rule)."""
    text = repr(value)
    if text[0] == '"':  # repr chose double quotes itself: the value has ' and no "
        return text
    singles, doubles = value.count("'"), value.count('"')
    if doubles > singles or (doubles and not singles):
        return text
    return '"' + _REQUOTE.sub(lambda m: _REQUOTED[m.group()], text[1:-1]) + '"'


def str_literal(value: str | None) -> str:
    """A one-line literal for display text (cleaned); ``None`` -> ``None``."""
    return "None" if value is None else _quoted(clean_text(value))


def wire_literal(value: str) -> str:
    """A literal for a wire name or key: exact, every character kept (escaped where needed)."""
    return _quoted(value)


def _docstring_lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in clean_text(text).split("\n")]
    while lines and not lines[0].strip():
        lines.pop(0)
    if not lines:
        return ["(no description)"]
    rest = textwrap.dedent("\n".join(lines[1:])).split("\n") if len(lines) > 1 else []
    lines = [lines[0].strip(), *(line.rstrip() for line in rest)]
    while len(lines) > 1 and not lines[-1]:
        lines.pop()
    return lines


#: A double quote another one follows: the only quotes that could close a triple-quoted string.
_QUOTE_BEFORE_QUOTE = re.compile(r'"(?=")')


def _in_triple_quotes(line: str) -> str:
    """``line`` escaped to sit inside ``\"\"\"...\"\"\"``: backslashes doubled, and a double quote
    escaped only where another follows it (``""`` -> ``\\""``), so ``"quoted"`` words read as
    written in editors' hovers and source, and no run of three quotes is left to close the string."""
    return _QUOTE_BEFORE_QUOTE.sub('\\\\"', line.replace("\\", "\\\\"))


def docstring_literal(text: str, indent: int) -> str:
    """A triple-quoted docstring whose value is exactly the cleaned ``text``, in black's layout.

    Backslashes, and quotes that another quote follows, are escaped so no description can close
    the string early; the result is checked with ``ast.literal_eval`` and falls back to a plain
    literal if it ever differs.
    """
    lines = _docstring_lines(text)
    pad = " " * indent
    escaped = [_in_triple_quotes(line) for line in lines]
    if len(lines) == 1:
        body = escaped[0] + (" " if escaped[0].endswith('"') else "")  # black pads a closing quote
        literal, expected = f'"""{body}"""', lines[0] + (" " if body.endswith(" ") else "")
    else:
        inner = "\n".join(escaped[:1] + [pad + line if line else "" for line in escaped[1:]])
        literal = f'"""{inner}\n{pad}"""'
        expected = "\n".join(lines[:1] + [pad + line if line else "" for line in lines[1:]]) + "\n" + pad
    try:
        ok = ast.literal_eval(literal) == expected
    except (SyntaxError, ValueError):
        ok = False
    return literal if ok else _quoted("\n".join(lines))


def docstring_text(text: str) -> str:
    """``text`` on one line, escaped to sit inside a triple-quoted string without ever closing it."""
    return _in_triple_quotes(" ".join(clean_text(text).split("\n")))


def json_default_literal(value: Any) -> str | None:
    """A literal for a JSON Schema ``default`` that is a scalar; None when it cannot be one."""
    if isinstance(value, str):
        # A default we would have to alter to print is no default at all: the server's applies.
        return _quoted(value) if clean_text(value) == value else None
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    return None
