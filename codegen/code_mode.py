"""The code-mode stubs of a package: the API an agent's sandboxed code is written and checked against.

One ``.pyi`` module per source namespace (``from tools import sample``), one keyword-only
``async def`` per tool, typed with plain ``TypedDict`` / ``Literal`` / builtin types (the sandbox
cannot import pydantic). Everything comes from the intermediate form the package is built from:

- module names are the namespace attributes and function names the method names (``naming.py``'s
  one rule; nothing here names anything, except that a class needed from both the input and the
  output models under one name gets rule 5's ``_2``);
- parameters are the methods' parameters: the same annotations, defaults and order;
- results are the method's value type, with every output model as a ``TypedDict`` (the same
  schema document through datamodel-code-generator's TypedDict output) and ``ToolOutput``, the
  untyped result, as its text (``str``).

The text is laid out by ``ast.unparse`` (deterministic, and no formatter run: a 1,000-tool catalog's
stubs would cost it seconds). ``docs/code-mode.md`` describes the result.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from codegen.literals import clean_text, docstring_literal, wire_literal
from codegen.model import CodeModeModule, NamespaceSpec, ParamSpec, ToolSpec
from codegen.naming import sandbox_modules, unique
from codegen.syntax import Copying, defined_names
from mas.runtime.contracts._rules import HINT_WORDS

if TYPE_CHECKING:  # datamodels imports the model generator: a cached run, which renders nothing, never loads it
    from codegen.datamodels import ModelModule

__all__ = ["CODE_MODE_DIR", "CodeModeModule", "build_code_mode", "summary_line"]

#: The folder of the package that holds the stubs and their manifest.
CODE_MODE_DIR = "code_mode"
_TYPING = ("Annotated", "Any", "Literal", "NotRequired", "ReadOnly", "Required", "TypeAlias", "TypedDict")
_SUMMARY_MAX = 160  # characters of a docstring's summary; the rest of a long description is cut
_SENTENCE = re.compile(r"(?<=[.!?])\s")


def summary_line(title: str | None, description: str, hints: Mapping[str, bool | None]) -> str:
    """The one docstring line: the title or the description's first sentence, then the hints set."""
    text = " ".join(clean_text(title or "").split())
    if not text:
        first = " ".join(clean_text(description).split())
        text = _SENTENCE.split(first, maxsplit=1)[0] if first else ""
    if len(text) > _SUMMARY_MAX:
        text = text[: _SUMMARY_MAX - 3].rstrip() + "..."
    words = [word for key, word, _ in HINT_WORDS if key in _SUMMARY_HINTS and hints.get(key)]
    if words:
        text = f"{text} [{', '.join(words)}]" if text else f"[{', '.join(words)}]"
    return text or "(no description)"


#: The hints a summary line names, when set (open-world is the common case: it would be noise).
_SUMMARY_HINTS = frozenset({"read_only", "destructive", "idempotent"})


@dataclass
class _Source:
    """The definitions of one model module, by name, in module order, and what each refers to."""

    module: ModelModule
    statements: dict[str, ast.stmt]
    order: dict[str, int]
    refs: dict[str, frozenset[str]]

    @classmethod
    def of(cls, module: ModelModule) -> _Source:
        statements: dict[str, ast.stmt] = {}
        for stmt in module.body or ast.parse(module.code).body:  # the tree the model reader parsed
            for name in defined_names(stmt):
                statements.setdefault(name, stmt)
        order = {name: i for i, name in enumerate(statements)}
        refs = {name: frozenset(_names(stmt) & module.defined) - {name} for name, stmt in statements.items()}
        return cls(module, statements, order, refs)

    def closure(self, roots: Iterable[str]) -> list[str]:
        seen: set[str] = set()
        todo = [r for r in roots if r in self.statements]
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo.extend(self.refs[name] - seen)
        return sorted(seen, key=self.order.__getitem__)


def _names(node: ast.AST) -> set[str]:
    """Names a statement uses; quoted forward references (``"Node"``) name classes too."""
    found: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            found.add(n.id)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.isidentifier():
            found.add(n.value)
    return found


