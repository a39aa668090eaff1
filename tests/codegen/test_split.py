"""Splitting the batched output models per tool: each tool's own classes, shared ones apart."""

from __future__ import annotations

import ast

from codegen.split import split_models

CODE = """from __future__ import annotations
from typing import Any, Literal
from pydantic import BaseModel, Field, RootModel


class Model(RootModel[Any]):
    root: Any


class Item(BaseModel):
    name: str


class Node(BaseModel):
    children: list[Node]
    kind: Literal["Item"]


class AOutput(BaseModel):
    items: list[Item]
    tree: Node


class BOutput(BaseModel):
    items: list[Item]
    note: str = Field(alias="Any")


Node.model_rebuild()
"""


def test_each_tool_gets_its_own_classes_and_shared_ones_go_apart() -> None:
    modules = {m.name: m for m in split_models(CODE, ["AOutput", "BOutput"])}
    assert sorted(modules) == ["_shared", "a_output", "b_output"]
    assert modules["_shared"].names == ("Item", "Model")  # two tools use Item; no tool names Model
    assert modules["a_output"].names == ("AOutput", "Node")
    assert modules["b_output"].names == ("BOutput",)
    a = modules["a_output"].code
    assert a.endswith("Node.model_rebuild()\n")  # stays with the class it rebuilds
    assert "from ._shared import Item\n" in a
    assert "from typing import Literal\n" in a and "Any" not in a  # only the names it uses
    b = modules["b_output"].code
    assert "from pydantic import BaseModel, Field\n" in b
    assert "from typing" not in b  # "Any" appears only as a string: no import of it
    for module in modules.values():
        ast.parse(module.code)


def test_every_class_lands_in_exactly_one_module() -> None:
    modules = split_models(CODE, ["AOutput", "BOutput"])
    names = [n for m in modules for n in m.names]
    assert sorted(names) == ["AOutput", "BOutput", "Item", "Model", "Node"]


def test_a_field_named_like_an_import_imports_nothing() -> None:
    """Found by the hostile tests: a field ``RootModel: str`` is not a use of ``RootModel``."""
    code = CODE + "\n\nclass COutput(BaseModel):\n    RootModel: str\n    Literal: int\n"
    modules = {m.name: m for m in split_models(code, ["AOutput", "BOutput", "COutput"])}
    assert "from pydantic import BaseModel\n" in modules["c_output"].code
    assert "typing" not in modules["c_output"].code
