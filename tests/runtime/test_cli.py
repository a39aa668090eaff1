"""``python -m mas.runtime``: the table, JSON listing, calls and exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import textwrap
from pathlib import Path

import pytest
from prefork import python_args, python_command

from mas.runtime.__main__ import format_table, main

#: The sample server as a fork of the pre-imported interpreter (tests/prefork.py).
SAMPLE_SERVER = python_args("-m", "mas.samples.mcp_server", pythonpath=None)


def run_cli(repo_root: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI as a user would, from a folder that is not the repo."""
    env = {**os.environ, "PYTHONPATH": str(repo_root)}
    return subprocess.run(
        python_command("-m", "mas.runtime", *args, pythonpath=str(repo_root)),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_list_prints_a_table(repo_root: Path, tmp_path: Path) -> None:
    proc = run_cli(
        repo_root,
        tmp_path,
        "list",
        "--tools",
        str(repo_root / "library-samples" / "tools"),
        "--local",
        "mas.samples.local_tools:WordCount",
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == textwrap.dedent(
        """\
        NAME            PROVIDER  TITLE           HINTS                              REQUIRED
        word_count      local     Word count      idempotent, read-only              text
        current_time    skills    Current time    read-only                          -
        unit_convert    skills    Unit converter  idempotent, read-only              value, from_unit, to_unit
        web_search      skills    Web search      idempotent, read-only, open-world  query
        summarize_text  skills    Summarize text  idempotent, read-only              text
        """
    )


def test_list_includes_the_sample_mcp_server(repo_root: Path, tmp_path: Path) -> None:
    pytest.importorskip("mas.runtime.mcp.provider")
    infra = tmp_path / "stdio.yaml"
    infra.write_text(
        "kind: ToolServerRegistry\nspec:\n  servers:\n"
        "    - {name: sample, protocol: mcp, transport: stdio, command: python,\n"
        f"       args: {json.dumps([*SAMPLE_SERVER, '--page-size', '3'])},"
        f" cwd: '{repo_root}'}}\n",
        encoding="utf-8",
    )
    unit_convert = str(repo_root / "library-samples" / "tools" / "unit_convert.yaml")
    proc = run_cli(repo_root, tmp_path, "list", "--infra", str(infra), "--tools", unit_convert)
    assert proc.returncode == 0, proc.stderr
    # Progress on stderr, as plain lines (stderr is a pipe here): connecting, each page, done.
    progress = re.sub(r"in \d+\.\d s$", "in N s", proc.stderr, flags=re.M)
    assert progress == (
        "mas-runtime: sample: connecting\n"
        "mas-runtime: sample: page 1, 3 tool(s) so far\n"
        "mas-runtime: sample: page 2, 6 tool(s) so far\n"
        "mas-runtime: sample: page 3, 9 tool(s) so far\n"
        "mas-runtime: sample: 9 tool(s) in N s\n"
    )
    quiet = run_cli(repo_root, tmp_path, "list", "-q", "--infra", str(infra), "--tools", unit_convert)
    assert (quiet.returncode, quiet.stderr, quiet.stdout) == (0, "", proc.stdout)
    assert proc.stdout == textwrap.dedent(
        """\
        NAME          PROVIDER  TITLE            HINTS                  REQUIRED
        unit_convert  skills    Unit converter   idempotent, read-only  value, from_unit, to_unit
        get_weather   sample    Current weather  read-only              city
        search-docs   sample    -                read-only              query
        notes.create  sample    -                -                      title, body
        notes.delete  sample    -                destructive            id
        count_slowly  sample    -                -                      -
        whoami        sample    -                read-only              -
        list_cities   sample    -                read-only              -
        greet         sample    -                idempotent, read-only  -
        flaky_lookup  sample    -                idempotent, read-only  key
        """
    )


def test_bad_yaml_exits_2_with_one_line(repo_root: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Tool\nmetadata:\n  name: x\nspec:\n  description: d\n", encoding="utf-8")
    proc = run_cli(repo_root, tmp_path, "list", "--tools", "bad.yaml")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == "mas-runtime: error: bad.yaml:4: spec.parameters: required key is missing\n"


def test_list_json(repo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--json", "--tools", str(repo_root / "library-samples" / "tools" / "current_time.yaml")]) == 0
    [entry] = json.loads(capsys.readouterr().out)
    assert (entry["name"], entry["timeout_seconds"], entry["annotations"]) == (
        "current_time",
        5,
        {"readOnlyHint": True, "openWorldHint": False},
    )


def test_call_prints_the_envelope(repo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tools = str(repo_root / "library-samples" / "tools")
    args = '{"value": 5, "from_unit": "km", "to_unit": "mi"}'
    assert main(["call", "unit_convert", args, "--tools", tools]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["result"] == {"value": 3.106856, "unit": "mi", "category": "length"}
    assert main(["call", "unit_convert", '{"value": 5}', "--tools", tools]) == 1
    assert json.loads(capsys.readouterr().out)["result"] == (
        "invalid arguments for tool 'unit_convert': /: missing required argument 'from_unit'"
    )
    assert main(["call", "unit_convert", "{nope", "--tools", tools]) == 2
    assert capsys.readouterr().err.startswith("mas-runtime: error: arguments: not valid JSON: ")


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lst"]) == 2
    assert "invalid choice: 'lst'" in capsys.readouterr().err
    assert main(["list", "--local", "nope"]) == 2
    assert capsys.readouterr().err == "mas-runtime: error: nope: a local tool must be given as 'package.module:Class'\n"


def test_format_table_aligns_columns() -> None:
    assert format_table([("a", "bb"), ("ccc", "d")], header=("X", "Y")) == "X    Y\na    bb\nccc  d"


def _server_infra(folder: Path, repo_root: Path, script: str, *args: str) -> Path:
    spec = {
        "apiVersion": "toolgen/v1",
        "kind": "ToolServerRegistry",
        "metadata": {"name": "odd"},
        "spec": {
            "servers": [
                {"name": "odd", "protocol": "mcp", "transport": "stdio", "command": "python",
                 "args": [*python_args(str(repo_root / "tests" / "servers" / script), pythonpath=None), *args],
                 "connect_timeout_seconds": 20}
            ]
        },
    }  # fmt: skip
    path = folder / "infra.yaml"
    path.write_text(json.dumps(spec))  # JSON is YAML
    return path


def test_list_applies_the_generators_tool_checks(repo_root: Path, tmp_path: Path) -> None:
    """A tool with an empty name: refused by ``list`` exactly as ``toolgen generate`` refuses it."""
    _server_infra(tmp_path, repo_root, "empty_name_server.py")
    proc = run_cli(repo_root, tmp_path, "list", "--infra", "infra.yaml", "-q")  # -q: no progress lines
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.splitlines() == [
        "mas-runtime: error: provider 'odd': /tools/1/name: tool name must be a non-empty string"
    ]


def test_library_logging_is_one_line_and_details_need_v(repo_root: Path, tmp_path: Path) -> None:
    """A server's banner on stdout is one warning line naming the server and quoting the line."""
    _server_infra(tmp_path, repo_root, "banner_server.py")
    proc = run_cli(repo_root, tmp_path, "list", "--infra", "infra.yaml", "-q")  # -q: no progress lines
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1].split() == ["echo", "odd", "-", "-", "text"]
    assert proc.stderr.splitlines() == [
        "mas-runtime: warning: mas.runtime.stdio: MCP server 'odd': stdout line 1 is not JSON-RPC, ignored: "
        "'Banner Server v1.0 starting... (this line is not JSON-RPC)'"
    ]
    verbose = run_cli(repo_root, tmp_path, "list", "--infra", "infra.yaml", "-v")
    assert verbose.returncode == 0 and "mas-runtime: WARNING: mas.runtime.stdio: MCP server" in verbose.stderr
    assert "Traceback" not in verbose.stderr  # nothing failed: there is no traceback to show
