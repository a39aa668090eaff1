"""The snapshot's text and its reader, with the expected bytes written out by hand."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from codegen.errors import GenerateError
from codegen.snapshot import SNAPSHOT_VERSION, canonical_json, load_snapshot, render_snapshot


def test_render_sorts_keys_and_tools_and_ends_with_one_newline() -> None:
    servers = {
        "zeta": [{"name": "b", "inputSchema": {"type": "object"}}, {"name": "a", "description": "é"}],
        "alpha": [],
    }
    # Per-tool hashes have their own rule and test (tests/codegen/test_lock.py); here only their place.
    text = re.sub(r'"sha256:[0-9a-f]{64}"', '"<hash>"', render_snapshot(servers))
    assert text == (
        "{\n"
        '  "servers": {\n'
        '    "alpha": {\n'
        '      "hashes": {},\n'
        '      "tools": []\n'
        "    },\n"
        '    "zeta": {\n'
        '      "hashes": {\n'
        '        "a": "<hash>",\n'
        '        "b": "<hash>"\n'
        "      },\n"
        '      "tools": [\n'
        "        {\n"
        '          "description": "é",\n'
        '          "name": "a"\n'
        "        },\n"
        "        {\n"
        '          "inputSchema": {\n'
        '            "type": "object"\n'
        "          },\n"
        '          "name": "b"\n'
        "        }\n"
        "      ]\n"
        "    }\n"
        "  },\n"
        f'  "toolgen_snapshot": {SNAPSHOT_VERSION}\n'
        "}\n"
    )


def test_tools_without_a_string_name_still_sort_stably() -> None:
    text = render_snapshot({"s": [{"name": "b"}, {"x": 1}, {"name": 3}]})
    assert text.index('"name": 3') < text.index('"x": 1') < text.index('"name": "b"')  # "3" < "None" < "b"


def test_canonical_json() -> None:
    assert canonical_json({"b": [2, 1], "a": "ü"}) == '{\n  "a": "ü",\n  "b": [\n    2,\n    1\n  ]\n}\n'


def test_load_round_trips_what_render_wrote(tmp_path: Path) -> None:
    path = tmp_path / "lock.json"
    path.write_text(render_snapshot({"s": [{"name": "b"}, {"name": "a"}]}), encoding="utf-8")
    snapshot = load_snapshot(path)
    assert snapshot.path == path
    assert snapshot.servers == {"s": [{"name": "a"}, {"name": "b"}]}


@pytest.mark.parametrize(
    ("text", "tail"),
    [
        (
            None,
            ": no lock file yet; run `toolgen generate` once without --offline, with the servers reachable, "
            "to create it",
        ),
        ('{\n  "servers": {,\n}', ":2: not JSON: Expecting property name enclosed in double quotes"),
        ("[" * 100_000, ": JSON nested too deeply"),
        ("[]", ": /toolgen_snapshot: not a toolgen lock (no 'toolgen_snapshot' version)"),
        (
            '{"toolgen_snapshot": 99, "servers": {}}',
            ": /toolgen_snapshot: unknown lock format version 99 (this toolgen reads 1, 2, 3); upgrade toolgen",
        ),
        ('{"toolgen_snapshot": 2}', ": /servers: 'servers' must be an object"),
        ('{"toolgen_snapshot": 2, "servers": []}', ": /servers: 'servers' must be an object"),
        ('{"toolgen_snapshot": 2, "servers": {"s": []}}', ": /servers/s/tools: 'tools' must be an array of objects"),
        (
            '{"toolgen_snapshot": 2, "servers": {"s": {"tools": {}}}}',
            ": /servers/s/tools: 'tools' must be an array of objects",
        ),
    ],
)
def test_bad_snapshots_name_the_file_and_the_field(tmp_path: Path, text: str | None, tail: str) -> None:
    path = tmp_path / "lock.json"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(GenerateError) as info:
        load_snapshot(path)
    assert str(info.value) == f"{path}{tail}"
