"""Hostile input to the toolchain (issue 17, items 7-10 and 15-18), against real processes and files.

Each test runs ``python -m codegen`` (or ``python -m mas.runtime``) as a user would, on files an
attacker or a careless user could write: a YAML alias bomb, a samples file nested 400 levels, a
``--package`` that shadows a module, symlinks and FIFOs planted in the package folder, inputs
inside the folder every run replaces. docs/security.md names each test beside its defence.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gen_helpers import REPO, tree

pytestmark = pytest.mark.slow  # every test runs toolgen as a process; the kill tests list a live server

TIME = REPO / "tests" / "fixtures" / "mcp-tools-list" / "time.json"
#: A run that expanded an alias bomb would need gigabytes; a refused one needs far less than this.
_MEMORY_LIMIT = 1536 * 1024 * 1024


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_MEMORY_LIMIT, _MEMORY_LIMIT))


def _run(cwd: Path, module: str, *args: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **env},
        preexec_fn=_limited,
    )


def _toolgen(cwd: Path, *args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return _run(cwd, "codegen", "generate", *args, **kwargs)  # type: ignore[arg-type]


def _error_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, (proc.returncode, proc.stderr[-2000:])
    return lines[0]


# --- item 7: YAML alias bombs ------------------------------------------------------------------------

# Nine anchors of nine aliases each: 9**9 (387 million) strings once expanded, from ~600 bytes.
_BOMB = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'] + [
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]" for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
]


def _indented(lines: list[str], spaces: int) -> str:
    return "\n".join(" " * spaces + line for line in lines)


BOMB_TOOL = f"""\
apiVersion: toolgen/v1
kind: Tool
metadata:
  name: bomb
spec:
  description: An alias bomb under spec.parameters.properties.
  parameters:
    type: object
    properties:
{_indented(_BOMB, 6)}
  handler: os:getcwd
"""
BOMB_INFRA = f"""\
apiVersion: toolgen/v1
kind: ToolServerRegistry
metadata:
  name: bomb
