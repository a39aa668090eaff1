"""The test kit's data: what ``<package>.testing.FakeTools`` knows about each tool (docs/testing.md).

Every generated package carries ``_testing_data.py``: per tool (by the wire name ``call_tool``
receives) its source, its ``list_tools`` entry as the runtime lists it, its MCP tool object as the
lock holds it, the output schema its answers are checked against (declared, else inferred from
samples) and its newest recorded result. The module is one JSON string, canonical (keys sorted,
ASCII), imported by ``testing`` and by code mode (each tool's ``inputSchema``, against which it
checks arguments before sending): ``import <package>`` never reads it. The typed handles are
``testing.py``, rendered from ``templates/testing.py.jinja`` over the intermediate form.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from codegen.errors import GenerateError
from codegen.infer import InferredOutput
from codegen.literals import wire_literal
from codegen.model import ImportSpec, PackageSpec, SourceTools
from mas.runtime.lockfile import canonical_tool
from mas.runtime.samples import Sample

__all__ = [
    "DATA_MODULE",
    "TESTING_MODULE",
    "cassette_problems",
    "data_module",
    "data_text",
    "newest_samples",
    "testing_context",
    "testing_data",
]

#: The kit's modules in a package: the typed fakes, and the data they are built from.
TESTING_MODULE = "testing.py"
DATA_MODULE = "_testing_data.py"
#: The data's format, for the engine (``_runtime/_fake.py``) to refuse one it does not know.
DATA_VERSION = 1

_DOC = "The test kit's data: each tool's listing, output schema and newest recorded result (JSON)."


def newest_samples(sources: Sequence[SourceTools], samples: Sequence[Sample]) -> dict[str, dict[str, Any]]:
    """The newest recorded (non-error) result of each tool, by source name and wire name; a samples
    file keeps each tool's samples oldest first, so the last one read wins."""
    names = {s.name: {str(t.get("name")) for t in s.tools} for s in sources}
    newest: dict[str, dict[str, Any]] = {}
    for sample in samples:
        if sample.tool in names.get(sample.source, ()) and not sample.result.get("isError"):
            newest.setdefault(sample.source, {})[sample.tool] = dict(sample.result)
    return newest


def testing_data(
    sources: Sequence[SourceTools],
    wire_names: Mapping[tuple[str, str], str],
    inferred: Mapping[str, Mapping[str, InferredOutput]] | None,
    newest: Mapping[str, Mapping[str, Any]] | None,
    removed: Collection[tuple[str, str]] = (),
) -> dict[str, Any]:
    """The kit's data for these sources (see the module docstring); ``wire_names``: the name each
    tool is called by, by source and tool name (the build's, ``TOOLS``' keys); ``removed``: the
    (source, wire name) of the removed tools kept a while, which the kit leaves out as ``TOOLS`` does."""
    # Here: generate.py imports this module on the cached path, which reads no listing.
    from mas.runtime.contracts.tool_contract import tool_entry_from_mcp

    tools: dict[str, Any] = {}
    for source in sources:
        learned = (inferred or {}).get(source.name, {})
        recorded = (newest or {}).get(source.name, {})
        for tool in source.tools:
            name = str(tool.get("name"))
            wire = wire_names[(source.name, name)]
            if (source.name, wire) in removed:
                continue
            locked = canonical_tool(dict(tool))
            output: Any = locked.get("outputSchema")
            found = learned.get(name)
            if output is None and found is not None and found.kind == "model":
                output = found.schema
            tools[wire] = {
                "source": source.name,
                "entry": tool_entry_from_mcp({**locked, "name": wire}),
                "mcp": locked,
                "output": output,
                "sample": recorded.get(name),
            }
    return {"version": DATA_VERSION, "tools": tools}


def data_text(data: Mapping[str, Any]) -> str:
    """The kit's data as the one JSON text ``_testing_data.py`` holds (keys sorted, ASCII)."""
    return json.dumps(data, sort_keys=True, ensure_ascii=True, separators=(",", ":"))


