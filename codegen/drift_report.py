"""Show classified changes: one line each, a count per severity, a table, or JSON.

Only presentation lives here; the rules are in ``codegen.drift``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from itertools import groupby
from typing import Any, TextIO

from codegen.drift import SEVERITIES, Change, Severity
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


def _where(source: str) -> str:
    # The lock keeps tool YAML under the source name "skills", which no server may take.
    return "YAML skills" if source == YAML_SOURCE_NAME else f"server {one_line(source)!r}"


def describe(change: Change) -> str:
    """``server 'files': tool 'list_dir': parameter 'recursive' removed (breaking)``."""
    return f"{_where(change.source)}: tool {one_line(change.tool)!r}: {one_line(change.message)} ({change.severity})"


def _ordered(changes: Sequence[Change]) -> list[Change]:
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    return sorted(changes, key=lambda c: (c.source, c.tool, rank[c.severity], c.pointer, c.kind))


def summary(changes: Sequence[Change]) -> str:
    counts = ", ".join(f"{sum(c.severity == s for c in changes)} {s}" for s in SEVERITIES)
    return f"{len(changes)} change(s): {counts}"


def summary_lines(changes: Sequence[Change]) -> list[str]:
    """One line per change, most severe first within each tool, then the count per severity
    (nothing when there are no changes)."""
    if not changes:
        return []
    return [describe(c) for c in _ordered(changes)] + [summary(changes)]


def at_or_above(changes: Sequence[Change], fail_on: str) -> list[Change]:
    levels = FAIL_LEVELS[fail_on]
    return [c for c in changes if c.severity in levels]


def _cut(value: Any) -> str:
    if value is None:
        return "-"
    text = one_line(value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False))
    return text if len(text) <= _CUT else text[: _CUT - 3] + "..."


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
    for (source, tool), group in groupby(_ordered(changes), key=lambda c: (c.source, c.tool)):
        heading = f"{escape(_where(source))}: tool {escape(repr(one_line(tool)))}"
        console.print(heading, style="bold" if terminal else None)
        table = Table(box=None, show_header=False, padding=(0, 2, 0, 2), show_edge=False)
        for _ in range(5):
            table.add_column(overflow="fold")
        for change in group:
            severity = f"[{_COLOURS[change.severity]}]{change.severity}[/]" if terminal else change.severity
            table.add_row(
                severity,
                escape(one_line(change.message)),
                escape(change.pointer or "(tool)"),
                escape(_cut(change.old)),
                escape("-> " + _cut(change.new)),
            )
        console.print(table)
    console.print(summary(changes))
