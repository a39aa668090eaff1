"""Snippets that use every tool of a code-mode stub with example arguments (tests only).

``probe(stub, module)`` is one snippet per stub module: it calls each function with values made
from its parameter annotations, checks the result against the declared return type (which must
resolve in the module), and assigns it to ``bytes`` (never a result type). A checker that accepts
the stub then reports exactly one ``invalid-assignment`` per function, on that function's line,
and nothing else: a stub whose types failed to resolve would make the results ``Unknown`` and the
``bytes`` lines silent.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import Any

__all__ = ["Probe", "assert_stubs_check", "probe"]


class Probe:
    def __init__(self, code: str, bytes_lines: list[int], functions: int) -> None:
        self.code = code
        self.bytes_lines = bytes_lines  # the lines where the one expected diagnostic each falls
        self.functions = functions  # how many tools the snippet calls


def _classes(tree: ast.Module) -> dict[str, ast.stmt]:
    out: dict[str, ast.stmt] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            out[stmt.name] = stmt
        elif isinstance(stmt, ast.Assign | ast.AnnAssign):
            target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
            if isinstance(target, ast.Name):
                out[target.id] = stmt
    return out


def _value(node: ast.expr, classes: dict[str, ast.stmt], depth: int = 0) -> str:
    if depth > 8:
        raise ValueError("recursive type")
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a quoted forward reference
        return _value(ast.parse(node.value, mode="eval").body, classes, depth + 1)
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"
    if isinstance(node, ast.BinOp):  # a union: the first member that is not None
        left = _value(node.left, classes, depth + 1)
        return left if left != "None" else _value(node.right, classes, depth + 1)
    if isinstance(node, ast.Name):
        simple = {"str": '"x"', "int": "1", "float": "1.5", "bool": "True", "Any": "None", "object": "None"}
        if node.id in simple:
            return simple[node.id]
        if node.id in ("list", "dict"):
            return "[]" if node.id == "list" else "{}"
        return _typeddict(classes[node.id], classes, depth + 1)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        head = node.value.id
        if head == "Literal":
            first = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
            return ast.unparse(first)
        if head in ("list", "set", "frozenset", "Sequence"):
            return "[]"
        if head in ("dict", "Mapping"):
            return "{}"
        if head == "tuple":
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if len(items) == 2 and isinstance(items[1], ast.Constant) and items[1].value is Ellipsis:
                return "()"
            return "(" + "".join(_value(i, classes, depth + 1) + ", " for i in items) + ")"
        if head in ("NotRequired", "Required", "ReadOnly", "Annotated"):
            inner = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
            return _value(inner, classes, depth + 1)
    raise ValueError(f"no example value for {ast.unparse(node)}")


def _typeddict(stmt: ast.stmt, classes: dict[str, ast.stmt], depth: int) -> str:
    fields: list[tuple[str, ast.expr]] = []
    total = True
    if isinstance(stmt, ast.ClassDef):
        total = not any(k.arg == "total" and ast.unparse(k.value) == "False" for k in stmt.keywords)
        fields = [
            (s.target.id, s.annotation)
            for s in stmt.body
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
        ]
    elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        if isinstance(call.func, ast.Name) and call.func.id == "TypedDict" and len(call.args) > 1:
            mapping = call.args[1]
            assert isinstance(mapping, ast.Dict)
            fields = [
                (k.value, v) for k, v in zip(mapping.keys, mapping.values, strict=True) if isinstance(k, ast.Constant)
            ]
            total = not any(k.arg == "total" and ast.unparse(k.value) == "False" for k in call.keywords)
        else:
            return _value(stmt.value, classes, depth)  # an alias
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        return _value(stmt.value, classes, depth)
    items = []
    for key, annotation in fields:
        optional = isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value) == "NotRequired"
        if total and not optional:
            items.append(f"{key!r}: {_value(annotation, classes, depth + 1)}")
    return "{" + ", ".join(items) + "}"


def probe(stub: str, module: str) -> Probe:
    tree = ast.parse(stub)
    classes = _classes(tree)
    lines = ["from typing import Any, Literal", f"from tools import {module}"]
    bytes_lines = []
    for i, fn in enumerate(s for s in tree.body if isinstance(s, ast.AsyncFunctionDef)):
        required = [a for a in fn.args.kwonlyargs if a.annotation and not _has_default(fn, a)]
        args = ", ".join(f"{a.arg}={_value(a.annotation, classes)}" for a in required if a.annotation)
        returns = ast.unparse(fn.returns) if fn.returns else "None"
        qualified = _qualify(returns, set(classes), module)
        lines.append(f"r{i} = await {module}.{fn.name}({args})")
        lines.append(f"t{i}: {qualified} = r{i}")
        lines.append(f"b{i}: bytes = r{i}")
        if returns == "Any":  # an untypable result: Any is assignable to bytes, so no diagnostic
            continue
        bytes_lines.append(len(lines))
    calls = sum(1 for s in tree.body if isinstance(s, ast.AsyncFunctionDef))
    return Probe("\n".join(lines) + "\n", bytes_lines, calls)


def _has_default(fn: ast.AsyncFunctionDef, arg: ast.arg) -> bool:
    index = fn.args.kwonlyargs.index(arg)
    return fn.args.kw_defaults[index] is not None


def _qualify(annotation: str, classes: set[str], module: str) -> str:
    class Qualify(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id in classes:
                return ast.Attribute(ast.Name(module, ast.Load()), node.id, ast.Load())
            if node.id == "Any":
                return ast.Name("object", ast.Load())
            return node

        def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
            if isinstance(node.value, ast.Name) and node.value.id == "Literal":
                return node
            return self.generic_visit(node)

    tree = Qualify().visit(ast.parse(annotation, mode="eval"))
    return ast.unparse(tree)


def assert_stubs_check(mode: Any, modules: Iterable[str]) -> int:
    """Every module's probe through ``mode.check``: exactly the expected ``bytes`` diagnostics.
    Returns how many tools were probed."""
    probed = 0
    for module in modules:
        sample = probe(mode._stubs[module], module)
        found = mode.check(sample.code)
        unexpected = [str(d) for d in found if d.code != "invalid-assignment" or d.line not in sample.bytes_lines]
        assert [(d.line, d.code) for d in found] == [(n, "invalid-assignment") for n in sample.bytes_lines], (
            module,
            unexpected[:5],
            sample.code[:2000],
        )
        probed += sample.functions
    return probed