class _Rewrite(Copying):
    """Into stub form: qualified model names (``_i.X``, ``_o.X``) plain (renamed where two
    modules define one name), the untyped result ``_ToolOutput`` its text (``str``), any name
    imported from outside ``typing`` (pydantic's ``AwareDatetime``, say) ``str`` (its JSON form),
    ``Annotated[T, ...]`` plain ``T``, and docstrings gone (the API is read for its types).

    A copy (the model trees are shared): ``used`` collects every name the rewritten code holds,
    which is what the stub's ``typing`` import needs."""

    def __init__(self, renames: Mapping[tuple[str, str], str], foreign: set[str]) -> None:
        self.renames = renames  # (module alias, name) -> name in the stub
        self.own = ""  # alias of the module the statement being rewritten comes from
        self.foreign = foreign
        self.typing_aliases: dict[str, str] = {}  # local alias -> typing's own name
        self.used: set[str] = set()

    def _name(self, name: str, ctx: ast.expr_context) -> ast.Name:
        self.used.add(name)
        return ast.Name(name, ctx)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id in ("_i", "_o"):
            alias = "_s" if node.value.id == "_o" else "_i"
            return self._name(self.renames.get((alias, node.attr), node.attr), ast.Load())
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == "_ToolOutput" or node.id in self.foreign:
            return self._name("str", ast.Load())
        if node.id in self.typing_aliases:
            return self._name(self.typing_aliases[node.id], node.ctx)
        if self.own and (self.own, node.id) in self.renames:
            return self._name(self.renames[(self.own, node.id)], node.ctx)
        self.used.add(node.id)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        # a quoted forward reference to a renamed class follows the class
        if self.own and isinstance(node.value, str) and (self.own, node.value) in self.renames:
            return ast.copy_location(ast.Constant(self.renames[(self.own, node.value)]), node)
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == "Annotated" and isinstance(node.slice, ast.Tuple):
            inner: ast.AST = self.visit(node.slice.elts[0])
            return inner
        if isinstance(node.value, ast.Name) and node.value.id == "Literal":
            self.used.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
            return node  # the values are data
        return self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        new = self.generic_visit(node)  # visit_Expr drops the docstrings
        assert isinstance(new, ast.ClassDef)
        new.name = self.renames.get((self.own, node.name), node.name)
        new.body = new.body or [ast.Pass()]
        return new

    def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
        return None if _is_docstring(node) else node


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _functional_name(stmt: ast.stmt, new: str) -> None:
    """``X = TypedDict("X", {...})`` renamed: its first argument follows the target."""
    if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) and stmt.value.args:
        first = stmt.value.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            stmt.value.args[0] = ast.Constant(new)


def _annotation(text: str, rewrite: _Rewrite) -> str:
    node = ast.parse(text, mode="eval").body
    rewrite.own = ""
    return ast.unparse(rewrite.visit(node))


def _refs(text: str) -> tuple[set[str], set[str]]:
    """Names of input (``_i.X``) and output (``_o.X``) models an annotation uses."""
    found: tuple[set[str], set[str]] = (set(), set())
    for node in ast.walk(ast.parse(text, mode="eval")):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("_i", "_o"):
            found[node.value.id == "_o"].add(node.attr)
    return found


