"""Render a ``PackageSpec`` into file contents, then format them in one pass (``ruff format``)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codegen import cache as cache_layer
from codegen.emit.api_page import API_PAGE, api_page
from codegen.emit.flavours import FLAVOURS, PARTS
from codegen.emit.formatting import Formatting, format_files
from codegen.emit.templates import templates_dir
from codegen.errors import GenerateError
from codegen.model import SHARED_MODULE, PackageSpec, ToolSpec
from mas.runtime.contracts import _rules, uri_template

if TYPE_CHECKING:
    import jinja2

__all__ = ["RULES_PATH", "SHIM_DIR", "render_package", "runtime_sources"]

_CODEGEN = Path(__file__).resolve().parents[1]
#: The runtime shim, a package copied verbatim into every generated package as ``_runtime/``.
SHIM_DIR = _CODEGEN / "shim" / "_runtime"
#: The runtime of resources and prompts, copied as ``_surface_runtime.py`` into packages that have any.
SURFACE_RUNTIME_PATH = _CODEGEN / "shim" / "_surface_runtime.py"
#: The RFC 6570 rule (the runtime's own file), copied as ``_uri_template.py`` beside it.
URI_TEMPLATE_PATH = Path(uri_template.__file__).resolve()
#: The contract's shared rules, which the shim imports: the runtime's own file, read at render
#: time and copied verbatim as the package's ``_rules.py`` (one rules file, no copy in toolgen).
RULES_PATH = Path(_rules.__file__).resolve()


@cache
def _environment() -> jinja2.Environment:
    import jinja2  # imported only when something is rendered: a cached run never needs it

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir()),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # Python source, not HTML; every untrusted value arrives pre-escaped
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _module(header: str, doc: str, code: str) -> str:
    return f'{header}\n"""{doc}"""\n\n{code}'


_OUTPUT_DOC = "Result models of one tool (pydantic), decoded from structured content."
_CONTENTS_DOC = "JSON resources' contents, typed as learned from recorded reads (TypedDicts with the wire keys)."
_SHARED_DOC = "Result models that several tools share, or that no tool's result names."


_CODE_MODE_DOC = (
    "Code mode: the sandbox API of this package, one stub module per source (``from tools import <name>``).\n\n"
    "``mas.runtime.code_mode.CodeMode(provider, package=...)`` reads the stubs beside this file and\n"
    "``MODULES`` (module -> function -> the wire name it calls) and ``NAMESPACES`` (module -> the\n"
    "``Tools`` attribute whose methods the functions are); see toolgen's docs/code-mode.md.\n"
)


def _code_mode_files(pkg: PackageSpec) -> dict[str, str]:
    # Imported here: a cached run renders nothing, so it never loads the stubs' module.
    from codegen.emit.code_mode import CODE_MODE_DIR, manifest_lines

    files = {f"{CODE_MODE_DIR}/{m.name}.pyi": f"{pkg.header}\n{m.stub}" for m in pkg.code_mode}
    manifest = "\n".join(manifest_lines(pkg.code_mode))
    files[f"{CODE_MODE_DIR}/__init__.py"] = _module(pkg.header, _CODE_MODE_DOC, f"{manifest}\n")
    return files


def runtime_sources(*, surface: bool = False) -> dict[str, Path]:
    """What every package carries verbatim below its header: path inside the package -> source file.
    ``surface``: the package has resources or prompts, so it carries their runtime and the RFC 6570
    rule too (a package of tools alone does not: its files stay as they were)."""
    files = {f"_runtime/{path.name}": path for path in sorted(SHIM_DIR.glob("*.py"))}
    files["_rules.py"] = RULES_PATH
    if surface:
        files["_surface_runtime.py"] = SURFACE_RUNTIME_PATH
        files["_uri_template.py"] = URI_TEMPLATE_PATH
    return files


def _split(text: str, header: str) -> tuple[str, str]:
    """``text`` as its first lines, as many as ``header`` has, and the rest."""
    lines = header.count("\n") + 1
    parts = text.split("\n", lines)
    return "\n".join(parts[:lines]), parts[lines] if len(parts) > lines else ""


class _Formatted:
    """The formatter run over the modules whose formatted text the cache layer does not hold,
    started at once (``Formatting``), so the caller renders ``_tools.py`` meanwhile; ``result()``
    gives every module formatted. A module is formatted with a placeholder for its header
    (comment lines, whose text the formatter never touches, so it formats alike whatever its
    header says); the layer's ``formatted`` table keeps the formatted text below it under that
    text's digest."""

    def __init__(self, files: Mapping[str, str], headers: Mapping[str, str]) -> None:
        self.files, self.headers = files, headers
        self.memo = memo = cache_layer.memo("formatted")
        self.out: dict[str, str] = {}
        todo: dict[str, str] = {}
        self.keys: dict[str, str | None] = {}
        for rel, text in files.items():
            header, body = _split(text, headers[rel])
            placeholder = "\n".join(["# toolgen"] * (header.count("\n") + 1))
            plain = f"{placeholder}\n{body}"
            self.keys[rel] = key = memo.key("formatted", _sha256(plain)) if memo is not None else None
            kept = memo.get(key) if memo is not None else None
            if isinstance(kept, str):
                self.out[rel] = f"{header}\n{kept}"
            else:
                todo[rel] = plain
        self.run = Formatting(todo)

    def result(self) -> dict[str, str]:
        for rel, formatted in self.run.result().items():
            header = _split(self.files[rel], self.headers[rel])[0]
            body = _split(formatted, header)[1]
            if self.memo is not None:
                self.memo.put(self.keys[rel], body)
            self.out[rel] = f"{header}\n{body}"
        return self.out


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


