"""Show classified changes: one line each, a count per severity, a table, or JSON.

Only presentation lives here; the rules are in ``codegen.drift``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from itertools import groupby
from typing import Any, TextIO

from codegen.drift import CONTENTS_POINTER, SEVERITIES, Change, Severity
from codegen.model import YAML_SOURCE_NAME
from mas.runtime.contracts._rules import one_line

__all__ = ["FAIL_LEVELS", "at_or_above", "describe", "render_json", "render_table", "summary", "summary_lines"]

#: ``--fail-on`` value -> the severities that count as failing.
FAIL_LEVELS: dict[str, frozenset[Severity]] = {
    "breaking": frozenset({"breaking"}),
    "review": frozenset({"breaking", "review"}),
    "any": frozenset(SEVERITIES),
}
_COLOURS = {"breaking": "bold red", "review": "yellow", "compatible": "green"}
_CUT = 40
_CONTEXT = 10  # characters shown before the first difference, when it lies past the cut


def _where(source: str) -> str:
    # The lock keeps tool YAML under the source name "skills", which no server may take.
    return "YAML skills" if source == YAML_SOURCE_NAME else f"server {one_line(source)!r}"


def _item(change: Change) -> str:
    """What changed: ``tool`` (its name), or a ``resource``/``template``/``prompt`` (its URI or name)."""
    word = change.kind.split("-", 1)[0]
    if change.pointer.startswith(CONTENTS_POINTER):
        return "resource"
    return word if word in ("resource", "template", "prompt") else "tool"


def describe(change: Change) -> str:
    """``server 'files': tool 'list_dir': parameter 'recursive' removed (breaking)``."""
    what = f"{_item(change)} {one_line(change.tool)!r}"
    return f"{_where(change.source)}: {what}: {one_line(change.message)} ({change.severity})"


def _ordered(changes: Sequence[Change]) -> list[Change]:
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    return sorted(changes, key=lambda c: (c.source, _item(c), c.tool, rank[c.severity], c.pointer, c.kind))


def summary(changes: Sequence[Change]) -> str:
    counts = ", ".join(f"{sum(c.severity == s for c in changes)} {s}" for s in SEVERITIES)
    return f"{len(changes)} change(s): {counts}"


def first_inference_note(changes: Sequence[Change]) -> list[str]:
    """A line saying what the breaking changes that are first inferred types mean, when there are any:
    breaking by the rules, alarming to a new user after their first ``toolgen record``."""
    from codegen.infer import first_inferences

    count = first_inferences(changes)
    if not count:
        return []
    return [
        f"{count} of the breaking change(s) are first inferred types: the methods return the type learned "
        "from the recorded results instead of ToolOutput; expected once after `toolgen record` (docs/samples.md)"
    ]


def summary_lines(changes: Sequence[Change]) -> list[str]:
    """One line per change, most severe first within each tool, then the count per severity
    and what first inferred types mean (nothing when there are no changes)."""
    if not changes:
        return []
    return [describe(c) for c in _ordered(changes)] + [summary(changes), *first_inference_note(changes)]


def at_or_above(changes: Sequence[Change], fail_on: str) -> list[Change]:
    levels = FAIL_LEVELS[fail_on]
    return [c for c in changes if c.severity in levels]


def _text(value: Any) -> str:
    if value is None:
        return "-"
    return one_line(value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False))


def _window(text: str, start: int) -> str:
    """At most ``_CUT`` characters of ``text`` from ``start``, "..." marking what is left out."""
    head = "..." if start > 0 else ""
    room = _CUT - len(head)
    return head + (text[start:] if len(text) - start <= room else text[start : start + room - 3] + "...")


def _cut_pair(old: Any, new: Any) -> tuple[str, str]:
    """The old and new values, each cut to ``_CUT`` characters around where they first differ, so
    a change past the first 40 characters (a long description) shows on both sides."""
    before, after = _text(old), _text(new)
    if len(before) <= _CUT and len(after) <= _CUT:
        return before, after
    same = next(
        (i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b), min(len(before), len(after))
    )
    start = max(0, same - _CONTEXT) if same > _CUT - 3 - _CONTEXT else 0
    return _window(before, min(start, len(before))), _window(after, min(start, len(after)))


def render_json(changes: Sequence[Change], out: TextIO) -> None:
    out.write(json.dumps({"changes": [c.to_dict() for c in _ordered(changes)]}, indent=2, ensure_ascii=False) + "\n")


def render_table(changes: Sequence[Change], out: TextIO, *, colour: bool | None = None) -> None:
    """A table per server and tool; colour only on a terminal (or when ``colour`` says so)."""
    from rich.console import Console

    terminal = out.isatty() if colour is None else colour
    if terminal:
        _print_tables(changes, Console(file=out, force_terminal=True, highlight=False, emoji=False), terminal)
        return
    # Plain text: no colour codes, a width that never wraps a CI log line, no trailing blanks.
    buffer = io.StringIO()
    _print_tables(changes, Console(file=buffer, no_color=True, width=240, highlight=False, emoji=False), terminal)
    out.write("".join(line.rstrip() + "\n" for line in buffer.getvalue().splitlines()))


def _print_tables(changes: Sequence[Change], console: Any, terminal: bool) -> None:
    from rich.markup import escape
    from rich.table import Table

    if not changes:
        console.print("no changes")
        return
    for (source, tool, item), group in groupby(_ordered(changes), key=lambda c: (c.source, c.tool, _item(c))):
        heading = f"{escape(_where(source))}: {item} {escape(repr(one_line(tool)))}"
        console.print(heading, style="bold" if terminal else None)
        table = Table(box=None, show_header=False, padding=(0, 2, 0, 2), show_edge=False)
        for _ in range(5):
            table.add_column(overflow="fold")
        for change in group:
            severity = f"[{_COLOURS[change.severity]}]{change.severity}[/]" if terminal else change.severity
            old, new = _cut_pair(change.old, change.new)
            table.add_row(
                severity,
                escape(one_line(change.message)),
                escape(change.pointer or f"({_item(change)})"),
                escape(old),
                escape("-> " + new),
            )
        console.print(table)
    console.print(summary(changes))
    for line in first_inference_note(changes):
        console.print(escape(line))
