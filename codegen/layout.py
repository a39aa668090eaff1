"""Lay out the wrapper module's few statement shapes exactly as black would.

black costs far more than everything else on a large catalog (it reformats about 4,000 lines a
second, already-formatted or not), and the wrappers are most of the output. Their shapes are few
and fixed, so they are emitted in black's layout directly. Any shape that does not fit the simple
rules reports ``fits=False`` and the file is then formatted by black as a whole, so the result is
black's in every case; tests run black over generated trees and require no change.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Sequence
from typing import NamedTuple

from black.strings import normalize_string_quotes, str_width

__all__ = [
    "LINE_LENGTH",
    "Laid",
    "annotation_text",
    "call_lines",
    "def_lines",
    "fits_line",
    "str_literal",
    "subscript_lines",
]

LINE_LENGTH = 88
_STEP = "    "


class Laid(NamedTuple):
    """Lines, and whether they are certainly black's layout."""

    lines: tuple[str, ...]
    fits: bool


def _laid(lines: Sequence[str], fits: bool) -> Laid:
    return Laid(tuple(lines), fits)


def str_literal(value: str) -> str:
    """``repr`` with black's quote preference (double quotes unless that needs more escapes)."""
    return normalize_string_quotes(repr(value))


def annotation_text(text: str) -> str:
    """Normalise the quotes of string literals inside a type expression (``Literal['a']``)."""
    if "'" not in text:
        return text
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    out, last = [], 0
    for tok in tokens:
        if tok.type == tokenize.STRING:
            start, end = tok.start[1], tok.end[1]
            out += [text[last:start], normalize_string_quotes(tok.string)]
            last = end
    out.append(text[last:])
    return "".join(out)


def _fits(line: str) -> bool:
    # black measures width, not length: an East Asian wide character counts twice.
    return (len(line) if line.isascii() else str_width(line)) <= LINE_LENGTH


def fits_line(line: str) -> bool:
    """Whether ``line`` is within black's line length, as black measures it."""
    return _fits(line)


def _final(line: str) -> bool:
    """Whether black leaves ``line`` alone: it is short, or has no bracket black could split at
    (a long string default, say) and, having one item, no comma to split at either. A long line
    with a union or a dotted name may get its annotation parenthesised, so it is not final."""
    if _fits(line):
        return True
    try:
        code = "".join(
            tok.string
            for tok in tokenize.generate_tokens(io.StringIO(line.strip().removesuffix(",")).readline)
            if tok.type not in (tokenize.STRING, tokenize.NEWLINE, tokenize.ENDMARKER)
        )
    except tokenize.TokenError:  # an unclosed bracket: black may well split here
        return False
    return not any(c in code for c in "([{,|.")


def def_lines(indent: str, keyword: str, name: str, params: Sequence[str], returns: str) -> Laid:
    """``def name(params) -> returns:`` split the way black splits a def (at its parameters)."""
    one = f"{indent}{keyword} {name}({', '.join(params)}) -> {returns}:"
    if _fits(one):
        return _laid([one], True)
    head, tail = f"{indent}{keyword} {name}(", f"{indent}) -> {returns}:"
    inner = indent + _STEP
    # black adds a trailing comma when the parameters it splits hold no comma (one parameter).
    body = f"{inner}{', '.join(params)}" + ("," if len(params) == 1 else "")
    if _fits(body):
        return _laid([head, body, tail], _fits(head) and _fits(tail))
    lines = [head, *(f"{inner}{p}," for p in params), tail]
    return _laid(lines, all(_final(line) for line in lines))


def call_lines(indent: str, head: str, args: Sequence[str | Sequence[str]], tail: str = ")") -> Laid:
    """``head(args)tail`` (head ends with ``(``), split the way black splits a call.

    An argument given as a sequence of ``key: value`` items is a dict literal that may itself be
    exploded one item per line when it does not fit on its own line.
    """

    def flat(arg: str | Sequence[str]) -> str:
        return arg if isinstance(arg, str) else "{" + ", ".join(arg) + "}"

    one = f"{indent}{head}{', '.join(flat(a) for a in args)}{tail}"
    if _fits(one):
        return _laid([one], True)
    inner = indent + _STEP
    body = f"{inner}{', '.join(flat(a) for a in args)}"
    if _fits(body):
        return _laid([f"{indent}{head}", body, f"{indent}{tail}"], _fits(f"{indent}{head}"))
    lines = [f"{indent}{head}"]
    for arg in args:
        line = f"{inner}{flat(arg)},"
        if _fits(line) or isinstance(arg, str):
            lines.append(line)
        else:
            lines += [f"{inner}{{", *(f"{inner}{_STEP}{item}," for item in arg), f"{inner}}},"]
    lines.append(f"{indent}{tail}")
    return _laid(lines, all(_final(line) for line in lines))


def subscript_lines(head: str, inner: str) -> Laid:
    """``head[inner]`` at module level (head ends with ``[``), split at that bracket if too long."""
    one = f"{head}{inner}]"
    if _fits(one):
        return _laid([one], True)
    return _laid([head, f"{_STEP}{inner}", "]"], _fits(head) and _fits(f"{_STEP}{inner}"))
