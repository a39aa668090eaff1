"""Result types inferred from recorded calls, for tools that declare no output schema.

Generated from the six real tools/list captures plus their real recorded call results
(tests/fixtures/mcp-call-results), twice: as published, and with every ``outputSchema`` removed
(so the JSON-shaped results of memory, time and filesystem must be typed by inference alone).
Both packages, and a user script that uses them, go through one real mypy --strict run and one
strict pyright run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from gen_helpers import REPO, RecordingProvider, checked_modules, import_fresh
from pyright_batch import Batch, pyright_workspace

from codegen.naming import assign_names
from codegen.shim._runtime import inferred_candidate, normalize_envelope
from mas.runtime.samples import Sample, wire_result, write_samples

LISTS = REPO / "tests" / "fixtures" / "mcp-tools-list"
RESULTS = REPO / "tests" / "fixtures" / "mcp-call-results"
SERVERS = sorted(p.stem for p in LISTS.glob("*.json"))

USAGE = """\
from __future__ import annotations

from stripped import ToolOutput, Tools


def names(tools: Tools) -> list[str]:
    graph = tools.memory.read_graph()
    if isinstance(graph, ToolOutput):
        return [graph.text]
    return [entity.name for entity in graph.entities]


def echoed(tools: Tools) -> str:
    return tools.everything.echo(message="hi")


def unchecked(tools: Tools) -> object:
    return tools.memory.read_graph().entities  # the fallback must be handled first