#: A tool's methods in ``_tools.py`` (``_tool.py.jinja``). Its parts, in the order they are made
#: and kept: its ``ToolInfo`` constant, then these, sync, then async.
_METHODS = tuple(f.name for f in FLAVOURS)
#: The ``class`` line that the methods are formatted under, apart from their module.
_HOLDER = "class _toolgen_parts:"
#: Marks each part where the parts are formatted, and each part's place in the module; no
#: generated name starts with ``_toolgen``, and the formatter keeps a comment's text as it is.
_MARK = "_toolgen_part_"
#: A mark, at the top level or in the class (no part has a line so: docstrings are indented more).
_MARK_LINE = re.compile(rf"(?:    )?# {_MARK}(\d+)")
#: A placeholder as the formatter leaves it: a constant, or a method's first line.
_PLACEHOLDER = re.compile(rf"{_MARK}(\d+) = None|    def {_MARK}(\d+)\(self\):")


def _part_key(tool: ToolSpec, prefix: str) -> str:
    """A digest of all a tool's parts are made of: its spec (every field, in its ``repr``, which
    quotes each string exactly) and its namespace's class prefix."""
    return _sha256(repr((prefix, tool)))


def _tool_parts(macros: Any, tool: ToolSpec, prefix: str) -> list[str]:
    """One tool's parts as the templates print them (unformatted): its constant, then its methods."""
    parts = [macros.tool_info(tool)]
    for is_async in (False, True):
        cls = ("Async" if is_async else "") + prefix + "Tools"  # the value methods' class
        parts += [getattr(macros, f.macro)(tool, is_async, cls) for f in FLAVOURS]
    return [str(part) for part in parts]


def _placeholder(index: int, part: str) -> str:
    """What stands in a part's place while the module around the parts is formatted: a statement
    of the same kind (an assignment, a method), so the formatter lays out the blank lines around
    it as around the part, and keeps it on the lines it is printed on."""
    if part == "info":
        return f"{_MARK}{index} = None"
    return f"    def {_MARK}{index}(self):\n        pass\n"


