"""The classes a package emits, laid out line by line (four flavours per source, plus aggregates)."""

from __future__ import annotations

from collections.abc import Sequence

from codegen.formatting import format_python
from codegen.layout import call_lines, def_lines
from codegen.literals import docstring_literal
from codegen.model import ClassSpec, MethodSpec, NamespaceSpec, ToolSpec

__all__ = ["build_classes", "settle"]

_SYNC_PROVIDER = "_SupportsCallTool"
_ASYNC_PROVIDER = "_SupportsCallTool | _SupportsAsyncCallTool"
_IN_CLASS, _IN_METHOD = " " * 4, " " * 8


def settle(member: MethodSpec, *, in_class: bool = True) -> MethodSpec:
    """A member whose lines fell outside the layout rules, formatted by black on its own.

    Formatting one member (inside a stand-in class when it is a method) costs what the misfit
    costs, not what the whole module costs; the result is black's layout, so it fits.
    """
    if member.fits:
        return member
    head = "class _Member:\n" if in_class else ""
    text = format_python(head + "\n".join(member.lines) + "\n")
    lines = text.split("\n")[1:-1] if in_class else text.split("\n")[:-1]  # "\n" only, as Python does
    while lines and not lines[0]:
        lines.pop(0)
    return MethodSpec(member.name, tuple(lines), True)


def _tool_method(tool: ToolSpec, *, is_async: bool, results: bool) -> MethodSpec:
    returns = f"_ToolResult[{tool.value_annotation}]" if results else tool.value_annotation
    keyword = "async def" if is_async else "def"
    signature = def_lines(_IN_CLASS, keyword, tool.method, tool.params_decl, returns)
    call = call_lines(
        _IN_METHOD,
        f"result = {'await ' if is_async else ''}self._call(",
        [
            tool.const_name,
            tool.argument_items if isinstance(tool.argument_items, str) else list(tool.argument_items),
            list(tool.omit_items),
        ],
    )
    body = (*call.lines, f"{_IN_METHOD}return result" + ("" if results else ".value"))
    lines = (*signature.lines, _IN_METHOD + tool.docstring, *body)
    return settle(MethodSpec(tool.method, lines, signature.fits and call.fits))


def _results_property(results_class: str) -> MethodSpec:
    signature = def_lines(_IN_CLASS, "def", "results", ["self"], results_class)
    call = call_lines(_IN_METHOD, f"return {results_class}(", ["self._provider", "self._options"])
    doc = f'{_IN_METHOD}"""The same tools, returning the whole ``ToolResult`` instead of the value."""'
    lines = (f"{_IN_CLASS}@property", *signature.lines, doc, *call.lines)
    return settle(MethodSpec("results", lines, signature.fits and call.fits))


def _init(provider: str, children: Sequence[tuple[str, str]]) -> MethodSpec:
    params = ["self", f"provider: {provider}", "options: _CallOptions | None = None"]
    signature = def_lines(_IN_CLASS, "def", "__init__", params, "None")
    body = [f"{_IN_METHOD}super().__init__(provider, options)"]
    fits = signature.fits
    for attr, cls in children:
        call = call_lines(_IN_METHOD, f"self.{attr} = {cls}(", ["provider", "options"])
        body += call.lines
        fits = fits and call.fits
    return settle(MethodSpec("__init__", (*signature.lines, *body), fits))


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
    return docstring_literal(text + (f" of the {of!r} source." if of else "."), len(_IN_CLASS))


def build_classes(namespaces: Sequence[NamespaceSpec], *, source_names: Sequence[str]) -> tuple[ClassSpec, ...]:
    classes: list[ClassSpec] = []
    for ns, source in zip(namespaces, source_names, strict=True):
        for name, is_async, results, results_class in _flavours(ns.class_prefix):
            members = [_results_property(results_class)] if results_class else []
            members += [_tool_method(t, is_async=is_async, results=results) for t in ns.tools]
            base = "_AsyncToolsBase" if is_async else "_ToolsBase"
            classes.append(ClassSpec(name, base, _doc(is_async, results, source), tuple(members)))
    # The aggregates: one attribute per source, even when there is one source.
    for index, (name, is_async, results, results_class) in enumerate(_flavours("")):
        children = [(ns.attr, _flavours(ns.class_prefix)[index][0]) for ns in namespaces]
        members = [_init(_ASYNC_PROVIDER if is_async else _SYNC_PROVIDER, children)]
        if results_class:
            members.append(_results_property(results_class))
        base = "_AsyncToolsBase" if is_async else "_ToolsBase"
        classes.append(ClassSpec(name, base, _doc(is_async, results, None), tuple(members)))
    return tuple(classes)
