"""The one rule for the names tools are called by, when several providers are combined.

The runtime registry routes calls by it and the generator writes the names it gives into every
generated method, so a generated method always reaches the provider it was generated from:

* a tool is *exposed* as ``prefix.tool`` when its provider has an infra ``namespace``, else as
  its own name;
* an exposed name that two or more providers share is *ambiguous*: each of those providers'
  tools is called (and listed) by its *qualified* name, ``provider.tool``, instead;
* every tool can also be called by its qualified name, whether or not it is shared (the registry
  accepts it without listing it); an exposed name always wins over another tool's qualified name.

Guide: docs/infra.md ("How providers combine").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["NameTaken", "Named", "qualified", "routed_names"]


@dataclass(frozen=True)
class Named:
    """One tool to name: its provider, its own name, and the provider's ``namespace`` (or None)."""

    provider: str
    tool: str
    prefix: str | None = None

    @property
    def exposed(self) -> str:
        return f"{self.prefix}.{self.tool}" if self.prefix else self.tool


def qualified(provider: str, tool: str) -> str:
    return f"{provider}.{tool}"


class NameTaken(ValueError):
    """A shared tool whose qualified name is another tool's exposed name (or another shared one's)."""

    def __init__(self, index: int, shared: str, taken: str) -> None:
        super().__init__(f"tool {shared!r} is shared, and its qualified name {taken!r} is taken")
        self.index, self.shared, self.taken = index, shared, taken


def routed_names(tools: Sequence[Named]) -> tuple[list[str], dict[str, list[int]]]:
    """The name each tool is listed and called by (in the order given), and each ambiguous exposed
    name with the indices of the tools that share it. Raises :class:`NameTaken`."""
    owners: dict[str, list[int]] = {}
    for i, named in enumerate(tools):
        owners.setdefault(named.exposed, []).append(i)
    names: list[str] = []
    seen: set[str] = set()
    for i, named in enumerate(tools):
        name = named.exposed
        if len(owners[name]) > 1:
            name = qualified(named.provider, named.tool)
            if name in owners or name in seen:
                raise NameTaken(i, named.exposed, name)
        seen.add(name)
        names.append(name)
    return names, {name: found for name, found in owners.items() if len(found) > 1}
