"""Render a ``PackageSpec`` into file contents, then format them in one pass (``ruff format``)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from codegen.formatting import format_files
from codegen.model import SHARED_MODULE, PackageSpec
from mas.runtime.contracts import _rules

if TYPE_CHECKING:
    import jinja2

    from codegen.cache import Memo  # the cache's fingerprint reads this module: no import at run time

__all__ = ["RULES_PATH", "SHIM_DIR", "render_package", "runtime_sources", "templates_dir"]

_HERE = Path(__file__).resolve().parent
#: The runtime shim, a package copied verbatim into every generated package as ``_runtime/``.
SHIM_DIR = _HERE / "shim" / "_runtime"
#: The contract's shared rules, which the shim imports: the runtime's own file, read at render
#: time and copied verbatim as the package's ``_rules.py`` (one rules file, no copy in toolgen).
RULES_PATH = Path(_rules.__file__).resolve()


def templates_dir() -> Path:
    """Inside the wheel the templates sit in the package; in a checkout, at the top level."""
    packaged = _HERE / "templates"
    return packaged if packaged.is_dir() else _HERE.parent / "templates"


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
_SHARED_DOC = "Result models that several tools share, or that no tool's result names."


_CODE_MODE_DOC = (
    "Code mode: the sandbox API of this package, one stub module per source (``from tools import <name>``).\n\n"
    "``mas.runtime.code_mode.CodeMode(provider, package=...)`` reads the stubs beside this file and\n"
    "``MODULES`` (module -> function -> the wire name it calls) and ``NAMESPACES`` (module -> the\n"
    "``Tools`` attribute whose methods the functions are); see toolgen's docs/code-mode.md.\n"
)


def _code_mode_files(pkg: PackageSpec) -> dict[str, str]:
    # Imported here: the cache's fingerprint imports this module, and a cached run renders nothing.
    from codegen.code_mode import CODE_MODE_DIR, manifest_lines

    files = {f"{CODE_MODE_DIR}/{m.name}.pyi": f"{pkg.header}\n{m.stub}" for m in pkg.code_mode}
    manifest = "\n".join(manifest_lines(pkg.code_mode))
    files[f"{CODE_MODE_DIR}/__init__.py"] = _module(pkg.header, _CODE_MODE_DOC, f"{manifest}\n")
    return files


def runtime_sources() -> dict[str, Path]:
    """What every package carries verbatim below its header: path inside the package -> source file."""
    files = {f"_runtime/{path.name}": path for path in sorted(SHIM_DIR.glob("*.py"))}
    files["_rules.py"] = RULES_PATH
    return files


def _split(text: str, header: str) -> tuple[str, str]:
    """``text`` as its first lines, as many as ``header`` has, and the rest."""
    lines = header.count("\n") + 1
    parts = text.split("\n", lines)
    return "\n".join(parts[:lines]), parts[lines] if len(parts) > lines else ""


def _format(
    files: Mapping[str, str],
    headers: Mapping[str, str],
    memo: Memo | None,
    previous: Callable[[str], str | None] | None,
) -> dict[str, str]:
    """``format_files``, run only on the modules whose formatted text is not known. A module is
    formatted with a placeholder for its header (comment lines, whose text the formatter never
    touches, so it formats alike whatever its header says); ``memo`` maps that text's digest to
    the digest of the formatted one, and a module whose last written file (``previous``) has it,
    header aside, is that file. Anything else, a file edited by hand included, is formatted again."""
    out: dict[str, str] = {}
    todo: dict[str, str] = {}
    keys: dict[str, str | None] = {}
    for rel, text in files.items():
        header, body = _split(text, headers[rel])
        placeholder = "\n".join(["# toolgen"] * (header.count("\n") + 1))
        plain = f"{placeholder}\n{body}"
        keys[rel] = key = memo.key("formatted", _sha256(plain)) if memo is not None else None
        want = memo.get(key) if memo is not None else None
        old = previous(rel) if want is not None and previous is not None else None
        kept = _split(old, header)[1] if old is not None else None
        if kept is not None and _sha256(f"{placeholder}\n{kept}") == want:
            out[rel] = f"{header}\n{kept}"
        else:
            todo[rel] = plain
    for rel, formatted in format_files(todo).items():
        if memo is not None:
            memo.put(keys[rel], _sha256(formatted))
        header = _split(files[rel], headers[rel])[0]
        out[rel] = f"{header}\n{_split(formatted, header)[1]}"
    return out


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def render_package(
    pkg: PackageSpec, memo: Memo | None = None, previous: Callable[[str], str | None] | None = None
) -> dict[str, str]:
    """Relative path inside the package -> file text. With ``memo`` (and ``previous``: the text of
    a file as the last run wrote it, or None), a module formatted before is not formatted again."""
    env = _environment()
    files = {
        "__init__.py": env.get_template("__init__.py.jinja").render(pkg=pkg),
        "_tools.py": env.get_template("_tools.py.jinja").render(pkg=pkg),
        "inputs.py": _module(pkg.header, "Argument types (TypedDicts with the wire keys).", pkg.inputs_code),
        "outputs/__init__.py": env.get_template("outputs__init__.py.jinja").render(pkg=pkg),
    }
    for module in pkg.output_modules:
        doc = _SHARED_DOC if module.name == SHARED_MODULE else _OUTPUT_DOC
        files[f"outputs/{module.name}.py"] = _module(pkg.header, doc, module.code)
    # Templates and the model generator print statements on one line each: one formatter run
    # lays every module out (black's style), whatever the number of tools.
    headers = {rel: pkg.package_header if rel == "__init__.py" else pkg.header for rel in files}
    out = _format(files, headers, memo, previous)
    # The shim and the rules are copied verbatim below the header: they stay the tested files byte for byte.
    for path, source in runtime_sources().items():
        out[path] = f"{pkg.header}\n{source.read_text(encoding='utf-8')}"
    out["py.typed"] = ""
    out.update(_code_mode_files(pkg))
    return dict(sorted(out.items()))