def data_module(header: str, text: str | None) -> str:
    """``_testing_data.py``: the header, a docstring and ``DATA``, the kit's JSON text (``data_text``;
    None: a package of no tools) as one literal."""
    if text is None:
        text = data_text({"version": DATA_VERSION, "tools": {}})
    return f'{header}\n"""{_DOC}"""\n\nDATA = {wire_literal(text)}\n'


def testing_context(pkg: PackageSpec) -> dict[str, Any]:
    """What ``testing.py.jinja`` needs beyond the package: the typing imports its annotations use
    (those of ``_tools.py`` that the value types name) and which model modules they name."""
    tools = pkg.callable_tools
    values = " ".join(t.value_annotation for t in tools)
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", values))
    imports = []
    for imp in pkg.tools_imports:
        names = tuple(n for n in imp.names if n.split(" as ")[-1] in words)
        if names:
            imports.append(ImportSpec(imp.module, names))
    uses = {
        "any": any(t.any_arguments for t in tools),
        "inputs": any(not t.any_arguments for t in tools),
        "outputs": "_o." in values,
        "tool_output": "_ToolOutput" in words,
    }
    return {"imports": imports, "uses": uses}


def _data_of(module: str) -> dict[str, Any]:
    """The kit's data back from the text of ``_testing_data.py`` (its ``DATA`` literal)."""
    for node in ast.parse(module).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["DATA"]:
            data: dict[str, Any] = json.loads(ast.literal_eval(node.value))
            return data
    raise GenerateError(f"{DATA_MODULE} has no DATA")  # never: this module wrote it


def cassette_files(paths: Sequence[Path]) -> list[Path]:
    """Each cassette named: a file, or every ``*.json`` below a folder (sorted)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(path.rglob("*.json"))
        elif path.is_file():
            found.append(path)
        else:
            raise GenerateError(
                "no such cassette file or folder (--cassette, or cassettes in [tool.toolgen])", str(path)
            )
    return found


def cassette_problems(paths: Sequence[Path], data_module_text: str, shown: Callable[[Path], str]) -> tuple[str, ...]:
    """Each recorded call of the cassettes at ``paths`` that no longer fits the package, one line
    each (``FILE: /calls/N/...: what``): a tool that is gone, arguments its input schema refuses,
    a result its output schema refuses. A cassette that is not one is bad input (``GenerateError``)."""
    # The rules are the kit's own (the shim's _fake.py): what replay checks, --check checks.
    from codegen.shim._runtime._decode import inferred_candidate
    from codegen.shim._runtime._fake import cassette_problem, schema_problem
    from mas.runtime.contracts._rules import to_envelope

    tools = _data_of(data_module_text)["tools"]
    out: list[str] = []
    for file in cassette_files(paths):
        try:
            doc = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise GenerateError(f"cannot read the cassette: {exc}", shown(file)) from exc
        problem = cassette_problem(doc)
        if problem is not None:
            raise GenerateError(problem, shown(file))
        for index, call in enumerate(doc["calls"]):
            where = f"{shown(file)}: /calls/{index}"
            tool = tools.get(call["tool"])
            if tool is None:
                out.append(f"{where}/tool: tool {call['tool']!r} is not in the package (gone, or renamed, since)")
                continue
            pointer, message = schema_problem(tool["entry"].get("parameters") or {}, call["arguments"])
            if message is not None:
                out.append(f"{where}/arguments{pointer}: {message}")
            try:
                envelope = to_envelope(call["envelope"])
            except ValueError as exc:
                raise GenerateError(f"/calls/{index}/envelope: {exc}", shown(file)) from exc
            if tool["output"] is not None and not envelope.get("is_error") and envelope.get("result_mode") != "session":
                pointer, message = schema_problem(tool["output"], inferred_candidate(envelope))
                if message is not None:
                    out.append(
                        f"{where}/envelope: the result does not fit the output schema at {pointer or '/'}: {message}"
                    )
    return tuple(out)
