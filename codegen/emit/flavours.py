"""The flavours of a generated tool method, in one table: the typed value, the whole
``ToolResult``, a task handle. Everything that comes in one per flavour is derived from it: the
``_tool.py.jinja`` macro that prints a tool's method, the class it goes in (``Tools``,
``ToolsResults``, ``ToolsTasks`` and their async twins) and that class's shim base, ``_tools.py``'s
exports, and the number of a tool's parts (its ``ToolInfo`` constant, then each flavour's method,
sync and async).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FLAVOURS", "PARTS", "SHIM_BASES", "TOOLS_EXPORTS", "Flavour"]


@dataclass(frozen=True)
class Flavour:
    #: How ``_tools.py.jinja`` asks for a tool's method of this flavour (``fragment(tool, name)``).
    name: str
    #: The ``_tool.py.jinja`` macro that prints it: ``macro(tool, is_async, values_class)``.
    macro: str
    #: The class it goes in is ``[Async][<Source>]Tools<suffix>``.
    suffix: str
    #: That class's base in the shim (the async one is ``Async`` + this).
    base: str


FLAVOURS: tuple[Flavour, ...] = (
    Flavour("value", "tool_method", "", "ToolsBase"),
    Flavour("whole", "whole_method", "Results", "ToolsResultsBase"),
    Flavour("task", "task_method", "Tasks", "ToolsTasksBase"),
)
#: A tool's parts in ``_tools.py``: its ``ToolInfo`` constant, then each flavour's method, sync and async.
PARTS = 1 + 2 * len(FLAVOURS)
#: The aggregate classes ``_tools.py`` exports beside ``TOOLS``, sync then async for each flavour.
TOOLS_EXPORTS: tuple[str, ...] = ("TOOLS", *(f"{a}Tools{f.suffix}" for f in FLAVOURS for a in ("", "Async")))
#: The shim's base classes of the tools classes.
SHIM_BASES = frozenset(f"{a}{f.base}" for f in FLAVOURS for a in ("", "Async"))
