"""Files an attacker or a careless user could write, given to ``toolgen`` (and ``mas-runtime``): a YAML
alias bomb, a samples file nested 400 levels, a ``--package`` that shadows a module, sample keys that
shadow the model module's imports. Each is refused with one line, or generates a package that still
type-checks. The alias bombs run as a user runs them, in a process of its own with 1.5 GB of address
space (an expanded bomb would need gigabytes); the other files go through ``toolgen generate`` in
this process, which decides alike and skips a start-up per run. docs/security.md names each test
beside its defence; the limits themselves are pinned in-process by test_boundary_units.py.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from gen_helpers import REPO, error_line, mypy_strict, run_module, toolgen_in_process
from pyright_batch import Batch, pyright_workspace

TIME = REPO / "tests" / "fixtures" / "mcp-tools-list" / "time.json"


# --- YAML alias bombs ------------------------------------------------------------------------

# Nine anchors of nine aliases each: 9**9 (387 million) strings once expanded, from ~600 bytes.
_BOMB = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'] + [
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]" for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
]


def _indented(lines: list[str], spaces: int) -> str:
    return "\n".join(" " * spaces + line for line in lines)


BOMB_TOOL = f"""\
apiVersion: toolgen/v1
kind: Tool
metadata:
  name: bomb
spec:
  description: An alias bomb under spec.parameters.properties.
  parameters:
    type: object
    properties:
{_indented(_BOMB, 6)}
  handler: os:getcwd
"""
BOMB_INFRA = f"""\
apiVersion: toolgen/v1
kind: ToolServerRegistry
metadata:
  name: bomb
