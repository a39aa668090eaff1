"""Candidate layouts of a generated package for editors and type checkers, timed against it.

Run ``python benchmarks/layouts.py OUT [--layouts full,getattr] [--rounds 2] [--no-jedi] [--method M]``,
where ``OUT`` holds a generated package ``pkg`` (the bench's: see benchmarks/results.md, "Where
the time goes"). Each layout is a copy of ``OUT`` beside it, with type stubs made from
``pkg/_tools.py``'s syntax tree (each method's body replaced by ``...``, its docstring kept):

- ``full``: one ``_tools.pyi`` beside ``_tools.py``, without the ``ToolInfo`` constants;
- ``facade``: one stub module per flavour class, an ``_api.pyi`` of the aggregates, and beside
  each stub a ``.py`` that re-exports the class from ``_tools``; ``__init__.py`` imports ``._api``;
- ``getattr``: as ``facade``, but each ``.py`` is a module ``__getattr__`` that fetches its names
  from ``_tools`` on first use, so no import names ``_tools`` statically;
- ``getout``: ``getattr`` plus one ``outputs/__init__.pyi`` holding every output model.

Then, in rounds, each layout (``base`` being ``OUT`` itself) is timed interleaved: mypy and pyright
in CPU seconds (user + sys of the child), each beside the same checker on a pydantic-only script,
and jedi's editor sessions as ``bench.py`` runs them (first completion with the parse cache empty
and on disk, warm completion, signature help). A markdown table goes to stdout. The layouts are
an experiment: nothing in codegen makes them.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import resource
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench import ENV, _jedi_sessions  # noqa: E402

LAYOUTS = ("full", "facade", "getattr", "getout")
#: The aggregate classes ``_tools.py`` ends with; every other class is a flavour class.
_AGGREGATES = frozenset(
    f"{a}Tools{s}" for a in ("", "Async") for s in ("", "Results", "Tasks")
)  # fmt: skip
_GETATTR = "def __getattr__(name: str) -> object:\n    from . import _tools\n\n    return getattr(_tools, name)\n"


def _stub_class(node: ast.ClassDef) -> ast.ClassDef:
    """The class with each method's body cut to its docstring and ``...``; the attributes that
    ``__init__`` sets (``self.cat = CatTools(...)``) declared in the class body."""
    body: list[ast.stmt] = [node.body[0]] if ast.get_docstring(node) is not None else []
    for item in node.body:
        if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if item.name == "__init__":
            for st in item.body:
                if isinstance(st, ast.Assign) and isinstance(st.targets[0], ast.Attribute):
                    assert isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Name)
                    body.append(ast.AnnAssign(ast.Name(st.targets[0].attr), ast.Name(st.value.func.id), None, 1))
        doc = [item.body[0]] if ast.get_docstring(item) is not None else []
        item.body = [*doc, ast.Expr(ast.Constant(...))]
        body.append(item)
    node.body = body or [ast.Expr(ast.Constant(...))]
    return node


def _write(path: Path, body: Sequence[ast.stmt]) -> None:
    path.write_text(ast.unparse(ast.Module(body=list(body), type_ignores=[])) + "\n", encoding="utf-8")


def make_layout(base: Path, dst: Path, layout: str) -> None:
    """``dst``: a copy of ``base`` (which holds ``pkg``) in the ``layout`` named."""
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(base, dst, ignore=shutil.ignore_patterns("__pycache__", "*.py[co]"))
    pkg = dst / "pkg"
    tree = ast.parse((pkg / "_tools.py").read_text(encoding="utf-8"))
    imports: list[ast.stmt] = []
    classes: list[ast.ClassDef] = []
    exports: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom) and getattr(node, "module", "") != "__future__":
            imports.append(node)
        elif isinstance(node, ast.If):  # ``if TYPE_CHECKING:``: a stub is never run
            imports += node.body
        elif isinstance(node, ast.ClassDef):
            classes.append(_stub_class(node))
        elif isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__":
            exports.append(node)
    head = [*imports, *exports, *ast.parse("TOOLS: _Mapping[str, _ToolInfo[_Any]]").body]
    if layout == "full":
        _write(pkg / "_tools.pyi", [*head, *classes])
        return
    modules = {c.name: f"_t_{c.name.lower()}" for c in classes if c.name not in _AGGREGATES}
    for cls in classes:
        if cls.name in modules:
            others = [f"from .{m} import {n}" for n, m in modules.items() if n != cls.name]
            _write(pkg / f"{modules[cls.name]}.pyi", [*imports, *ast.parse("\n".join(others)).body, cls])
    reexports = ast.parse("\n".join(f"from .{m} import {n} as {n}" for n, m in modules.items())).body
    _write(pkg / "_api.pyi", [*head, *reexports, *(c for c in classes if c.name in _AGGREGATES)])
    names = ["TOOLS", *sorted(_AGGREGATES)]
    for module, exported in [("_api", names), *((m, [n]) for n, m in modules.items())]:
        text = "".join(f"from ._tools import {n} as {n}\n" for n in exported) if layout == "facade" else _GETATTR
        (pkg / f"{module}.py").write_text(text, encoding="utf-8")
    init = pkg / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8").replace("from ._tools import (", "from ._api import ("))
    if layout == "getout":
        _merge_outputs(pkg / "outputs")


def _merge_outputs(outputs: Path) -> None:
    """``outputs/__init__.pyi``: every output module's classes in one stub."""
    parts = ["from pydantic import BaseModel, ConfigDict, Field\nfrom typing import Annotated, Literal\n"]
    for path in sorted(outputs.glob("*.py")):
        if path.name == "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        kept = [n for n in tree.body if not isinstance(n, ast.Import | ast.ImportFrom | ast.Expr)]
        parts.append(ast.unparse(ast.Module(body=kept, type_ignores=[])))
    (outputs / "__init__.pyi").write_text("\n\n".join(parts) + "\n", encoding="utf-8")


