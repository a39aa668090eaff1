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

A source whose server serves resources, templates or prompts gets, after its functions, one class
each holding them as methods and a module attribute of that class (``resources: SampleResources``,
``prompts: SamplePrompts``): the snippet writes ``await sample.resources.guide()``, ``await
sample.resources.weather(city="Paris")``, ``await sample.prompts.review_city(city="Lyon")``, as in
the package, and the checker sees bound methods with the template's variables and the prompt's
arguments. What a read gives is plain data: a text resource its text (``str``), a JSON one its value,
a blob its bytes, a prompt a ``PromptResult`` ``TypedDict``.

The text is laid out by ``ast.unparse`` (deterministic, and no formatter run: a 1,000-tool catalog's
stubs would cost it seconds). ``docs/code-mode.md`` describes the result.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from codegen.cache import Memo
from codegen.literals import clean_text, docstring_literal, wire_literal
from codegen.model import CodeModeModule, NamespaceSpec, ParamSpec, SurfaceSpec, ToolSpec
from codegen.naming import sandbox_modules, unique
from codegen.syntax import Copying
from mas.runtime.contracts._rules import HINT_WORDS

if TYPE_CHECKING:  # datamodels imports the model generator: a cached run, which renders nothing, never loads it
    from codegen.datamodels import Chunk, ModelModule

__all__ = ["CODE_MODE_DIR", "CodeModeModule", "build_code_mode", "param_constraints", "summary_line"]

#: The folder of the package that holds the stubs and their manifest.
CODE_MODE_DIR = "code_mode"
_TYPING = ("Annotated", "Any", "Literal", "NotRequired", "ReadOnly", "Required", "TypeAlias", "TypedDict")
_SUMMARY_MAX = 160  # characters of a docstring's summary; the rest of a long description is cut
_SENTENCE = re.compile(r"(?<=[.!?])\s")


def summary_line(title: str | None, description: str, hints: Mapping[str, bool | None], *, full: bool = False) -> str:
    """The docstring's first line: the title or the description's first sentence, then the hints
    set. ``full``: then, after a blank line, the description's first paragraph (at most
    ``_PARAGRAPH_MAX`` characters) when it says more than that line."""
    text = " ".join(clean_text(title or "").split())
    paragraph = " ".join(clean_text(description).strip().split("\n\n", 1)[0].split())
    if not text:
        text = _SENTENCE.split(paragraph, maxsplit=1)[0] if paragraph else ""
        paragraph = paragraph[len(text) :].strip()  # the rest of it: the first sentence is the line
    line = _cut(text, _SUMMARY_MAX)
    words = [word for key, word, _ in HINT_WORDS if key in _SUMMARY_HINTS and hints.get(key)]
    if words:
        line = f"{line} [{', '.join(words)}]" if line else f"[{', '.join(words)}]"
    line = line or "(no description)"
    if full and paragraph and paragraph.rstrip(".") != text.rstrip("."):
        return f"{line}\n\n{_cut(paragraph, _PARAGRAPH_MAX)}"
    return line


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 3].rstrip() + "..."


#: Characters of a description's first paragraph in a stub's docstring, and of one parameter's line.
_PARAGRAPH_MAX = 600
_PARAM_MAX = 240
#: JSON Schema bounds a parameter's type does not carry, in the words of its stub line.
_BOUNDS = (
    ("minLength", "length >= {}"), ("maxLength", "length <= {}"), ("minItems", "at least {} items"),
    ("maxItems", "at most {} items"), ("multipleOf", "a multiple of {}"), ("pattern", "matches {}"),
    ("format", "format {}"),
)  # fmt: skip


