"""End to end: generate from the sample server with recorded results of `list_cities` (a tool with
no outputSchema that returns JSON text), then append a sample that contradicts the inferred type and
watch `generate --check` (live and --offline) and `toolgen diff` classify it like a declared output
change; accept it with `generate --offline` and see everything clean again.

The sample server runs over stdio (a real child process).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import REPO, forked_python, generate, tree

from codegen.cli import main as toolgen_main

LOCKED = ["--infra", "infra.yaml", "--lock", "lock.json"]
ARGS = [*LOCKED, "--out", "out", "--package", "pkg"]
PREFIX = "toolgen: server 'sample': tool 'list_cities': "


def _recorded() -> list[dict[str, Any]]:
    """The repository's recorded list_cities results (cities with name, country, population)."""
    data = json.loads((REPO / "toolgen.samples.json").read_text(encoding="utf-8"))
    samples: list[dict[str, Any]] = [s for s in data["samples"] if s["tool"] == "list_cities"]
    assert samples and all("total" in json.loads(s["result"]["content"][0]["text"]) for s in samples)
    return samples


def _sample(value: Any) -> dict[str, Any]:
    result = {"content": [{"type": "text", "text": json.dumps(value)}], "isError": False}
    return {"source": "sample", "tool": "list_cities", "result": result}


def _samples(path: Path, samples: list[dict[str, Any]]) -> str:
    path.write_text(json.dumps({"version": 1, "samples": samples}), encoding="utf-8")
    return path.name


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """lock.json and out/pkg generated from the sample server and its recorded list_cities results,
    and samples files that append one result of another shape each."""
    folder = tmp_path_factory.mktemp("inferred-drift")
    (folder / "infra.yaml").write_text(
        "kind: ToolServerRegistry\nspec:\n  servers:\n"
        "    - name: sample\n      protocol: mcp\n      transport: stdio\n      connect_timeout_seconds: 20\n"
        + "".join(
            f"      {key}: {json.dumps(value)}\n"
            for key, value in forked_python("-m", "mas.samples.mcp_server").items()
        ),
        encoding="utf-8",
    )
    recorded = _recorded()
    _samples(folder / "base.json", recorded)
    # `total` missing and a population sent as a string: a field no longer always there, a type changed.
    _samples(
        folder / "contradicting.json",
        [*recorded, _sample({"cities": [{"name": "Nice", "country": "FR", "population": "n/a"}]})],
    )
    # Every sample without `total` (older ones dropped): the field is gone.
    without_total = [_sample({"cities": [{"name": "Nice", "country": "FR", "population": 342669}]})]
    _samples(folder / "no-total.json", without_total)
    # One more field: compatible.
    extra = {"cities": [{"name": "Nice", "country": "FR", "population": 342669}], "total": 1, "next": "p2"}
    _samples(folder / "more.json", [*recorded, _sample(extra)])
    mp = pytest.MonkeyPatch()
    try:
        assert generate(folder, [*ARGS, "--samples", "base.json"], mp) == 0
    finally:
        mp.undo()
    lock = json.loads((folder / "lock.json").read_text(encoding="utf-8"))
    assert lock["servers"]["sample"]["inferred"]["list_cities"]["samples"] == len(recorded)
    return folder


def _toolgen(
    root: Path, argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, list[str]]:
    monkeypatch.chdir(root)
    code = toolgen_main(argv)
    return code, capsys.readouterr().out.splitlines()


def _outputs(root: Path) -> dict[str, bytes]:
    """Every file but the cache (a --check may fill it: it is not output)."""
    return {name: data for name, data in tree(root).items() if not name.startswith(".toolgen-cache/")}


CONTRADICTED = [
    f"{PREFIX}inferred output field 'cities[].population': type changed (breaking)",
    f"{PREFIX}inferred output field 'total' is now optional (breaking)",
    "toolgen: 2 change(s): 2 breaking, 0 review, 0 compatible",
]