def tools_module(pkg: PackageSpec, *, whole: bool = False) -> str:
    """``_tools.py``, formatted. Each tool's parts are rendered and formatted on their own; the
    module around them is formatted with a placeholder in each part's place, which the part then
    replaces. The formatter lays a statement out alike wherever it stands (its blank lines aside,
    which the placeholders keep), so this is the module formatted whole; ``whole=True`` formats it
    so instead, for the tests to compare.

    The cache layer's ``parts`` table keeps each tool's formatted parts under the digest of its
    spec, so a rerun renders and formats only the parts of the tools an edit changed.
    """
    env = _environment()
    macros = env.get_template("_tool.py.jinja").module
    memo = cache_layer.memo("parts") if not whole else None
    keys = [_part_key(t, ns.class_prefix) if memo is not None else None for ns in pkg.namespaces for t in ns.tools]
    kept = _kept_parts(keys, memo)
    where: dict[int, int] = {}  # id of a ToolSpec -> its index in ``kept``
    todo: dict[int, list[str]] = {}  # index -> the unformatted parts of a tool not kept
    for ns in pkg.namespaces:
        for tool in ns.tools:
            where[id(tool)] = index = len(where)
            if kept[index] is None:
                todo[index] = _tool_parts(macros, tool, ns.class_prefix)

    def fragment(tool: ToolSpec, part: str, is_async: bool = False) -> str:
        index = where[id(tool)]
        slot = 0 if part == "info" else 1 + len(FLAVOURS) * is_async + _METHODS.index(part)
        return todo[index][slot] if whole else _placeholder(index * _PARTS + slot, part)

    skeleton = env.get_template("_tools.py.jinja").render(pkg=pkg, fragment=fragment, flavours=FLAVOURS)
    if whole:
        return format_files({"_tools.py": skeleton})["_tools.py"]
    formatted = format_files({"_tools.py": skeleton, **_parts_files(todo)})
    made = _read_parts(formatted, todo)
    if memo is not None:
        for index, parts in made.items():
            memo.put(keys[index], parts)
    kept.update(made)
    return _placed(formatted["_tools.py"], kept)


_PARTS = PARTS  # a tool's parts: its ToolInfo constant and each flavour's method, sync and async


def _kept_parts(keys: list[str | None], memo: cache_layer.Memo | None) -> dict[int, list[str] | None]:
    """By tool index, its formatted parts as the memo keeps them under its spec's digest; else None."""
    kept: dict[int, list[str] | None] = dict.fromkeys(range(len(keys)))
    for index, key in enumerate(keys):
        found = memo.get(key) if memo is not None else None
        if isinstance(found, list) and len(found) == _PARTS and all(isinstance(p, str) for p in found):
            kept[index] = found
    return kept


#: Tools whose parts go in one file of the formatter run: ruff formats files side by side.
_TOOLS_PER_FILE = 100


def _parts_files(todo: Mapping[int, list[str]]) -> dict[str, str]:
    """The parts to format, in files of their own: the constants at the top level, the methods in
    a class, each after a comment that marks which part it is."""
    files: dict[str, str] = {}
    items = sorted(todo.items())
    for start in range(0, len(items), _TOOLS_PER_FILE):
        chunk = items[start : start + _TOOLS_PER_FILE]
        infos = [f"# {_MARK}{i * _PARTS}\n{parts[0]}" for i, parts in chunk]
        methods = [f"    # {_MARK}{i * _PARTS + s}\n{parts[s]}" for i, parts in chunk for s in range(1, _PARTS)]
        files[f"parts_{start}.py"] = "\n\n".join(infos) + f"\n\n{_HOLDER}\n" + "\n".join(methods)
    return files


