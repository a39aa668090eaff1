"""What toolgen finds in the package folder it replaces: symlinks and FIFOs planted there are neither
followed nor read, a symlinked folder or ``__init__.py`` is refused, and an input inside the folder
every run replaces is refused before anything is lost. The run that meets a link to
``/proc/self/environ`` is a process of its own, as a user runs it (that file is the environment the
process started with); the others decide from the files alone and run in this process.
docs/security.md names each test beside its defence.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from gen_helpers import REPO, error_line, toolgen_in_process, toolgen_process, tree

TIME = REPO / "tests" / "fixtures" / "mcp-tools-list" / "time.json"


# --- symlinks and special files in the package folder -----------------------------------------


@pytest.fixture(scope="module")
def generated_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real run for the whole module; each test gets its own copy (what it plants stays its own)."""
    root = tmp_path_factory.mktemp("generated")
    (root / "tools.json").write_text(TIME.read_text())
    proc = toolgen_in_process(root, "--mcp-json", "tools.json", "--out", "out", "--package", "pkg", "-q")
    assert proc.returncode == 0, proc.stderr
    return root


@pytest.fixture
def generated(tmp_path: Path, generated_once: Path) -> Path:
    shutil.copytree(generated_once, tmp_path, dirs_exist_ok=True, symlinks=True)
    return tmp_path


@pytest.mark.slow  # a process of its own
def test_check_diff_never_follows_a_symlink_in_the_package(generated: Path) -> None:
    pkg = generated / "out" / "pkg"
    secret = "TOOLGEN_TEST_SECRET_VALUE_1234"
    (pkg / "environ").symlink_to("/proc/self/environ")
    (generated / "outside.py").write_text(f"# {secret}\n")
    (pkg / "py.typed").unlink()
    (pkg / "py.typed").symlink_to(generated / "outside.py")  # a generated file's name
    (pkg / "linked").symlink_to(generated, target_is_directory=True)
    os.mkfifo(pkg / "fifo")  # reading it would block forever
    proc = toolgen_process(generated, "--mcp-json", "tools.json", "--out", "out", "--package", "pkg", "--diff",
                    timeout=30, TOOLGEN_TEST_SECRET=secret)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert secret not in proc.stdout + proc.stderr
    assert "--- a/pkg/environ (a symlink, not followed)\n" in proc.stdout
    assert "--- a/pkg/py.typed (a symlink, not followed)\n" in proc.stdout
    assert "--- a/pkg/linked (a symlink, not followed)\n" in proc.stdout
    assert "--- a/pkg/fifo (not a regular file, not followed)\n" in proc.stdout
    for line in ("removed  environ", "removed  fifo", "removed  linked", "changed  py.typed"):
        assert f"  {line}\n" in proc.stdout
    # A write replaces them all with regular files and leaves what they pointed at alone.
    proc = toolgen_in_process(generated, "--mcp-json", "tools.json", "--out", "out", "--package", "pkg", "-q")
    assert proc.returncode == 0, proc.stderr
    assert not any(p.is_symlink() for p in pkg.rglob("*")) and (pkg / "py.typed").read_bytes() == b""
    assert (generated / "outside.py").read_text() == f"# {secret}\n" and (generated / "tools.json").is_file()


def test_a_symlinked_package_folder_is_refused(generated: Path) -> None:
    (generated / "out" / "pkg").rename(generated / "real")
    (generated / "out" / "pkg").symlink_to(generated / "real", target_is_directory=True)
    for extra in ("--check", "-q"):
        proc = toolgen_in_process(generated, "--mcp-json", "tools.json", "--out", "out", "--package", "pkg", extra)
        assert error_line(proc) == "toolgen: error: out/pkg: is a symlink; toolgen neither follows nor replaces it"
    assert (generated / "out" / "pkg").is_symlink()


def test_a_symlinked_init_is_not_trusted_as_generated(generated: Path) -> None:
    pkg = generated / "out" / "pkg"
    (generated / "init.py").write_bytes((pkg / "__init__.py").read_bytes())
    (pkg / "__init__.py").unlink()
    (pkg / "__init__.py").symlink_to(generated / "init.py")
    (generated / "tools.json").write_text(TIME.read_text().replace("current time", "the time now"))
    proc = toolgen_in_process(generated, "--mcp-json", "tools.json", "--out", "out", "--package", "pkg")
    assert error_line(proc) == "toolgen: error: out/pkg: refusing to replace a folder that toolgen did not generate"


# --- inputs inside the package folder -----------------------------------------------------------


@pytest.mark.parametrize("option", ["--lock", "--samples", "--mcp-json"])
def test_an_input_inside_the_package_folder_is_refused(generated: Path, option: str) -> None:
    pkg = generated / "out" / "pkg"
    before = tree(pkg)
    inside = pkg / "kept.json"
    inside.write_text('{"version": 1, "samples": []}')
    source = "out/pkg/kept.json" if option == "--mcp-json" else "tools.json"
    args = ["--mcp-json", source, "--out", "out", "--package", "pkg", "--offline"]
    if option != "--mcp-json":
        args += [option, "out/pkg/kept.json"]
    proc = toolgen_in_process(generated, *args)
    assert error_line(proc) == (
        f"toolgen: error: out/pkg/kept.json: {option} is inside the package folder out/pkg, which every run "
        "replaces; keep inputs outside it"
    )
    assert inside.read_text() == '{"version": 1, "samples": []}'
    assert tree(pkg) == {**before, "kept.json": inside.read_bytes()}


def test_an_input_reached_through_a_symlink_into_the_package_is_refused(generated: Path) -> None:
    (generated / "out" / "pkg" / "lock.json").write_text("{}")
    (generated / "lock-link.json").symlink_to(generated / "out" / "pkg" / "lock.json")
    proc = toolgen_in_process(generated, "--mcp-json", "tools.json", "--out", "out", "--package", "pkg",
                              "--lock", "lock-link.json")  # fmt: skip
    assert error_line(proc) == (
        "toolgen: error: lock-link.json: --lock is inside the package folder out/pkg, which every run "
        "replaces; keep inputs outside it"
    )
    assert (generated / "out" / "pkg" / "lock.json").read_text() == "{}"
