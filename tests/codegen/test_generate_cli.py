"""The command line as a user meets it: exit codes, one-line errors, untouched output on failure."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gen_helpers import REPO, forked_python, generate, tree
from prefork import python_command

TIME = REPO / "tests" / "fixtures" / "mcp-tools-list" / "time.json"


@pytest.fixture(scope="module")
def generated_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("generated-once")
    (root / "tools.json").write_text(TIME.read_text())
    with pytest.MonkeyPatch.context() as mp:
        assert generate(root, ["--mcp-json", "tools.json", "--out", "out", "--package", "pkg"], mp) == 0
    return root


@pytest.fixture
def workdir(tmp_path: Path, generated_once: Path) -> Path:
    """A folder with a good tools/list file, generated into out/pkg: generated once per module and
    copied, so each test owns its folder without paying for a generation."""
    shutil.copytree(generated_once, tmp_path, dirs_exist_ok=True)
    return tmp_path


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m codegen generate ARGS`` in ``cwd``: a real process (its exit status, its stderr),
    forked from the tests' pre-imported interpreter (tests/prefork.py)."""
    command = python_command("-m", "codegen", "generate", *args, pythonpath=os.environ.get("PYTHONPATH"))
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True)


BAD_INPUTS = {
    "broken JSON": ("tools.json", '{"tools": [\n  {"name": "x",\n}', "tools.json:3: not JSON"),
    "not a tools/list": ("tools.json", '{"items": []}', "tools.json: /: not a tools/list result: no 'tools' array"),
    "tool without inputSchema": (
        "tools.json",
        '{"tools": [{"name": "a", "inputSchema": {"type": "object"}}, {"name": "b"}]}',
        "tools.json: /tools/1/inputSchema: inputSchema must be an object",
    ),
    "duplicate tool": (
        "tools.json",
        '[{"name": "a", "inputSchema": {}}, {"name": "a", "inputSchema": {}}]',
        "tools.json: /tools/1/name: duplicate tool name 'a' (also /tools/0)",
    ),
    "empty tool name": (
        "tools.json",
        '[{"name": "a", "inputSchema": {}}, {"name": "", "inputSchema": {}}]',
        "tools.json: /tools/1/name: tool name must be a non-empty string",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_exits_2_with_one_line_and_keeps_previous_output(workdir: Path, case: str) -> None:
    before = tree(workdir / "out" / "pkg")
    name, text, expected = BAD_INPUTS[case]
    (workdir / name).write_text(text)
    proc = _run(workdir, "--mcp-json", name, "--out", "out", "--package", "pkg")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("toolgen: error: ") and expected in lines[0], lines[0]
    assert tree(workdir / "out" / "pkg") == before
    assert sorted(p.name for p in (workdir / "out").iterdir()) == ["pkg"]  # no staging folder left behind


def test_broken_yaml_names_file_and_line(workdir: Path) -> None:
    before = tree(workdir / "out" / "pkg")
    (workdir / "bad.yaml").write_text("kind: Tool\nmetadata:\n  name: x\nspec:\n  description: [oops\n")
    proc = _run(workdir, "--tools", "bad.yaml", "--out", "out", "--package", "pkg")
    assert proc.returncode == 2
    line = proc.stderr.strip()
    assert "\n" not in line and "bad.yaml:" in line, line
    assert tree(workdir / "out" / "pkg") == before


@pytest.mark.full
def test_unreachable_server_names_it_and_says_how_to_get_a_lock(workdir: Path) -> None:
    (workdir / "infra.yaml").write_text(
        "kind: ToolServerRegistry\nmetadata:\n  name: t\nspec:\n  servers:\n"
        "    - name: gone\n      protocol: mcp\n      transport: streamable-http\n"
        "      url: http://127.0.0.1:9/mcp\n      connect_timeout_seconds: 3\n"
    )
    before = tree(workdir / "out" / "pkg")
    proc = _run(workdir, "--infra", "infra.yaml", "--out", "out", "--package", "pkg", "-q")
    assert proc.returncode == 2
    line = proc.stderr.strip()
    # No lock yet: --offline would fail too, so the advice is how to get one (tests/test_daily_use.py).
    assert "\n" not in line and "'gone'" in line and "no lock" in line and "--offline" not in line, line
    assert tree(workdir / "out" / "pkg") == before
    # Offline without a lock says so instead of contacting anything.
    proc = _run(workdir, "--infra", "infra.yaml", "--offline", "--out", "out", "--package", "pkg")
    assert proc.returncode == 2 and "no lock file yet" in proc.stderr


def test_check_is_1_after_an_input_change_and_0_after_regenerating(workdir: Path) -> None:
    args = ["--mcp-json", "tools.json", "--out", "out", "--package", "pkg"]
    assert _run(workdir, *args, "--check").returncode == 0
    data = json.loads((workdir / "tools.json").read_text())
    data["tools"][0]["description"] = "Changed upstream."
    (workdir / "tools.json").write_text(json.dumps(data))
    before = tree(workdir / "out" / "pkg")
    proc = _run(workdir, *args, "--check")
    assert proc.returncode == 1
    assert "changed  _tools.py" in proc.stdout
    assert tree(workdir / "out" / "pkg") == before  # --check writes nothing
    assert _run(workdir, *args).returncode == 0
    assert _run(workdir, *args, "--check").returncode == 0


def test_diff_shows_the_change(workdir: Path) -> None:
    data = json.loads((workdir / "tools.json").read_text())
    data["tools"][0]["description"] = "Changed upstream."
    (workdir / "tools.json").write_text(json.dumps(data))
    proc = _run(workdir, "--mcp-json", "tools.json", "--out", "out", "--package", "pkg", "--diff")
    assert proc.returncode == 1
    assert "+++ b/pkg/_tools.py" in proc.stdout and "Changed upstream." in proc.stdout


def test_stale_files_are_removed(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (workdir / "out" / "pkg" / "leftover.py").write_text("x = 1\n")
    args = ["--mcp-json", "tools.json", "--out", "out", "--package", "pkg"]
    proc = _run(workdir, *args, "--check")
    assert proc.returncode == 1 and "removed  leftover.py" in proc.stdout
    assert generate(workdir, args, monkeypatch) == 0
    assert not (workdir / "out" / "pkg" / "leftover.py").exists()


def test_refuses_to_replace_a_folder_it_did_not_generate(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text(TIME.read_text())
    (tmp_path / "src" / "mine").mkdir(parents=True)
    (tmp_path / "src" / "mine" / "__init__.py").write_text("# hand-written\n")
    proc = _run(tmp_path, "--mcp-json", "tools.json", "--out", "src", "--package", "mine")
    assert proc.returncode == 2 and "did not generate" in proc.stderr
    assert (tmp_path / "src" / "mine" / "__init__.py").read_text() == "# hand-written\n"


@pytest.mark.full
def test_settings_come_from_pyproject(tmp_path: Path) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "time.json").write_text(TIME.read_text())
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolgen]\nmcp-json = ["schemas/time.json"]\nout = "gen"\npackage = "time_tools"\n'
    )
    (tmp_path / "sub").mkdir()
    proc = _run(tmp_path / "sub", "--check")  # found by walking up from a subfolder
    assert proc.returncode == 1 and "added    __init__.py" in proc.stdout
    assert _run(tmp_path / "sub").returncode == 0
    assert (tmp_path / "gen" / "time_tools" / "py.typed").exists()
    (tmp_path / "pyproject.toml").write_text('[tool.toolgen]\nmcp_jsn = ["x"]\n')
    proc = _run(tmp_path)
    assert proc.returncode == 2 and "unknown key 'mcp_jsn'" in proc.stderr


def test_bad_package_name(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text(TIME.read_text())
    proc = _run(tmp_path, "--mcp-json", "tools.json", "--package", "not-valid")
    assert proc.returncode == 2 and "--package" in proc.stderr


def test_console_script_and_module_agree(workdir: Path) -> None:
    script = Path(sys.executable).parent / "toolgen"
    proc = subprocess.run([str(script), "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == "toolgen 0.1.0"


def test_committed_generated_package_is_current() -> None:
    """The same drift check CI runs: generated/ matches library-samples/ and the lock."""
    proc = _run(REPO, "--offline", "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "generated/sample_tools is up to date" in proc.stdout


@pytest.mark.full
def test_sources_on_the_command_line_replace_all_configured_sources(tmp_path: Path) -> None:
    """--mcp-json inside a configured project must not mix in the project's YAML or servers."""
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "t.yaml").write_text(
        "kind: Tool\nmetadata:\n  name: yaml_tool\nspec:\n  description: d\n  parameters: {type: object}\n"
    )
    (tmp_path / "time.json").write_text(TIME.read_text())
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolgen]\ntools = ["tools"]\ninfra = ["missing-infra.yaml"]\nout = "gen"\npackage = "p"\n'
    )
    proc = _run(tmp_path, "--mcp-json", "time.json")
    assert proc.returncode == 0, proc.stderr  # the configured (missing) infra file was not read
    text = (tmp_path / "gen" / "p" / "_tools.py").read_text()
    assert '"get_current_time"' in text and "yaml_tool" not in text
    proc = _run(tmp_path)  # without source options, the configured ones apply
    assert proc.returncode == 2 and "missing-infra.yaml" in proc.stderr


# --- every CLI error is one line, exit 2: the output folder, and servers that misbehave -----------

SERVERS = REPO / "tests" / "servers"


def _one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("toolgen: error: "), proc.stderr
    return lines[0].removeprefix("toolgen: error: ")


@pytest.mark.parametrize("out", ["afile", "afile/below"])
def test_out_naming_a_file_is_one_line(workdir: Path, out: str) -> None:
    (workdir / "afile").write_text("not a folder")
    proc = _run(workdir, "--mcp-json", "tools.json", "--out", out, "--package", "pkg")
    assert _one_error_line(proc) == "afile: is a file, not a folder (--out names the folder the package goes in)"
    assert (workdir / "afile").read_text() == "not a folder"


def test_unwritable_output_folder_is_one_line(workdir: Path) -> None:
    if os.geteuid() == 0:  # root writes anywhere a mode allows; the kernel's own folders it may not
        out = "/sys/kernel/toolgen-test"
        expected = "/sys/kernel/toolgen-test: cannot write the package: Operation not permitted"
    else:
        (workdir / "locked").mkdir(mode=0o555)
        out, expected = "locked", "locked: cannot write the package: Permission denied"
    proc = _run(workdir, "--mcp-json", "tools.json", "--out", out, "--package", "pkg")
    assert _one_error_line(proc) == expected


def _infra(folder: Path, *args: str, connect_timeout_seconds: float = 20) -> Path:
    # The server is a fork of the tests' pre-imported interpreter: toolgen still starts it as a
    # process, without an `import mcp` of its own.
    server = {"name": "banner", "protocol": "mcp", "transport": "stdio",
              **forked_python(str(SERVERS / "banner_server.py"), *args),
              "connect_timeout_seconds": connect_timeout_seconds}  # fmt: skip
    spec = {"apiVersion": "toolgen/v1", "kind": "ToolServerRegistry", "metadata": {"name": "banner"},
            "spec": {"servers": [server]}}  # fmt: skip
    path = folder / "infra.yaml"
    path.write_text(json.dumps(spec))  # JSON is YAML
    return path


@pytest.mark.full  # live servers; test_check_is_1_after_an_input_change_and_0_after_regenerating stays fast
def test_server_printing_a_banner_still_generates_with_one_warning(tmp_path: Path) -> None:
    _infra(tmp_path)
    proc = _run(tmp_path, "--infra", "infra.yaml", "--out", "out", "--package", "pkg", "--lock", "lock.json", "-q")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        "toolgen: warning: mas.runtime.stdio: MCP server 'banner': stdout line 1 is not JSON-RPC, ignored: "
        "'Banner Server v1.0 starting... (this line is not JSON-RPC)'"
    ]
    assert "def echo(" in (tmp_path / "out" / "pkg" / "_tools.py").read_text()


@pytest.mark.full
def test_server_speaking_no_json_rpc_is_one_error_line(tmp_path: Path) -> None:
    _infra(tmp_path, "--garbage", connect_timeout_seconds=1.5)  # it never answers: the bound runs out
    proc = _run(tmp_path, "--infra", "infra.yaml", "--out", "out", "--package", "pkg", "--lock", "lock.json", "-q")
    assert proc.returncode == 2, proc.stderr
    *warnings, error = proc.stderr.splitlines()
    noise = [w for w in warnings if w.startswith("toolgen: warning: mas.runtime.stdio: MCP server 'banner': stdout")]
    # At most one warning for the noise, not one per line (none when a loaded machine starts the
    # server too slowly to print it in time; tests/runtime/test_hostile_stdio.py proves the hint).
    assert len(noise) <= 1, warnings
    assert error.startswith("toolgen: error: infra.yaml:") and "cannot list MCP server 'banner'" in error
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_verbose_internal_error_prints_its_traceback_with_secrets_blanked(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """-v shows a bug's traceback, but a resolved secret it quotes is blanked like every other line."""
    from codegen import cli
    from mas.runtime import redact

    secret = "tok-internal-9f3b2c7d1e"
    redact.remember([secret])

    def broken(args: object, progress: object) -> int:
        raise RuntimeError(f"server said {secret}")

    monkeypatch.setitem(cli.COMMANDS, "generate", (cli.COMMANDS["generate"][0], broken))
    assert cli.main(["generate", "-v"]) == cli.EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "RuntimeError: server said" in err
    assert secret not in err
