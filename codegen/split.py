"""Split the batched output-model module into one module per tool, so a call builds only its own.

datamodel-code-generator runs once over every output schema (one batched run is its fastest
use, and it gives identical nested models one shared class). Its module is cut here along the
dependency graph: each tool's root model with every class only it reaches goes to that tool's
module; a class two tools reach goes to ``_shared``. Reaching is closed under dependencies, so
``_shared`` never needs a tool module. The statements keep their text and order (the
package's formatting pass lays them out), and each module imports exactly the names it uses.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Mapping, Sequence

from codegen.model import SHARED_MODULE as SHARED
from codegen.model import ModelModuleSpec

__all__ = ["SHARED", "ModelModuleSpec", "import_lines", "split_models", "where_defined"]


def import_lines(module: str, names: Sequence[str]) -> list[str]:
    """``from module import a, b``, on one line (the formatting pass splits a long one)."""
    return [f"from {module} import {', '.join(names)}"]


#: Longest module name made from a model name: with ``.py`` (and a ``_N`` suffix) a file name
#: stays far below the 255 bytes most file systems allow, whatever a server names its tools.
MAX_MODULE_NAME = 100


def _module_name(root: str, taken: set[str]) -> str:
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", root).lower()
    if len(snake) > MAX_MODULE_NAME:  # cut, and told apart from other cuts by a hash of the whole
        snake = f"{snake[: MAX_MODULE_NAME - 9]}_{hashlib.sha256(snake.encode()).hexdigest()[:8]}"
    name, n = snake, 2
    while name in taken:  # distinct even on a case-insensitive file system
        name, n = f"{snake}_{n}", n + 1
    taken.add(name)
    return name


def _used_names(node: ast.AST) -> tuple[set[str], set[str]]:
    """Names the statement uses, and those in its strings that may be forward references (for
    its dependencies both count: a dependency too many only shares a class; for its imports only
    the first: an import too many fails pyright). One walk of the statement for both."""
    names: set[str] = set()
    quoted: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):  # a field named ``Literal`` is no use
            names.add(sub.id)
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            try:
                quoted |= {n.id for n in ast.walk(ast.parse(sub.value, mode="eval")) if isinstance(n, ast.Name)}
            except SyntaxError:
                pass
    return names, quoted


def _defines(stmt: ast.stmt) -> str | None:
    if isinstance(stmt, ast.ClassDef):
        return stmt.name
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return stmt.target.id
    return None


def _subject(stmt: ast.stmt) -> str | None:
    """The class a statement like ``Model.model_rebuild()`` belongs with."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func: ast.expr = stmt.value.func
        while isinstance(func, ast.Attribute):
            func = func.value
        if isinstance(func, ast.Name):
            return func.id
    return None


def _homes(defined: set[str], deps: Mapping[str, set[str]], roots: Sequence[str]) -> dict[str, str]:
    """Each class's module: the one root that reaches it, or ``SHARED`` when two roots (or none) do."""
    reached_by: dict[str, set[str]] = {name: set() for name in defined}
    for root in roots:
        stack, seen = [root], {root}
        while stack:
            for dep in deps[stack.pop()]:
                if dep not in seen:
                    seen.add(dep)
                    stack.append(dep)
        for name in seen:
            reached_by[name].add(root)
    home = {name: next(iter(r)) if len(r) == 1 else SHARED for name, r in reached_by.items()}
    changed = True
    while changed:  # what a shared class needs is shared too (only unreached classes can need this)
        changed = False
        for name in defined:
            if home[name] == SHARED:
                for dep in deps[name]:
                    if home[dep] != SHARED:
                        home[dep], changed = SHARED, True
    return home


def _module_text(
    grouped: Sequence[tuple[ast.stmt, str, set[str]]],
    imported: Mapping[str, tuple[str, str]],
    defined: set[str],
    home: Mapping[str, str],
    lines: Sequence[str],
) -> str:
    """One module's source: its imports, then its statements (``grouped``: each with the name it
    defines or belongs with, and the names it uses) with their text and order kept."""
    own = {owner for _, owner, _ in grouped}
    used = set().union(*(plain for _, _, plain in grouped))
    import_block: list[str] = []
    by_module: dict[str, list[str]] = {}
    for name in sorted(used):
        if name in imported and name not in own:
            module, original = imported[name]
            by_module.setdefault(module, []).append(name if original == name else f"{original} as {name}")
    for module in sorted(by_module):
        import_block += import_lines(module, by_module[module])
    shared_names = sorted(n for n in used & defined if n not in own and home[n] == SHARED)
    if shared_names:
        import_block += import_lines(f".{SHARED}", shared_names)
    chunks: list[str] = []
    previous: ast.stmt | None = None
    for stmt, _, _ in grouped:
        start = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
        text = "\n".join(lines[start - 1 : stmt.end_lineno])
        if previous is not None:
            blocky = isinstance(stmt, ast.ClassDef) or isinstance(previous, ast.ClassDef)
            chunks.append("\n\n\n" if blocky else "\n")
        chunks.append(text)
        previous = stmt
    # One blank line after the imports: the formatter makes it two before a class (split_models
    # keeps what black and ruff agree on; datamodels._one_blank_line says why).
    return "\n".join(["from __future__ import annotations", *import_block]) + "\n\n" + "".join(chunks)


def split_models(code: str, roots: Sequence[str], *, tree: ast.Module | None = None) -> tuple[ModelModuleSpec, ...]:
    """The modules of the outputs package; ``roots`` are the tools' output definitions, in order.
    ``tree``: ``code`` parsed, when the caller parsed it already (never changed here)."""
    tree = tree or ast.parse(code)
    lines = code.splitlines()
    imported: dict[str, tuple[str, str]] = {}  # local name -> (module, name there)
    body: list[tuple[ast.stmt, str]] = []  # statement, the name it defines or belongs with
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module:
            if stmt.module != "__future__":
                imported.update({a.asname or a.name: (stmt.module, a.name) for a in stmt.names})
            continue
        owner = _defines(stmt) or _subject(stmt)
        if owner is None:
            raise ValueError(f"unexpected statement in the generated models at line {stmt.lineno}")
        body.append((stmt, owner))
    defined = {owner for stmt, owner in body if _defines(stmt)}
    deps: dict[str, set[str]] = {name: set() for name in defined}
    uses = [_used_names(stmt) for stmt, _ in body]
    for (_, owner), (plain, quoted) in zip(body, uses, strict=True):
        deps[owner] |= (plain | quoted) & defined - {owner}

    home = _homes(defined, deps, roots)

    taken: set[str] = {SHARED}
    module_of = {root: _module_name(root, taken) for root in roots}
    module_of[SHARED] = SHARED
    modules = []
    by_home: dict[str, list[tuple[ast.stmt, str, set[str]]]] = {}  # in module order
    for (stmt, owner), (plain, _) in zip(body, uses, strict=True):
        by_home.setdefault(home[owner], []).append((stmt, owner, plain))
    for group in [SHARED, *roots]:
        grouped = by_home.get(group)
        if not grouped:
            continue
        names = tuple(sorted(owner for stmt, owner, _ in grouped if _defines(stmt)))
        code_text = _module_text(grouped, imported, defined, home, lines)
        modules.append(ModelModuleSpec(module_of[group], names, code_text + "\n"))
    return tuple(modules)


def where_defined(modules: Sequence[ModelModuleSpec]) -> Mapping[str, str]:
    return {name: m.name for m in modules for name in m.names}