spec:
  servers:
    - name: s
      protocol: mcp
      transport: stdio
      command: python
      args: [-c, "pass"]
      tools:
        - name: t
          inputSchema:
            type: object
            properties:
{_indented(_BOMB, 14)}
"""
# The aliases of ``f: &f [*e, ...]`` take the expansion past 100,000 nodes (a to e add 74,718).
BOMB_TOOL_LINE = BOMB_TOOL.splitlines().index("      " + _BOMB[5]) + 1
BOMB_INFRA_LINE = BOMB_INFRA.splitlines().index(" " * 14 + _BOMB[5]) + 1
_BOMB_MESSAGE = "YAML aliases expand to more than 100000 nodes; write the values out or use fewer aliases"


@pytest.mark.parametrize(
    ("name", "text", "line", "command"),
    [
        ("bomb.yaml", BOMB_TOOL, BOMB_TOOL_LINE, ("codegen", "generate", "--tools", "bomb.yaml", "--out", "o")),
        ("bomb.yaml", BOMB_TOOL, BOMB_TOOL_LINE, ("mas.runtime", "list", "--tools", "bomb.yaml")),
        ("infra.yaml", BOMB_INFRA, BOMB_INFRA_LINE, ("codegen", "generate", "--infra", "infra.yaml", "--out", "o")),
        ("infra.yaml", BOMB_INFRA, BOMB_INFRA_LINE, ("mas.runtime", "list", "--infra", "infra.yaml")),
    ],
    ids=["generate-tools", "list-tools", "generate-infra", "list-infra"],
)
@pytest.mark.slow  # a process each
def test_yaml_alias_bomb_is_refused_fast_with_one_line(
    tmp_path: Path, name: str, text: str, line: int, command: tuple[str, ...]
) -> None:
    """Refused *fast*: the bound is the CPU time the process spends (its start-up and imports take
    about 1 CPU-s), not the wall clock, which a loaded machine stretches past any fixed bound. With
    the alias limit gone, the expansion spends far more than 10 CPU-s or runs out of the 1.5 GB."""
    (tmp_path / name).write_text(text, encoding="utf-8")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = run_module(tmp_path, command[0], *command[1:], timeout=120)  # and in 1.5 GB of address space
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert cpu < 10, f"{cpu:.1f} CPU-s"
    prog = "toolgen" if command[0] == "codegen" else "mas-runtime"
    assert error_line(proc) == f"{prog}: error: {name}:{line}: {_BOMB_MESSAGE}"
    assert not (tmp_path / "o").exists()


@pytest.mark.slow  # a process
def test_yaml_alias_bomb_in_record_examples_is_refused(tmp_path: Path) -> None:
    """``toolgen record`` would send the expanded arguments to a server."""
    examples = "- tool: x\n  arguments:\n" + _indented(_BOMB, 4) + "\n"
    (tmp_path / "examples.yaml").write_text(examples, encoding="utf-8")
    proc = run_module(tmp_path, "codegen", "record", "--examples", "examples.yaml", "--tools", "none", timeout=30)
    assert error_line(proc) == f"toolgen: error: examples.yaml:{3 + 5}: not YAML: {_BOMB_MESSAGE}"


def test_recursive_yaml_alias_is_refused_with_its_line(tmp_path: Path) -> None:
    text = BOMB_TOOL.replace(_indented(_BOMB, 6), "      loop: &loop {type: object, properties: {again: *loop}}")
    (tmp_path / "loop.yaml").write_text(text, encoding="utf-8")
    proc = toolgen_in_process(tmp_path, "--tools", "loop.yaml", "--out", "o")
    line = text.splitlines().index("      loop: &loop {type: object, properties: {again: *loop}}") + 1
    assert error_line(proc) == (
        f"toolgen: error: loop.yaml:{line}: YAML alias refers to a node that contains it (a recursive alias)"
    )


def test_small_yaml_aliases_still_load(tmp_path: Path) -> None:
    text = BOMB_TOOL.replace(
        _indented(_BOMB, 6), "      a: &s {type: string, description: shared}\n      b: *s\n      c: *s"
    )
    (tmp_path / "ok.yaml").write_text(text, encoding="utf-8")
    proc = toolgen_in_process(tmp_path, "--tools", "ok.yaml", "--out", "o", "--package", "ok_tools", "-q")
    assert proc.returncode == 0, proc.stderr
    inputs = (tmp_path / "o" / "ok_tools" / "inputs.py").read_text()
    assert "    b: NotRequired[str]\n    c: NotRequired[str]\n" in inputs


# --- deeply nested samples ---------------------------------------------------------------------


def _nested(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


def _deep_sample(tmp_path: Path, depth: int) -> subprocess.CompletedProcess[str]:
    (tmp_path / "deep.json").write_text(json.dumps({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}))
    sample = '{"source": "deep", "tool": "t", "result": {"content": [], "structuredContent": ' + _nested(depth) + "}}"
    (tmp_path / "samples.json").write_text('{"version": 1, "samples": [' + sample + "]}")
    return toolgen_in_process(
        tmp_path, "--mcp-json", "deep.json", "--samples", "samples.json", "--out", "o", "--package", "d"
    )


@pytest.mark.parametrize("depth", [25, 400, 900])
def test_deeply_nested_sample_leaves_the_tool_untyped(tmp_path: Path, depth: int) -> None:
    proc = _deep_sample(tmp_path, depth)
    assert proc.returncode == 0, proc.stderr
    assert "toolgen: typed results: declared 0, inferred 0, untyped 1" in proc.stdout


def test_deepest_inferable_sample_is_still_typed(tmp_path: Path) -> None:
    proc = _deep_sample(tmp_path, 24)
    assert proc.returncode == 0, proc.stderr
    assert "toolgen: typed results: declared 0, inferred 1, untyped 0" in proc.stdout


def test_a_samples_file_too_deep_for_json_is_one_line(tmp_path: Path) -> None:
    assert error_line(_deep_sample(tmp_path, 5000)) == "toolgen: error: samples.json: JSON nested too deeply"


# --- package names that shadow modules --------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "what"),
    [
        ("typing", "the standard library module"),
        ("enum", "the standard library module"),
        ("json", "the standard library module"),
        ("os", "the standard library module"),
        ("pydantic", "the module"),
        ("mas", "the module"),
        ("yaml", "the module"),
        ("typing_inspection", "the module"),  # found through pydantic's own requirements
    ],
)
def test_package_name_that_shadows_a_module_is_refused(tmp_path: Path, name: str, what: str) -> None:
    (tmp_path / "tools.json").write_text(TIME.read_text())
    proc = toolgen_in_process(tmp_path, "--mcp-json", "tools.json", "--out", "o", "--package", name)
    assert error_line(proc) == (
        f"toolgen: error: --package: {name!r}: would shadow {what} {name!r} for any program that imports "
        "the generated package; choose another name"
    )
    assert not (tmp_path / "o").exists()


# --- keys that shadow the model module's imports or pydantic's names ------------------------------

_SHADOWING = {
    "Field": "f", "Annotated": 1, "z-z": 2, "model_dump": "d", "model_config": "c", "model_validate": 3,
    "int": "i", "str": 4, "n": 5, "s": "t",
}  # fmt: skip


@pyright_workspace(include=["shadow"])
def shadowing(folder: Path) -> None:
    (folder / "s.json").write_text(json.dumps({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}))
    sample = {"source": "s", "tool": "t", "result": {"content": [], "structuredContent": _SHADOWING}}
    (folder / "samples.json").write_text(json.dumps({"version": 1, "samples": [sample]}))
    proc = toolgen_in_process(
        folder, "--mcp-json", "s.json", "--samples", "samples.json", "--out", ".", "--package", "shadow"
    )
    assert proc.returncode == 0, proc.stderr


@pytest.mark.slow  # mypy, pyright and a process of its own
def test_sample_keys_that_shadow_imports_type_check_and_import_without_warnings(pyright_batch: Batch) -> None:
    """Keys from recorded results (and so from a server) name the fields of an inferred model."""
    folder = pyright_batch.built(shadowing)[0]
    mypy = mypy_strict(folder, "shadow")
    assert mypy.returncode == 0, mypy.stdout
    report = pyright_batch.report(shadowing)
    assert [d for d in report["generalDiagnostics"] if d["severity"] == "error"] == [], report["generalDiagnostics"]
    code = (
        "import shadow, json\n"
        "class P:\n"
        "    def call_tool(self, name, arguments):\n"
        f"        return {{'content': [], 'structuredContent': {_SHADOWING!r}, 'isError': False}}\n"
        "value = shadow.Tools(P()).s.t()\n"
        "print(json.dumps(value.model_dump(by_alias=True), sort_keys=True))\n"
        "print(value.Annotated_, value.field_model_dump, value.field_model_validate, value.int_, value.str_)\n"
    )
    run = subprocess.run([sys.executable, "-W", "error", "-c", code], cwd=folder, capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [json.dumps(_SHADOWING, sort_keys=True), "1 d 3 i 4"]


def test_a_250_character_tool_name_generates_a_package_whose_files_fit_the_file_system(tmp_path: Path) -> None:
    """Issue 31, defect 12: one ~250-character tool name failed the whole package ("internal
    error: File name too long"): its output model's module was named after it. Module names made
    from model names are cut at 100 characters, told apart by a hash of the whole name."""
    from gen_helpers import RecordingProvider, import_fresh

    long_names = ["t" + "x" * 249, "t" + "x" * 248 + "y"]  # two, alike up to the cut
    tools = [
        {"name": name, "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}},
         "outputSchema": {"type": "object", "properties": {"b": {"type": "string"}}}}
        for name in long_names
    ]  # fmt: skip
    (tmp_path / "long.json").write_text(json.dumps({"tools": tools}), encoding="utf-8")
    done = toolgen_in_process(tmp_path, "--mcp-json", "long.json", "--out", "out", "--package", "long_names", "-q")
    assert done.returncode == 0, done.stderr
    files = [p for p in (tmp_path / "out" / "long_names").rglob("*") if p.is_file()]
    outputs = sorted(p.name for p in (tmp_path / "out" / "long_names" / "outputs").glob("*.py"))
    assert max(len(p.name) for p in files) <= 103 and len(outputs) == 3  # __init__ and one module each
    pkg = import_fresh(tmp_path / "out", "long_names")
    provider = RecordingProvider(default={"is_error": False, "result": {"b": "v"}, "structured_content": {"b": "v"}})
    for name in long_names:
        method = getattr(pkg.Tools(provider).long, pkg.TOOLS[name].method)
        assert method(a="x").b == "v"
    assert [c[0] for c in provider.calls] == long_names
