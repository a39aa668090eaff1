"""The command lines as a user meets them day to day, run as subprocesses from a folder outside the repo.

Both launch styles of each tool (console script and ``python -m``) must behave the same: version,
program name in messages, and where handler modules are found. Progress goes to stderr as plain
lines (stderr is a pipe here, as in CI), every write is reported on stdout, advice is one that
works, and ``--help`` agrees with docs/generator.md.
"""

from __future__ import annotations

import io
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gen_helpers import REPO
from prefork import python_args

from mas.runtime.progress import Progress

BIN = Path(sys.executable).parent
TIME = REPO / "tests" / "fixtures" / "mcp-tools-list" / "time.json"
LAUNCHERS = {
    "toolgen": ([str(BIN / "toolgen")], [sys.executable, "-m", "codegen"]),
    "mas-runtime": ([str(BIN / "mas-runtime")], [sys.executable, "-m", "mas.runtime"]),
}
STYLES = ("console script", "python -m")


def sample_infra(*extra: str) -> str:
    """An infra file naming the sample server, ``python -m mas.samples.mcp_server *extra``, as a fork
    of the tests' pre-imported interpreter (tests/prefork.py): what is under test is toolgen's
    process, and each cold server cost about a CPU-second."""
    args = json.dumps(list(python_args("-m", "mas.samples.mcp_server", *extra, pythonpath=None)))
    return (
        "kind: ToolServerRegistry\nmetadata:\n  name: t\nspec:\n  servers:\n"
        f"    - {{name: sample, protocol: mcp, transport: stdio, command: python, args: {args}}}\n"
    )


#: The runtime shim, a package of its own inside every generated package (codegen/shim/_runtime/).
RUNTIME_MODULES = ("__init__", "_base", "_content", "_decode", "_envelope", "_errors", "_fake", "_info", "_input",
                   "_omit", "_options", "_plan", "_task", "_text")  # fmt: skip
RUNTIME_FILES = [f"_runtime/{name}.py" for name in RUNTIME_MODULES]
PACKAGE_FILES = ["__init__.py", "_rules.py", *RUNTIME_FILES, "_tools.py", "inputs.py", "py.typed"]
CODE_MODE_FILES = ["code_mode/__init__.py", "code_mode/sample.pyi"]  # the code-mode stubs (docs/code-mode.md)
MODEL_FILES = [
    "outputs/__init__.py",
    "outputs/sample_flaky_lookup_output.py",
    "outputs/sample_get_weather_output.py",
    "outputs/sample_greet_output.py",
    "outputs/sample_notes_create_output.py",
    "outputs/sample_search_docs_output.py",
    "outputs/sample_whoami_output.py",
]
HANDLER_TOOL = """\
kind: Tool
metadata:
  name: shout
spec:
  description: Upper-case a word.
  handler: {module}:shout
  parameters:
    type: object
    properties:
      word: {{type: string}}
    required: [word]
"""