@pytest.mark.parametrize("offline", [False, True], ids=["live", "offline"])
def test_check_classifies_a_contradicting_sample_and_writes_nothing(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], offline: bool
) -> None:
    before = _outputs(root)
    argv = ["generate", "--check", *ARGS, "--samples", "contradicting.json", *(["--offline"] if offline else [])]
    code, lines = _toolgen(root, argv, monkeypatch, capsys)
    assert code == 1, lines
    assert lines[0] == "toolgen: out/pkg is stale; these files would change:"
    assert "  changed  lock.json (lock)" in lines
    assert lines[-4:] == [*CONTRADICTED, "toolgen: run `toolgen generate` to update"]
    assert _outputs(root) == before


def test_diff_lists_the_contradicting_sample_as_breaking(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = _toolgen(root, ["diff", "--json", *LOCKED, "--samples", "contradicting.json"], monkeypatch, capsys)
    assert code == 3
    changes = json.loads("\n".join(lines))["changes"]
    assert changes == [
        {
            "source": "sample",
            "tool": "list_cities",
            "severity": "breaking",
            "kind": "output-type-changed",
            "pointer": "/inferredOutputSchema/properties/cities/items/properties/population/type",
            "old": ["integer"],
            "new": ["integer", "string"],
            "message": "inferred output field 'cities[].population': type changed",
        },
        {
            "source": "sample",
            "tool": "list_cities",
            "severity": "breaking",
            "kind": "output-field-now-optional",
            "pointer": "/inferredOutputSchema/properties/total",
            "old": True,
            "new": False,
            "message": "inferred output field 'total' is now optional",
        },
    ]
    # Against the samples the lock was written from: nothing changed.
    assert _toolgen(root, ["diff", *LOCKED, "--samples", "base.json"], monkeypatch, capsys) == (0, ["no changes"])


def test_a_field_gone_from_every_sample_is_removed(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["generate", "--check", "--offline", *ARGS, "--samples", "no-total.json"]
    code, lines = _toolgen(root, argv, monkeypatch, capsys)
    assert code == 1
    assert f"{PREFIX}inferred output field 'total' removed (breaking)" in lines


def test_a_field_added_is_compatible(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = _toolgen(root, ["diff", *LOCKED, "--samples", "more.json"], monkeypatch, capsys)
    assert code == 1, lines  # below the default --fail-on breaking
    assert lines[0] == "server 'sample': tool 'list_cities'"
    assert lines[1].split()[:5] == ["compatible", "inferred", "output", "field", "'next'"]
    assert lines[-1] == "1 change(s): 0 breaking, 0 review, 1 compatible"
    code, _ = _toolgen(root, ["diff", "--fail-on", "any", *LOCKED, "--samples", "more.json"], monkeypatch, capsys)
    assert code == 3
    argv = ["generate", "--check", "--offline", *ARGS, "--samples", "more.json"]
    code, lines = _toolgen(root, argv, monkeypatch, capsys)
    assert code == 1
    assert f"{PREFIX}inferred output field 'next' added (compatible)" in lines


def test_generate_offline_accepts_the_samples_into_the_lock(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "copy"
    shutil.copytree(root, folder)
    listings = json.loads((folder / "lock.json").read_text(encoding="utf-8"))["servers"]["sample"]["tools"]
    code, lines = _toolgen(
        folder, ["generate", "--offline", *ARGS, "--samples", "contradicting.json"], monkeypatch, capsys
    )
    assert code == 0
    assert lines[:3] == CONTRADICTED  # what the new lock accepts, as for a live run
    assert lines[3] == "toolgen: lock.json: updated; locked sample (9 tool(s))"
    lock = json.loads((folder / "lock.json").read_text(encoding="utf-8"))
    assert lock["servers"]["sample"]["tools"] == listings  # offline: the listings stay as they were
    schema = lock["servers"]["sample"]["inferred"]["list_cities"]["schema"]
    assert schema["required"] == ["cities"]
    for argv in (
        ["generate", "--check", "--offline", *ARGS, "--samples", "contradicting.json"],
        ["generate", "--check", *ARGS, "--samples", "contradicting.json"],
    ):
        assert _toolgen(folder, argv, monkeypatch, capsys) == (0, ["toolgen: out/pkg is up to date"])
    assert _toolgen(folder, ["diff", *LOCKED, "--samples", "contradicting.json"], monkeypatch, capsys) == (
        0,
        ["no changes"],
    )
