"""Syntax-tree helpers shared by the model reader (``datamodels.py``) and the stubs (``code_mode.py``).

Each model module is parsed once per build, and its tree is read by several stages: the wrappers'
annotations, the code-mode stubs, the split of the outputs. So no stage may change it: a rewrite
is a ``Copying`` transformer, which returns a new tree and leaves its input as it was (copying
while rewriting costs one walk; ``ast.parse(ast.unparse(...))`` copies cost three).
"""

from __future__ import annotations

import ast

__all__ = ["Copying", "defined_names"]


class Copying(ast.NodeTransformer):
    """A ``NodeTransformer`` whose ``generic_visit`` builds a new node from the visited children
    instead of assigning them into the old one. Nodes a ``visit_*`` method returns unchanged are
    shared with the input, so the result must be treated as read-only too (it is only unparsed)."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        fields: dict[str, object] = {}
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                items: list[object] = []
                for item in value:
                    if isinstance(item, ast.AST):
                        new = self.visit(item)
                        if new is None:  # removed, as NodeTransformer allows in a list
                            continue
                        if not isinstance(new, ast.AST):
                            items.extend(new)
                            continue
                        item = new
                    items.append(item)
                fields[name] = items
            elif isinstance(value, ast.AST):
                fields[name] = self.visit(value)
            else:
                fields[name] = value
        return ast.copy_location(type(node)(**fields), node)  # unparse reads a statement's line


def defined_names(stmt: ast.stmt) -> list[str]:
    """The names a top-level statement of a model module defines (a class, ``X = ...``, ``X: T = ...``)."""
    if isinstance(stmt, ast.ClassDef):
        return [stmt.name]
    if isinstance(stmt, ast.Assign):
        return [t.id for t in stmt.targets if isinstance(t, ast.Name)]
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return [stmt.target.id]
    return []
