"""The writer's promise: a write that fails at any point leaves the previous output byte-identical.

Failures happen *during* writing here, not before it: a file the filesystem refuses (a path
through a file, a name too long), a disk that fills up on the Nth file, a folder swap whose
rename fails. Read-only folders would not do: the tests may run as root, which ignores them.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import REPO, generate, import_fresh, tree

from codegen.errors import GenerateError
from codegen.write import GENERATED_MARKER, Change, diff_changes, plan_changes, write_file_atomic, write_package

OLD = {
    "__init__.py": f"# {GENERATED_MARKER}\nfrom ._tools import Tools\n",
    "_tools.py": "class Tools: ...\n",
    "sub/models.py": "x = 1\n",
    "stale.py": "gone = True\n",
}
NEW = {
    "__init__.py": f"# {GENERATED_MARKER}\nfrom ._tools import Tools, AsyncTools\n",
    "_tools.py": "class Tools: ...\nclass AsyncTools: ...\n",
    "sub/models.py": "x = 2\n",
    "sub/more.py": "y = 3\n",
}


@pytest.fixture
def target(tmp_path: Path) -> Path:
    out = tmp_path / "out" / "pkg"
    write_package(out, OLD)
    return out


def _siblings(target: Path) -> list[str]:
    """What sits beside the package: no staging or retired folder may be left behind."""
    return sorted(p.name for p in target.parent.iterdir())


def test_a_write_replaces_the_folder_with_exactly_the_new_files(target: Path) -> None:
    assert tree(target) == {k: v.encode() for k, v in OLD.items()}
    changes = write_package(target, NEW)
    assert changes == [
        Change("__init__.py", "changed"),
        Change("_tools.py", "changed"),
        Change("stale.py", "removed"),
        Change("sub/models.py", "changed"),
        Change("sub/more.py", "added"),
    ]
    assert tree(target) == {k: v.encode() for k, v in NEW.items()}
    assert _siblings(target) == ["pkg"]
    assert oct(target.stat().st_mode & 0o777) == "0o755"
    assert write_package(target, NEW) == [] and plan_changes(target, NEW) == []


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param({"_tools.py/inner.py": "z = 1\n"}, id="a path through a file"),
        pytest.param({"sub/" + "n" * 300 + ".py": "z = 1\n"}, id="a name too long"),
    ],
)
def test_a_file_the_filesystem_refuses_leaves_the_previous_output(target: Path, bad: dict[str, str]) -> None:
    before = tree(target)
    with pytest.raises(OSError):
        write_package(target, {**NEW, **bad})  # the good files are written first, then this one fails
    assert tree(target) == before
    assert _siblings(target) == ["pkg"]


def test_the_previous_output_is_intact_while_the_new_one_is_staged(
    target: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fills up on the third file; until then, every write saw the old folder untouched."""
    before = tree(target)
    real_write_bytes = Path.write_bytes
    seen: list[dict[str, bytes]] = []

    written: list[Path] = []

    def write_bytes(self: Path, data: bytes) -> int:
        written.append(self)
        seen.append(tree(target))
        if len(seen) == 3:
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real_write_bytes(self, data)

    monkeypatch.setattr(Path, "write_bytes", write_bytes)
    with pytest.raises(OSError, match="No space left"):
        write_package(target, NEW)
    assert seen == [before, before, before]
    # Staged beside the target (same filesystem, so the swap is a rename), in a hidden folder.
    staging = {p.relative_to(target.parent).parts[0] for p in written}
    assert len(staging) == 1 and staging.pop().startswith(".pkg.new-")
    assert tree(target) == before
    assert _siblings(target) == ["pkg"]


def _failing_rename(when: Callable[[Path, Path], bool]) -> Callable[[Path, Any], Path]:
    real_rename = Path.rename

    def rename(self: Path, dest: Any) -> Path:
        if when(self, Path(dest)):
            raise OSError(errno.EXDEV, "Invalid cross-device link", str(self))
        return real_rename(self, dest)

    return rename


