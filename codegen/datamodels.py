"""Models from datamodel-code-generator, and the type expressions the wrappers need from them.

One batched call per model kind: TypedDicts for inputs (callers pass plain dicts with wire keys,
and a type checker still checks them) and pydantic models for outputs (decoded values).
Wrapper signatures reuse the TypedDict field annotations, read back with ``ast``, so the keyword
arguments and the nested dict types can never disagree.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import io
import multiprocessing
import os
import re
import threading
import tokenize
import warnings
import zlib
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from codegen.cache import Cache, Memo, models_cache
from codegen.cache import worker as layer_worker
from codegen.errors import GenerateError
from codegen.literals import wire_literal
from codegen.naming import class_name
from codegen.syntax import Copying, defined_names

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

__all__ = [
    "INPUT_GROUP_TOOLS",
    "PARALLEL_MIN_DEFINITIONS",
    "STUB_RUN",
    "Chunk",
    "ModelModule",
    "ModelWorker",
    "generate_models",
    "input_group",
    "input_groups_for",
    "join_modules",
    "model_code",
]

#: The cache kind of the code-mode stubs' output TypedDicts (named as code_mode.py named it).
STUB_RUN = "code-mode-outputs"

#: Below this many definitions a forked worker costs more than it saves.
PARALLEL_MIN_DEFINITIONS = 200
_WRAPPERS = frozenset({"NotRequired", "Required", "ReadOnly"})
_BUILTINS = frozenset(dir(builtins))
# Names the model modules import or define themselves; no class may take one.
_IMPORTED = ("Annotated", "Any", "AwareDatetime", "BaseModel", "ConfigDict", "Field", "Literal", "NotRequired",
             "ReadOnly", "Required", "RootModel", "TypeAlias", "TypedDict")  # fmt: skip
_TAKEN = frozenset(_IMPORTED) | _BUILTINS


@dataclass(frozen=True)
class Chunk:
    """One module as one datamodel-code-generator run made it (the inputs are several, joined).

    Its outline (imports, and where each definition's statement is) is all a build needs to
    hold; a statement is parsed when a stage reads it. The outline of a chunk read before comes
    from the cache, so a rebuild after a small edit parses only the statements it reads."""

    code: str
    digest: str  # sha256 of ``code``: what a result read from this chunk is keyed by
    imports: Mapping[str, tuple[str, str]]  # local name -> (module, name in that module)
    #: definition -> first and last line of its statement (decorators included), in module order
    spans: Mapping[str, tuple[int, int]]


class ModelModule:
    """Generated source plus what the wrappers and the stubs read from it, statement by statement.

    ``defined`` and ``imports`` cover every chunk; a name used in a chunk is defined in that same
    chunk (each is one self-contained run), so what is read about a definition is a function of
    its chunk's code alone (``digest_of``)."""

    def __init__(
        self, code: str, alias: str, chunks: Sequence[Chunk], parsed: Mapping[str, ast.stmt] | None = None
    ) -> None:
        self.code = code
        self.alias = alias  # how the wrapper module imports it: ``_i`` / ``_o``
        self.chunks = tuple(chunks)
        self._chunk_of: dict[str, Chunk] = {}
        for chunk in self.chunks:
            for name in chunk.spans:
                self._chunk_of.setdefault(name, chunk)
        self.defined = frozenset(self._chunk_of)
        self.imports: Mapping[str, tuple[str, str]] = {k: v for c in self.chunks for k, v in c.imports.items()}
        #: Statements parsed so far (a cold build hands over the trees it parsed whole).
        self._parsed: dict[str, ast.stmt] = dict(parsed or {})
        #: The module's whole tree, when a cold build parsed it as one (``split_models`` reads it).
        self.tree: ast.Module | None = None

    def chunk_of(self, name: str) -> Chunk:
        return self._chunk_of[name]

    def statement(self, name: str) -> ast.stmt:
        """The statement that defines ``name`` (shared: never change it; ``codegen/syntax.py``)."""
        found = self._parsed.get(name)
        if found is None:
            chunk = self._chunk_of[name]
            start, end = chunk.spans[name]
            found = ast.parse("\n".join(chunk.code.split("\n")[start - 1 : end])).body[0]
            self._parsed[name] = found
        return found

    def fields_of(self, name: str) -> Mapping[str, ast.expr]:
        """A class's (or functional TypedDict's) fields: wire key -> annotation; empty otherwise."""
        if name not in self._chunk_of:
            return {}
        stmt = self.statement(name)
        if isinstance(stmt, ast.ClassDef):
            return {
                s.target.id: s.annotation
                for s in stmt.body
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
            }
        if isinstance(stmt, ast.Assign | ast.AnnAssign):
            return _functional_typeddict(stmt.value) or {}
        return {}

    def root_of(self, name: str) -> ast.expr | None:
        """The root annotation of a ``RootModel`` class; None for any other definition."""
        if name not in self._chunk_of:
            return None
        stmt = self.statement(name)
        if not isinstance(stmt, ast.ClassDef) or not any(_base_name(b) == "RootModel" for b in stmt.bases):
            return None
        return self.fields_of(name).get("root")

    def qualify(self, node: ast.expr, needed: dict[str, tuple[str, str]]) -> str:
        """Annotation text for use in another module: own names get ``alias.``; imports are recorded."""
        return ast.unparse(_Qualifier(self, needed).visit(_strip(node)))


class _Qualifier(Copying):
    def __init__(self, module: ModelModule, needed: dict[str, tuple[str, str]]) -> None:
        self.module = module
        self.needed = needed

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == "Literal":
            self.visit(node.value)  # the values are data, not forward references
            return node
        return self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, str) and _is_forward_ref(node.value):  # quoted forward reference
            parsed: ast.AST = self.visit(ast.parse(node.value, mode="eval").body)
            return parsed
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.module.defined:
            return ast.copy_location(ast.Attribute(ast.Name(self.module.alias, ast.Load()), node.id, ast.Load()), node)
        if node.id in self.module.imports:
            self.needed[node.id] = self.module.imports[node.id]
        elif node.id not in _BUILTINS:
            raise GenerateError(f"generated annotation uses unknown name {node.id!r}", "datamodel-code-generator")
        return node