def _env() -> dict[str, str]:
    """The user's environment: nothing on PYTHONPATH, so only the installed packages are importable."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}


def run(tool: str, style: str, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = LAUNCHERS[tool][STYLES.index(style)]
    return subprocess.run(
        [*command, *args], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=180, check=False
    )


def _seconds(text: str) -> str:
    return re.sub(r"in \d+\.\d s$", "in N s", text, flags=re.M)


# --- one entry point per tool ---------------------------------------------------------------------


@pytest.mark.parametrize("tool", sorted(LAUNCHERS))
def test_both_launch_styles_print_the_same_version_and_name(tool: str, tmp_path: Path) -> None:
    outputs = [run(tool, style, tmp_path, "--version") for style in STYLES]
    assert [(p.returncode, p.stdout) for p in outputs] == [(0, f"{tool} 0.1.0\n")] * 2
    errors = [run(tool, style, tmp_path, "nope") for style in STYLES]
    assert errors[0].returncode == errors[1].returncode == 2
    assert errors[0].stderr == errors[1].stderr and errors[0].stderr.startswith(f"usage: {tool} ")


@pytest.mark.parametrize("style", STYLES)
def test_handler_modules_load_from_the_working_folder_and_the_yaml_folder(style: str, tmp_path: Path) -> None:
    """`mas-runtime list --tools tools` once failed to import a handler the -m style found."""
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "shout.yaml").write_text(HANDLER_TOOL.format(module="my_handlers"))
    (tmp_path / "my_handlers.py").write_text("def shout(word: str) -> str:\n    return word.upper()\n")
    listed = run("mas-runtime", style, tmp_path, "list", "--tools", "tools")
    assert listed.returncode == 0, listed.stderr
    assert "shout" in listed.stdout
    called = run("mas-runtime", style, tmp_path, "call", "shout", '{"word": "hi"}', "--tools", "tools")
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["result"] == "HI"
    # Beside the YAML file, run from somewhere else entirely.
    (tmp_path / "tools" / "shout.yaml").write_text(HANDLER_TOOL.format(module="beside_handlers"))
    (tmp_path / "tools" / "beside_handlers.py").write_text("def shout(word: str) -> str:\n    return word + '!'\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    yaml_dir = str(tmp_path / "tools")
    called = run("mas-runtime", style, elsewhere, "call", "shout", '{"word": "hi"}', "--tools", yaml_dir)
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["result"] == "hi!"
    # A module found nowhere is still one line naming the file and line of spec.handler.
    (tmp_path / "tools" / "shout.yaml").write_text(HANDLER_TOOL.format(module="nowhere_handlers"))
    missing = run("mas-runtime", style, elsewhere, "list", "--tools", yaml_dir)
    assert missing.returncode == 2
    assert missing.stderr.startswith("mas-runtime: error: ") and "shout.yaml:6: spec.handler" in missing.stderr
    assert "No module named 'nowhere_handlers'" in missing.stderr


# --- progress and reports -------------------------------------------------------------------------


@pytest.mark.slow  # live discovery of several servers; the file is among the longest
def test_generate_reports_progress_the_lock_and_the_package(tmp_path: Path) -> None:
    (tmp_path / "infra.yaml").write_text(sample_infra("--with-crash-tool"))
    args = ("generate", "--infra", "infra.yaml", "--out", "out", "--package", "pkg")
    first = run("toolgen", "console script", tmp_path, *args)
    assert first.returncode == 0, first.stderr
    assert _seconds(first.stderr) == (
        "toolgen: sample: connecting\n"
        "toolgen: sample: page 1, 3 tool(s) so far\n"
        "toolgen: sample: page 2, 6 tool(s) so far\n"
        "toolgen: sample: page 3, 9 tool(s) so far\n"
        "toolgen: sample: page 4, 10 tool(s) so far\n"
        "toolgen: sample: 10 tool(s) in N s\n"
    )
    # One output module per tool with an output schema (6 of the 10), beside the shared ones.
    # And the pages and the version (docs/drift.md, "Upgrading").
    # And the test kit (testing.py, _testing_data.py).
    files = ["CHANGELOG.md", *PACKAGE_FILES[:-3], "_testing_data.py", "_tools.py", "_version.py", "api.md",
             *CODE_MODE_FILES, "inputs.py", *MODEL_FILES, "py.typed", "testing.py"]  # fmt: skip
    assert first.stdout == (
        "toolgen: toolgen.lock.json: created; locked sample (10 tool(s))\n"
        f"toolgen: out/pkg: {len(files)} written, 0 unchanged, 0 removed\n"
        + "".join(f"  added    {name}\n" for name in files)
        + "toolgen: typed results: declared 6, inferred 0, untyped 4\n"
    )
    again = run("toolgen", "python -m", tmp_path, *args, "-q")
    assert (again.returncode, again.stderr) == (0, "")
    assert again.stdout == (
        "toolgen: toolgen.lock.json: unchanged; locked sample (10 tool(s))\n"
        f"toolgen: out/pkg: 0 written, {len(files)} unchanged, 0 removed\n"
        "toolgen: typed results: declared 6, inferred 0, untyped 4\n"
    )
    # The server drops a tool: the lock says what changed, the package which files.
    (tmp_path / "infra.yaml").write_text(sample_infra())
    updated = run("toolgen", "console script", tmp_path, *args, "-v")
    assert updated.returncode == 0, updated.stderr
    # __init__.py names the inputs' hash; the files the removal does not reach keep their bytes. A
    # breaking change moves the version to 1.0.0 (_version.py, CHANGELOG.md), and api.md loses the tool.
    changed = ["CHANGELOG.md", "__init__.py", "_testing_data.py", "_tools.py", "_version.py", "api.md",
               "code_mode/__init__.py", "code_mode/sample.pyi", "inputs.py", "testing.py"]  # fmt: skip
    assert updated.stdout == (
        "toolgen: server 'sample': tool 'crash': tool removed (breaking)\n"
        "toolgen: 1 change(s): 1 breaking, 0 review, 0 compatible\n"
        "toolgen: toolgen.lock.json: updated; locked sample (9 tool(s))\n"
        f"toolgen: out/pkg: {len(changed)} written, {len(files) - len(changed)} unchanged, 0 removed\n"
        + "".join(f"  changed  {name}\n" for name in changed)
        + "toolgen: typed results: declared 6, inferred 0, untyped 3\n"
    )
    assert "toolgen: building 9 tool(s) from 1 source(s)\n" in updated.stderr  # -v: the detail lines
    assert "toolgen: unchanged py.typed\n" in updated.stderr


def test_live_progress_on_a_terminal_uses_one_line_per_server() -> None:
    stream = io.StringIO()
    with Progress("toolgen", stream=stream, live=True) as progress:
        with progress.server("sample") as task:
            task.page(1, 3)
            task.page(2, 6)
            task.done(6)
        with pytest.raises(RuntimeError), progress.server("broken"):
            raise RuntimeError("gone")
    text = stream.getvalue()
    assert "\x1b[" in text  # drawn by rich on a (forced) terminal, not as plain lines
    assert re.search(r"sample: 6 tool\(s\) in \d+\.\d s", text) and "broken: failed" in text
    assert "toolgen: sample: connecting\n" not in text


class Writes(io.StringIO):
    """A stream that keeps each write apart."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    def write(self, text: str) -> int:
        self.writes.append(text)
        return super().write(text)


