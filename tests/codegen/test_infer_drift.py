"""Drift of inferred output types: what the lock records, how it is read back, and how the changes
are classified (same kinds and severities as declared outputs). End to end: test_infer_drift_e2e.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codegen.cli import main as toolgen_main
from codegen.errors import GenerateError
from codegen.infer import InferredOutput, infer_schema, inferred_changes
from codegen.lock import drift_between, load_lock, parse_lock, relock_inferred, render_lock

CITY = {"name": "Paris", "population": 2102650}


def model(*values: Any) -> InferredOutput:
    return InferredOutput("model", len(values), infer_schema(values))


def tool(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object"}, **extra}


DECLARED = {"type": "object", "properties": {"name": {"type": "string"}}}


def test_only_tools_listed_on_both_sides_without_a_declared_schema_are_compared() -> None:
    """A tool added, removed or now declaring its schema is one change of the listings already."""
    old_list = {"s": [tool("kept"), tool("gone"), tool("declares"), tool("undeclares", outputSchema=DECLARED)]}
    new_list = {"s": [tool("kept"), tool("came"), tool("declares", outputSchema=DECLARED), tool("undeclares")]}
    old = {"s": {"kept": model(CITY), "gone": model(CITY), "declares": model(CITY)}}
    new = {"s": {"kept": model({"name": "Paris"}), "came": model(CITY), "undeclares": model(CITY)}}
    found = [(c.tool, c.severity, c.kind, c.pointer, c.message) for c in inferred_changes(old_list, old, new_list, new)]
    assert found == [
        (
            "kept",
            "breaking",
            "output-field-removed",
            "/inferredOutputSchema/properties/population",
            "inferred output field 'population' removed",
        )
    ]


def test_an_inferred_type_appearing_or_going_on_a_kept_tool_is_breaking() -> None:
    listing = {"s": [tool("t"), tool("prose")]}
    old = {"s": {"t": model(CITY)}}
    new = {"s": {"prose": InferredOutput("text", 2)}}
    found = [(c.tool, c.severity, c.kind) for c in inferred_changes(listing, old, listing, new)]
    assert found == [("prose", "breaking", "output-schema-added"), ("t", "breaking", "output-schema-removed")]


def test_the_lock_keeps_inferred_types_canonically_and_reads_them_back(tmp_path: Path) -> None:
    servers = {"s": [tool("t"), tool("prose"), tool("declared", outputSchema=DECLARED)]}
    found = {"t": model({"b": 1, "a": "x"}), "prose": InferredOutput("text", 2)}
    text = render_lock(servers, None, {"s": found, "not-in-the-lock": {"x": model(CITY)}})
    data = json.loads(text)
    assert data["toolgen_snapshot"] == 3
    assert data["servers"]["s"]["inferred"] == {
        "prose": {"kind": "text", "samples": 2},
        "t": {
            "kind": "model",
            "samples": 1,
            "schema": {
                "additionalProperties": True,
                "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
                "required": ["a", "b"],  # sorted: its order means nothing
                "type": "object",
            },
        },
    }
    assert "not-in-the-lock" not in text  # only the lock's own sources
    (tmp_path / "lock.json").write_text(text, encoding="utf-8")
    lock = load_lock(tmp_path / "lock.json")
    assert lock.inferred is not None and set(lock.inferred["s"]) == {"t", "prose"}
    assert lock.inferred["s"]["prose"] == InferredOutput("text", 2)
    assert render_lock(lock.servers, lock.skills, lock.inferred) == text
    # No samples, no key: such a lock differs from format 2 only in its version.
    assert "inferred" not in render_lock(servers)


def test_a_format_2_lock_recorded_nothing_so_nothing_is_compared(tmp_path: Path) -> None:
    servers = {"s": [tool("t")]}
    v2 = json.loads(render_lock(servers))
    v2["toolgen_snapshot"] = 2
    old = parse_lock(json.dumps(v2), tmp_path / "old.json")
    assert old.inferred is None
    new = parse_lock(render_lock(servers, None, {"s": {"t": model(CITY)}}), tmp_path / "new.json")
    assert drift_between(old, new) == ()
    # Known to have none (format 3 without the key) is not unknown: the type appearing is breaking.
    none = parse_lock(render_lock(servers), tmp_path / "none.json")
    assert none.inferred == {}
    assert [c.kind for c in drift_between(none, new)] == ["output-schema-added"]


def test_offline_relock_changes_only_the_built_sources_inferred_types(tmp_path: Path) -> None:
    servers = {"a": [tool("t")], "b": [tool("t")]}
    lock = parse_lock(render_lock(servers, None, {"a": {"t": model(CITY)}, "b": {"t": model(CITY)}}), tmp_path)
    assert relock_inferred(lock, ["a"], {"a": {"t": model(CITY)}}) is None  # unchanged: nothing to write
    text = relock_inferred(lock, ["a"], {"a": {"t": model({"name": "x"})}})
    assert text is not None
    relocked = parse_lock(text, tmp_path)
    assert relocked.servers == lock.servers
    assert relocked.inferred is not None and lock.inferred is not None
    assert relocked.inferred["b"] == lock.inferred["b"]  # not built: kept as it was
    assert [c.kind for c in drift_between(lock, relocked)] == ["output-field-removed"]
    # Built without samples: its types go.
    gone = relock_inferred(lock, ["a"], {})
    assert gone is not None and "a" not in (parse_lock(gone, tmp_path).inferred or {})
    # A format 2 lock with nothing to record is left alone; with something, it is rewritten.
    v2 = json.loads(render_lock(servers))
    v2["toolgen_snapshot"] = 2
    old = parse_lock(json.dumps(v2), tmp_path)
    assert relock_inferred(old, ["a"], {}) is None
    assert json.loads(relock_inferred(old, ["a"], {"a": {"t": model(CITY)}}) or "{}")["toolgen_snapshot"] == 3


BAD = {
    "not an object": ([], "/servers/s/inferred: 'inferred' must be an object"),
    "bad kind": ({"t": {"kind": "guess", "samples": 1}}, "/servers/s/inferred/t/kind: 'kind' must be"),
    "no samples": ({"t": {"kind": "text"}}, "/servers/s/inferred/t/samples: 'samples' must be a positive integer"),
    "bool samples": ({"t": {"kind": "text", "samples": True}}, "/servers/s/inferred/t/samples"),
    "model without schema": ({"t": {"kind": "model", "samples": 1}}, '/servers/s/inferred/t/schema: a "model" needs'),
    "text with schema": (
        {"a/b": {"kind": "text", "samples": 1, "schema": {}}},
        "/servers/s/inferred/a~1b/schema: a \"text\" has no 'schema'",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_inferred_entry_names_its_pointer(case: str, tmp_path: Path) -> None:
    value, expected = BAD[case]
    data = json.loads(render_lock({"s": [tool("t")]}))
    data["servers"]["s"]["inferred"] = value
    with pytest.raises(GenerateError) as caught:
        parse_lock(json.dumps(data), tmp_path / "lock.json")
    assert str(caught.value).startswith(f"{tmp_path / 'lock.json'}: {expected}"), str(caught.value)
    assert "\n" not in str(caught.value)


def _locks(folder: Path, old: dict[str, InferredOutput], new: dict[str, InferredOutput]) -> None:
    servers = {"sample": [tool("list_cities")], "other": [tool("t")]}
    (folder / "old.json").write_text(render_lock(servers, None, {"sample": old}), encoding="utf-8")
    (folder / "new.json").write_text(render_lock(servers, None, {"sample": new}), encoding="utf-8")


@pytest.mark.parametrize(
    ("new", "kinds", "exits"),
    [
        # a field gone from every sample, a type changed: breaking -> 3 at every --fail-on
        (
            model({"cities": [{"name": "Paris"}], "total": "1"}),
            [("breaking", "output-field-removed"), ("breaking", "output-type-changed")],
            {"breaking": 3, "any": 3},
        ),
        # a field added: compatible -> 1 below --fail-on breaking, 3 with --fail-on any
        (
            model({"cities": [CITY], "total": 1, "next": "p2"}),
            [("compatible", "output-field-added")],
            {"breaking": 1, "any": 3},
        ),
        (model({"cities": [CITY], "total": 1}), [], {"breaking": 0, "any": 0}),
    ],
)
def test_diff_of_two_locks_reports_inferred_changes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    new: InferredOutput,
    kinds: list[tuple[str, str]],
    exits: dict[str, int],
) -> None:
    monkeypatch.chdir(tmp_path)
    _locks(tmp_path, {"list_cities": model({"cities": [CITY], "total": 1})}, {"list_cities": new})
    for fail_on, code in exits.items():
        assert toolgen_main(["diff", "--json", "--fail-on", fail_on, "old.json", "new.json"]) == code
        changes = json.loads(capsys.readouterr().out)["changes"]
        assert [(c["severity"], c["kind"]) for c in changes] == kinds
        assert all(c["source"] == "sample" and c["tool"] == "list_cities" for c in changes)
        assert all(c["pointer"].startswith("/inferredOutputSchema") for c in changes)
    # --server narrows two locks to one server, inferred types included.
    assert toolgen_main(["diff", "--server", "sample", "old.json", "new.json"]) == exits["breaking"]
    assert toolgen_main(["diff", "--server", "other", "old.json", "new.json"]) == 0
    capsys.readouterr()


def test_pinning_ignores_inferred_types(tmp_path: Path) -> None:
    """Pinning is about what the server lists: the same tools pin the same, samples or not."""
    from mas.runtime.infra import load_infra
    from mas.runtime.pinning import load_pinned_tools

    (tmp_path / "infra.yaml").write_text(
        "kind: ToolServerRegistry\nspec:\n  servers:\n    - name: s\n      protocol: mcp\n"
        "      transport: streamable-http\n      url: http://127.0.0.1:9/mcp\n      pin: refuse\n"
        "      lock: lock.json\n",
        encoding="utf-8",
    )
    (config,) = load_infra(tmp_path / "infra.yaml")
    servers = {"s": [tool("t")]}
    (tmp_path / "lock.json").write_text(render_lock(servers), encoding="utf-8")
    plain = load_pinned_tools(config)
    (tmp_path / "lock.json").write_text(render_lock(servers, None, {"s": {"t": model(CITY)}}), encoding="utf-8")
    assert "inferred" in (tmp_path / "lock.json").read_text(encoding="utf-8")
    assert load_pinned_tools(config) == plain