def _is_forward_ref(text: str) -> bool:
    try:
        ast.parse(text, mode="eval")
    except SyntaxError:
        return False
    return True


def _strip(node: ast.expr) -> ast.expr:
    """Drop ``NotRequired[...]`` / ``Annotated[T, ...]`` wrappers: the signature wants plain ``T``."""
    while isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        head = node.value.id
        if head in _WRAPPERS:
            node = node.slice
        elif head == "Annotated" and isinstance(node.slice, ast.Tuple):
            node = node.slice.elts[0]
        else:
            break
    return node


def _respell_strings(code: str) -> str:
    """Re-spell every string literal in ``code`` through the one escaping function (``wire_literal``).

    datamodel-code-generator writes some keys verbatim (``"a\u202eb"`` in a functional TypedDict):
    a control, bidi or line-separator character would sit raw in the file ("Trojan Source", or a
    string that black cannot parse). Printable ASCII needs nothing, so such code is left alone.
    """
    if all(" " <= c <= "~" or c == "\n" for c in code):
        return code
    starts = [0]  # offsets of lines as the tokenizer counts them: "\n" only (not str.splitlines)
    for line in io.StringIO(code):
        starts.append(starts[-1] + len(line))
    out, last = [], 0
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.STRING:
            start = starts[tok.start[0] - 1] + tok.start[1]
            end = starts[tok.end[0] - 1] + tok.end[1]
            out += [code[last:start], wire_literal(ast.literal_eval(tok.string))]
            last = end
    out.append(code[last:])
    return "".join(out)


