"""The classes a package emits, derived from its namespaces (four flavours each, plus aggregates)."""

from __future__ import annotations

from collections.abc import Sequence

from codegen.literals import docstring_literal
from codegen.model import ClassSpec, MethodSpec, NamespaceSpec, ToolSpec

__all__ = ["build_classes"]

_SYNC_PROVIDER = "_rt.SupportsCallTool"
_ASYNC_PROVIDER = "_rt.SupportsCallTool | _rt.SupportsAsyncCallTool"
_CLASS_INDENT = 4


def _method(tool: ToolSpec, *, is_async: bool, results: bool) -> MethodSpec:
    call = f"self._call({tool.const_name}, {tool.arguments_literal}, {tool.omit_literal})"
    if is_async:
        call = f"(await {call})"
    return MethodSpec(
        name=tool.method,
        def_keyword="async def" if is_async else "def",
        signature=tool.signature,
        return_annotation=f"_rt.ToolResult[{tool.value_annotation}]" if results else tool.value_annotation,
        docstring=tool.docstring,
        return_expr=call if results else f"{call}.value",
    )


def _flavours(prefix: str) -> list[tuple[str, bool, bool, str | None]]:
    """(class name, is_async, returns ToolResult, class its ``results`` property returns)."""
    return [
        (f"{prefix}Tools", False, False, f"{prefix}ToolsResults"),
        (f"{prefix}ToolsResults", False, True, None),
        (f"Async{prefix}Tools", True, False, f"Async{prefix}ToolsResults"),
        (f"Async{prefix}ToolsResults", True, True, None),
    ]


def _doc(is_async: bool, results: bool, of: str | None) -> str:
    text = ("Async tools" if is_async else "Tools") + (" returning the whole ToolResult" if results else "")
    return docstring_literal(text + (f" of the {of!r} source." if of else "."), _CLASS_INDENT)


def build_classes(namespaces: Sequence[NamespaceSpec], *, source_names: Sequence[str]) -> tuple[ClassSpec, ...]:
    classes: list[ClassSpec] = []
    nested = namespaces[0].attr is not None
    for ns, source in zip(namespaces, source_names, strict=True):
        prefix = ns.sync_class.removesuffix("Tools")
        for name, is_async, results, results_class in _flavours(prefix):
            classes.append(
                ClassSpec(
                    name=name,
                    base="_rt.AsyncToolsBase" if is_async else "_rt.ToolsBase",
                    docstring=_doc(is_async, results, source if nested else None),
                    provider_annotation=_ASYNC_PROVIDER if is_async else _SYNC_PROVIDER,
                    results_class=results_class,
                    children=(),
                    methods=tuple(_method(t, is_async=is_async, results=results) for t in ns.tools),
                )
            )
    if nested:
        for index, (name, is_async, results, results_class) in enumerate(_flavours("")):
            children = tuple(
                (ns.attr or "", _flavours(ns.sync_class.removesuffix("Tools"))[index][0]) for ns in namespaces
            )
            classes.append(
                ClassSpec(
                    name=name,
                    base="_rt.AsyncToolsBase" if is_async else "_rt.ToolsBase",
                    docstring=_doc(is_async, results, None),
                    provider_annotation=_ASYNC_PROVIDER if is_async else _SYNC_PROVIDER,
                    results_class=results_class,
                    children=children,
                    methods=(),
                )
            )
    return tuple(classes)
