"""The import graph of ``mas`` and ``codegen`` (the shim included): no cycle, and the generator
builds on the runtime's public modules only, save the one rules file it copies into every package.

Every import counts, at module level, inside functions and under ``TYPE_CHECKING``: a cycle a
type checker sees is still a cycle a reader has to follow.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("mas", "codegen")
#: The contract's rules: the runtime's own file, copied verbatim into every generated package.
SHARED_RULES = "mas.runtime.contracts._rules"
#: Modules that exist only in a generated package, and the file each is copied from.
COPIED = {"codegen.shim._rules": SHARED_RULES}


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {_module_name(p): p for root in ROOTS for p in sorted((REPO / root).rglob("*.py"))}


def _imported(name: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The modules of the house that ``name`` imports (a ``from X import Y`` of a submodule is Y)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                full = COPIED.get(f"{base}.{alias.name}", f"{base}.{alias.name}")
                found.add(full if full in known else base)
    return {module for module in found if module in known and module != name}


@functools.cache  # read once for the module's tests (none of them changes it)
def import_graph() -> Mapping[str, frozenset[str]]:
    known = modules()
    return {name: frozenset(_imported(name, path, known)) for name, path in known.items()}


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_graph_is_read_whole() -> None:
    graph = import_graph()
    assert "codegen.emit.render" in graph["codegen.generate"]  # a function-level import
    assert "codegen.shim._runtime._input" in graph["codegen.shim._runtime._plan"]  # a relative one
    assert SHARED_RULES in graph["codegen.shim._runtime._options"]  # ``from .. import _rules``
    assert "mas.runtime.mcp._convert" in graph["mas.runtime.mcp.provider"]


def test_cycles_finds_a_loop_and_only_a_loop() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_no_import_cycle() -> None:
    assert cycles(import_graph()) == []


def test_the_generator_imports_no_private_runtime_module_but_the_rules() -> None:
    private = sorted(
        f"{name} -> {target}"
        for name, targets in import_graph().items()
        if name.startswith("codegen.")
        for target in targets
        if target.startswith("mas.runtime.")
        and target != SHARED_RULES
        and any(part.startswith("_") for part in target.split(".")[2:])
    )
    assert private == []


def test_no_module_outside_the_mcp_client_imports_its_private_parts() -> None:
    """``mas.runtime.mcp._*`` is the MCP client's own; the rest of ``mas`` and ``codegen`` import
    its public modules (``provider``, ``secrets``)."""
    private = sorted(
        f"{name} -> {target}"
        for name, targets in import_graph().items()
        if not name.startswith("mas.runtime.mcp.")
        for target in targets
        if target.startswith("mas.runtime.mcp._")
    )
    assert private == []