def test_each_plain_progress_line_is_one_write() -> None:
    # A log record written by another thread between a line's text and its newline joined two lines
    # (a server's page event and another server's warning) in a CI run.
    stream = Writes()
    with Progress("toolgen", stream=stream, live=False) as progress:
        with progress.server("sample") as task:
            task.page(1, 3)
            task.done(3)
        progress.note("a note")
    assert stream.writes[:2] == ["toolgen: sample: connecting\n", "toolgen: sample: page 1, 3 tool(s) so far\n"]
    assert stream.writes[3:] == ["toolgen: a note\n"] and len(stream.writes) == 4


def test_quiet_progress_prints_nothing() -> None:
    stream = io.StringIO()
    with Progress("toolgen", stream=stream, quiet=True, verbose=True) as progress:
        with progress.server("sample") as task:
            task.done(1)
        progress.note("a note")
        progress.detail("a detail")
    assert stream.getvalue() == ""


# --- advice that works ----------------------------------------------------------------------------


@pytest.mark.full  # test_generate_reports_progress_the_lock_and_the_package stays fast
def test_offline_is_suggested_only_when_a_lock_exists(tmp_path: Path) -> None:
    (tmp_path / "infra.yaml").write_text(
        "kind: ToolServerRegistry\nmetadata:\n  name: t\nspec:\n  servers:\n"
        "    - name: secured\n      protocol: mcp\n      transport: streamable-http\n"
        "      url: http://127.0.0.1:9/mcp\n      connect_timeout_seconds: 3\n"
        "      headers: {Authorization: 'Bearer env:TOOLGEN_TEST_UNSET_TOKEN'}\n"
    )
    args = ("generate", "--infra", "infra.yaml", "--out", "out", "--package", "pkg", "-q")
    no_lock = run("toolgen", "console script", tmp_path, *args)
    assert no_lock.returncode == 2
    line = no_lock.stderr.strip()
    assert "\n" not in line and "'secured'" in line and "TOOLGEN_TEST_UNSET_TOKEN" in line, line
    assert "--offline" not in line and "no lock (toolgen.lock.json)" in line and "--mcp-json" in line, line
    (tmp_path / "toolgen.lock.json").write_text('{"toolgen_snapshot": 1, "servers": {"secured": {"tools": []}}}\n')
    with_lock = run("toolgen", "console script", tmp_path, *args)
    assert with_lock.returncode == 2 and "use --offline to generate from the lock" in with_lock.stderr
    assert run("toolgen", "console script", tmp_path, *args, "--offline").returncode == 0  # and it works
    (tmp_path / "toolgen.lock.json").unlink()
    offline = run("toolgen", "console script", tmp_path, *args, "--offline")
    assert offline.returncode == 2 and "run `toolgen generate` once without --offline" in offline.stderr