spec:
  servers:
    - name: s
      protocol: mcp
      transport: stdio
      command: python
      args: [-c, "pass"]
      tools:
        - name: t
          inputSchema:
            type: object
            properties:
{_indented(_BOMB, 14)}
"""
# The aliases of ``f: &f [*e, ...]`` take the expansion past 100,000 nodes (a to e add 74,718).
BOMB_TOOL_LINE = BOMB_TOOL.splitlines().index("      " + _BOMB[5]) + 1
BOMB_INFRA_LINE = BOMB_INFRA.splitlines().index(" " * 14 + _BOMB[5]) + 1
_BOMB_MESSAGE = "YAML aliases expand to more than 100000 nodes; write the values out or use fewer aliases"


@pytest.mark.parametrize(
    ("name", "text", "line", "command"),
    [
        ("bomb.yaml", BOMB_TOOL, BOMB_TOOL_LINE, ("codegen", "generate", "--tools", "bomb.yaml", "--out", "o")),
        ("bomb.yaml", BOMB_TOOL, BOMB_TOOL_LINE, ("mas.runtime", "list", "--tools", "bomb.yaml")),
        ("infra.yaml", BOMB_INFRA, BOMB_INFRA_LINE, ("codegen", "generate", "--infra", "infra.yaml", "--out", "o")),
        ("infra.yaml", BOMB_INFRA, BOMB_INFRA_LINE, ("mas.runtime", "list", "--infra", "infra.yaml")),
    ],
    ids=["generate-tools", "list-tools", "generate-infra", "list-infra"],
)
def test_yaml_alias_bomb_is_refused_fast_with_one_line(
    tmp_path: Path, name: str, text: str, line: int, command: tuple[str, ...]
) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    started = time.monotonic()
    proc = _run(tmp_path, command[0], *command[1:], timeout=30)  # and in 1.5 GB of address space
    assert time.monotonic() - started < 20
    prog = "toolgen" if command[0] == "codegen" else "mas-runtime"
    assert _error_line(proc) == f"{prog}: error: {name}:{line}: {_BOMB_MESSAGE}"
    assert not (tmp_path / "o").exists()


def test_yaml_alias_bomb_in_record_examples_is_refused(tmp_path: Path) -> None:
    """``toolgen record`` would send the expanded arguments to a server."""
    examples = "- tool: x\n  arguments:\n" + _indented(_BOMB, 4) + "\n"
    (tmp_path / "examples.yaml").write_text(examples, encoding="utf-8")
    proc = _run(tmp_path, "codegen", "record", "--examples", "examples.yaml", "--tools", "none", timeout=30)
    assert _error_line(proc) == f"toolgen: error: examples.yaml:{3 + 5}: not YAML: {_BOMB_MESSAGE}"


def test_recursive_yaml_alias_is_refused_with_its_line(tmp_path: Path) -> None:
    text = BOMB_TOOL.replace(_indented(_BOMB, 6), "      loop: &loop {type: object, properties: {again: *loop}}")
    (tmp_path / "loop.yaml").write_text(text, encoding="utf-8")
    proc = _toolgen(tmp_path, "--tools", "loop.yaml", "--out", "o", timeout=30)
    line = text.splitlines().index("      loop: &loop {type: object, properties: {again: *loop}}") + 1
    assert _error_line(proc) == (
        f"toolgen: error: loop.yaml:{line}: YAML alias refers to a node that contains it (a recursive alias)"
    )


def test_small_yaml_aliases_still_load(tmp_path: Path) -> None:
    text = BOMB_TOOL.replace(
        _indented(_BOMB, 6), "      a: &s {type: string, description: shared}\n      b: *s\n      c: *s"
    )
    (tmp_path / "ok.yaml").write_text(text, encoding="utf-8")
    proc = _toolgen(tmp_path, "--tools", "ok.yaml", "--out", "o", "--package", "ok_tools", "-q")
    assert proc.returncode == 0, proc.stderr
    inputs = (tmp_path / "o" / "ok_tools" / "inputs.py").read_text()
    assert "    b: NotRequired[str]\n    c: NotRequired[str]\n" in inputs


# --- item 8: deeply nested samples ---------------------------------------------------------------------


def _nested(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


def _deep_sample(tmp_path: Path, depth: int) -> subprocess.CompletedProcess[str]:
    (tmp_path / "deep.json").write_text(json.dumps({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}))
    sample = '{"source": "deep", "tool": "t", "result": {"content": [], "structuredContent": ' + _nested(depth) + "}}"
    (tmp_path / "samples.json").write_text('{"version": 1, "samples": [' + sample + "]}")
    return _toolgen(tmp_path, "--mcp-json", "deep.json", "--samples", "samples.json", "--out", "o", "--package", "d")


@pytest.mark.parametrize("depth", [25, 400, 900])
def test_deeply_nested_sample_leaves_the_tool_untyped(tmp_path: Path, depth: int) -> None:
    proc = _deep_sample(tmp_path, depth)
    assert proc.returncode == 0, proc.stderr
    assert "toolgen: typed results: declared 0, inferred 0, untyped 1" in proc.stdout


def test_deepest_inferable_sample_is_still_typed(tmp_path: Path) -> None:
    proc = _deep_sample(tmp_path, 24)
    assert proc.returncode == 0, proc.stderr
    assert "toolgen: typed results: declared 0, inferred 1, untyped 0" in proc.stdout


def test_a_samples_file_too_deep_for_json_is_one_line(tmp_path: Path) -> None:
    assert _error_line(_deep_sample(tmp_path, 5000)) == "toolgen: error: samples.json: JSON nested too deeply"


# --- item 10: package names that shadow modules --------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "what"),
    [
        ("typing", "the standard library module"),
        ("enum", "the standard library module"),
        ("json", "the standard library module"),
        ("os", "the standard library module"),
        ("pydantic", "the module"),
        ("mas", "the module"),
        ("yaml", "the module"),
        ("typing_inspection", "the module"),  # found through pydantic's own requirements
    ],
)
def test_package_name_that_shadows_a_module_is_refused(tmp_path: Path, name: str, what: str) -> None:
    (tmp_path / "tools.json").write_text(TIME.read_text())
    proc = _toolgen(tmp_path, "--mcp-json", "tools.json", "--out", "o", "--package", name)
    assert _error_line(proc) == (
        f"toolgen: error: --package: {name!r}: would shadow {what} {name!r} for any program that imports "
        "the generated package; choose another name"
    )
    assert not (tmp_path / "o").exists()


# --- item 16: symlinks and special files in the package folder -----------------------------------------


@pytest.fixture
def generated(tmp_path: Path) -> Path:
    (tmp_path / "tools.json").write_text(TIME.read_text())
    proc = _toolgen(tmp_path, "--mcp-json", "tools.json", "--out", "out", "--package", "pkg", "-q")
    assert proc.returncode == 0, proc.stderr
    return tmp_path


def test_check_diff_never_follows_a_symlink_in_the_package(generated: Path) -> None:
    pkg = generated / "out" / "pkg"
    secret = "TOOLGEN_TEST_SECRET_VALUE_1234"
    (pkg / "environ").symlink_to("/proc/self/environ")
    (generated / "outside.py").write_text(f"# {secret}\n")
    (pkg / "py.typed").unlink()
    (pkg / "py.typed").symlink_to(generated / "outside.py")  # a generated file's name
    (pkg / "linked").symlink_to(generated, target_is_directory=True)
    os.mkfifo(pkg / "fifo")  # reading it would block forever
    proc = _toolgen(generated, "--mcp-json", "tools.json", "--out", "out", "--package", "pkg", "--diff",
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
    proc = _toolgen(generated, "--mcp-json", "tools.json", "--out", "out", "--package", "pkg", "-q", timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert not any(p.is_symlink() for p in pkg.rglob("*")) and (pkg / "py.typed").read_bytes() == b""
    assert (generated / "outside.py").read_text() == f"# {secret}\n" and (generated / "tools.json").is_file()


def test_a_symlinked_package_folder_is_refused(generated: Path) -> None:
    (generated / "out" / "pkg").rename(generated / "real")
    (generated / "out" / "pkg").symlink_to(generated / "real", target_is_directory=True)
    for extra in ("--check", "-q"):
        proc = _toolgen(generated, "--mcp-json", "tools.json", "--out", "out", "--package", "pkg", extra)
        assert _error_line(proc) == "toolgen: error: out/pkg: is a symlink; toolgen neither follows nor replaces it"
    assert (generated / "out" / "pkg").is_symlink()


def test_a_symlinked_init_is_not_trusted_as_generated(generated: Path) -> None:
    pkg = generated / "out" / "pkg"
    (generated / "init.py").write_bytes((pkg / "__init__.py").read_bytes())
    (pkg / "__init__.py").unlink()
    (pkg / "__init__.py").symlink_to(generated / "init.py")
    (generated / "tools.json").write_text(TIME.read_text().replace("current time", "the time now"))
    proc = _toolgen(generated, "--mcp-json", "tools.json", "--out", "out", "--package", "pkg")
    assert _error_line(proc) == "toolgen: error: out/pkg: refusing to replace a folder that toolgen did not generate"


# --- item 18: inputs inside the package folder -----------------------------------------------------------


@pytest.mark.parametrize("option", ["--snapshot", "--samples", "--mcp-json"])
def test_an_input_inside_the_package_folder_is_refused(generated: Path, option: str) -> None:
    pkg = generated / "out" / "pkg"
    before = tree(pkg)
    inside = pkg / "kept.json"
    inside.write_text('{"version": 1, "samples": []}')
    source = "out/pkg/kept.json" if option == "--mcp-json" else "tools.json"
    args = ["--mcp-json", source, "--out", "out", "--package", "pkg", "--offline"]
    if option != "--mcp-json":
        args += [option, "out/pkg/kept.json"]
    proc = _toolgen(generated, *args)
    assert _error_line(proc) == (
        f"toolgen: error: out/pkg/kept.json: {option} is inside the package folder out/pkg, which every run "
        "replaces; keep inputs outside it"
    )
    assert inside.read_text() == '{"version": 1, "samples": []}'
    assert tree(pkg) == {**before, "kept.json": inside.read_bytes()}


def test_an_input_reached_through_a_symlink_into_the_package_is_refused(generated: Path) -> None:
    (generated / "out" / "pkg" / "lock.json").write_text("{}")
    (generated / "lock-link.json").symlink_to(generated / "out" / "pkg" / "lock.json")
    proc = _toolgen(generated, "--mcp-json", "tools.json", "--out", "out", "--package", "pkg",
                    "--snapshot", "lock-link.json")  # fmt: skip
    assert _error_line(proc) == (
        "toolgen: error: lock-link.json: --snapshot is inside the package folder out/pkg, which every run "
        "replaces; keep inputs outside it"
    )
    assert (generated / "out" / "pkg" / "lock.json").read_text() == "{}"


# --- item 9: keys that shadow the model module's imports or pydantic's names ------------------------------

_SHADOWING = {
    "Field": "f", "Annotated": 1, "z-z": 2, "model_dump": "d", "model_config": "c", "model_validate": 3,
    "int": "i", "str": 4, "n": 5, "s": "t",
}  # fmt: skip


def test_sample_keys_that_shadow_imports_type_check_and_import_without_warnings(tmp_path: Path) -> None:
    """Keys from recorded results (and so from a server) name the fields of an inferred model."""
    from gen_helpers import pyright_strict

    (tmp_path / "s.json").write_text(json.dumps({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}))
    sample = {"source": "s", "tool": "t", "result": {"content": [], "structuredContent": _SHADOWING}}
    (tmp_path / "samples.json").write_text(json.dumps({"version": 1, "samples": [sample]}))
    proc = _toolgen(tmp_path, "--mcp-json", "s.json", "--samples", "samples.json", "--out", ".", "--package", "shadow")
    assert proc.returncode == 0, proc.stderr
    mypy = subprocess.run([sys.executable, "-m", "mypy", "--strict", "shadow"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert mypy.returncode == 0, mypy.stdout
    report = pyright_strict(tmp_path, ["shadow"])
    assert report["summary"]["errorCount"] == 0, report["generalDiagnostics"]
    code = (
        "import shadow, json\n"
        "class P:\n"
        "    def call_tool(self, name, arguments):\n"
        f"        return {{'content': [], 'structuredContent': {_SHADOWING!r}, 'isError': False}}\n"
        "value = shadow.Tools(P()).s.t()\n"
        "print(json.dumps(value.model_dump(by_alias=True), sort_keys=True))\n"
        "print(value.Annotated_, value.field_model_dump, value.field_model_validate, value.int_, value.str_)\n"
    )
    run = subprocess.run([sys.executable, "-W", "error", "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [json.dumps(_SHADOWING, sort_keys=True), "1 d 3 i 4"]


# --- item 15: a crafted or copied cache never makes --check pass ------------------------------------------

_HEAVY = (
    "import sys; from codegen.cli import main; code = main(['generate', *sys.argv[1:]]); "
    "print(code, sorted(m for m in ('datamodel_code_generator', 'ruff') if m in sys.modules))"
)


def _cached_run(cwd: Path, user: Path, *args: str) -> tuple[int, str]:
    """``generate ARGS`` as ``user`` (their cache key lives in USER/toolgen/cache.key); the exit code
    and whether the generator libraries had to be loaded (a cache miss)."""
    proc = subprocess.run([sys.executable, "-c", _HEAVY, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "XDG_CACHE_HOME": str(user)})  # fmt: skip
    code, heavy = proc.stdout.strip().splitlines()[-1].split(" ", 1)
    return int(code), heavy


def _only_entry(project: Path) -> Path:
    [entry] = (project / ".toolgen-cache" / "files").glob("*.json")
    return entry


@pytest.fixture
def cached_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.toolgen]\nmcp-json = ["tools.json"]\nout = "gen"\npackage = "pkg"\n')
    (project / "tools.json").write_text(TIME.read_text())
    assert _cached_run(project, tmp_path / "dev", "-q") == (0, "['datamodel_code_generator', 'ruff']")
    assert _cached_run(project, tmp_path / "dev", "--check") == (0, "[]")  # the dev's own cache: a hit
    return project


def test_a_crafted_cache_entry_cannot_make_check_pass_a_tampered_package(cached_project: Path) -> None:
    """The issue's attack: append a line to the package and to the matching cache entry, and fix up the
    entry's digest with every key the attacker has: the unkeyed SHA-256, and their own secret."""
    import hashlib
    import hmac

    from codegen.cache import _canonical, _digest

    users = cached_project.parent
    _cached_run(cached_project, users / "attacker", "-q", "--no-cache")
    _cached_run(cached_project, users / "attacker", "--check")  # creates the attacker's key
    key_file = users / "attacker" / "toolgen" / "cache.key"
    attacker_key = key_file.read_bytes() if key_file.exists() else b"k" * 32
    with (cached_project / "gen" / "pkg" / "_tools.py").open("a") as handle:
        handle.write("import os; os.system('echo pwned')\n")
    path = _only_entry(cached_project)
    entry = json.loads(path.read_text())
    entry["data"]["_tools.py"] += "import os; os.system('echo pwned')\n"
    entry["sha256"] = _digest(_canonical(entry["data"]))
    payload = _digest("files", entry["key"], _canonical(entry["data"])).encode()
    entry["hmac"] = hmac.new(attacker_key, payload, hashlib.sha256).hexdigest()
    path.write_text(json.dumps(entry))
    proc = _run(cached_project, "codegen", "generate", "--check", XDG_CACHE_HOME=str(users / "dev"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "  changed  _tools.py\n" in proc.stdout


def test_a_cache_copied_from_another_user_is_a_miss(cached_project: Path) -> None:
    users = cached_project.parent
    assert _cached_run(cached_project, users / "ci", "--check") == (0, "['datamodel_code_generator', 'ruff']")
    assert _cached_run(cached_project, users / "ci", "--check") == (0, "[]")  # CI's own entries hit
    key = users / "ci" / "toolgen" / "cache.key"
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    key.chmod(0o622)  # a key another user could rewrite is not trusted: no cache at all
    assert _cached_run(cached_project, users / "ci", "--check") == (0, "['datamodel_code_generator', 'ruff']")


# --- item 17: kill -9 during generate leaves a consistent package + lock pair -----------------------------

_KILL_POINTS = ("staged", "committed", "retired", "swapped", "locked")


def _infra_text(drift: bool) -> str:
    args = ["-m", "mas.samples.mcp_server", *(["--drift", "param-removed"] if drift else [])]
    return (
        "apiVersion: toolgen/v1\nkind: ToolServerRegistry\nmetadata: {name: s}\nspec:\n  servers:\n"
        f"    - {{name: sample, protocol: mcp, transport: stdio, command: python, args: {json.dumps(args)},"
        " connect_timeout_seconds: 30}\n"
    )


_PAIR_ARGS = ("--infra", "infra.yaml", "--out", "out", "--package", "pkg", "--no-cache")


def _pair(root: Path) -> dict[str, bytes]:
    return {**tree(root / "out" / "pkg"), "LOCK": (root / "toolgen.lock.json").read_bytes()}


def _leftovers(root: Path) -> list[str]:
    """Anything a write leaves only while it runs: staging, retired folders, journal, lock temporaries."""
    return sorted(p.name for p in [*(root / "out").iterdir(), *root.iterdir()] if p.name.startswith("."))


@pytest.fixture(scope="module")
def pairs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes], dict[str, bytes]]:
    """A workspace holding pair A (the server as is), and pair B (the server after a drift)."""
    root = tmp_path_factory.mktemp("pairs")
    (root / "infra.yaml").write_text(_infra_text(drift=False))
    assert _toolgen(root, *_PAIR_ARGS, "-q", timeout=120).returncode == 0
    base = root / "base"
    base.mkdir()
    shutil.copytree(root / "out", base / "out")
    shutil.copy(root / "toolgen.lock.json", base / "toolgen.lock.json")
    a = _pair(root)
    (root / "infra.yaml").write_text(_infra_text(drift=True))
    assert _toolgen(root, *_PAIR_ARGS, "-q", timeout=120).returncode == 0
    b = _pair(root)
    assert a["LOCK"] != b["LOCK"] and a["inputs.py"] != b["inputs.py"]
    return base, a, b