def param_constraints(name: str, prop: Any) -> str:
    """What the schema bounds about a parameter and its type does not say, as one phrase
    (``1 <= limit <= 50``, ``length <= 100``, ``matches ^[A-Z]{2}$``); "" when nothing. The
    values are the schema's own JSON (a pattern quoted), so no text of a server becomes code."""
    if not isinstance(prop, Mapping):
        return ""
    parts = []
    low = next(((k, prop[k]) for k in ("minimum", "exclusiveMinimum") if _number(prop.get(k))), None)
    high = next(((k, prop[k]) for k in ("maximum", "exclusiveMaximum") if _number(prop.get(k))), None)
    if low or high:
        left = f"{low[1]} {'<' if low[0] == 'exclusiveMinimum' else '<='} " if low else ""
        right = f" {'<' if high[0] == 'exclusiveMaximum' else '<='} {high[1]}" if high else ""
        parts.append(f"{left}{name}{right}")
    for key, words in _BOUNDS:
        value = prop.get(key)
        text = key in ("pattern", "format")
        if (isinstance(value, str) and value) if text else _number(value):
            parts.append(words.format(repr(value) if key == "pattern" else value))
    return _cut(" ".join(clean_text("; ".join(parts)).split()), _PARAM_MAX)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


#: The hints a summary line names, when set (open-world is the common case: it would be noise).
_SUMMARY_HINTS = frozenset({"read_only", "destructive", "idempotent"})


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


class _Stubs:
    """What one build's stubs are made of, each part read from ``memo`` when its inputs were seen
    before: which definitions a chunk's roots reach, a chunk's definitions rewritten into stub
    form, a tool's function. Every part is keyed by everything it reads (the chunk's digest, the
    renames, the imports that shape the rewrite), so a stub after a small edit is the cold one."""

    def __init__(self, inputs: ModelModule, outputs: ModelModule | None, memo: Memo | None) -> None:
        self.inputs, self.outputs, self.memo = inputs, outputs, memo
        modules = [m for m in (inputs, outputs) if m is not None]
        self.foreign = sorted({n for m in modules for n, (module, _) in m.imports.items() if module != "typing"})
        # datamodel-code-generator imports a typing name under an alias when a key is spelt like it
        # (``from typing import Any as Any_aliased``): the stub imports typing's own names.
        self.aliases = sorted(
            (local, original)
            for m in modules
            for local, (module, original) in m.imports.items()
            if module == "typing" and local != original
        )

    def rewrite(self, renames: Mapping[tuple[str, str], str]) -> _Rewrite:
        rewrite = _Rewrite(renames, set(self.foreign))
        rewrite.typing_aliases.update(self.aliases)
        return rewrite

    def _memo(self, key: str | None, make: Callable[[], Any]) -> Any:
        found = self.memo.get(key) if self.memo is not None else None
        if found is None:
            found = make()
            if self.memo is not None:
                self.memo.put(key, found)
        return found

    def refs(self, tool: ToolSpec) -> tuple[list[str], list[str]]:
        """The input models the parameters name, and the output models the value type names."""
        annotations = [p.value_annotation for p in tool.params]

        def make() -> list[list[str]]:
            ins = set().union(*(_refs(a)[0] for a in annotations))
            return [sorted(ins), sorted(_refs(tool.value_annotation)[1])]

        ins, outs = self._memo(Memo.key("refs", annotations, tool.value_annotation), make)
        return ins, outs

    def reached(self, module: ModelModule, roots: set[str]) -> list[str]:
        """The definitions ``roots`` reach, in module order (chunk by chunk: a chunk names only its own)."""
        out: list[str] = []
        for chunk in module.chunks:
            mine = sorted(r for r in roots if r in chunk.spans and module.chunk_of(r) is chunk)
            if mine:
                out += self._memo(Memo.key("reached", chunk.digest, mine), partial(_reached, module, chunk, mine))
        return out

    def blocks(
        self, module: ModelModule, alias: str, names: Sequence[str], renames: Mapping[tuple[str, str], str]
    ) -> tuple[list[str], set[str]]:
        """The definitions ``names`` in stub form, and the names their text uses."""
        texts: list[str] = []
        used: set[str] = set()
        own = sorted([list(k), v] for k, v in renames.items() if k[0] == alias)  # the only renames they read
        for chunk in module.chunks:
            mine = [n for n in names if n in chunk.spans and module.chunk_of(n) is chunk]
            if not mine:
                continue

            def make(mine: list[str] = mine) -> dict[str, list[str]]:
                rewrite = self.rewrite(renames)
                rewrite.own = alias
                made = []
                for name in mine:
                    stmt = rewrite.visit(module.statement(name))  # a copy: the model trees stay as they are
                    if (alias, name) in renames:
                        _functional_name(stmt, renames[(alias, name)])
                    made.append(ast.unparse(stmt))
                return {"texts": made, "used": sorted(rewrite.used)}

            key = Memo.key("blocks", chunk.digest, alias, mine, own, self.foreign, self.aliases)
            found = self._memo(key, make)
            texts += found["texts"]
            used.update(found["used"])
        return texts, used

    def function(
        self, module: str, tool: ToolSpec, summary: str, returns: str, renames: Mapping[tuple[str, str], str]
    ) -> tuple[str, set[str]]:
        def make() -> dict[str, Any]:
            rewrite = self.rewrite(renames)
            return {"text": _function(module, tool, summary, returns, rewrite), "used": sorted(rewrite.used)}

        params = [
            [p.py_name, p.value_annotation, p.required, p.schema_default, p.description, p.constraints, p.example]
            for p in tool.params
        ]
        spelled = sorted([list(k), v] for k, v in renames.items())
        key = Memo.key("function", module, tool.method, params, summary, returns, spelled, self.foreign, self.aliases)
        found = self._memo(key, make)
        return found["text"], set(found["used"])


