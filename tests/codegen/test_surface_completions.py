"""Completion ``Literal``s (codegen/surface.py): a template variable or prompt argument whose
``completion/complete`` answers are a closed, stable set is typed as that ``Literal``; else ``str``.

Against real servers: the sample server with ``--with-resources`` (``style`` is a closed set,
``city`` an open one) generating a whole package, live and from the lock, and the npm reference
"everything" server (``department`` closed; ``name`` depends on another argument; a template's
``resourceId`` is a number echoed back). The rule's edges are checked on answers built by hand;
the lock's part (a set that changed since the last generation is ``str`` once) by editing the lock
between two live generations.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import forked_python, generate
from npm_cache import reference_or_skip

from codegen.sources import read_live
from codegen.surface import MAX_COMPLETION_VALUES, build_surface, closed_set, completion_items
from mas.runtime.config import MCPServerConfig
from mas.runtime.contracts.tool_contract import ToolResultEnvelope

STYLE = 'style: _Literal["brief", "detailed"] | None = None'


def _answers(table: Mapping[str, Any]) -> Any:
    """A ``complete`` that answers ``table[value]`` (a completion object, or an exception's text)."""
    asked: list[str] = []

    def complete(ref: Mapping[str, Any], argument: str, value: str) -> ToolResultEnvelope:
        asked.append(value)
        found = table.get(value, {"values": [], "hasMore": False})
        if isinstance(found, str):
            return ToolResultEnvelope.failure(found)
        return ToolResultEnvelope.success({"completion": found})

    complete.asked = asked  # type: ignore[attr-defined]
    return complete


REF = {"type": "ref/prompt", "name": "p"}


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ({"": {"values": ["b", "a", "ab"], "total": 3, "hasMore": False}, "a": {"values": ["a", "ab"]}},
         ["a", "ab", "b"]),
        ({"": {"values": ["Ab", "b"]}, "A": {"values": ["Ab"]}}, ["Ab", "b"]),  # no total: fine
        ({"": {"values": ["Ab", "ac"]}, "A": {"values": ["Ab", "ac"]}}, ["Ab", "ac"]),  # matched ignoring case
        ({"": {"values": ["a", "b"], "hasMore": True}}, None),  # open
        ({"": {"values": ["a", "b"], "total": 10}}, None),  # more exist than it sent
        ({"": {"values": []}}, None),  # nothing offered (a set that depends on another argument)
        ({"": {"values": ["a", "a"]}}, None),  # repeated
        ({"": {"values": ["a", "b"]}, "a": {"values": ["a", "b"]}}, None),  # the prefix filters nothing
        ({"": {"values": ["a", "b"]}, "a": {"values": ["a"], "hasMore": True}}, None),
        ({"": {"values": ["a", "b\x1b[31m"]}, "a": {"values": ["a"]}}, None),  # a terminal escape
        ({"": {"values": ["a", "x" * 101]}, "a": {"values": ["a"]}}, None),  # too long
        ({"": {"values": [str(i) for i in range(MAX_COMPLETION_VALUES + 1)]}}, None),  # too many
        ({"": "no completions here"}, None),  # the request failed
    ],
)  # fmt: skip
def test_the_closed_set_rule(table: Mapping[str, Any], expected: list[str] | None) -> None:
    complete = _answers(table)
    assert closed_set(complete, REF, "x") == expected
    assert len(complete.asked) <= 2


def test_a_set_unlike_the_locked_one_is_not_stable_until_seen_again() -> None:
    surface = {"prompts": ({"name": "p", "arguments": [{"name": "x"}, {"name": "y"}]},)}
    complete = _answers({"": {"values": ["a", "b"]}, "a": {"values": ["a"]}})
    [first, second] = completion_items(complete, surface)
    assert first == {"id": "ref/prompt p x", "ref": REF, "argument": "x", "values": ["a", "b"], "stable": True}
    locked = [{**first, "values": ["a", "c"]}, second]
    again = completion_items(complete, surface, locked)
    assert [(i["argument"], i["stable"]) for i in again] == [("x", False), ("y", True)]


# --- the sample server, a whole package ------------------------------------------------------------


def _infra(folder: Path) -> Path:
    run = forked_python("-m", "mas.samples.mcp_server", "--with-resources")
    server = {"name": "sample", "protocol": "mcp", "transport": "stdio", **run, "connect_timeout_seconds": 30}
    path = folder / "infra.yaml"
    path.write_text(json.dumps({"kind": "ToolServerRegistry", "spec": {"servers": [server]}}), encoding="utf-8")
    return path


def _generate(folder: Path, *more: str) -> str:
    args = ["--infra", str(folder / "infra.yaml"), "--out", "out", "--package", "lit", "--lock", "lock.json"]
    assert generate(folder, [*args, "-q", *more]) == 0
    return (folder / "out" / "lit" / "surface.py").read_text(encoding="utf-8")