def _cpu(cmd: Sequence[str], cwd: Path) -> float:
    """CPU seconds (user + sys) of one run of ``cmd``, which must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} in {cwd} exited {done.returncode}: {done.stdout[-2000:]}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def _checkers(root: Path, method: str) -> dict[str, str]:
    """Per checker, ours against the pydantic-only floor: CPU seconds and their ratio."""
    (root / "use_pkg.py").write_text(
        "from pkg import Tools\n\n\ndef use(tools: Tools) -> int:\n"
        f"    return tools.cat.{method}(owner='o', query='q').total\n",
        encoding="utf-8",
    )
    (root / "use_pydantic.py").write_text(
        "from pydantic import BaseModel\n\n\nclass M(BaseModel):\n    total: int\n\n\n"
        "def use(m: M) -> int:\n    return m.total\n",
        encoding="utf-8",
    )
    bindir = Path(sys.executable).parent
    commands = {
        "mypy": [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", "/dev/null"],
        "pyright": [str(bindir / "pyright"), "--pythonpath", sys.executable],
    }
    out = {}
    for name, cmd in commands.items():
        floor = _cpu([*cmd, "use_pydantic.py"], root)
        ours = _cpu([*cmd, "use_pkg.py"], root)
        out[name] = f"{ours:.1f} s / {floor:.1f} s ({ours / floor:.2f}x)"
    return out


def _jedi(root: Path, method: str) -> dict[str, str]:
    fresh, later = _jedi_sessions(root, root / "jedi-cache", "cat", method)
    return {
        "jedi first (cache empty / on disk)": f"{fresh[0] / 1000:.1f} s / {later[0] / 1000:.1f} s",
        "jedi warm": f"{later[1]:.0f} ms",
        "jedi signature help": f"{later[2]:.0f} ms",
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("out", type=Path, help="a directory holding the generated package `pkg`")
    parser.add_argument("--layouts", default=",".join(LAYOUTS), help=f"comma-separated, of {', '.join(LAYOUTS)}")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--method", default="list_projects_0001", help="the method the scripts call, as bench.py's (owner=, query=)"
    )
    parser.add_argument("--no-jedi", action="store_true", help="time the checkers only")
    args = parser.parse_args(argv)
    chosen = [name for name in args.layouts.split(",") if name]
    if set(chosen) - set(LAYOUTS):
        parser.error(f"--layouts: choose from {', '.join(LAYOUTS)}")
    base = args.out.resolve()
    method = args.method
    tools_py = (base / "pkg" / "_tools.py").read_text(encoding="utf-8")
    if not re.search(rf"^    def {re.escape(method)}\(", tools_py, re.M):
        parser.error(f"{base / 'pkg' / '_tools.py'}: no method {method}")
    roots = {"base": base}
    for name in chosen:
        roots[name] = base.with_name(f"{base.name}-{name}")
        make_layout(base, roots[name], name)
    columns: list[str] = []
    rows: list[tuple[str, dict[str, str]]] = []
    for number in range(1, args.rounds + 1):
        for name, root in roots.items():
            figures = _checkers(root, method) | ({} if args.no_jedi else _jedi(root, method))
            columns += [c for c in figures if c not in columns]
            rows.append((f"{name}, round {number}", figures))
    print("| layout | " + " | ".join(columns) + " |\n|---|" + "---|" * len(columns))
    for label, figures in rows:
        print(f"| {label} | " + " | ".join(figures.get(c, "—") for c in columns) + " |")
    print(json.dumps({"method": method, "layouts": {k: str(v) for k, v in roots.items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