def _reached(module: ModelModule, chunk: Chunk, roots: Sequence[str]) -> list[str]:
    """The definitions of ``chunk`` that ``roots`` reach (quoted forward references too), in order."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(n for n in _names(module.statement(name)) if n in chunk.spans and n not in seen)
    order = {name: i for i, name in enumerate(chunk.spans)}
    return sorted(seen, key=order.__getitem__)


#: How a read's value reaches the sandbox, by the package's contents class, and the stub's type of it.
SURFACE_KINDS = {"TextContents": "text", "ResourceContents": "text", "JsonContents": "json", "BlobContents": "blob"}
_SURFACE_RETURNS = {"text": "str", "json": "Any", "blob": "bytes", "prompt": "PromptResult"}
#: The prompt's value in the sandbox (the package's ``PromptResult`` as plain data).
_PROMPT_TYPES = (
    (
        "PromptMessage",
        "class {}(TypedDict):\n    role: str\n    type: str\n    text: str | None\n    content: dict[str, Any]",
    ),
    ("PromptResult", "class {}(TypedDict):\n    description: str | None\n    messages: list[{}]"),
)


def _learned_blocks(contents_code: str, roots: set[str], taken: set[str]) -> tuple[list[str], set[str]]:
    """The learned contents' TypedDicts ``roots`` reach, in stub form (``_contents.py``'s code, whose
    classes are named after their source and resource), and the names they use."""
    if not roots or not contents_code:
        return [], set()
    tree = ast.parse(contents_code)
    defs: dict[str, ast.stmt] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            defs[stmt.name] = stmt
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
            defs[stmt.targets[0].id] = stmt
    seen: set[str] = set()
    todo = sorted(roots)
    while todo:
        name = todo.pop()
        if name in defs and name not in seen:
            seen.add(name)
            todo += sorted(n for n in _names(defs[name]) if n in defs)
    blocks = []
    used: set[str] = set()
    for name, stmt in defs.items():
        if name in seen and name not in taken:
            rewrite = _Rewrite({}, set())
            blocks.append(ast.unparse(rewrite.visit(stmt)))
            used |= rewrite.used
    return blocks, used


def _surface_stub(
    surface: SurfaceSpec, taken: set[str], contents_code: str = ""
) -> tuple[list[str], set[str], tuple[tuple[str, str], ...]]:
    """The stub text of a source's resources and prompts (the types they need, a class each and
    its attribute), the typing names it uses, and the manifest's entries (function, kind)."""
    blocks: list[str] = []
    entries: list[tuple[str, str]] = []
    used: set[str] = set()
    names: dict[str, str] = {}
    roots = {m.value_type for m in surface.resources if m.value_type and m.value_type not in taken}
    blocks, used = _learned_blocks(contents_code, roots, taken)
    taken |= roots
    if surface.prompts:
        for name, text in _PROMPT_TYPES:
            names[name] = unique(name, taken)
            blocks.append(text.format(names[name], names.get("PromptMessage")))
        used |= {"TypedDict", "Any"}
    for attr, methods, what in (("resources", surface.resources, "Resources and resource templates"),
                                ("prompts", surface.prompts, "Prompts")):  # fmt: skip
        if not methods:
            continue
        holder = unique(f"{surface.class_prefix}{attr.capitalize()}", taken)
        lines = [f"class {holder}:", f'    """{what} of the {surface.source_doc} source: each one call."""']
        for m in methods:
            kind = (
                SURFACE_KINDS.get(m.contents, "json" if m.value_type else "text") if attr == "resources" else "prompt"
            )
            params = [p.declared() for p in m.params]
            used.update({"Literal"} if any(p.values for p in m.params) else set())
            signature = ", ".join(["self", *(["*", *params] if params else [])])
            returns = m.value_type if m.value_type in roots else _SURFACE_RETURNS[kind]
            returns = names.get(returns, returns)
            used.update({"Any"} & {returns})
            lines += ["", f"    async def {m.method}({signature}) -> {returns}:", f"        {m.docstring}"]
            entries.append((f"{attr}.{m.method}", kind))
        blocks.append("\n".join(lines))
        blocks.append(f"{attr}: {holder}")
    return blocks, used, tuple(entries)


