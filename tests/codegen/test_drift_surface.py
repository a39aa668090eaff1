"""Drift of resources, resource templates and prompts: every rule, ``toolgen diff`` against a real
server whose prompt changed, and run-time pinning of that prompt against the lock ``generate`` wrote."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import forked_python, generate

from codegen.cli import main as toolgen
from codegen.drift import KINDS, diff_surface
from codegen.drift_report import describe
from mas.runtime.registry import RuntimeRegistry

GUIDE = {"uri": "x://guide", "name": "guide", "mimeType": "text/markdown", "description": "How to."}
FIND = {"uriTemplate": "x://{path}{?q}", "name": "find"}
ASK = {"name": "ask", "description": "Ask.", "arguments": [{"name": "a", "required": True}, {"name": "b"}]}
OLD = {"resources": [GUIDE], "resource_templates": [FIND], "prompts": [ASK]}

#: (what changes, the new listing) -> the kinds expected, in order
CASES: dict[str, tuple[dict[str, list[dict[str, Any]]], list[str]]] = {
    "nothing": (OLD, []),
    "resource removed and added": (
        {**OLD, "resources": [{**GUIDE, "uri": "x://other"}]},
        ["resource-removed", "resource-added"],
    ),
    "resource renamed, retyped, redescribed, resized": (
        {
            **OLD,
            "resources": [{**GUIDE, "name": "howto", "mimeType": "application/json", "description": "Now.", "size": 3}],
        },  # fmt: skip
        ["resource-description-changed", "resource-type-changed", "resource-renamed", "resource-other-changed"],
    ),
    "template removed and added": (
        {**OLD, "resource_templates": [{**FIND, "uriTemplate": "x://{path}"}]},
        ["template-added", "template-removed"],
    ),
    "prompt removed and added": ({**OLD, "prompts": [{**ASK, "name": "ask2"}]}, ["prompt-removed", "prompt-added"]),
    "prompt arguments": (
        {
            **OLD,
            "prompts": [
                {
                    **ASK,
                    "description": "Ask!",
                    "icons": [],
                    "arguments": [
                        {"name": "a"},
                        {"name": "b", "required": True},
                        {"name": "c", "required": True},
                        {"name": "d", "description": "x"},
                    ],
                }
            ],
        },
        [
            "prompt-argument-now-optional",
            "prompt-argument-now-required",
            "prompt-argument-added-required",
            "prompt-argument-added-optional",
            "prompt-description-changed",
            "prompt-other-changed",
        ],
    ),  # fmt: skip
    "prompt argument removed and redescribed": (
        {**OLD, "prompts": [{**ASK, "arguments": [{"name": "a", "required": True, "title": "A"}]}]},
        ["prompt-description-changed", "prompt-argument-removed"],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_change_is_classified(case: str) -> None:
    new, expected = CASES[case]
    found = diff_surface("srv", OLD, new)
    assert [c.kind for c in found] == expected, [describe(c) for c in found]
    for change in found:
        assert change.severity == KINDS[change.kind][0]


def test_template_variables_changed_under_the_same_key_are_classified() -> None:
    from codegen.drift import _diff_template_variables

    old, new = {"uriTemplate": "x://{a}{?q}"}, {"uriTemplate": "x://{a}/{b}{?r}"}
    kinds = [c.kind for c in _diff_template_variables("srv", "find", old, new)]
    assert kinds == ["template-variable-removed", "template-variable-added-required",
                     "template-variable-added-optional"]  # fmt: skip


def test_every_surface_rule_is_exercised() -> None:
    shown = {kind for _, expected in CASES.values() for kind in expected}
    shown |= {"template-variable-removed", "template-variable-added-required", "template-variable-added-optional"}
    # The completion Literals' kinds: tests/codegen/test_surface_completions.py::test_a_literals_changes_are_classified
    shown |= {f"{stem}-values-{change}" for stem in ("template-variable", "prompt-argument")
              for change in ("removed", "added", "closed", "opened")}  # fmt: skip
    surface_kinds = {k for k in KINDS if k.startswith(("resource-", "template-", "prompt-"))}
    assert shown == surface_kinds, sorted(shown ^ surface_kinds)


def test_a_change_says_what_it_is_about() -> None:
    [change] = diff_surface("srv", OLD, {**OLD, "prompts": []})
    assert describe(change) == "server 'srv': prompt 'ask': prompt removed (breaking)"


# --- a real server whose prompt changed ------------------------------------------------------------


def _infra(folder: Path, name: str, *flags: str, **extra: Any) -> Path:
    run = forked_python("-m", "mas.samples.mcp_server", "--with-resources", *flags)
    server = {"name": "sample", "protocol": "mcp", "transport": "stdio", **run, "connect_timeout_seconds": 30, **extra}
    path = folder / name
    path.write_text(json.dumps({"kind": "ToolServerRegistry", "spec": {"servers": [server]}}), encoding="utf-8")
    return path


def test_toolgen_diff_classifies_a_changed_prompt_and_pinning_refuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    infra = _infra(tmp_path, "infra.yaml")
    assert generate(tmp_path, ["--infra", str(infra), "--out", "out", "--package", "st", "-q"]) == 0
    drifted = _infra(tmp_path, "drifted.yaml", "--prompt-drift")
    capsys.readouterr()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        assert toolgen(["diff", "--infra", str(infra)]) == 0
        capsys.readouterr()
        assert toolgen(["diff", "--infra", str(drifted), "--json"]) == 3
    report = json.loads(capsys.readouterr().out)
    assert report["changes"] == [
        {"source": "sample", "tool": "review_city", "severity": "breaking", "kind": "prompt-argument-now-required",
         "pointer": "/arguments/1/required", "old": False, "new": True,
         "message": "prompt argument 'style' is now required"},
    ]  # fmt: skip

    lock = str(tmp_path / "toolgen.lock.json")
    for path, refused in ((infra, False), (drifted, True)):
        pinned = _infra(tmp_path, f"pinned-{path.name}", *(["--prompt-drift"] if refused else []),
                        pin="refuse", lock=lock)  # fmt: skip
        with RuntimeRegistry.from_sources(infra=[pinned]) as registry:
            got = registry.get_prompt("review_city", {"city": "Lyon", "style": "brief"})
            assert got.is_error is refused, got.result
            if refused:
                assert got.error_kind == "unavailable" and got.metadata["pointer"] == "/arguments/1/required"
            assert not registry.call_tool("get_weather", {"city": "Lyon"}).is_error


def test_generate_check_prints_the_prompt_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    infra = _infra(tmp_path, "infra.yaml")
    assert generate(tmp_path, ["--infra", str(infra), "--out", "out", "--package", "st", "-q"]) == 0
    drifted = _infra(tmp_path, "drifted.yaml", "--prompt-drift")
    capsys.readouterr()
    assert generate(tmp_path, ["--infra", str(drifted), "--out", "out", "--package", "st", "--check"]) == 1
    out = capsys.readouterr().out
    assert "toolgen: server 'sample': prompt 'review_city': prompt argument 'style' is now required (breaking)" in out
    assert out.count("prompt argument") == 1
    # Generating accepts it: the method's argument is now required (the build cache keys on prompts too).
    # (style is a closed completion set: a Literal, codegen/surface.py)
    assert 'style: _Literal["brief", "detailed"] | None = None' in (tmp_path / "out" / "st" / "surface.py").read_text()
    assert generate(tmp_path, ["--infra", str(drifted), "--out", "out", "--package", "st", "-q"]) == 0
    text = (tmp_path / "out" / "st" / "surface.py").read_text()
    assert re.search(r'def review_city\(\s*self, \*, city: str, style: _Literal\["brief", "detailed"\]\s*\)', text)