# --- help and docs --------------------------------------------------------------------------------


def test_generate_help_shows_defaults_exit_codes_and_the_replacement_rule(tmp_path: Path) -> None:
    shown = run("toolgen", "console script", tmp_path, "generate", "--help")
    assert shown.returncode == 0
    text = " ".join(shown.stdout.split())
    for fragment in (
        "(default: toolgen.lock.json)",
        "(default: generated)",
        "(default: toolgen_tools)",
        "Exit status: 0 written (or up to date with --check), 1 stale (--check, --diff), 2 bad input",
        "naming any of them replaces all the configured sources",
        "--diff like --check, and print a unified diff",
    ):
        assert fragment in text, fragment
    assert run("toolgen", "python -m", tmp_path, "generate", "--help").stdout == shown.stdout


def test_every_option_in_help_is_documented(tmp_path: Path) -> None:
    docs = (REPO / "docs" / "generator.md").read_text()
    for args in (["--help"], ["generate", "--help"]):
        shown = run("toolgen", "console script", tmp_path, *args).stdout
        options = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", shown.split("\n\n", 1)[0] + shown)) - {"-h", "--help"}
        assert options, shown
        for option in sorted(options):
            assert f"`{option}" in docs, f"{option} is in `toolgen {' '.join(args)}` but not in docs/generator.md"
    # --diff is described once, the same way, in both.
    assert "| `--diff` | | like `--check`, and print a unified diff |" in docs


def test_a_bare_generate_outside_a_project_says_where_it_writes(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text(TIME.read_text())
    proc = run("toolgen", "console script", tmp_path, "generate", "--mcp-json", "x.json")
    assert proc.returncode == 0, proc.stderr
    assert "writing to generated/toolgen_tools/" in proc.stderr
    # 2 tools: 2 output modules; 2 code-mode files (the stub of the one source and its manifest); the shim;
    # CHANGELOG.md, api.md and _version.py; testing.py and _testing_data.py
    assert proc.stdout.startswith(f"toolgen: generated/toolgen_tools: {15 + len(RUNTIME_FILES)} written")
    quiet = run("toolgen", "console script", tmp_path, "generate", "--mcp-json", "x.json", "-q")
    assert (quiet.returncode, quiet.stderr) == (0, "")


def test_sample_http_server_says_where_it_listens(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "mas.samples.mcp_server", "--transport", "streamable-http", "--port", str(port)],
        cwd=tmp_path,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line == f"sample MCP server (streamable-http) starting on http://127.0.0.1:{port}/mcp; Ctrl-C stops it\n"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # and it really is there
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("the sample server never listened")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
