"""Fast in-process checks of the toolchain's boundary code: alias and depth limits, package names,
inputs inside the package folder, non-JSON numbers, field aliases, the per-user cache key, the journal.

The end-to-end proofs, against real processes, are in ``test_hostile_files.py``,
``test_package_folder.py``, ``test_cache_trust.py``, ``test_write_kill.py`` and
``tests/runtime/test_wire_numbers.py``; these cover each branch quickly, for mutation testing
(``[tool.mutmut]``), and pin the exact limits the docs state.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from codegen import cache as cache_module
from codegen.cache import Cache
from codegen.datamodels import _bare_aliases_respelled, _field_aliases, _property_keys, model_code
from codegen.errors import GenerateError
from codegen.infer import MAX_VALUE_DEPTH, _deeper_than
from codegen.settings import load_settings
from codegen.write import _journal_path, recover, write_package
from mas.runtime.config import ConfigError
from mas.runtime.mcp._wire import non_json_number
from mas.runtime.yaml_source import MAX_ALIAS_EXPANSION, load_yaml_documents


def _nest(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for i in range(depth):
        value = {"a": value} if i % 2 else [value]
    return value


def test_depth_limit_is_exact() -> None:
    assert MAX_VALUE_DEPTH == 24
    assert not _deeper_than(_nest(24), 24) and _deeper_than(_nest(25), 24)
    assert _deeper_than(_nest(24, []), 24) and not _deeper_than(_nest(23, []), 24)
    assert not _deeper_than("x" * 10, 0) and not _deeper_than(None, 0) and _deeper_than([], 0)
    assert _deeper_than(_nest(100_000), 24)  # no RecursionError
    assert not _deeper_than({"a": [1, {"b": 2}], "c": 3}, 3) and _deeper_than({"a": [1, {"b": 2}], "c": 3}, 2)


def _yaml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "x.yaml"
    path.write_text(text)
    return path


def test_alias_expansion_bound_is_exact(tmp_path: Path) -> None:
    assert MAX_ALIAS_EXPANSION == 100_000
    # An anchor of 999 scalars (1,000 nodes with its sequence), aliased 100 times: exactly the bound.
    items = ", ".join(["1"] * 999)
    ok = f"a: &a [{items}]\nb: [{', '.join(['*a'] * 100)}]\n"
    [(data, _)] = load_yaml_documents(_yaml(tmp_path, ok))
    assert len(data["b"]) == 100 and data["b"][0] is data["a"]
    over = f"a: &a [{items}]\nb: [{', '.join(['*a'] * 100)}]\nc: *a\n"
    with pytest.raises(ConfigError) as caught:
        load_yaml_documents(_yaml(tmp_path, over))
    assert str(caught.value).endswith("x.yaml:3: YAML aliases expand to more than 100000 nodes; write the values out "
                                      "or use fewer aliases")  # fmt: skip


def test_each_document_has_its_own_alias_budget(tmp_path: Path) -> None:
    items = ", ".join(["1"] * 999)
    doc = f"a: &a [{items}]\nb: [{', '.join(['*a'] * 100)}]\n"
    assert len(load_yaml_documents(_yaml(tmp_path, doc + "---\n" + doc))) == 2


def test_recursive_aliases_are_refused_in_mappings_and_sequences(tmp_path: Path) -> None:
    for text, line in (("a: &a {b: *a}\n", 1), ("x: 1\na: &a\n  - 1\n  - *a\n", 4)):
        with pytest.raises(ConfigError, match="a recursive alias") as caught:
            load_yaml_documents(_yaml(tmp_path, text))
        assert f"x.yaml:{line}: " in str(caught.value)


def test_scalar_and_merge_aliases_count_and_load(tmp_path: Path) -> None:
    [(data, _)] = load_yaml_documents(_yaml(tmp_path, "base: &b {k: 1}\nx: {<<: *b, j: 2}\ny: &s hi\nz: *s\n"))
    assert data["x"] == {"k": 1, "j": 2} and data["z"] == "hi"


@pytest.mark.parametrize(
    "name", ["json", "typing", "enum", "os", "pydantic", "mas", "codegen", "yaml", "mcp", "starlette", "uvicorn"]
)
def test_module_names_are_refused_as_package(tmp_path: Path, name: str) -> None:
    with pytest.raises(GenerateError, match="would shadow"):
        load_settings(tmp_path, {"package": name})


@pytest.mark.parametrize("name", ["my_tools", "sample_tools", "time_tools", "p", "json_tools"])
def test_other_names_are_accepted_as_package(tmp_path: Path, name: str) -> None:
    assert load_settings(tmp_path, {"package": name}).package == name


def test_inputs_inside_the_target_are_refused_and_beside_it_accepted(tmp_path: Path) -> None:
    base = {"out": "out", "package": "pkg"}
    for key, value in (("lock", "out/pkg/l.json"), ("samples", ["out/pkg"]), ("tools", ["out/pkg/t"]),
                       ("infra", ["out/pkg/sub/i.yaml"]), ("mcp_json", ["out/pkg/x.json"])):  # fmt: skip
        with pytest.raises(GenerateError, match="is inside the package folder out/pkg"):
            load_settings(tmp_path, {**base, key: value})
    ok = load_settings(tmp_path, {**base, "lock": "out/pkg.json", "samples": ["out/pkg2/s.json"]})
    assert ok.lock == Path("out/pkg.json")


def test_non_json_numbers_are_found_by_pointer() -> None:
    suffix = " is not a JSON number (NaN and infinity cannot be sent)"
    assert non_json_number({"a": [1, 2.5, {"b~c": float("-inf")}]}) == "/a/2/b~0c: -inf" + suffix
    assert non_json_number([float("nan")]) == "/0: nan" + suffix
    assert non_json_number(("x", {"k/": float("inf")})) == "/1/k~1: inf" + suffix
    assert non_json_number({"first": float("nan"), "second": float("inf")}) == "/first: nan" + suffix
    assert non_json_number({"a": 1e308, "b": -0.0, "c": True, "d": "nan", "e": None}) is None
    assert non_json_number(None) is None


def test_field_aliases_rename_only_breaking_names() -> None:
    props = {k: {} for k in ("Annotated", "Annotated_", "Field", "int", "model_dump", "field_model_dump", "ok", "id")}
    document = {"$defs": {"A": {"type": "object", "properties": props}}}
    assert _field_aliases(document) == {
        "Annotated": "Annotated__",
        "Field": "Field_",
        "int": "int_",
        "model_dump": "field_model_dump_",
    }
    assert _property_keys({"x": [{"properties": {"a": {"properties": {"b": {}}}}}]}) == {"a", "b"}


def test_a_bare_use_of_an_aliased_import_is_spelled_with_the_alias() -> None:
    code = (
        "from typing import Any as Any_aliased, TypeAlias, TypedDict\n"
        "X: TypeAlias = Any\n"
        "class T(TypedDict):\n"
        "    Any: Any_aliased\n"
        "    \u00e9t\u00e9: dict[str, Any] | Any\n"  # two on a line after non-ASCII: offsets in bytes
    )
    assert _bare_aliases_respelled(code) == (
        "from typing import Any as Any_aliased, TypeAlias, TypedDict\n"
        "X: TypeAlias = Any_aliased\n"
        "class T(TypedDict):\n"
        "    Any: Any_aliased\n"  # a field, and so a wire key: never renamed
        "    \u00e9t\u00e9: dict[str, Any_aliased] | Any_aliased\n"
    )
    # A model the module defines under the bare name is what the bare name means.
    bound = "from typing import Any as Any_aliased\nclass Any:\n    pass\nX = Any\n"
    assert _bare_aliases_respelled(bound) == bound
    # datamodel-code-generator's own output (a field named Any aliases the import; an enum of null
    # beside anyOf came out as the bare name): the module imports.
    document = {
        "$defs": {
            "T": {"type": "object", "properties": {"Any": {}, "x": {"$ref": "#/$defs/D"}}},
            "D": {"anyOf": [{"maxLength": 26}, {"minimum": 2}], "enum": [None]},
        }
    }
    exec(compile(model_code(document, kind="inputs"), "inputs.py", "exec"), {})


def test_the_cache_is_keyed_per_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "me"))
    cache_module.user_key.cache_clear()
    cache = Cache(tmp_path / "c")
    cache.put_models("k", "code")
    assert cache.get_models("k") == "code"
    key_file = tmp_path / "me" / "toolgen" / "cache.key"
    assert len(key_file.read_bytes()) == 32 and oct(key_file.stat().st_mode & 0o777) == "0o600"
    entry = json.loads((tmp_path / "c" / "models" / "k.json").read_text())
    assert set(entry) == {"key", "hmac", "data"}
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "someone-else"))
    cache_module.user_key.cache_clear()
    assert cache.get_models("k") is None  # another user's secret: a miss
    key_file.chmod(0o620)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "me"))
    cache_module.user_key.cache_clear()
    assert cache_module.user_key() is None and cache.get_models("k") is None  # an untrusted key: no cache
    cache_module.user_key.cache_clear()


def test_recover_finishes_a_committed_journal_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target, lock = tmp_path / "out" / "pkg", tmp_path / "lock.json"
    write_package(target, {"__init__.py": "# Generated by toolgen\n"}, lock=(lock, "old\n"))
    staging = tmp_path / "out" / ".pkg.new-1"
    staging.mkdir()
    (staging / "__init__.py").write_text("# Generated by toolgen\nnew = 1\n")
    (tmp_path / ".lock.json.new-1").write_text("new\n")
    journal = {"version": 1, "staging": staging.name, "retired": ".pkg.old-1", "lock": str(lock.resolve()),
               "lock_tmp": ".lock.json.new-1"}  # fmt: skip
    _journal_path(target).write_text(json.dumps(journal))
    (tmp_path / "out" / ".pkg.new-stale").mkdir()
    assert recover(target, lock) is True
    assert (target / "__init__.py").read_text().endswith("new = 1\n") and lock.read_text() == "new\n"
    assert sorted(os.listdir(tmp_path / "out")) == ["pkg"] and sorted(os.listdir(tmp_path)) == ["lock.json", "out"]
    assert recover(target, lock) is False


@pytest.mark.parametrize(
    "change",
    [{"staging": "../evil"}, {"retired": "pkg"}, {"lock_tmp": "../x"}, {"lock": "/etc/passwd"}, {"version": 2}],
)
def test_a_journal_naming_other_paths_is_refused(tmp_path: Path, change: dict[str, Any]) -> None:
    target, lock = tmp_path / "out" / "pkg", tmp_path / "lock.json"
    write_package(target, {"__init__.py": "# Generated by toolgen\n"}, lock=(lock, "old\n"))
    journal = {"version": 1, "staging": ".pkg.new-1", "retired": ".pkg.old-1", "lock": str(lock.resolve()),
               "lock_tmp": ".lock.json.new-1", **change}  # fmt: skip
    _journal_path(target).write_text(json.dumps(journal))
    with pytest.raises(GenerateError, match="journal that does not fit this run"):
        recover(target, lock)
    assert lock.read_text() == "old\n"


def test_a_failed_lock_replace_puts_the_whole_pair_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target, lock = tmp_path / "out" / "pkg", tmp_path / "lock.json"
    write_package(target, {"__init__.py": "# Generated by toolgen\n"}, lock=(lock, "old\n"))
    real_replace = os.replace

    def replace(src: Any, dst: Any) -> None:
        if Path(dst) == lock:
            raise OSError(5, "I/O error", str(dst))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="I/O error"):
        write_package(target, {"__init__.py": "# Generated by toolgen\nnew = 1\n"}, lock=(lock, "new\n"))
    assert (target / "__init__.py").read_text() == "# Generated by toolgen\n" and lock.read_text() == "old\n"
    assert sorted(os.listdir(tmp_path / "out")) == ["pkg"] and sorted(os.listdir(tmp_path)) == ["lock.json", "out"]


def test_the_lock_is_named_lock_and_snapshot_stays_an_alias(tmp_path: Path) -> None:
    """One word, "lock" (issue 34): ``lock`` in [tool.toolgen] and ``--lock`` name the lock file;
    ``snapshot`` and ``--snapshot``, the older names projects rely on, still do; both at once is an error."""
    from codegen.cli import _parser

    for key in ("lock", "snapshot"):
        (tmp_path / "pyproject.toml").write_text(f'[tool.toolgen]\n{key} = "l.json"\n', encoding="utf-8")
        assert load_settings(tmp_path, {}).lock.name == "l.json"
    (tmp_path / "pyproject.toml").write_text('[tool.toolgen]\nlock = "a.json"\nsnapshot = "b.json"\n', encoding="utf-8")
    with pytest.raises(GenerateError, match="give the lock file once"):
        load_settings(tmp_path, {})
    for flag in ("--lock", "--snapshot"):
        assert _parser().parse_args(["generate", flag, "x.json"]).lock == "x.json"