def test_the_sample_servers_closed_style_is_a_literal_and_a_changed_set_is_str_once(tmp_path: Path) -> None:
    _infra(tmp_path)
    surface = _generate(tmp_path)
    assert surface.count(STYLE) == 2  # sync and async
    assert "def weather(self, *, city: str, units: str | None = None)" in surface  # city: an open set
    stub = (tmp_path / "out" / "lit" / "code_mode" / "sample.pyi").read_text(encoding="utf-8")
    assert 'style: Literal["brief", "detailed"] | None = None' in stub
    lock_path = tmp_path / "lock.json"
    lock = json.loads(lock_path.read_text())
    assert lock["servers"]["sample"]["completions"] == [
        {"argument": "style", "id": "ref/prompt review_city style",
         "ref": {"name": "review_city", "type": "ref/prompt"}, "stable": True, "values": ["brief", "detailed"]}
    ]  # fmt: skip
    before = surface
    assert _generate(tmp_path, "--offline") == before  # the lock gives the same package

    # The last generation saw another set: this one is not stable, and says so in the lock.
    lock["servers"]["sample"]["completions"][0]["values"] = ["brief", "long"]
    lock_path.write_text(json.dumps(lock))
    changed = _generate(tmp_path)
    assert STYLE not in changed and "style: str | None = None" in changed
    assert json.loads(lock_path.read_text())["servers"]["sample"]["completions"][0]["stable"] is False
    assert _generate(tmp_path, "--offline") == changed
    assert _generate(tmp_path) == before  # seen again: a Literal again


# --- the npm reference server --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def everything() -> MCPServerConfig:
    programs = reference_or_skip()
    node, entry = str(programs.node), str(programs.everything)
    return MCPServerConfig(name="everything", transport="stdio", command=node, args=(entry, "stdio"),
                           connect_timeout_seconds=30.0, exit_grace_seconds=0.2)  # fmt: skip


@pytest.mark.slow
@pytest.mark.timeout(600)  # a cold cache installs the server from npm first
def test_the_everything_servers_closed_sets_are_literals(everything: MCPServerConfig, tmp_path: Path) -> None:
    [source] = read_live([everything], tmp_path / "lock.json")
    found = {(i["id"], tuple(i["values"]), i["stable"]) for i in source.surface["completions"]}
    assert ("ref/prompt completable-prompt department", ("Engineering", "Marketing", "Sales", "Support"), True) in found
    ids = {i[0] for i in found}
    assert "ref/prompt completable-prompt name" not in ids  # empty until a department is given
    assert not any(i.startswith("ref/resource") for i in ids)  # a resource id is echoed, not listed
    spec = build_surface(source, "everything", {}, [])
    assert spec is not None
    [prompt] = [p for p in spec.prompts if p.method == "completable_prompt"]
    assert [p.declared() for p in prompt.params] == [
        'department: Literal["Engineering", "Marketing", "Sales", "Support"]',
        "name: str",
    ]


@pytest.mark.full  # the fast tier type-checks generated packages in test_typecheck.py
@pytest.mark.slow  # a generation, one mypy --strict and one pyright run over the package
@pytest.mark.timeout(900)
def test_the_everything_servers_package_is_strictly_typed(everything: MCPServerConfig, tmp_path: Path) -> None:
    server = {"name": "everything", "protocol": "mcp", "transport": "stdio", "command": everything.command,
              "args": list(everything.args), "connect_timeout_seconds": 30, "exit_grace_seconds": 0.2}  # fmt: skip
    infra = {"kind": "ToolServerRegistry", "spec": {"servers": [server]}}
    (tmp_path / "infra.yaml").write_text(json.dumps(infra), encoding="utf-8")
    args = ["--infra", "infra.yaml", "--out", "out", "--package", "ev", "--lock", "lock.json", "-q"]
    assert generate(tmp_path, args) == 0
    surface = (tmp_path / "out" / "ev" / "surface.py").read_text(encoding="utf-8")
    assert 'department: _Literal["Engineering", "Marketing", "Sales", "Support"]' in surface
    work = tmp_path / "out"
    mypy = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "ev"], cwd=work,
                          capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    assert mypy.returncode == 0, mypy.stdout
    (work / "pyrightconfig.json").write_text(json.dumps({"typeCheckingMode": "strict", "include": ["ev"]}))
    pyright = subprocess.run([str(Path(sys.executable).parent / "pyright"), "--outputjson"], cwd=work,
                             capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    report = json.loads(pyright.stdout)
    assert report["summary"]["errorCount"] == 0, report["generalDiagnostics"][:5]


@pytest.mark.parametrize(
    ("ref", "target", "stem", "what"),
    [(REF, "p", "prompt-argument", "prompt argument"),
     ({"type": "ref/resource", "uri": "x://{a}"}, "x://{a}", "template-variable", "template variable")],
)  # fmt: skip
def test_a_literals_changes_are_classified(ref: dict[str, str], target: str, stem: str, what: str) -> None:
    from codegen.drift import diff_surface

    def sets(*items: tuple[str, list[str], bool]) -> dict[str, Any]:
        return {"completions": [{"id": f"{ref['type']} {target} {a}", "ref": ref, "argument": a, "values": v,
                                 "stable": s} for a, v, s in items]}  # fmt: skip

    old = sets(("x", ["a", "b"], True), ("y", ["a"], True), ("z", ["a"], True))
    new = sets(("x", ["b", "c"], True), ("y", ["a"], False), ("w", ["q"], True), ("z", ["a"], True))
    found = [(c.tool, c.kind, c.severity, c.message) for c in diff_surface("srv", old, new)]
    assert found == [
        (target, f"{stem}-values-closed", "breaking", f"{what} 'w' is now Literal['q']"),
        (target, f"{stem}-values-removed", "breaking", f"{what} 'x': value(s) ['a'] removed from its Literal"),
        (target, f"{stem}-values-added", "compatible", f"{what} 'x': value(s) ['c'] added"),
        (target, f"{stem}-values-opened", "compatible", f"{what} 'y' is now str (was Literal['a'])"),
    ]
