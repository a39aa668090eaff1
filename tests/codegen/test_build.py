"""The builder (codegen/build.py): the intermediate form says what, each tool's plan is one value,
and warnings point into their own tool."""

from __future__ import annotations

import dataclasses
import gc
from typing import Any

import pytest

from codegen.build import ToolPlan, build_package
from codegen.generate import yaml_source
from codegen.model import NamespaceSpec, PackageSpec, ParamSpec, SourceTools, ToolSpec


def _source(name: str, kind: str, tools: list[dict[str, object]]) -> SourceTools:
    return SourceTools(name=name, kind=kind, origin=f"{name}.json", tools=tuple(tools))  # type: ignore[arg-type]


def test_degradation_pointers_are_relative_to_their_own_tool() -> None:
    tools = [
        {"name": "a", "inputSchema": {"type": "object"}},
        {"name": "b", "inputSchema": {"type": "object"}},
        {
            "name": "c",
            "inputSchema": {"type": "object", "properties": {"x": {"$ref": "https://example.com/x.json"}}},
            "outputSchema": True,  # a JSON value, but no schema object
        },
    ]
    pkg = build_package([_source("s", "mcp-json", tools)], package="p", header="#", parallel=False)
    found = {(d.tool, d.pointer, d.kind) for d in pkg.degradations}
    assert found == {
        ("c", "/inputSchema/properties/x/$ref", "external-ref"),
        ("c", "/outputSchema", "output-schema"),
    }


def test_the_yaml_source_is_found_by_kind_not_by_place() -> None:
    mcp = _source("srv", "mcp-json", [])
    yaml = _source("skills", "yaml", [])
    assert yaml_source([mcp, yaml]) is yaml
    assert yaml_source([mcp]) is None


def test_the_intermediate_form_holds_no_layout() -> None:
    """Lines, indents and fits belong to the templates and the formatter, not to the data."""
    layout = {"lines", "fits", "info_open", "info_indent", "info_close", "params_decl", "argument_items",
              "omit_items", "output_model", "outputs_code", "classes", "const_decls"}  # fmt: skip
    for spec in (ToolSpec, ParamSpec, NamespaceSpec, PackageSpec, ToolPlan):
        assert not layout & {f.name for f in dataclasses.fields(spec)}, spec


def test_a_build_collects_garbage_rarely_and_restores_the_callers_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The collector's default thresholds cost a third of a cold 1,000-tool run (generate.few_collections)."""
    from codegen import build, generate
    from codegen.cache import Cache

    seen: list[tuple[int, int, int]] = []
    real = build.build_package

    def spying(*args: Any, **kwargs: Any) -> PackageSpec:
        seen.append(gc.get_threshold())
        return real(*args, **kwargs)

    monkeypatch.setattr(build, "build_package", spying)  # render_files imports it on a miss
    before = gc.get_threshold()
    source = _source("s", "mcp-json", [{"name": "a", "inputSchema": {"type": "object"}}])
    generate.render_files([source], "p", Cache(None))
    assert seen == [generate.BUILD_GC_THRESHOLDS] and gc.get_threshold() == before

    def failing(*args: Any, **kwargs: Any) -> PackageSpec:
        raise RuntimeError("boom")

    monkeypatch.setattr(build, "build_package", failing)
    with pytest.raises(RuntimeError):
        generate.render_files([source], "p", Cache(None))
    assert gc.get_threshold() == before
