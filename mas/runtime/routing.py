"""The one rule for the names tools are called by, when several providers are combined.

The runtime registry routes calls by it and the generator writes the names it gives into every
generated method, so a generated method always reaches the provider it was generated from.

A provider's *qualifiers* are its name and its infra ``prefix`` (if any). A name that starts
with a qualifier and a dot is *addressed* to that provider: it reaches that provider's tool
named by the rest, or no tool at all, whatever names other providers list. So:

* a tool is listed as ``prefix.tool`` when its provider has a prefix; else as its own name
  when no other provider's tool has that name and the name is not addressed (to any provider);
  else by its *qualified* name, ``provider.tool``. So ``github.create_pr`` listed by ``evil`` is
  ``evil.github.create_pr`` while a provider ``github`` exists;
* a generated package sends every dotted name qualified too (``package=True``): the servers it
  meets at run time may include one whose name makes that name an address;
* a bare name that two or more providers share is *ambiguous*: a call by it is refused;
* every tool can also be called by its qualified name, listed or not.

Qualifiers that would make an address mean two things are refused (:class:`QualifierClash`):
two providers with one qualifier (a prefix that is another provider's name), or one
qualifier that is another's plus a dot and more (servers ``a`` and ``a.b``).

Guide: docs/infra.md ("How providers combine"), docs/tool-server-registry.md ("Routing").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["NameTaken", "Named", "QualifierClash", "addressee", "qualified", "qualifiers", "routed_names"]


@dataclass(frozen=True)
class Named:
    """One tool to name: its provider, its own name, and the provider's ``prefix`` (or None)."""

    provider: str
    tool: str
    prefix: str | None = None

    @property
    def exposed(self) -> str:
        return f"{self.prefix}.{self.tool}" if self.prefix else self.tool


def qualified(provider: str, tool: str) -> str:
    return f"{provider}.{tool}"


class NameTaken(ValueError):
    """Two tools that would be called by one name: only a provider that lists one name twice."""

    def __init__(self, index: int, shared: str, taken: str) -> None:
        super().__init__(f"tool {shared!r} is listed twice, and its qualified name {taken!r} is taken")
        self.index, self.shared, self.taken = index, shared, taken


class QualifierClash(ValueError):
    """Two providers' qualifiers (names, prefixes) that would make one address mean two tools."""

    def __init__(self, first: str, first_qualifier: str, second: str, second_qualifier: str) -> None:
        what = "is" if first_qualifier == second_qualifier else "begins"
        super().__init__(
            f"{first_qualifier!r} (of {first!r}) {what} {second_qualifier!r} (of {second!r}): "
            "a name like "
            f"{second_qualifier + '.tool'!r} would be addressed to both; rename a server or change a prefix"
        )
        self.first, self.first_qualifier, self.second, self.second_qualifier = (
            first,
            first_qualifier,
            second,
            second_qualifier,
        )


def qualifiers(providers: Iterable[tuple[str, str | None]]) -> dict[str, str]:
    """Each qualifier (provider name, prefix) with its provider. Raises :class:`QualifierClash`."""
    owner: dict[str, str] = {}
    for provider, prefix in providers:
        for qualifier in (provider, prefix):
            if qualifier is None:
                continue
            other = owner.setdefault(qualifier, provider)
            if other != provider:
                raise QualifierClash(other, qualifier, provider, qualifier)
    for qualifier, provider in owner.items():
        dot = qualifier.find(".")
        while dot != -1:  # every dotted prefix of a qualifier: "a" and "a.b" of "a.b.c"
            head = qualifier[:dot]
            if head in owner:
                raise QualifierClash(owner[head], head, provider, qualifier)
            dot = qualifier.find(".", dot + 1)
    return owner


def addressee(name: str, owner: Mapping[str, str]) -> tuple[str, str] | None:
    """The provider ``name`` is addressed to and the tool name that follows its qualifier, or None
    for a bare name. With qualifiers from :func:`qualifiers`, at most one qualifier matches."""
    dot = name.find(".")
    while dot != -1:
        provider = owner.get(name[:dot])
        if provider is not None:
            return provider, name[dot + 1 :]
        dot = name.find(".", dot + 1)
    return None


def routed_names(
    tools: Sequence[Named], providers: Iterable[tuple[str, str | None]] = (), *, package: bool = False
) -> tuple[list[str], dict[str, list[int]]]:
    """The name each tool is listed and called by (in the order given), and each ambiguous bare
    name with the indices of the tools that share it.

    ``providers`` are every provider's name and prefix, those without tools too (a provider
    listed empty still owns its addresses); the providers of ``tools`` are added to them. With
    ``package`` (the generator's wire names) a dotted name is never bare, whoever is listed now.
    Raises :class:`QualifierClash`, and :class:`NameTaken` when one provider lists a name twice.
    """
    owner = qualifiers([*providers, *((t.provider, t.prefix) for t in tools)])  # refuse clashes first
    bare: dict[str, list[int]] = {}
    for i, named in enumerate(tools):
        if named.prefix or (package and "." in named.tool) or addressee(named.tool, owner) is not None:
            continue  # an address is only ever its addressee's: such a name is never bare
        bare.setdefault(named.tool, []).append(i)
    names: list[str] = []
    seen: set[str] = set()
    for i, named in enumerate(tools):
        if named.prefix:
            name = named.exposed
        elif len(bare.get(named.tool, ())) == 1:
            name = named.tool
        else:  # shared, or an address: qualified, which only its own provider can be
            name = qualified(named.provider, named.tool)
        if name in seen:
            raise NameTaken(i, named.tool, name)
        seen.add(name)
        names.append(name)
    return names, {name: found for name, found in bare.items() if len(found) > 1}