def test_a_failed_swap_puts_the_previous_folder_back(target: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The old folder is already moved aside when moving the new one in fails: it must come back."""
    before = tree(target)
    moved_aside: list[Path] = []

    def staging_into_place(src: Path, dest: Path) -> bool:
        if src == target:
            moved_aside.append(dest)
        return dest == target and src.name.startswith(".pkg.new-")

    monkeypatch.setattr(Path, "rename", _failing_rename(staging_into_place))
    with pytest.raises(OSError, match="cross-device"):
        write_package(target, NEW)
    assert len(moved_aside) == 1, "the swap should have moved the old folder aside first"
    assert tree(target) == before
    assert _siblings(target) == ["pkg"]


def test_a_failed_retirement_of_the_previous_folder_leaves_it(target: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = tree(target)
    monkeypatch.setattr(Path, "rename", _failing_rename(lambda src, dest: src == target))
    with pytest.raises(OSError, match="cross-device"):
        write_package(target, NEW)
    assert tree(target) == before
    assert _siblings(target) == ["pkg"]


def test_the_first_write_that_fails_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "pkg"
    with pytest.raises(OSError):
        write_package(target, {**NEW, "_tools.py/inner.py": ""})
    assert sorted(os.listdir(tmp_path)) == []


def test_write_file_atomic_keeps_the_old_file_when_the_replace_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = tmp_path / "toolgen.lock.json"
    assert write_file_atomic(lock, "old\n") is True
    assert write_file_atomic(lock, "old\n") is False  # unchanged: not rewritten

    temporaries: list[Path] = []

    def replace(src: Any, dst: Any) -> None:
        temporaries.append(Path(src))
        raise OSError(errno.EIO, "I/O error", str(dst))

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="I/O error"):
        write_file_atomic(lock, "new\n")
    assert lock.read_bytes() == b"old\n"
    assert os.listdir(tmp_path) == ["toolgen.lock.json"]  # no temporary file left behind
    # The temporary file sits beside the target (same filesystem: the replace is atomic), hidden.
    assert [(t.parent, t.name.startswith(".toolgen.lock.json.")) for t in temporaries] == [(tmp_path, True)]
    monkeypatch.undo()
    assert write_file_atomic(lock, "new\n") is True
    assert lock.read_bytes() == b"new\n" and oct(lock.stat().st_mode & 0o777) == "0o644"
    assert os.listdir(tmp_path) == ["toolgen.lock.json"]
    nested = tmp_path / "a" / "b" / "lock.json"
    assert write_file_atomic(nested, "x\n") is True and nested.read_bytes() == b"x\n"


def test_diff_shows_each_change_as_a_unified_diff(target: Path) -> None:
    (target / "sub" / "bin.dat").write_bytes(b"\xff\n")
    files = {**NEW, "sub/bin.dat": "text\n"}
    changes = plan_changes(target, files)
    assert diff_changes(target, files, changes) == (
        "--- a/pkg/__init__.py\n"
        "+++ b/pkg/__init__.py\n"
        "@@ -1,2 +1,2 @@\n"
        f" # {GENERATED_MARKER}\n"
        "-from ._tools import Tools\n"
        "+from ._tools import Tools, AsyncTools\n"
        "--- a/pkg/_tools.py\n"
        "+++ b/pkg/_tools.py\n"
        "@@ -1 +1,2 @@\n"
        " class Tools: ...\n"
        "+class AsyncTools: ...\n"
        "--- a/pkg/stale.py\n"
        "+++ b/pkg/stale.py\n"
        "@@ -1 +0,0 @@\n"
        "-gone = True\n"
        "--- a/pkg/sub/bin.dat\n"
        "+++ b/pkg/sub/bin.dat\n"
        "@@ -1 +1 @@\n"
        "-\ufffd\n"
        "+text\n"
        "--- a/pkg/sub/models.py\n"
        "+++ b/pkg/sub/models.py\n"
        "@@ -1 +1 @@\n"
        "-x = 1\n"
        "+x = 2\n"
        "--- a/pkg/sub/more.py\n"
        "+++ b/pkg/sub/more.py\n"
        "@@ -0,0 +1 @@\n"
        "+y = 3\n"
    )
    assert str(changes[0]) == "changed  __init__.py" and str(changes[2]) == "removed  stale.py"


def test_caches_are_neither_planned_nor_kept(target: Path) -> None:
    (target / "__pycache__").mkdir()
    (target / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (target / "sub" / "__pycache__").mkdir()
    (target / "sub" / "__pycache__" / "y.pyc").write_bytes(b"\0")
    assert plan_changes(target, OLD) == []
    write_package(target, NEW)
    assert not (target / "__pycache__").exists()


FOREIGN = "refusing to replace a folder that toolgen did not generate"


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda t: t.write_text("x"), "refusing to replace a file with the generated package"),
        (lambda t: (t.mkdir(), (t / "mine.py").write_text("x")), FOREIGN),
        (
            lambda t: (t.mkdir(), (t / "__init__.py").write_text("# hand-written\n")),
            FOREIGN,
        ),
        (lambda t: (t.mkdir(), (t / "__init__.py").mkdir()), FOREIGN),
    ],
)
def test_only_generated_folders_are_replaced(tmp_path: Path, setup: Callable[[Path], Any], message: str) -> None:
    target = tmp_path / "pkg"
    setup(target)
    before = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")}
    with pytest.raises(GenerateError) as info:
        write_package(target, NEW)
    assert str(info.value) == f"{target}: {message}"
    assert {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")} == before


@pytest.mark.parametrize("content", [None, "__pycache__"])
def test_an_empty_folder_or_one_with_only_caches_is_replaced(tmp_path: Path, content: str | None) -> None:
    target = tmp_path / "pkg"
    target.mkdir()
    if content:
        (target / content).mkdir()
    write_package(target, NEW)
    assert tree(target) == {k: v.encode() for k, v in NEW.items()}


def test_the_marker_may_sit_anywhere_in_the_init_file(tmp_path: Path) -> None:
    target = tmp_path / "pkg"
    target.mkdir()
    (target / "__init__.py").write_bytes(b"\xff\n# " + GENERATED_MARKER.encode() + b" 1.0\n")
    (target / "old.py").write_text("x")
    write_package(target, NEW)
    assert tree(target) == {k: v.encode() for k, v in NEW.items()}


def test_missing_parent_folders_are_created(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "pkg"
    files = {**NEW, "deep/er/module.py": "z = 0\n"}
    write_package(target, files)
    assert tree(target) == {k: v.encode() for k, v in files.items()}


def test_a_package_from_before_the_shim_split_upgrades_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A package generated with the one-file shim had ``_runtime.py``; a rerun removes it, so the
    ``_runtime/`` package is what imports and no stale copy of the shim is left to read."""
    listing = REPO / "tests" / "fixtures" / "mcp-tools-list" / "time.json"
    args = ["--out", "out", "--package", "pkg", "--mcp-json", str(listing)]
    assert generate(tmp_path, args, monkeypatch) == 0
    package = tmp_path / "out" / "pkg"
    header = "".join((package / "__init__.py").read_text(encoding="utf-8").splitlines(keepends=True)[:2])
    (package / "_runtime.py").write_text(f"{header}raise ImportError('the old one-file shim')\n", encoding="utf-8")
    capsys.readouterr()
    assert generate(tmp_path, args, monkeypatch) == 0
    assert "  removed  _runtime.py\n" in capsys.readouterr().out
    assert not (package / "_runtime.py").exists()
    imported = import_fresh(tmp_path / "out", "pkg")
    assert Path(imported._runtime.__file__).relative_to(package).as_posix() == "_runtime/__init__.py"