def _module_stub(
    ns: NamespaceSpec,
    summaries: Mapping[str, str],
    inputs: _Source,
    outputs: _Source | None,
) -> str:
    in_roots: set[str] = set()
    out_roots: set[str] = set()
    returns: dict[str, str] = {}
    for tool in ns.tools:
        for p in tool.params:
            in_roots |= _refs(p.value_annotation)[0]
        value = tool.value_annotation
        used_out = _refs(value)[1]
        if used_out and (outputs is None or not used_out <= set(outputs.statements)):
            value = "Any"  # the TypedDict run could not type these outputs
            used_out = set()
        returns[tool.method] = value
        out_roots |= used_out
    in_names = inputs.closure(in_roots)
    out_names = outputs.closure(out_roots) if outputs is not None else []

    # One name for each definition: the inputs keep theirs, an output class of the same name
    # (a different module's ``Filters``) takes the next free ``_2`` (naming rule 5).
    taken = set(in_names) | {t.method for t in ns.tools} | set(_TYPING)
    renames: dict[tuple[str, str], str] = {}
    for name in out_names:
        if name in taken:
            renames[("_s", name)] = unique(name, taken)
        else:
            taken.add(name)
    foreign = {n for n, (module, _) in inputs.module.imports.items() if module != "typing"}
    if outputs is not None:
        foreign |= {n for n, (module, _) in outputs.module.imports.items() if module != "typing"}
    rewrite = _Rewrite(renames, foreign)
    # datamodel-code-generator imports a typing name under an alias when a key is spelt like it
    # (``from typing import Any as Any_aliased``): the stub imports typing's own names.
    for source in (inputs, outputs):
        for local, (module, original) in source.module.imports.items() if source is not None else ():
            if module == "typing" and local != original:
                rewrite.typing_aliases[local] = original

    blocks: list[str] = []
    for alias, source, names in (("_i", inputs, in_names), ("_s", outputs, out_names)):
        for name in names:
            assert source is not None
            rewrite.own = alias
            stmt = rewrite.visit(source.statements[name])  # a copy: the model trees stay as they are
            if (alias, name) in renames:
                _functional_name(stmt, renames[(alias, name)])
            blocks.append(ast.unparse(stmt))
    for tool in ns.tools:
        blocks.append(_function(tool, summaries[tool.method], returns[tool.method], rewrite))
    body = "\n\n".join(blocks)
    # Names only, not strings: a Literal["Any"] value is no use of typing.Any (strict pyright says so).
    used = rewrite.used if body else set()
    typing = [n for n in _TYPING if n in used and n != "Annotated"]
    head = f"from typing import {', '.join(typing)}\n\n" if typing else ""
    return f"{head}{body}\n"


def _function(tool: ToolSpec, summary: str, returns: str, rewrite: _Rewrite) -> str:
    params = []
    for p in tool.params:
        annotation = _annotation(p.value_annotation, rewrite)  # the sandbox has no NOT_GIVEN: "= ..." says optional
        params.append(f"{p.py_name}: {annotation}" if p.required else f"{p.py_name}: {annotation} = {_default(p)}")
    signature = f"*, {', '.join(params)}" if params else ""
    result = _annotation(returns, rewrite)
    return f"async def {tool.method}({signature}) -> {result}:\n    {docstring_literal(summary, 4)}"


def _default(p: ParamSpec) -> str:
    """The schema's default when it is a plain literal (the model reads it as the value used when
    the argument is left out: the server's default), else the stub's ``...``."""
    try:
        ast.literal_eval(p.schema_default or "")
    except (SyntaxError, ValueError):
        return "..."
    return p.schema_default or "..."


def build_code_mode(
    namespaces: Sequence[NamespaceSpec],
    summaries: Mapping[tuple[str, str], str],
    in_models: ModelModule,
    out_models: ModelModule | None,
) -> tuple[CodeModeModule, ...]:
    """The stub module of every namespace; ``summaries`` maps (namespace attr, method) to its docstring line."""
    inputs = _Source.of(in_models)
    outputs = _Source.of(out_models) if out_models is not None else None
    names = sandbox_modules(ns.attr for ns in namespaces)
    modules = []
    for ns in namespaces:
        own = {t.method: summaries[(ns.attr, t.method)] for t in ns.tools}
        stub = _module_stub(ns, own, inputs, outputs)
        functions = tuple((t.method, t.wire_name) for t in ns.tools)
        modules.append(CodeModeModule(names[ns.attr], ns.attr, stub, functions))
    return tuple(modules)


def manifest_lines(modules: Sequence[CodeModeModule]) -> list[str]:
    """``code_mode/__init__.py``'s tables: module -> function -> wire name, and module -> the
    namespace attribute of ``Tools`` whose methods the functions are."""
    lines = ["MODULES: dict[str, dict[str, str]] = {"]
    for module in modules:
        lines.append(f'    "{module.name}": {{')
        lines += [f'        "{function}": {wire_literal(wire)},' for function, wire in module.functions]
        lines.append("    },")
    lines.append("}")
    lines.append("NAMESPACES: dict[str, str] = {")
    lines += [f'    "{module.name}": "{module.attr}",' for module in modules]
    lines.append("}")
    return lines