def _module_stub(
    module: str, ns: NamespaceSpec, summaries: Mapping[str, str], stubs: _Stubs, contents_code: str = ""
) -> tuple[str, tuple[tuple[str, str], ...]]:
    in_roots: set[str] = set()
    out_roots: set[str] = set()
    returns: dict[str, str] = {}
    outputs = stubs.outputs
    for tool in ns.tools:
        ins, outs = stubs.refs(tool)
        in_roots.update(ins)
        value = tool.value_annotation
        used_out = set(outs)
        if used_out and (outputs is None or not used_out <= outputs.defined):
            value = "Any"  # the TypedDict run could not type these outputs
            used_out = set()
        returns[tool.method] = value
        out_roots |= used_out
    in_names = stubs.reached(stubs.inputs, in_roots)
    out_names = stubs.reached(outputs, out_roots) if outputs is not None else []

    # One name for each definition: the inputs keep theirs, an output class of the same name
    # (a different module's ``Filters``) takes the next free ``_2`` (naming rule 5).
    taken = set(in_names) | {t.method for t in ns.tools} | set(_TYPING)
    renames: dict[tuple[str, str], str] = {}
    for name in out_names:
        if name in taken:
            renames[("_s", name)] = unique(name, taken)
        else:
            taken.add(name)

    blocks, used = stubs.blocks(stubs.inputs, "_i", in_names, renames)
    if outputs is not None:
        more, also = stubs.blocks(outputs, "_s", out_names, renames)
        blocks += more
        used |= also
    for tool in ns.tools:
        text, also = stubs.function(module, tool, summaries[tool.method], returns[tool.method], renames)
        blocks.append(text)
        used |= also
    entries: tuple[tuple[str, str], ...] = ()
    if ns.surface is not None:
        more, also, entries = _surface_stub(ns.surface, taken | set(renames.values()), contents_code)
        blocks += more
        used |= also
    body = "\n\n".join(blocks)
    # Names only, not strings: a Literal["Any"] value is no use of typing.Any (strict pyright says so).
    used = used if body else set()
    typing = [n for n in _TYPING if n in used and n != "Annotated"]
    head = f"from typing import {', '.join(typing)}\n\n" if typing else ""
    return f"{head}{body}\n", entries


