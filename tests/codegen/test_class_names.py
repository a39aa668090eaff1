"""Nested class names come from their place (issue 16, item 7): source, tool, path.

``ChartGenerateAreaChartInputDatum``, never a counter that depends on the other tools; so adding
a tool or a source leaves every other tool's classes as they were, name and body. Hypothesis draws
the catalogs (tools with nested objects and arrays of objects under a few shared keys, the keys
that made datamodel-code-generator number ``Datum7``, ``Style16``), builds the package from the
catalog and from the catalog plus one more tool or one more source, and compares.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from gen_helpers import generate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiers import examples

from codegen.build import build_package
from codegen.model import SourceTools

KEYS = ("data", "style", "child", "result", "items", "meta")
WORDS = ("chart", "generate", "area", "bar", "get", "list", "node", "pie")


def _node(depth: int) -> st.SearchStrategy[Any]:
    leaf = st.sampled_from([{"type": "string"}, {"type": "integer"}, {"type": "boolean"}])
    if depth == 0:
        return leaf
    inner = _node(depth - 1)
    obj = st.dictionaries(st.sampled_from(KEYS), inner, min_size=1, max_size=3).map(
        lambda p: {"type": "object", "properties": p, "required": sorted(p)[:1]}
    )
    return leaf | obj | obj.map(lambda o: {"type": "array", "items": o})


tool_names = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map("_".join)


@st.composite
def tools(draw: st.DrawFn, names: st.SearchStrategy[str] = tool_names) -> dict[str, Any]:
    props = draw(st.dictionaries(st.sampled_from(KEYS), _node(2), min_size=1, max_size=3))
    tool: dict[str, Any] = {"name": draw(names), "inputSchema": {"type": "object", "properties": props}}
    if draw(st.booleans()):
        out = draw(st.dictionaries(st.sampled_from(KEYS), _node(2), min_size=1, max_size=3))
        tool["outputSchema"] = {"type": "object", "properties": out}
    return tool


def _classes(sources: list[SourceTools]) -> dict[str, str]:
    """Every class (and functional TypedDict) of the inputs and outputs: name -> its code."""
    pkg = build_package(sources, package="p", header="#")
    found: dict[str, str] = {}
    for code in (pkg.inputs_code, *(m.code for m in pkg.output_modules)):
        for stmt in ast.parse(code).body:
            if isinstance(stmt, ast.ClassDef):
                found[stmt.name] = ast.unparse(stmt)
            elif isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
                found[stmt.targets[0].id] = ast.unparse(stmt)
    return found


def _source(name: str, listing: list[dict[str, Any]]) -> SourceTools:
    unique = list({t["name"]: t for t in listing}.values())
    return SourceTools(name=name, kind="mcp-json", origin=f"{name}.json", tools=tuple(unique))


@settings(max_examples=examples(4, 12), deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.lists(tools(), min_size=1, max_size=3), extra=tools(), second=st.lists(tools(), min_size=1, max_size=2))
def test_adding_a_tool_or_a_source_leaves_the_other_tools_classes_unchanged(
    base: list[dict[str, Any]], extra: dict[str, Any], second: list[dict[str, Any]]
) -> None:
    before = _classes([_source("chart", base)])
    extra = {**extra, "name": extra["name"] + "_new"}  # a tool the catalog does not have yet
    with_tool = _classes([_source("chart", [*base, extra])])
    with_source = _classes([_source("chart", base), _source("other", second)])
    for after in (with_tool, with_source):
        changed = {name: code for name, code in before.items() if after.get(name) != code}
        assert changed == {}, "renamed or changed: " + ", ".join(changed)


def test_nested_names_say_where_the_class_is(tmp_path: Path) -> None:
    datum = {"type": "object", "properties": {"category": {"type": "string"}, "value": {"type": "number"}},
             "required": ["category"]}  # fmt: skip
    listing = {
        "tools": [
            {"name": "generate_area_chart", "inputSchema": {"type": "object", "properties": {
                "data": {"type": "array", "items": datum},
                "style": {"type": "object", "properties": {"color": {"type": "string"}}}}},
             "outputSchema": {"type": "object", "properties": {"result": {"type": "object", "properties": {
                 "url": {"type": "string"}}}}}},
        ]
    }  # fmt: skip
    (tmp_path / "chart.json").write_text(json.dumps(listing))
    assert generate(tmp_path, ["--mcp-json", "chart.json", "--out", "out", "--package", "charts", "-q"]) == 0
    inputs = (tmp_path / "out" / "charts" / "inputs.py").read_text()
    assert "class ChartGenerateAreaChartInputDatum(TypedDict):" in inputs
    assert "class ChartGenerateAreaChartInputStyle(TypedDict):" in inputs
    outputs = (tmp_path / "out" / "charts" / "outputs" / "chart_generate_area_chart_output.py").read_text()
    assert "class ChartGenerateAreaChartOutputResult(BaseModel):" in outputs
    # No artificial class for the schema document itself.
    init = (tmp_path / "out" / "charts" / "outputs" / "__init__.py").read_text()
    assert '"Model"' not in init and "Model:" not in inputs


def test_a_property_named_like_the_documents_own_class_keeps_its_class(tmp_path: Path) -> None:
    """A key ``Model`` whose schema becomes an alias got the raw name of the schema document's own
    class, and lost its statement with it: ``Model: NotRequired[Model]``, a name nothing defined,
    and generate refused the listing (found by the fuzz session). The document's class is the
    first to be named; the property's is another."""
    schema = {"type": "object", "properties": {"Model": {"allOf": [{"minItems": 2}]}}}
    listing = {"tools": [{"name": "a", "inputSchema": schema, "outputSchema": schema}]}
    (tmp_path / "m.json").write_text(json.dumps(listing))
    assert generate(tmp_path, ["--mcp-json", "m.json", "--out", "out", "--package", "m", "-q"]) == 0
    inputs = (tmp_path / "out" / "m" / "inputs.py").read_text()
    assert "ModelModel: TypeAlias = Any" in inputs and "Model: NotRequired[ModelModel]" in inputs
    outputs = (tmp_path / "out" / "m" / "outputs" / "ma_output.py").read_text()
    assert "class ModelModel(RootModel[Any]):" in outputs and "Model: ModelModel | None = None" in outputs


def test_two_input_groups_that_name_a_class_alike_are_made_in_one_run() -> None:
    """``XInput.y_z`` and ``XInputY.z`` both make ``XInputYZ``: generated in two groups they would
    define it twice, so the inputs are made in one run, which names the second ``XInputYZ1``."""
    from codegen.datamodels import generate_models, join_modules, model_code

    def obj(props: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "properties": props}

    first = {"$defs": {"XInput": obj({"y_z": obj({"n": {"type": "string"}})})}}
    second = {"$defs": {"XInputY": obj({"z": obj({"m": {"type": "integer"}})})}}
    assert join_modules([model_code(first, kind="inputs"), model_code(second, kind="inputs")]) is None
    inputs, _, _ = generate_models([first, second], {"$defs": {}})
    assert {"XInputYZ", "XInputYZ1"} <= inputs.defined
    assert inputs.code == model_code({"$defs": {**first["$defs"], **second["$defs"]}}, kind="inputs")