def _workspace(tmp_path: Path, base: Path) -> Path:
    shutil.copytree(base, tmp_path / "w")
    (tmp_path / "w" / "infra.yaml").write_text(_infra_text(drift=True))
    return tmp_path / "w"


@pytest.mark.parametrize("point", _KILL_POINTS)
def test_kill_9_at_each_write_step_leaves_one_consistent_pair(
    tmp_path: Path, pairs: tuple[Path, dict[str, bytes], dict[str, bytes]], point: str
) -> None:
    base, a, b = pairs
    root = _workspace(tmp_path, base)
    killed = _toolgen(root, *_PAIR_ARGS, timeout=120, TOOLGEN_TEST_KILL_AT=point)
    assert killed.returncode == -9, killed.stderr  # SIGKILL, from the process itself at that step
    assert _leftovers(root)  # something was left mid-write
    # CI's gate right after the kill: the pair on disk is consistent (the journal finished first).
    check = _toolgen(root, "--offline", "--check", *_PAIR_ARGS, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    assert _pair(root) == (a if point == "staged" else b)
    assert _leftovers(root) == []
    finished = "finished the write of out/pkg that an interrupted run had committed"
    assert (finished in check.stderr) == (point != "staged")


@pytest.mark.parametrize("delay", [0.3, 0.8, 1.5, 2.5, 4.0])
def test_kill_9_from_outside_at_any_moment_leaves_one_consistent_pair(
    tmp_path: Path, pairs: tuple[Path, dict[str, bytes], dict[str, bytes]], delay: float
) -> None:
    base, a, b = pairs
    root = _workspace(tmp_path, base)
    proc = subprocess.Popen([sys.executable, "-m", "codegen", "generate", *_PAIR_ARGS, "-q"], cwd=root,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    time.sleep(delay)
    proc.kill()  # SIGKILL
    proc.wait(timeout=30)
    check = _toolgen(root, "--offline", "--check", *_PAIR_ARGS, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    assert _pair(root) in (a, b)
    assert _leftovers(root) == []


def test_staging_left_by_a_killed_run_is_removed_by_the_next(
    tmp_path: Path, pairs: tuple[Path, dict[str, bytes], dict[str, bytes]]
) -> None:
    base, _, b = pairs
    root = _workspace(tmp_path, base)
    for name in (".pkg.new-abc123", ".pkg.old-0badf00d"):  # as the writer of an earlier release left them
        (root / "out" / name).mkdir()
        (root / "out" / name / "__init__.py").write_text("x = 1\n")
    (root / ".toolgen.lock.json.new-xyz").write_text("{}")
    proc = _toolgen(root, *_PAIR_ARGS, "-q", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert _leftovers(root) == [] and _pair(root) == b


def test_a_planted_journal_cannot_move_files_elsewhere(
    tmp_path: Path, pairs: tuple[Path, dict[str, bytes], dict[str, bytes]]
) -> None:
    base, a, _ = pairs
    root = _workspace(tmp_path, base)
    (root / "victim.txt").write_text("keep\n")
    journal = {"version": 1, "staging": ".pkg.new-x", "retired": ".pkg.old-x", "lock": str(root / "victim.txt"),
               "lock_tmp": ".victim.txt.new-x"}  # fmt: skip
    (root / ".victim.txt.new-x").write_text("overwritten\n")
    (root / "out" / ".pkg.toolgen-journal").write_text(json.dumps(journal))
    proc = _toolgen(root, "--offline", "--check", *_PAIR_ARGS, timeout=120)
    assert _error_line(proc).startswith(
        "toolgen: error: out/.pkg.toolgen-journal: an interrupted toolgen run left a journal that does not fit"
    )
    assert (root / "victim.txt").read_text() == "keep\n" and _pair(root) == a