def example_call(module: str, tool: ToolSpec) -> str:
    """``await module.function(a='x', n=3)`` from the schema's ``examples`` (each parameter's first
    fitting scalar; a required one without an example takes its usable default), or "" when no
    parameter has one, a required one has neither, or the call would be over ``_EXAMPLE_MAX``
    characters even with the optional examples left out. The values are literals of JSON scalars
    (``json_default_literal``): no text of a server becomes code, and the line is deterministic."""
    if not any(p.example is not None for p in tool.params):
        return ""
    required = [(p.py_name, p.example or p.schema_default) for p in tool.params if p.required]
    if any(value is None for _, value in required):
        return ""
    optional = [(p.py_name, p.example) for p in tool.params if not p.required and p.example is not None]
    tries = [required + optional]
    if optional and any(p.required and p.example is not None for p in tool.params):
        tries.append(required)  # shorter, and still an example of its own
    for chosen in tries:
        call = f"await {module}.{tool.method}({', '.join(f'{name}={value}' for name, value in chosen)})"
        if len(call) <= _EXAMPLE_MAX:
            return call
    return ""


#: Characters of a stub's example call at most (the call whole, or no example).
_EXAMPLE_MAX = 200


def _function(module: str, tool: ToolSpec, summary: str, returns: str, rewrite: _Rewrite) -> str:
    params = []
    args = []
    for p in tool.params:
        annotation = _annotation(p.value_annotation, rewrite)  # the sandbox has no NOT_GIVEN: "= ..." says optional
        params.append(f"{p.py_name}: {annotation}" if p.required else f"{p.py_name}: {annotation} = {_default(p)}")
        said = "; ".join(x for x in (" ".join(clean_text(p.description).split()), p.constraints) if x)
        if said:
            args.append(f"    {p.py_name}: {_cut(said, _PARAM_MAX)}")
    signature = f"*, {', '.join(params)}" if params else ""
    result = _annotation(returns, rewrite)
    doc = summary + ("\n\nArgs:\n" + "\n".join(args) if args else "")
    example = example_call(module, tool)
    if example:
        doc += f"\n\nExample:\n    {example}"
    return f"async def {tool.method}({signature}) -> {result}:\n    {docstring_literal(doc, 4)}"


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
    memo: Memo | None = None,
    *,
    contents_code: str = "",
) -> tuple[CodeModeModule, ...]:
    """The stub module of every namespace; ``summaries`` maps (namespace attr, method) to its docstring line."""
    stubs = _Stubs(in_models, out_models, memo)
    names = sandbox_modules(ns.attr for ns in namespaces)
    modules = []
    for ns in namespaces:
        ns = replace(ns, tools=ns.callable_tools)  # a removed tool kept a while is no function here
        own = {t.method: summaries[(ns.attr, t.method)] for t in ns.tools}
        stub, surface = _module_stub(names[ns.attr], ns, own, stubs, contents_code)
        functions = tuple((t.method, t.wire_name) for t in ns.tools)
        modules.append(CodeModeModule(names[ns.attr], ns.attr, stub, functions, surface))
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
    if any(module.surface for module in modules):  # only packages whose servers serve resources or prompts
        lines.append("SURFACE: dict[str, dict[str, str]] = {")
        for module in modules:
            if module.surface:
                lines.append(f'    "{module.name}": {{')
                lines += [f'        "{function}": "{kind}",' for function, kind in module.surface]
                lines.append("    },")
        lines.append("}")
    return lines
