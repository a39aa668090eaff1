"""Python names for wire names. The rules are documented in docs/generator.md ("Names").

1. ``camelCase`` splits into words; everything is lower-cased (``snake_case``).
2. Every character outside ``[A-Za-z0-9_]`` becomes ``_`` (ASCII only: Python's NFKC folding of
   Unicode identifiers could otherwise make two different names one).
3. A name left with no letter or digit (``日本``, ``!!``) becomes the prefix and the hex code
   points of its first six characters (``tool_65e5_672c``). A name that is empty, or starts with
   a digit or ``_``, gets the prefix ``tool_`` / ``arg_`` / ``ns_``.
4. Python keywords and the class's own attributes get a trailing ``_``; so do builtins, for
   methods and namespaces (a method ``str`` would shadow the type in later annotations).
5. Names that still collide are numbered in wire-name order: the first keeps its name, the
   next gets ``_2``, then ``_3`` (skipping any number already taken). Wire names are sorted
   first, so the result is the same whichever comes first in the input.
6. Class names (models, TypedDicts, ``$defs``) are the PascalCase of the namespace and the method
   name (every source has its namespace, even alone) plus ``Input`` / ``Output`` (plus the
   ``$defs`` name), numbered by the same rule 5 across the whole package.
7. A code-mode module (``from tools import <name>``) is the namespace attribute; the sandbox
   provides the standard library's modules itself and refuses to replace one, so a namespace
   named like one (``time``, ``json``) gets rule 4's trailing ``_`` there (``tools.time_``).
"""

from __future__ import annotations

import builtins
import keyword
import re
import sys
from collections.abc import Iterable

__all__ = ["assign_names", "class_name", "sandbox_modules", "snake_case", "to_identifier", "unique"]

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_IDENT = re.compile(r"[^A-Za-z0-9_]")
_SPELLED = 6  # code points spelt out for a name with no ASCII letter or digit

#: Builtins are reserved too: a method named ``str`` would shadow the type in later annotations.
RESERVED_BUILTINS = frozenset(n for n in dir(builtins) if not n.startswith("_"))


def snake_case(name: str) -> str:
    return _NON_IDENT.sub("_", _CAMEL.sub("_", name)).lower()


def to_identifier(name: str, *, prefix: str, reserved: Iterable[str] = (), builtins_ok: bool = False) -> str:
    ident = snake_case(name)
    if name and not ident.strip("_"):  # nothing readable is left: spell the first code points
        ident = prefix + "".join(f"_{ord(c):x}" for c in name[:_SPELLED])
    if not ident or ident[0].isdigit():
        ident = f"{prefix}_{ident}" if ident else prefix
    elif ident.startswith("_"):
        ident = prefix + ident
    if keyword.iskeyword(ident) or keyword.issoftkeyword(ident) or (ident in RESERVED_BUILTINS and not builtins_ok):
        ident += "_"
    reserved = set(reserved)
    while ident in reserved:
        ident += "_"
    return ident


def unique(candidate: str, used: set[str]) -> str:
    """``candidate``, or ``candidate_2``, ``candidate_3``... whichever is free; marks it used."""
    name, n = candidate, 1
    while name in used:
        n += 1
        name = f"{candidate}_{n}"
    used.add(name)
    return name


def assign_names(
    wire_names: Iterable[str], *, prefix: str, reserved: Iterable[str] = (), builtins_ok: bool = False
) -> dict[str, str]:
    """Map each wire name to a unique identifier, deterministically (sorted by wire name).

    ``builtins_ok`` is for parameters: they never appear in annotations, so ``id`` may stay ``id``.
    """
    reserved = frozenset(reserved)
    used: set[str] = set(reserved)
    return {
        wire: unique(to_identifier(wire, prefix=prefix, reserved=reserved, builtins_ok=builtins_ok), used)
        for wire in sorted(set(wire_names))
    }


def class_name(name: str, *, suffix: str = "", fallback: str = "Tool") -> str:
    """PascalCase class name from any text (ASCII identifier characters only)."""
    words = [w for w in snake_case(name).split("_") if w]
    base = "".join(w[:1].upper() + w[1:] for w in words) or fallback
    if base[0].isdigit():
        base = "T" + base
    return base + suffix


#: Standard-library modules (rule 7). The running Python's list, plus the modules other versions
#: have and it may lack, so the names do not depend on the Python that generates.
SANDBOX_RESERVED = frozenset(n for n in sys.stdlib_module_names if not n.startswith("_")) | frozenset(
    {"annotationlib", "compression", "asynchat", "asyncore", "distutils", "imp", "smtpd", "aifc", "audioop",
     "cgi", "cgitb", "chunk", "crypt", "imghdr", "mailcap", "msilib", "nis", "nntplib", "ossaudiodev", "pipes",
     "sndhdr", "spwd", "sunau", "telnetlib", "uu", "xdrlib", "lib2to3", "tomllib", "zoneinfo", "graphlib"}
)  # fmt: skip


def sandbox_modules(attrs: Iterable[str]) -> dict[str, str]:
    """Namespace attribute -> code-mode module name (rule 7), in sorted order, all distinct."""
    used = set(attrs)
    out = {}
    for attr in sorted(used):
        name = attr
        while name in SANDBOX_RESERVED or (name != attr and name in used):
            name += "_"
        used.add(name)
        out[attr] = name
    return out
