"""RFC 6570 URI templates for MCP resource templates: parse, expand, match. Standard library only.

This file is the one rule: the runtime routes ``read_resource`` with it, and the code generator
copies it verbatim into every package that has resource templates (as ``_uri_template.py``), whose
typed methods expand their keyword arguments with it.

Supported: every operator of levels 1 to 3 (``{var}``, ``{+var}``, ``{#var}``, ``{.var}``,
``{/var}``, ``{;var}``, ``{?var}``, ``{&var}``), several variables in one expression
(``{?x,y}``), and level 4's modifiers on string values: the prefix ``{var:3}`` (the first 3
characters) and the explode ``{var*}`` (the same as no modifier for one string). What degrades:
values are strings only (RFC 6570's lists and maps are not generated; a caller passes one string),
and a template that does not parse is left out of the package with a warning (:func:`parse` says
why). A variable left out (``None``) is skipped, as RFC 6570 says for an undefined one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["Expression", "Template", "TemplateError", "expand", "matches", "parse", "variables"]

# operator: (first, separator, named, if empty, reserved allowed)
_OPERATORS: dict[str, tuple[str, str, bool, str, bool]] = {
    "": ("", ",", False, "", False),
    "+": ("", ",", False, "", True),
    "#": ("#", ",", False, "", True),
    ".": (".", ".", False, "", False),
    "/": ("/", "/", False, "", False),
    ";": (";", ";", True, "", False),
    "?": ("?", "&", True, "=", False),
    "&": ("&", "&", True, "=", False),
}
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_RESERVED = frozenset(":/?#[]@!$&'()*+,;=")
_VARNAME = re.compile(r"^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*$")
_PCT = re.compile(r"%[0-9A-Fa-f]{2}")


class TemplateError(ValueError):
    """A URI template that does not parse; ``str()`` says where."""


@dataclass(frozen=True)
class Expression:
    operator: str
    #: (variable name, prefix length or None, exploded)
    variables: tuple[tuple[str, int | None, bool], ...]


@dataclass(frozen=True)
class Template:
    text: str
    #: literal strings and expressions, in order
    parts: tuple[str | Expression, ...]

    @property
    def variables(self) -> tuple[str, ...]:
        """Every variable name, in order of first appearance."""
        seen: dict[str, None] = {}
        for part in self.parts:
            if isinstance(part, Expression):
                for name, _, _ in part.variables:
                    seen.setdefault(name, None)
        return tuple(seen)


def parse(text: str) -> Template:
    """The template; raises :class:`TemplateError` naming the character where it stops making sense."""
    parts: list[str | Expression] = []
    at = 0
    while at < len(text):
        start = text.find("{", at)
        close = text.find("}", at)
        if close != -1 and (start == -1 or close < start):
            raise TemplateError(f"'}}' without '{{' at character {close}")
        if start == -1:
            parts.append(text[at:])
            break
        if start > at:
            parts.append(text[at:start])
        end = text.find("}", start)
        if end == -1:
            raise TemplateError(f"'{{' at character {start} is never closed")
        parts.append(_expression(text[start + 1 : end], start))
        at = end + 1
    return Template(text, tuple(parts))


def _expression(body: str, where: int) -> Expression:
    operator = body[:1] if body[:1] in _OPERATORS and body[:1] != "" else ""
    if body[:1] in "=,!@|":
        raise TemplateError(f"operator {body[:1]!r} at character {where + 1} is reserved by RFC 6570")
    names: list[tuple[str, int | None, bool]] = []
    for spec in body[len(operator) :].split(","):
        prefix: int | None = None
        exploded = spec.endswith("*")
        name = spec[:-1] if exploded else spec
        if ":" in name:
            name, _, length = name.partition(":")
            if not length.isdigit() or not 0 < int(length) < 10000:
                raise TemplateError(f"bad prefix length {length!r} at character {where}")
            prefix = int(length)
        if not _VARNAME.match(name):
            raise TemplateError(f"bad variable name {name!r} at character {where}")
        names.append((name, prefix, exploded))
    return Expression(operator, tuple(names))


def _encode(value: str, reserved: bool) -> str:
    out: list[str] = []
    at = 0
    while at < len(value):
        char = value[at]
        if reserved and char == "%" and _PCT.match(value, at):
            out.append(value[at : at + 3])
            at += 3
            continue
        if char in _UNRESERVED or (reserved and char in _RESERVED):
            out.append(char)
        else:
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8"))
        at += 1
    return "".join(out)


def expand(template: Template | str, values: Mapping[str, str | None]) -> str:
    """The URI: each expression filled from ``values`` (strings; ``None`` or absent: undefined)."""
    parsed = parse(template) if isinstance(template, str) else template
    out: list[str] = []
    for part in parsed.parts:
        if isinstance(part, str):
            out.append(_encode(part, True))
            continue
        first, separator, named, if_empty, reserved = _OPERATORS[part.operator]
        pieces: list[str] = []
        for name, prefix, _exploded in part.variables:
            value = values.get(name)
            if value is None:
                continue
            text = _encode(value if prefix is None else value[:prefix], reserved)
            if named:
                pieces.append(f"{name}{if_empty}" if not value else f"{name}={text}")
            else:
                pieces.append(text)
        if pieces:
            out.append(first + separator.join(pieces))
    return "".join(out)


def variables(template: str) -> tuple[str, ...]:
    return parse(template).variables


def matches(template: Template | str, uri: str) -> bool:
    """Whether ``uri`` could be an expansion of ``template``: its literal parts in order, anything
    between (used to route a read to the server whose template fits)."""
    try:
        parsed = parse(template) if isinstance(template, str) else template
    except TemplateError:
        return False
    pattern = "".join(re.escape(part) if isinstance(part, str) else ".*?" for part in parsed.parts)
    return re.fullmatch(pattern, uri, re.DOTALL) is not None