"""


def recorded() -> list[tuple[str, str, dict[str, Any]]]:
    """(source, tool, wire result) for every recorded tools/call result (the task capture is not one)."""
    out = []
    for path in sorted(RESULTS.glob("*.json")):
        source, _, rest = path.name.partition(".call.")
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data.get("content"), list):
            out.append((source, rest.removesuffix(".json"), data))
    return out


def listed(source: str) -> dict[str, dict[str, Any]]:
    tools = json.loads((LISTS / f"{source}.json").read_text(encoding="utf-8"))["tools"]
    return {t["name"]: t for t in tools}


def kind_of(result: dict[str, Any]) -> str:
    """What inference should make of one result: "json", "text", "error" or "other"."""
    envelope = normalize_envelope(result)
    if envelope["is_error"]:
        return "error"
    if inferred_candidate(envelope) is not None:
        return "json"
    blocks = result["content"]
    return "text" if "structuredContent" not in result and [b["type"] for b in blocks] == ["text"] else "other"


@pyright_workspace(include=["published", "stripped", "usage.py"], full=True)
def checked(root: Path) -> dict[str, str]:
    """Both packages and the script; what `generate` printed for each package."""
    samples = root / "toolgen.samples.json"
    write_samples(samples, [Sample(s, t, wire_result(r)) for s, t, r in recorded()])
    stripped = root / "stripped-lists"
    stripped.mkdir()
    for server in SERVERS:
        data = json.loads((LISTS / f"{server}.json").read_text(encoding="utf-8"))
        for tool in data["tools"]:
            tool.pop("outputSchema", None)
        (stripped / f"{server}.json").write_text(json.dumps(data), encoding="utf-8")
    summaries = {}
    for package, folder in (("published", LISTS), ("stripped", stripped)):
        args = [a for s in SERVERS for a in ("--mcp-json", str(folder / f"{s}.json"))]
        proc = subprocess.run(
            [sys.executable, "-m", "codegen", "generate", *args, "--samples", str(samples), "--out", str(root),
             "--package", package],
            cwd=root, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        summaries[package] = proc.stdout
    (root / "usage.py").write_text(USAGE, encoding="utf-8")
    return summaries


@pytest.fixture(scope="module")
def workspace(pyright_batch: Batch) -> tuple[Path, dict[str, str]]:
    return pyright_batch.built(checked)


def _package(workspace: tuple[Path, dict[str, str]], name: str) -> ModuleType:
    return import_fresh(workspace[0], name)


def _call(pkg: ModuleType, source: str, tool: str, answer: dict[str, Any]) -> Any:
    info = pkg.TOOLS[tool]
    method = getattr(getattr(pkg.Tools(RecordingProvider(default=answer)), source), info.method)
    schema = listed(source)[tool]["inputSchema"]
    py = assign_names(schema.get("properties", {}), prefix="arg", reserved={"self"}, builtins_ok=True)
    return method(**{py[key]: "x" for key in schema.get("required", [])})  # not type-checked at run time


def test_coverage_line_counts_declared_inferred_and_untyped(workspace: tuple[Path, dict[str, str]]) -> None:
    # Published: 26 tools declare a schema; 8 more have only plain-text results (typed str);
    # with the schemas removed, 11 JSON-shaped results and the same 8 text ones are inferred.
    assert "toolgen: typed results: declared 26, inferred 8, untyped 21" in workspace[1]["published"]
    assert "toolgen: typed results: declared 0, inferred 19, untyped 36" in workspace[1]["stripped"]


@pytest.mark.parametrize("package", ["published", "stripped"])
def test_every_json_shaped_result_gets_a_typed_return_that_decodes_to_the_recorded_data(
    workspace: tuple[Path, dict[str, str]], package: str
) -> None:
    pkg = _package(workspace, package)
    checked = {"json": 0, "text": 0, "other": 0}
    for source, tool, result in recorded():
        if tool not in listed(source):
            continue
        kind = kind_of(result)
        info = pkg.TOOLS[tool]
        declared = package == "published" and "outputSchema" in listed(source)[tool]
        if kind == "error":
            assert info.inferred_from == 0
            with pytest.raises(pkg.ToolCallError):
                _call(pkg, source, tool, result)
            continue
        checked[kind] += 1
        if declared:
            assert info.inferred_from == 0 and info.output_model is not None
            continue
        value = _call(pkg, source, tool, result)
        if kind == "json":
            assert info.inferred_from == 1 and info.output_model is not None, tool
            assert isinstance(value, info.output_model if not info.output_is_root else list), tool
            dumped = (
                [v.model_dump(mode="json", by_alias=True, exclude_unset=True) for v in value]
                if info.output_is_root
                else value.model_dump(mode="json", by_alias=True, exclude_unset=True)
            )
            assert dumped == inferred_candidate(normalize_envelope(result)), tool
        elif kind == "text":
            assert (info.inferred_from, info.output_is_text, info.output_model) == (1, True, None), tool
            assert value == result["content"][0]["text"]
        else:  # images, links, several blocks: nothing to infer, the tool stays untyped
            assert (info.inferred_from, info.output_model) == (0, None), tool
            assert isinstance(value, pkg.ToolOutput)
            assert value.model_dump(mode="json", by_alias=True, exclude_none=True)["content"] == result["content"]
    assert checked == {"json": 11, "text": 8, "other": 5}


def test_docstring_and_manifest_say_the_type_is_inferred(workspace: tuple[Path, dict[str, str]]) -> None:
    pkg = _package(workspace, "stripped")
    info = pkg.TOOLS["read_graph"]
    assert (info.inferred_from, info.output_is_text, info.output_model.__name__) == (1, False, "MemoryReadGraphOutput")
    doc = pkg.Tools(RecordingProvider()).memory.read_graph.__doc__
    assert "Returns: a type inferred from 1 recorded result (the tool declares no output schema),\n" in doc
    assert "or a ToolOutput when a result does not fit it." in doc
    echo_doc = pkg.Tools(RecordingProvider()).everything.echo.__doc__
    assert "Returns: the result's text (the tool declares no output schema; inferred from 1 recorded result)." in (
        echo_doc
    )


def test_a_result_of_another_shape_falls_back_to_tool_output(workspace: tuple[Path, dict[str, str]]) -> None:
    pkg = _package(workspace, "stripped")
    other_shapes = [
        json.loads((RESULTS / "everything.call.get-sum.json").read_text()),  # prose
        {"content": [], "structuredContent": {"entities": "not a list", "relations": []}},  # a type changed
        {"content": [{"type": "text", "text": '{"relations": []}'}]},  # a required field gone
        {"content": [{"type": "text", "text": '{"entities": [], "relations": [{"from": 1, "to": "b"}]}'}]},
    ]
    for answer in other_shapes:
        value = _call(pkg, "memory", "read_graph", answer)
        assert isinstance(value, pkg.ToolOutput)
        if answer["content"]:
            assert value.model_dump(mode="json", by_alias=True, exclude_none=True)["content"] == answer["content"]
        else:  # the envelope rule makes structured content the result; ToolOutput keeps it as is
            assert value.structured_content == answer["structuredContent"]
    # Strict decoding: no coercion, so a decoded value is always the data that came back.
    coerced = {"content": [], "structuredContent": {"timezone": "UTC", "datetime": "d", "day_of_week": "Mon",
                                                    "is_dst": 0}}  # fmt: skip
    assert isinstance(_call(pkg, "time", "get_current_time", coerced), pkg.ToolOutput)
    extra = {"content": [], "structuredContent": {"entities": [], "relations": [], "new": {"a": 1}}}
    kept = _call(pkg, "memory", "read_graph", extra)
    assert kept.model_dump(mode="json", by_alias=True, exclude_unset=True) == extra["structuredContent"]
    # Plain text tools return the text blocks (joined) whatever comes back, never failing.
    image = json.loads((RESULTS / "everything.call.get-tiny-image.json").read_text())
    texts = [b["text"] for b in image["content"] if b["type"] == "text"]
    assert len(texts) == 2 and _call(pkg, "everything", "echo", image) == "\n".join(texts)


@pytest.mark.full
def test_packages_and_user_code_pass_mypy_strict_and_pyright_strict(
    workspace: tuple[Path, dict[str, str]], pyright_batch: Batch
) -> None:
    root = workspace[0]
    (root / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--strict", "--python-version", "3.11",
         "--no-pretty", "--no-error-summary", "published", "stripped", "usage.py"],
        cwd=root, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    errors = [line for line in mypy.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1 and errors[0].startswith("usage.py:18: error:"), mypy.stdout + mypy.stderr
    assert 'Item "ToolOutput" of "MemoryReadGraphOutput | ToolOutput" has no attribute "entities"' in errors[0]

    report = pyright_batch.report(checked)
    assert len(report["checked"]) == checked_modules(root, ["published", "stripped"]) + 1  # + usage.py
    found = [
        (Path(d["file"]).name, d["range"]["start"]["line"] + 1, d.get("rule"))
        for d in report["generalDiagnostics"]
        if d["severity"] in ("error", "warning")
    ]
    assert ("usage.py", 18, "reportAttributeAccessIssue") in found
    assert {f for f in found if f[:2] != ("usage.py", 18)} == set(), found


def test_coverage_table_in_the_docs_is_current() -> None:
    from codegen.infer import infer_outputs, read_samples
    from codegen.sources import parse_mcp_json

    samples = read_samples([REPO / "tests" / "fixtures" / "samples" / "toolgen.samples.json"])
    rows, totals = [], [0] * 6
    for server in SERVERS:
        source = parse_mcp_json(LISTS / f"{server}.json")
        names = {t["name"] for t in source.tools}
        found = infer_outputs(source, samples)
        declared = sum("outputSchema" in t for t in source.tools)
        models = sum(f.kind == "model" for f in found.values())
        texts = sum(f.kind == "text" for f in found.values())
        with_result = len({s.tool for s in samples if s.source == server and s.tool in names})
        row = [len(names), with_result, declared, models, texts, len(names) - declared - models - texts]
        totals = [a + b for a, b in zip(totals, row, strict=True)]
        rows.append(f"| {server} | {' | '.join(map(str, row))} |")
    rows.append(f"| **all** | {' | '.join(map(str, totals))} |")
    doc = (REPO / "docs" / "samples.md").read_text(encoding="utf-8")
    assert "\n".join(rows) in doc
