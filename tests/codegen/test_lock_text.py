"""The lock's text and its reader, with the expected bytes written out by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from codegen.errors import GenerateError
from codegen.infer import InferredOutput
from codegen.lock import (
    LOCK_VERSION,
    Lock,
    LockChange,
    canonical_json,
    describe_lock,
    is_lock,
    load_lock,
    lock_drift,
    parse_lock,
    relock_inferred,
    render_lock,
    skills_drift,
)


def test_render_sorts_keys_and_tools_and_ends_with_one_newline() -> None:
    servers = {
        "zeta": [{"name": "b", "inputSchema": {"type": "object"}}, {"name": "a", "description": "é"}],
        "alpha": [],
    }
    # Per-tool hashes have their own rule and test (tests/codegen/test_lock.py); here only their place.
    text = re.sub(r'"sha256:[0-9a-f]{64}"', '"<hash>"', render_lock(servers))
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
        f'  "toolgen_snapshot": {LOCK_VERSION}\n'
        "}\n"
    )


def test_tools_without_a_string_name_still_sort_stably() -> None:
    text = render_lock({"s": [{"name": "b"}, {"x": 1}, {"name": 3}]})
    assert text.index('"name": 3') < text.index('"x": 1') < text.index('"name": "b"')  # "3" < "None" < "b"


def test_canonical_json() -> None:
    assert canonical_json({"b": [2, 1], "a": "ü"}) == '{\n  "a": "ü",\n  "b": [\n    2,\n    1\n  ]\n}\n'


def test_load_round_trips_what_render_wrote(tmp_path: Path) -> None:
    path = tmp_path / "lock.json"
    path.write_text(render_lock({"s": [{"name": "b"}, {"name": "a"}]}), encoding="utf-8")
    lock = load_lock(path)
    assert lock.path == path
    assert lock.servers == {"s": [{"name": "a"}, {"name": "b"}]}


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
def test_bad_locks_name_the_file_and_the_field(tmp_path: Path, text: str | None, tail: str) -> None:
    path = tmp_path / "lock.json"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(GenerateError) as info:
        load_lock(path)
    assert str(info.value) == f"{path}{tail}"


# --- lock format 2: per-tool hashes, skills, drift (docs/lock.md) -------------------------------
def _lock(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "lock.json"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_tool_edited_by_hand_is_refused_naming_its_hash(tmp_path: Path) -> None:
    data = json.loads(render_lock({"s": [{"name": "a", "description": "old"}]}))
    data["servers"]["s"]["tools"][0]["description"] = "edited"
    path = _lock(tmp_path, json.dumps(data))
    with pytest.raises(GenerateError) as info:
        load_lock(path)
    assert str(info.value) == (
        f"{path}: /servers/s/hashes/a: hash does not match the tool; the lock was edited by hand, "
        "regenerate it with `toolgen generate`"
    )


def test_a_skill_edited_by_hand_is_refused_under_skills(tmp_path: Path) -> None:
    data = json.loads(render_lock({}, [{"name": "k"}]))
    data["skills"]["tools"][0]["title"] = "edited"
    path = _lock(tmp_path, json.dumps(data))
    with pytest.raises(GenerateError) as info:
        load_lock(path)
    assert str(info.value).startswith(f"{path}: /skills/hashes/k: hash does not match the tool;")


def test_hashes_that_are_not_an_object_are_refused(tmp_path: Path) -> None:
    path = _lock(tmp_path, '{"toolgen_snapshot": 2, "servers": {"s": {"tools": [], "hashes": []}}}')
    with pytest.raises(GenerateError) as info:
        load_lock(path)
    assert str(info.value) == f"{path}: /servers/s/hashes: 'hashes' must be an object"


def test_a_format_1_lock_without_hashes_is_still_read(tmp_path: Path) -> None:
    path = _lock(tmp_path, '{"toolgen_snapshot": 1, "servers": {"s": {"tools": [{"name": "a"}]}}}')
    assert load_lock(path).servers == {"s": [{"name": "a"}]}


def test_a_folder_instead_of_a_lock_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(GenerateError) as info:
        load_lock(tmp_path)
    assert str(info.value) == f"{tmp_path}: cannot read: Is a directory"


def test_skills_round_trip_and_are_listed_under_skills(tmp_path: Path) -> None:
    path = _lock(tmp_path, render_lock({"s": [{"name": "a"}]}, [{"name": "z"}, {"name": "y"}]))
    lock = load_lock(path)
    assert lock.skills == [{"name": "y"}, {"name": "z"}]
    assert lock.listings() == {"s": [{"name": "a"}], "skills": [{"name": "y"}, {"name": "z"}]}


def test_a_lock_without_skills_lists_its_servers_only(tmp_path: Path) -> None:
    lock = load_lock(_lock(tmp_path, render_lock({"s": [{"name": "a"}]})))
    assert lock.skills is None
    assert lock.listings() == {"s": [{"name": "a"}]}
    assert Lock(tmp_path, {}, []).listings() == {"skills": []}  # an empty skills listing is still one


def test_is_lock_asks_for_the_version_key_only() -> None:
    assert is_lock({"toolgen_snapshot": 99})
    assert not is_lock({"servers": {}})
    assert not is_lock([])
    assert not is_lock("toolgen_snapshot")


def test_lock_drift_is_nothing_without_a_lock_and_the_changes_with_one(tmp_path: Path) -> None:
    path = tmp_path / "lock.json"
    new = render_lock({"s": [{"name": "a"}]}, [{"name": "k"}])
    assert lock_drift(path, new) == ()
    path.write_text(render_lock({"s": [{"name": "a"}, {"name": "b"}]}), encoding="utf-8")
    changes = lock_drift(path, new)
    assert [(c.source, c.tool, c.kind) for c in changes] == [("s", "b", "tool-removed"), ("skills", "k", "tool-added")]


def test_describe_lock_counts_each_source_and_says_whether_the_file_changes(tmp_path: Path) -> None:
    path = tmp_path / "lock.json"
    text = render_lock({"z": [{"name": "a"}, {"name": "b"}], "m": []}, [{"name": "k"}])
    new = describe_lock(path, text)
    assert new == LockChange(path, {"m": 0, "skills": 1, "z": 2}, existed=False, changed=True)
    assert list(new.sources) == ["m", "skills", "z"]
    path.write_text(text, encoding="utf-8")
    assert describe_lock(path, text) == LockChange(path, {"m": 0, "skills": 1, "z": 2}, existed=True, changed=False)
    other = render_lock({"z": []})
    assert describe_lock(path, other) == LockChange(path, {"z": 0}, existed=True, changed=True)


def test_skills_drift_compares_tool_yaml_with_the_locked_skills(tmp_path: Path) -> None:
    path = tmp_path / "lock.json"
    assert skills_drift(path, [{"name": "k"}]) == ()  # no lock yet
    path.write_text(render_lock({"s": []}), encoding="utf-8")
    assert skills_drift(path, [{"name": "k"}]) == ()  # the lock recorded no skills
    path.write_text(render_lock({"s": []}, [{"name": "k"}]), encoding="utf-8")
    assert skills_drift(path, [{"name": "k"}]) == ()
    changes = skills_drift(path, [{"name": "j"}])
    assert [(c.source, c.tool, c.kind) for c in changes] == [
        ("skills", "j", "tool-added"),
        ("skills", "k", "tool-removed"),
    ]


def test_skills_keep_their_inferred_types_through_a_relock(tmp_path: Path) -> None:
    text = InferredOutput("text", 2, None)
    lock = parse_lock(render_lock({"s": []}, [{"name": "k"}], {"skills": {"k": text}}), tmp_path)
    assert lock.skills == [{"name": "k"}]
    assert lock.inferred == {"skills": {"k": text}}
    relocked = relock_inferred(lock, ["s"], {"s": {}})
    assert relocked is None  # nothing of "s" was recorded, and the skills' types are kept
    changed = relock_inferred(lock, ["skills"], {"skills": {"k": InferredOutput("text", 3, None)}})
    assert changed is not None
    again = parse_lock(changed, tmp_path)
    assert again.skills == [{"name": "k"}]
    assert again.inferred == {"skills": {"k": InferredOutput("text", 3, None)}}


def test_an_inferred_entry_that_is_not_an_object_names_its_kind(tmp_path: Path) -> None:
    data = json.loads(render_lock({"s": [{"name": "t"}]}))
    data["servers"]["s"]["inferred"] = {"t": ["model"]}
    path = _lock(tmp_path, json.dumps(data))
    with pytest.raises(GenerateError) as info:
        load_lock(path)
    assert str(info.value) == f'{path}: /servers/s/inferred/t/kind: \'kind\' must be "model" or "text"'
