"""The package's version in the lock, moved by drift; its CHANGELOG.md and api.md.

End to end against the real sample server (stdio), started unchanged, then with one tool
changed (``--drift``) or one tool more (``--with-crash-tool``): each ``generate`` writes the lock,
and the version moves by the worst class of what changed (docs/drift.md, "Upgrading").
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import forked_python, generate

from codegen.cli import main as toolgen_main
from codegen.drift import Change, Severity
from codegen.lock import canonical_json
from codegen.versioning import (
    PackageRecord,
    Release,
    bump,
    changelog,
    md_text,
    next_record,
    parse_version,
    with_record,
)


def _infra(path: Path, *flags: str) -> Path:
    server = forked_python("-m", "mas.samples.mcp_server", *flags)
    path.write_text(
        "kind: ToolServerRegistry\nspec:\n  servers:\n"
        "    - name: sample\n      protocol: mcp\n      transport: stdio\n"
        + "".join(f"      {key}: {json.dumps(value)}\n" for key, value in server.items())
        + "      connect_timeout_seconds: 20\n",
        encoding="utf-8",
    )
    return path


def _args(infra: str, *more: str) -> list[str]:
    return ["--infra", infra, "--lock", "lock.json", "--out", "out", "--package", "pkg", "--no-cache", *more]


def _version(root: Path) -> str:
    lock = json.loads((root / "lock.json").read_text(encoding="utf-8"))
    text = (root / "out" / "pkg" / "_version.py").read_text(encoding="utf-8")
    assert f'__version__ = "{lock["package"]["version"]}"' in text
    return str(lock["package"]["version"])


# --- the rule -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("version", "severities", "zero", "expected"),
    [
        ("1.4.2", [], False, "1.4.2"),
        ("1.4.2", ["compatible"], False, "1.4.3"),
        ("1.4.2", ["compatible", "review"], False, "1.5.0"),
        ("1.4.2", ["review", "breaking", "compatible"], False, "2.0.0"),
        ("0.3.1", ["breaking"], False, "1.0.0"),
        ("0.3.1", ["breaking"], True, "0.4.0"),
        ("0.3.1", ["review"], True, "0.3.2"),
        ("0.3.1", ["compatible"], True, "0.3.2"),
        ("2.0.0", ["breaking"], True, "3.0.0"),  # keep_zero_major only holds a 0.x version
    ],
)
def test_the_largest_bump_wins(version: str, severities: list[Severity], zero: bool, expected: str) -> None:
    assert bump(version, severities, keep_zero_major=zero) == expected


@pytest.mark.parametrize("text", ["1.2", "v1.2.3", "1.2.3-rc1", "01.2.3", " 1.2.3", 123, None, "1.2.3\n"])
def test_what_is_not_a_version(text: object) -> None:
    assert parse_version(text) is None
    assert parse_version("10.0.7") == (10, 0, 7)


def test_a_record_spliced_into_a_lock_is_the_lock_encoded_whole() -> None:
    lock = canonical_json({"servers": {"s": {"tools": []}}, "toolgen_snapshot": 3})
    record = next_record(None, [Change("s", "t", "breaking", "tool-removed", "", "t", None, "tool removed")])
    spliced = with_record(lock, record)
    assert spliced == canonical_json({**json.loads(lock), "package": record.to_data()})
    assert record.version == "1.0.0" and [r.version for r in record.history] == ["1.0.0", "0.1.0"]


def test_server_text_in_the_changelog_marks_nothing_up() -> None:
    hostile = "<img src=x onerror=alert(1)> [click](http://x) `code` **bold**\n# heading"
    change = {"source": "s", "tool": "t`x", "severity": "review", "kind": "description-changed", "message": hostile}
    text = changelog(PackageRecord("0.2.0", (Release("0.2.0", (change,)), Release("0.1.0"))), "pkg")
    line = next(line for line in text.splitlines() if line.startswith("- "))
    assert md_text(hostile) in line
    for marker in ("<", "[", "(", "`", "*", "#"):  # each one escaped wherever it is
        shown = line.removeprefix("- **review**").rsplit(" (", 1)[0]  # the kind in parentheses is ours
        assert re.search(rf"(?<!\\){re.escape(marker)}", shown) is None, marker
    assert "\n# heading" not in text


# --- end to end ---------------------------------------------------------------------------------
def test_the_version_moves_by_the_class_of_what_the_server_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _infra(tmp_path / "good.yaml")
    _infra(tmp_path / "described.yaml", "--drift", "description-rewritten")
    _infra(tmp_path / "more.yaml", "--drift", "description-rewritten", "--with-crash-tool")
    _infra(tmp_path / "removed.yaml", "--drift", "param-removed", "--with-crash-tool")

    assert generate(tmp_path, _args("good.yaml"), monkeypatch) == 0
    assert _version(tmp_path) == "0.1.0"
    lock, log = (tmp_path / "lock.json").read_bytes(), (tmp_path / "out/pkg/CHANGELOG.md").read_bytes()
    api = (tmp_path / "out/pkg/api.md").read_bytes()

    # Nothing changed: the same version, the same bytes (lock, changelog, API page).
    assert generate(tmp_path, _args("good.yaml"), monkeypatch) == 0
    assert (tmp_path / "lock.json").read_bytes() == lock
    assert (tmp_path / "out/pkg/CHANGELOG.md").read_bytes() == log
    assert (tmp_path / "out/pkg/api.md").read_bytes() == api

    assert generate(tmp_path, _args("described.yaml"), monkeypatch) == 0  # review -> minor
    assert _version(tmp_path) == "0.2.0"
    assert generate(tmp_path, _args("more.yaml"), monkeypatch) == 0  # compatible -> patch
    assert _version(tmp_path) == "0.2.1"
    capsys.readouterr()
    # --check says what the version would become, writes nothing.
    monkeypatch.chdir(tmp_path)
    assert toolgen_main(["generate", "--check", *_args("removed.yaml")]) == 1
    assert "_version.py" in capsys.readouterr().out
    assert _version(tmp_path) == "0.2.1"
    assert generate(tmp_path, _args("removed.yaml"), monkeypatch) == 0  # breaking (and review) -> major
    assert _version(tmp_path) == "1.0.0"

    text = (tmp_path / "out/pkg/CHANGELOG.md").read_text(encoding="utf-8")
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    assert sections == ["## 1.0.0", "## 0.2.1", "## 0.2.0", "## 0.1.0"]
    assert "- **breaking** server sample, tool get\\_weather: parameter 'units' removed (param-removed)" in text
    assert "- **compatible** server sample, tool crash: tool added (tool-added)" in text
    assert "- **review** server sample, tool get\\_weather: tool description changed (description-changed)" in text
    # --offline takes the version from the lock: the package is current.
    assert toolgen_main(["generate", "--offline", "--check", *_args("removed.yaml")]) == 0
    from importlib import util

    spec = util.spec_from_file_location("pkg_version", tmp_path / "out/pkg/_version.py")
    assert spec is not None and spec.loader is not None
    module = util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.__version__ == "1.0.0"


def test_settings_start_the_version_and_keep_zero_major(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _infra(tmp_path / "good.yaml")
    _infra(tmp_path / "removed.yaml", "--drift", "param-removed")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolgen]\nstart_version = "0.5.0"\nkeep_zero_major = true\n', encoding="utf-8"
    )
    assert generate(tmp_path, _args("good.yaml"), monkeypatch) == 0
    assert _version(tmp_path) == "0.5.0"
    assert generate(tmp_path, _args("removed.yaml"), monkeypatch) == 0
    assert _version(tmp_path) == "0.6.0"  # breaking, but 0.x is kept


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ('start_version = "1.0"', "[tool.toolgen]: start_version: '1.0' is not a version (MAJOR.MINOR.PATCH"),
        ('keep_zero_major = "yes"', "[tool.toolgen]: keep_zero_major: must be true or false"),
        ("keep_removed_tools = -1", "[tool.toolgen]: keep_removed_tools: must be between 0 and 1000"),
    ],
)
def test_a_bad_setting_is_one_line(
    table: str, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.toolgen]\n{table}\n", encoding="utf-8")
    (tmp_path / "t.json").write_text('{"tools": []}', encoding="utf-8")
    assert generate(tmp_path, ["--mcp-json", "t.json"], monkeypatch) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and expected in err[0], err


@pytest.mark.parametrize(
    ("package", "pointer", "what"),
    [
        ({"version": "2.x", "history": []}, "/package/version", "'2.x' is not a version"),
        ({"version": 3, "history": []}, "/package/version", "3 is not a version"),
        ({"version": "1.0.0", "history": [{"version": "one", "changes": []}]}, "/package/history/0/version", "'one'"),
        ({"version": "1.0.0", "history": [{"version": "1.0.0", "changes": [{}]}]}, "/package/history/0/changes", ""),
    ],
)
def test_a_version_in_the_lock_that_is_not_one_is_one_line(
    package: dict[str, Any],
    pointer: str,
    what: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from codegen.lock import render_lock

    _infra(tmp_path / "good.yaml")
    lock = json.loads(render_lock({"sample": []}))
    (tmp_path / "lock.json").write_text(canonical_json({**lock, "package": package}), encoding="utf-8")
    assert generate(tmp_path, [*_args("good.yaml"), "--offline"], monkeypatch) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"lock.json: {pointer}: {what}" in err[0], err


def _kept(root: Path) -> list[str]:
    lock = json.loads((root / "lock.json").read_text(encoding="utf-8"))
    return sorted(lock["package"].get("kept", {}).get("sample", {}))


class _Refusing:
    """A provider no call may reach."""

    def call_tool(self, tool_name: str, arguments: Any, **_: Any) -> Any:
        raise AssertionError(f"a removed tool is never sent ({tool_name})")


def _calls_whoami_of(out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(out))
    for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
        monkeypatch.delitem(sys.modules, name)
    from pkg import ToolNotFoundError, Tools  # type: ignore[import-not-found]

    with pytest.warns(DeprecationWarning, match="removed by its server in version 1.0.0"):
        with pytest.raises(ToolNotFoundError) as raised:
            Tools(_Refusing()).sample.whoami()
    assert "tool 'whoami' was removed by its server in version 1.0.0 of this package" in str(raised.value)
    assert raised.value.kind == "unknown_tool"
    _kept_tool_is_no_callable_tool(out)


def _deprecations_are_recorded(package: Path) -> None:
    """What ``--drift upgrade`` newly deprecates (a tool, a parameter, an output field) has a rule of
    its own, class review, in the changelog; api.md tags each."""
    changelog = (package / "CHANGELOG.md").read_text(encoding="utf-8")
    section = changelog[changelog.index("## 1.0.0") : changelog.index("## 0.1.0")]
    assert "9 change(s): 4 breaking, 4 review, 1 compatible." in section
    for line in [
        "- **review** server sample, tool get\\_weather: output field 'humidity' deprecated (output-field-deprecated)",
        "- **review** server sample, tool list\\_cities: tool deprecated (tool-deprecated)",
        "- **review** server sample, tool search-docs: parameter 'limit' deprecated (param-deprecated)",
    ]:
        assert line in section.splitlines(), section
    assert "schema-keyword-changed" not in section
    api = (package / "api.md").read_text(encoding="utf-8")
    assert "(no output schema). [read_only, deprecated]\ndef list_cities(" in api
    assert "[read_only, deprecated parameter(s): limit]\ndef search_docs(" in api
    assert "Current weather [read_only, deprecated output field(s): humidity]\ndef get_weather(" in api


class _Recording:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def call_tool(self, tool_name: str, arguments: Any, **_: Any) -> Any:
        self.calls.append(tool_name)
        raise AssertionError(f"a removed tool is never sent ({tool_name})")


def _kept_tool_is_no_callable_tool(out: Path) -> None:
    """A kept removed tool is a method only: not in ``TOOLS``, nor in the code-mode stubs and
    manifest (a code-mode call to it fails the check and sends nothing), nor in the test kit."""
    import pkg  # type: ignore[import-not-found]
    from pkg.code_mode import MODULES  # type: ignore[import-not-found]
    from pkg.testing import FakeTools  # type: ignore[import-not-found]

    from mas.runtime.code_mode import CodeMode

    assert "whoami" not in pkg.TOOLS and "get_weather" in pkg.TOOLS
    assert "whoami" not in MODULES["sample"] and "get_weather" in MODULES["sample"]
    stub = (out / "pkg" / "code_mode" / "sample.pyi").read_text(encoding="utf-8")
    assert "def whoami(" not in stub and "def get_weather(" in stub
    data = (out / "pkg" / "_testing_data.py").read_text(encoding="utf-8")
    assert '"whoami"' not in data and '"get_weather"' in data
    assert not hasattr(FakeTools().sample, "whoami") and hasattr(FakeTools().sample, "get_weather")
    recording = _Recording()
    with CodeMode(recording, package=pkg) as mode:
        run = mode.run("from tools import sample\nawait sample.whoami()\n")
    assert run.error is not None and run.error.kind == "check", run.error
    assert "whoami" in str(run.error.diagnostics)
    assert recording.calls == [] and run.calls == []


def test_a_removed_tool_is_kept_for_n_versions_and_raises_naming_the_removal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``keep_removed_tools = 2``: ``whoami``, removed in 1.0.0 (``--drift upgrade``), stays a
    deprecated method through 1.0.1 and is gone in 2.0.0, when ``crash`` is removed and kept."""
    _infra(tmp_path / "good.yaml")
    _infra(tmp_path / "upgrade.yaml", "--drift", "upgrade")
    _infra(tmp_path / "upgrade-crash.yaml", "--drift", "upgrade", "--with-crash-tool")
    (tmp_path / "pyproject.toml").write_text("[tool.toolgen]\nkeep_removed_tools = 2\n", encoding="utf-8")
    steps = [("good.yaml", "0.1.0", []), ("upgrade.yaml", "1.0.0", ["whoami"]),
             ("upgrade-crash.yaml", "1.0.1", ["whoami"]), ("upgrade.yaml", "2.0.0", ["crash"])]  # fmt: skip
    for infra, version, kept in steps:
        assert generate(tmp_path, _args(infra), monkeypatch) == 0
        assert (_version(tmp_path), _kept(tmp_path)) == (version, kept)
        if infra == "upgrade.yaml" and version == "1.0.0":
            tools = (tmp_path / "out/pkg/_tools.py").read_text(encoding="utf-8")
            _calls_whoami_of(tmp_path / "out", monkeypatch)
            assert "Removed: tool 'whoami' was removed by its server in version 1.0.0" in tools
            _deprecations_are_recorded(tmp_path / "out" / "pkg")
    api = (tmp_path / "out/pkg/api.md").read_text(encoding="utf-8")
    assert "def crash(" in api and "def whoami(" not in api