def _chunk(code: str, outlines: Memo | None) -> tuple[Chunk, dict[str, ast.stmt], ast.Module | None]:
    """``code``'s outline, from ``outlines`` when this code was read before (then nothing is
    parsed), else from its tree, which is handed on with it (its statements by name, and whole)."""
    digest = hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()
    key = Memo.key("outline", digest)
    found = outlines.get(key) if outlines is not None else None
    if found is not None:
        imports = {local: (module, name) for local, (module, name) in found["imports"].items()}
        spans = {name: (start, end) for name, start, end in found["spans"]}
        return Chunk(code, digest, imports, spans), {}, None
    tree = ast.parse(code)
    imports, spans, parsed = {}, {}, {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module and stmt.module != "__future__":
            for a in stmt.names:
                imports[a.asname or a.name] = (stmt.module, a.name)
            continue
        start = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
        for name in defined_names(stmt):
            if name not in spans:
                spans[name] = (start, stmt.end_lineno or stmt.lineno)
                parsed[name] = stmt
    if outlines is not None:
        outline = {"imports": {k: list(v) for k, v in imports.items()}, "spans": [[n, *s] for n, s in spans.items()]}
        outlines.put(key, outline)
    return Chunk(code, digest, imports, spans), parsed, tree


def _read_module(codes: Sequence[str], alias: str, outlines: Memo | None, joined: str | None = None) -> ModelModule:
    """The module made of ``codes`` (one run each; ``joined``: their text as one module)."""
    chunks, parsed = [], {}
    whole: ast.Module | None = None
    for code in codes:
        chunk, trees, whole = _chunk(code, outlines)
        chunks.append(chunk)
        parsed.update(trees)
    module = ModelModule(joined if joined is not None else codes[0], alias, chunks, parsed)
    if len(codes) == 1 and joined is None:  # the module is that one run's: its tree is the module's
        module.tree = whole
    return module


def _base_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _functional_typeddict(value: ast.expr | None) -> dict[str, ast.expr] | None:
    """Fields of ``X = TypedDict('X', {'wire-key': T, ...})``, the form used for non-identifier keys."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "TypedDict"):
        return None
    if len(value.args) < 2 or not isinstance(value.args[1], ast.Dict):
        return None
    out: dict[str, ast.expr] = {}
    for k, v in zip(value.args[1].keys, value.args[1].values, strict=True):
        if isinstance(k, ast.Constant) and isinstance(k.value, str):
            out[k.value] = v
    return out


_COMMON: dict[str, Any] = {
    "disable_timestamp": True,
    "use_annotated": True,
    "field_constraints": True,
    "enum_field_as_literal": "all",
    "use_standard_collections": True,
    "use_union_operator": True,
    "use_double_quotes": True,
    "use_closed_typed_dict": False,
    "parent_scoped_naming": True,  # nested classes named from their place, never by counters
    "formatters": [],  # formatted once, with the rest of the package
}


#: What the class of the schema document itself is named; that class is no tool's and is removed.
_DOCUMENT_ROOT = "Model"


class _ClassNames:
    """Class names for datamodel-code-generator, which names every nested class from its place
    (``parent_scoped_naming``: the parent class's name, then the property key, an array's item
    singular): ``ChartGenerateAreaChartInput`` > ``data`` > items is ``ChartGenerateAreaChartInputDatum``.

    Our definition names (``codegen.naming``) are kept as they are; the parent part of a nested
    name is kept verbatim and the rest gets the PascalCase rule. A nested name equal to one of our
    definitions (or an imported or builtin name) gets the suffix ``Model``. So a class is named by
    its tool, and its place in that tool's schema, alone: adding a tool or a source never renames
    another tool's classes (no counters across tools; docs/generator.md "Names", rule 6).
    """

    def __init__(self, ours: frozenset[str]) -> None:
        self.ours = ours
        self.given: set[str] = set(ours)
        self.rooted = False

    def __call__(self, raw: str) -> str:
        if raw in self.ours:
            return raw
        if raw == _DOCUMENT_ROOT and not self.rooted:
            # The library names the document's class first; a later ``Model`` is a property's
            # class (a key ``Model`` whose schema becomes an alias, found by the fuzz session),
            # which would share the statement that _without_root removes.
            self.rooted = True
            return _DOCUMENT_ROOT  # removed from the module afterwards (_without_root)
        parent, _, rest = raw.rpartition("_")
        while parent and parent not in self.given:  # the parent's name may itself hold a "_"
            parent, _, more = parent.rpartition("_")
            rest = f"{more}_{rest}"
        name = parent + class_name(rest, fallback="Model") if parent else class_name(raw, fallback="Model")
        while name in self.ours or name in _TAKEN or name == _DOCUMENT_ROOT:
            name += "Model"
        self.given.add(name)
        return name


def _without_root(code: str, tree: ast.Module) -> tuple[str, ast.Module | None]:
    """The module without the class of the schema document itself (``Model: TypeAlias = Any``, or
    a ``RootModel[Any]``): no tool's type, and exported it would be an artificial name. Imports
    only it used go too (strict pyright reports an unused import). ``tree``: ``code`` parsed; it
    is returned with the code while it still fits it, else None."""
    root = next((s for s in tree.body if defined_names(s) == [_DOCUMENT_ROOT]), None)
    if root is None or root.end_lineno is None:
        return code, tree
    lines = code.split("\n")
    del lines[root.lineno - 1 : root.end_lineno]
    body = "\n".join(line for line in lines if not line.startswith(("from ", "import ")))
    imports = [s for s in tree.body if isinstance(s, ast.ImportFrom) and s.module != "__future__"]
    for stmt in reversed(imports):  # above the root, bottom-up: earlier line numbers stay right
        if stmt.end_lineno is None or stmt.lineno > root.lineno:
            continue
        kept = [a for a in stmt.names if re.search(rf"\b{re.escape(a.asname or a.name)}\b", body)]
        if len(kept) < len(stmt.names):
            text = [f"from {stmt.module} import {', '.join(ast.unparse(a) for a in kept)}"] if kept else []
            lines[stmt.lineno - 1 : stmt.end_lineno] = text
    return "\n".join(lines), None


def _without_empty_keys(node: Any) -> Any:
    """The document without properties named ``""``: a TypedDict may not have an empty key (pyright:
    "Names within a TypedDict cannot be empty"). The parameter of that name is typed ``Any`` and
    still sent under its wire key; a nested object simply does not declare it."""
    if isinstance(node, list):
        return [_without_empty_keys(v) for v in node]
    if not isinstance(node, Mapping):
        return node
    out = {k: _without_empty_keys(v) for k, v in node.items()}
    props = out.get("properties")
    if isinstance(props, Mapping) and "" in props:
        out["properties"] = {k: v for k, v in props.items() if k != ""}
        if isinstance(out.get("required"), list):
            out["required"] = [r for r in out["required"] if r != ""]
    return out


def _property_keys(schema: Any) -> set[str]:
    """Every property name anywhere in ``schema`` (a loop: schemas may be deep)."""
    keys: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            props = node.get("properties")
            if isinstance(props, Mapping):
                keys.update(k for k in props if isinstance(k, str))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return keys


#: Builtin names the output annotations use. datamodel-code-generator aliases its import away
#: from a field of the same name only sometimes (an optional field, not a required one).
_ANNOTATION_BUILTINS = ("bool", "bytes", "dict", "float", "frozenset", "int", "list", "object", "set", "str", "tuple")
_SHADOWING = frozenset(_IMPORTED) | frozenset(_ANNOTATION_BUILTINS)


def _field_aliases(document: Mapping[str, Any]) -> dict[str, str]:
    """Python names for output fields whose own name would break the module: a name the module
    imports or a builtin its annotations use (``Annotated: int`` makes every later
    ``Annotated[...]`` in the class name the field: mypy and pyright reject it) becomes ``name_``,
    and a ``model_*`` name, which pydantic reserves (``model_dump_`` still warns under its
    protected namespaces, an exception under ``-W error``), becomes ``field_model_*``. The wire
    name stays exact: it is the field's alias. Sorted keys, so the names are deterministic."""
    from datamodel_code_generator.format import PythonVersion
    from datamodel_code_generator.model.field_name import PydanticFieldNameResolver

    resolver = PydanticFieldNameResolver(target_python_version=PythonVersion.PY_311)
    names = {key: resolver.get_valid_name(key) for key in sorted(_property_keys(document))}
    used = set(names.values())
    aliases: dict[str, str] = {}
    for key, name in names.items():
        if name in _SHADOWING or name.startswith("model_"):
            new = resolver.get_valid_name(f"field_{key}") if name.startswith("model_") else f"{name}_"
            while new in used:
                new += "_"
            used.add(new)
            aliases[key] = new
    return aliases


def model_code(document: Mapping[str, Any], *, kind: str, names: frozenset[str] | None = None) -> str:
    """One datamodel-code-generator run over every definition in ``document`` (unformatted: the
    package's one formatting pass lays it out with the rest).

    ``kind`` is ``"inputs"`` (TypedDicts) or ``"outputs"`` (pydantic v2 models). ``names`` are the
    definitions of the whole build when ``document`` holds only some of them (one group).
    """
    import datamodel_code_generator as dcg
    from datamodel_code_generator.enums import DataModelType, InputFileType
    from datamodel_code_generator.format import PythonVersion

    if not document.get("$defs"):
        return _EMPTY
    if kind == "inputs":
        document = _without_empty_keys(document)
    model_type = DataModelType.TypingTypedDict if kind == "inputs" else DataModelType.PydanticV2BaseModel
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            generated = dcg.generate(
                dict(document),
                input_file_type=InputFileType.JsonSchema,
                output_model_type=model_type,
                target_python_version=PythonVersion.PY_311,
                custom_class_name_generator=_ClassNames(names or frozenset(document["$defs"])),
                aliases=_field_aliases(document) if kind == "outputs" else None,
                **_COMMON,
            )
    except Exception as exc:  # the library's own errors carry no location; say which stage failed
        raise GenerateError(f"datamodel-code-generator could not build the {kind}: {exc}") from exc
    if not isinstance(generated, str):
        raise GenerateError(f"datamodel-code-generator returned no single module for the {kind}")
    # Its own header names a pseudo file; ours replaces it.
    lines = generated.split("\n")  # not splitlines(), which also splits at U+2028 and other separators
    while lines and (lines[0].startswith("#") or not lines[0].strip()):
        lines.pop(0)
    code = _bare_aliases_respelled("\n".join(lines) + "\n")
    # One parse for the two steps that read the module's statements (a module of 1,000 tools'
    # outputs takes most of a second to parse); respelled strings change the text, so then two.
    code, tree = _without_root(code, ast.parse(code))
    respelled = _respell_strings(code)
    return _one_blank_line(respelled, tree if respelled == code else None)


def _bare_aliases_respelled(code: str) -> str:
    """The module with each bare use of an import it aliased spelled with the alias.

    datamodel-code-generator imports a name under an alias (``Any as Any_aliased``) when a field
    would shadow it, yet writes some types with the bare name (``X: TypeAlias = Any`` for an
    ``enum: [null]`` beside ``anyOf``, found by the fuzz session): a NameError at import. A bare
    name the module itself binds (a model class named ``Any``) is that binding and stays."""
    if "_aliased" not in code:  # its aliases are always ``<name>_aliased``: most modules need no parse
        return code
    tree = ast.parse(code)
    aliased = {
        a.name: a.asname
        for stmt in tree.body
        if isinstance(stmt, ast.ImportFrom)
        for a in stmt.names
        if a.asname is not None and a.asname != a.name
    }
    if not aliased:
        return code
    bound = {name for stmt in tree.body for name in defined_names(stmt)}
    bound |= {a.asname or a.name for s in tree.body if isinstance(s, ast.Import | ast.ImportFrom) for a in s.names}
    # Loads only: a field named like the import (``Any: NotRequired[Any_aliased]``) is a wire key.
    loads = (n for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
    bare = [n for n in loads if n.id in aliased and n.id not in bound]
    if not bare:
        return code
    lines = code.split("\n")  # "\n" only, as the parser counts lines
    # Right to left within a line, so the offsets still to replace stay right; offsets are UTF-8.
    for node in sorted(bare, key=lambda n: (n.lineno, n.col_offset), reverse=True):
        line = lines[node.lineno - 1].encode("utf-8", "surrogatepass")
        line = line[: node.col_offset] + aliased[node.id].encode() + line[cast(int, node.end_col_offset) :]
        lines[node.lineno - 1] = line.decode("utf-8", "surrogatepass")
    return "\n".join(lines)


def _one_blank_line(code: str, tree: ast.Module | None = None) -> str:
    """The module with one blank line between top-level statements (none between imports).

    The formatters keep up to two blank lines where the code has them, and black and ruff differ
    on how many they keep after imports; from one, both add exactly what black's style requires
    (two around a class), so the formatted module is the same whichever of them runs. ``tree``:
    ``code`` parsed, when the caller has it.
    """
    tree = tree or ast.parse(code)
    lines = code.split("\n")  # "\n" only, as the parser counts lines
    out: list[str] = []
    previous: ast.stmt | None = None
    for stmt in tree.body:
        start = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
        if previous is not None and previous.end_lineno is not None:
            gap = [line for line in lines[previous.end_lineno : start - 1] if line.strip()]  # comments stay
            both_imports = all(isinstance(s, ast.Import | ast.ImportFrom) for s in (previous, stmt))
            out += gap if both_imports else ["", *gap]
        out += lines[start - 1 : stmt.end_lineno]
        previous = stmt
    return "\n".join(out) + "\n"


def _can_fork() -> bool:
    # A fork copies only the calling thread; with others alive (an MCP client's loop, say) it could
    # inherit a held lock, so it is used only when this is the one thread.
    return (
        "fork" in multiprocessing.get_all_start_methods()
        and threading.active_count() == 1
        and ((os.cpu_count() or 1) > 1)
    )


#: Tools per batched run of the input models. An edited input schema reruns the model generator
#: over its own group only; each run also costs a fixed ~7 ms, so groups stay this large.
INPUT_GROUP_TOOLS = 64
#: Above this many tools, groups of LARGE_GROUP_TOOLS: a group's run (about 2 ms a definition)
#: is then most of an edit's rerun, while the runs' fixed costs add ~0.5 ms a tool to a cold
#: run (about 1.5%). Below it a cold run is short and those costs weigh more, an edit less.
LARGE_CATALOG_TOOLS = 512
LARGE_GROUP_TOOLS = 16


def input_group(definition: str, groups: int) -> int:
    """The run a tool's input definitions go to: a hash of its input definition's name (never of
    its schema), so an edit to a schema leaves every tool in its group."""
    return zlib.crc32(definition.encode("utf-8")) % groups


def input_groups_for(tools: int) -> int:
    size = LARGE_GROUP_TOOLS if tools > LARGE_CATALOG_TOOLS else INPUT_GROUP_TOOLS
    return max(1, -(-tools // size))


@dataclass(frozen=True)
class _Job:
    """One datamodel-code-generator run of a build."""

    name: str  # for messages and the cache ("inputs", "outputs", STUB_RUN)
    document: Mapping[str, Any]
    kind: str  # the model kind it makes (model_code's ``kind``)
    #: Every definition name of its kind in the whole build: a nested class never takes one,
    #: whichever group it is generated in (_ClassNames).
    names: frozenset[str]

    def run(self) -> str | None:
        """The run's code; None for stubs the model generator cannot make (their results become Any)."""
        try:
            return model_code(self.document, kind=self.kind, names=self.names)
        except GenerateError:
            if self.name == STUB_RUN:
                return None
            raise


def _job_keys(jobs: Sequence[_Job]) -> list[str]:
    """Each run's cache key (``Cache.models_key``). The outputs and the stubs share one document and
    the runs of a kind one set of names, so each document and each set is spelled once, not once
    per run: at 1,000 tools the 65 runs spelled the outputs twice and the 2,000 input names 63
    times, about a tenth of an edited rerun."""
    documents: dict[int, str] = {}  # id of a document -> its text (every job outlives this call)
    names: dict[frozenset[str], str] = {}
    keys = []
    for job in jobs:
        document = documents.get(id(job.document))
        if document is None:
            document = documents[id(job.document)] = Cache.spell(job.document)
        spelled = names.get(job.names)
        if spelled is None:
            spelled = names[job.names] = Cache.spell(sorted(job.names))
        keys.append(Cache.models_key(document, spelled, job.name))
    return keys


def _runs(jobs: list[_Job]) -> list[str | None]:
    return [job.run() for job in jobs]


#: From this many tools, a rerun after an edit starts ``ModelWorker`` first: the model
#: generator's import (~0.4 s) then overlaps the plans, keys and specs (as long, at this size).
WARM_WORKER_TOOLS = LARGE_CATALOG_TOOLS
#: From this many tools, a cold build starts ``ModelWorker`` first, as a rerun does: its share of
#: the model runs (``generate_models``) then starts warm, the import done while this process planned.
#: Below it (about PARALLEL_MIN_DEFINITIONS definitions) the runs stay in this process.
COLD_WORKER_TOOLS = 100
#: What the worker generates first, to import every module of the model generator it needs.
_WARM_UP = {"$defs": {"Warm": {"type": "object", "properties": {"a": {"type": "integer"}}}}}


def _serve(conn: Connection, parents_end: Connection, claims: Any) -> None:
    """The worker: warm up, then run the one batch of jobs it is sent (its own, then the shared
    ones it claims from the front, ``_claim``), or exit when it is sent none."""
    # The fork holds a copy of the parent's end too: closed here, so a parent that dies (kill -9)
    # gives this end EOF, and the worker exits instead of waiting forever.
    parents_end.close()
    try:
        model_code(_WARM_UP, kind="inputs")
        jobs, shared = conn.recv()
        try:
            codes = _runs(jobs)
            mine: dict[int, str | None] = {}
            while (index := _claim(claims, front=True)) is not None:
                mine[index] = shared[index].run()
            conn.send(("done", (codes, mine)))
        except Exception as exc:  # a GenerateError of a job: the parent raises it
            conn.send(("failed", exc))
    except (EOFError, OSError):  # the parent needed no model, or is gone
        pass
    finally:
        os._exit(0)  # a fork: never flush or run what the parent's process would at exit


def _claim(claims: Any, *, front: bool) -> int | None:
    """The next shared job: the worker takes them from the front, the parent from the back, so
    each runs once, by whichever process gets there first. ``claims``: shared ``[front, end)``."""
    with claims.get_lock():
        first, end = claims[0], claims[1]
        if first >= end:
            return None
        if front:
            claims[0] = first + 1
            return int(first)
        claims[1] = end - 1
        return int(end - 1)


class ModelWorker:
    """A forked process that imports datamodel-code-generator while the build plans, then runs
    the model jobs this build misses (the inputs and the code-mode stubs of a cold build, an edited
    group of inputs, say) while the parent runs the outputs. The input groups are shared: when the
    parent is done with its own runs it takes groups from the back of the list while the worker
    takes them from the front (``steal``), so neither waits for the other. Each group's code is a
    function of its document alone, so the package is the same whoever ran which. Used once;
    ``close`` ends it whether or not it was used."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("fork")
        self._conn, child = context.Pipe()
        self._claims = context.Array("i", 2)  # [front, end) of the shared jobs not claimed yet
        self._process = context.Process(target=_serve, args=(child, self._conn, self._claims), daemon=True)
        self._process.start()
        child.close()
        self.used = False

    @staticmethod
    def start(tools: int, *, rerun: bool = True) -> ModelWorker | None:
        """A worker when the catalog is large enough to pay for it (``rerun``: a build of a package
        built before, whose cache holds most runs) and a fork is safe."""
        least = WARM_WORKER_TOOLS if rerun else COLD_WORKER_TOOLS
        return ModelWorker() if tools >= least and _can_fork() else None

    def submit(self, jobs: list[_Job], shared: Sequence[_Job] = ()) -> None:
        """``jobs`` for the worker, then ``shared`` for whichever process claims each first."""
        self.used = True
        with self._claims.get_lock():
            self._claims[0], self._claims[1] = 0, len(shared)
        self._conn.send((jobs, list(shared)))

    def steal(self) -> int | None:
        """The index of a shared job no process has claimed, now this one's; None when none is left."""
        return _claim(self._claims, front=False)

    def results(self) -> tuple[list[str | None], dict[int, str | None]]:
        """The codes of the worker's own jobs, and of the shared jobs it ran by their index."""
        # Bounded by the worker's life: a worker killed (out of memory, say) ends the wait.
        while not self._conn.poll(1.0):
            if not self._process.is_alive() and not self._conn.poll(0):
                raise GenerateError("the model worker ended without an answer")
        try:
            status, value = self._conn.recv()
        except (EOFError, OSError) as exc:
            raise GenerateError("the model worker ended without an answer") from exc
        if status == "failed":
            raise value
        return cast(tuple[list[str | None], dict[int, str | None]], value)

    def close(self) -> None:
        self.used = True
        if self._process.is_alive():
            self._process.kill()
        self._process.join(timeout=10)
        self._conn.close()


def generate_models(
    inputs: Sequence[Mapping[str, Any]],
    outputs: Mapping[str, Any],
    *,
    parallel: bool | None = None,
    outlines: Memo | None = None,
    meanwhile: Callable[[], object] | None = None,
) -> tuple[ModelModule, ModelModule, ModelModule | None]:
    """Input TypedDicts, output models and the code-mode stubs' output TypedDicts: batched runs,
    on two cores: the outputs here, the stubs in the cache layer's model worker when one was
    started (warmed up while the build planned), and the input groups in either, whichever is free
    first (``ModelWorker.steal``). Without a warmed worker, a catalog large enough to pay for a
    fork (``parallel=None`` decides by size) forks one now for the stubs and the inputs; else
    every run is made here.

    ``inputs`` are the input definitions in groups (``input_group``), one run each, joined into
    one module afterwards; a run whose document was generated before comes from the cache layer
    (``cache.models_cache``). ``meanwhile``: work of the caller's that needs no model, called once,
    while the worker runs when there is one (an edited input group: the worker's warm-up is then
    most of the build's wait), else after the runs."""
    cache, found = models_cache(), layer_worker()
    worker = found if isinstance(found, ModelWorker) else None
    input_names = frozenset(n for doc in inputs for n in doc.get("$defs", {}))
    jobs = [_Job("inputs", doc, "inputs", input_names) for doc in inputs]
    output_names = frozenset(outputs.get("$defs", {}))
    jobs += [_Job("outputs", outputs, "outputs", output_names), _Job(STUB_RUN, outputs, "inputs", output_names)]
    keys = _job_keys(jobs) if cache else []
    codes: list[str | None] = [cache.get_models(key) for key in keys] if cache else [None] * len(jobs)
    missing = [i for i, code in enumerate(codes) if code is None]
    if parallel is None:
        size = sum(len(jobs[i].document.get("$defs", {})) for i in missing)
        parallel = size >= PARALLEL_MIN_DEFINITIONS and _can_fork()
    _run_missing(jobs, codes, missing, worker, parallel, meanwhile or (lambda: None))
    if cache:
        for i in missing:
            code = codes[i]
            if code is not None:
                cache.put_models(keys[i], code)
    groups = [cast(str, code) for code in codes[: len(inputs)]] or [_EMPTY]
    inputs_code = _joined(groups, outlines) if len(groups) > 1 else groups[0]
    if inputs_code is None:  # two groups named a class alike: one run over every input, as one group
        merged = {n: d for doc in inputs for n, d in doc["$defs"].items()}
        whole = _Job("inputs", {**inputs[0], "$defs": merged}, "inputs", input_names)
        key = _job_keys([whole])[0] if cache else ""
        inputs_code = (cache.get_models(key) if cache else None) or cast(str, whole.run())
        if cache:
            cache.put_models(key, inputs_code)
        groups = [inputs_code]
    outputs_code, stubs_code = codes[len(inputs) :]
    return (
        _read_module(groups, "_i", outlines, joined=inputs_code),
        _read_module([cast(str, outputs_code)], "_o", outlines),
        _read_module([stubs_code], "_s", outlines) if stubs_code is not None else None,
    )


def _run_missing(
    jobs: Sequence[_Job],
    codes: list[str | None],
    missing: Sequence[int],
    worker: ModelWorker | None,
    parallel: bool,
    meanwhile: Callable[[], object],
) -> None:
    """The runs at ``missing`` made, their code put in ``codes``: the outputs here, the rest by the
    warmed ``worker`` (the input groups shared with this process) or a pool forked now when
    ``parallel``, else here. ``meanwhile`` is called once: while the other process runs, if any."""
    here = [i for i in missing if jobs[i].name == "outputs"]
    there = [i for i in missing if jobs[i].name != "outputs"]
    if worker is not None and not there:
        worker.close()  # nothing for it (a description edit): its warm-up ends here
    if there and worker is not None and not worker.used:  # warmed up while this process planned: it runs them
        own = [i for i in there if jobs[i].name != "inputs"]
        shared = [i for i in there if jobs[i].name == "inputs"]
        worker.submit([jobs[i] for i in own], [jobs[i] for i in shared])
        for i in here:
            codes[i] = jobs[i].run()
        # Done with its own runs (the model generator imported), this process helps with the groups left.
        while here and (index := worker.steal()) is not None:
            codes[shared[index]] = jobs[shared[index]].run()
        meanwhile()
        done, theirs = worker.results()
        for i, code in zip(own, done, strict=True):
            codes[i] = code
        for index, code in theirs.items():
            codes[shared[index]] = code
    elif here and there and parallel and _can_fork():
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
            pending = pool.submit(_runs, [jobs[i] for i in there])
            codes[here[0]] = jobs[here[0]].run()
            meanwhile()
            for i, code in zip(there, pending.result(), strict=True):
                codes[i] = code
    else:
        for i in missing:
            codes[i] = jobs[i].run()
        meanwhile()


#: What a run over no definitions makes.
_EMPTY = "from __future__ import annotations\n"


def _joined(codes: Sequence[str], memo: Memo | None) -> str | None:
    """``join_modules``, kept in ``memo`` under the digests of the modules joined; each module's
    part of the join (``_join_part``) is kept under its own digest, so after an edit only the
    edited group's module is parsed."""
    digests = [hashlib.sha256(c.encode("utf-8", "surrogatepass")).hexdigest() for c in codes]
    key = Memo.key("joined", digests)
    found = memo.get(key) if memo is not None else None
    if found is None:
        parts = []
        for module, digest in zip(codes, digests, strict=True):
            part_key = Memo.key("join-part", digest)
            part = memo.get(part_key) if memo is not None else None
            if part is None:
                part = _join_part(module)
                if memo is not None:
                    memo.put(part_key, part)
            parts.append(part)
        found = {"code": join_modules(codes, parts)}
        if memo is not None:
            memo.put(key, found)
    code: str | None = found["code"]
    return code


def _join_part(code: str) -> dict[str, Any]:
    """What ``join_modules`` reads of one module: its leading ``from`` imports (module, names),
    the names it defines after them, and the line its statements start after."""
    tree = ast.parse(code)
    imports: list[list[Any]] = []
    leading = 0  # the module's first statements that are imports
    while leading < len(tree.body) and isinstance(stmt := tree.body[leading], ast.ImportFrom) and stmt.module:
        imports.append([stmt.module, [a.name if a.asname is None else f"{a.name} as {a.asname}" for a in stmt.names]])
        leading += 1
    defined = [name for stmt in tree.body[leading:] for name in defined_names(stmt)]
    after = (tree.body[leading - 1].end_lineno or 0) if leading else 0
    return {"imports": imports, "defined": defined, "after": after, "empty": leading == len(tree.body)}


def join_modules(codes: Sequence[str], parts: Sequence[Mapping[str, Any]] | None = None) -> str | None:
    """Model modules as one: their imports merged (one line per module, names sorted), then each
    module's statements in turn. ``parts``: each module's ``_join_part``, when known.

    None when two of them define one name (a nested class of one group named like a class of
    another): the caller then makes the module in one run, which names the two apart."""
    imported: dict[str, set[str]] = {}
    bodies: list[str] = []
    defined: set[str] = set()
    for code, part in zip(codes, parts if parts is not None else [_join_part(c) for c in codes], strict=True):
        for module, names in part["imports"]:
            imported.setdefault(module, set()).update(names)
        for name in part["defined"]:
            if name in defined:
                return None
            defined.add(name)
        if not part["empty"]:
            bodies.append("\n".join(code.split("\n")[part["after"] :]).strip("\n"))  # "\n": as the parser counts
    if not bodies:
        return _EMPTY
    future = imported.pop("__future__", set()) | {"annotations"}
    head = [f"from __future__ import {', '.join(sorted(future))}"]
    head += [f"from {module} import {', '.join(sorted(imported[module]))}" for module in sorted(imported)]
    # One blank line between statements, as _one_blank_line leaves them; the formatter makes it two.
    return "\n".join(head) + "\n\n" + "\n\n".join(bodies) + "\n"