def _read_parts(formatted: Mapping[str, str], todo: Mapping[int, list[str]]) -> dict[int, list[str]]:
    """Each tool's formatted parts, cut out of the formatted files at their marks."""
    found: dict[int, str] = {}  # part number (tool index * _PARTS + slot) -> its text
    for rel, text in formatted.items():
        if rel == "_tools.py":
            continue
        mark: int | None = None
        lines: list[str] = []
        for line in [*text.split("\n"), _HOLDER]:
            matched = _MARK_LINE.fullmatch(line)
            if matched is None and line != _HOLDER:
                lines.append(line)
                continue
            if mark is not None:
                found[mark] = "\n".join(lines).strip("\n")
            mark, lines = (int(matched.group(1)) if matched else None), []
    out: dict[int, list[str]] = {}
    for index in todo:
        parts = [found.get(index * _PARTS + slot) for slot in range(_PARTS)]
        if any(p is None for p in parts):  # a mark the formatter moved: a bug of ours, never input
            raise GenerateError("the formatter moved a mark between the parts of _tools.py")
        out[index] = [p for p in parts if p is not None]
    return out


def _placed(skeleton: str, kept: Mapping[int, list[str] | None]) -> str:
    """The formatted module with each placeholder replaced by its part."""
    out: list[str] = []
    lines = iter(skeleton.split("\n"))
    for line in lines:
        matched = _PLACEHOLDER.fullmatch(line)
        if matched is None:
            out.append(line)
            continue
        if matched.group(2) is not None:
            next(lines)  # the method's body, ``pass``
        index = int(matched.group(1) or matched.group(2))
        parts = kept[index // _PARTS]
        assert parts is not None
        out.append(parts[index % _PARTS])
    return "\n".join(out)


def render_package(pkg: PackageSpec) -> dict[str, str]:
    """Relative path inside the package -> file text. Inside a cache layer (``cache.Layer``), a
    module formatted before is not formatted again, nor a tool's parts of ``_tools.py`` rendered
    again: the layer keeps them under the digests of what they are made of."""
    env = _environment()
    from codegen.testkit import DATA_MODULE, TESTING_MODULE, data_module, testing_context

    files = {
        "__init__.py": env.get_template("__init__.py.jinja").render(pkg=pkg),
        TESTING_MODULE: env.get_template("testing.py.jinja").render(pkg=pkg, **testing_context(pkg)),
        "inputs.py": _module(pkg.header, "Argument types (TypedDicts with the wire keys).", pkg.inputs_code),
        "outputs/__init__.py": env.get_template("outputs__init__.py.jinja").render(pkg=pkg),
    }
    for module in pkg.output_modules:
        doc = _SHARED_DOC if module.name == SHARED_MODULE else _OUTPUT_DOC
        files[f"outputs/{module.name}.py"] = _module(pkg.header, doc, module.code)
    if pkg.surfaces:  # resources and prompts (codegen/surface.py): only packages with some
        files["surface.py"] = env.get_template("surface.py.jinja").render(pkg=pkg)
    if pkg.contents_code:  # resources' contents learned from recorded reads (codegen/infer.py)
        files["_contents.py"] = _module(pkg.header, _CONTENTS_DOC, pkg.contents_code)
    # Templates and the model generator print statements on one line each: one formatter run
    # lays every module out (black's style), whatever the number of tools.
    headers = {rel: pkg.package_header if rel == "__init__.py" else pkg.header for rel in files}
    formatted = _Formatted(files, headers)
    with formatted.run:  # ruff formats these modules while this process renders the rest
        out = {"_tools.py": tools_module(pkg)}
        # The shim and the rules are copied verbatim below the header: they stay the tested files byte for byte.
        for path, source in runtime_sources(surface=bool(pkg.surfaces)).items():
            out[path] = f"{pkg.header}\n{source.read_text(encoding='utf-8')}"
        out["py.typed"] = ""
        # The kit's data is one JSON literal, written as it is: nothing in it for the formatter to lay out.
        out[DATA_MODULE] = data_module(pkg.header, pkg.testing_data)
        out[API_PAGE] = api_page(pkg)
        out.update(_code_mode_files(pkg))
        out.update(formatted.result())
    return dict(sorted(out.items()))
