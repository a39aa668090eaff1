"""A stdio server's ``env`` takes ``env:VAR`` like headers do (issue 30, item 2).

API keys for stdio servers had to be written into the infra file in clear: ``env`` values were
passed literally (``ALLOW_COMMANDS: env:SHELL_ALLOWED`` reached the server as that text). A value
``env:VAR`` is now read from the environment when the server starts, and blanked (``***``) from
everything the runtime prints, like a header secret; a missing variable is one line naming it.
Against tests/servers/raw_jsonrpc_server.py ``--echo-env``, which answers with the variable it got.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gen_helpers import REPO
from prefork import python_command

RAW = REPO / "tests" / "servers" / "raw_jsonrpc_server.py"
SECRET = "s3cr3t-from-the-environment"


def _infra(folder: Path, env: dict[str, str]) -> Path:
    server = {"name": "raw", "protocol": "mcp", "transport": "stdio", "command": sys.executable,
              "connect_mode": "legacy", "env": env,
              "args": [str(RAW), "--echo-env", "API_TOKEN", "--record", str(folder / "record.jsonl")]}  # fmt: skip
    infra = folder / "infra.yaml"
    infra.write_text(json.dumps({"kind": "ToolServerRegistry", "spec": {"servers": [server]}}), encoding="utf-8")
    return infra


def _call(folder: Path, *flags: str, **env: str) -> subprocess.CompletedProcess[str]:
    # A fork of the pre-imported interpreter (tests/prefork.py) under exactly this environment.
    command = python_command("-m", "mas.runtime", "call", "echo", '{"text": "x"}', "--infra", "infra.yaml", *flags)
    base = {k: v for k, v in os.environ.items() if k != "S3_API_TOKEN"}
    return subprocess.run(
        command, cwd=folder, capture_output=True, text=True, timeout=120,
        env={**base, "PYTHONPATH": str(REPO), **env},
    )  # fmt: skip


def test_an_env_var_reference_reaches_the_server_resolved_and_is_blanked_everywhere(tmp_path: Path) -> None:
    _infra(tmp_path, {"API_TOKEN": "env:S3_API_TOKEN"})
    done = _call(tmp_path, "-v", S3_API_TOKEN=SECRET)
    assert done.returncode == 0, done.stderr
    record = [json.loads(line) for line in (tmp_path / "record.jsonl").read_text().splitlines()]
    assert [r["env"] for r in record if "env" in r] == [SECRET]  # the server got the value
    envelope = json.loads(done.stdout)
    assert envelope["content"][0]["text"] == "API_TOKEN=***"  # echoed back, blanked
    assert SECRET not in done.stdout + done.stderr


def test_a_literal_secret_named_env_value_is_blanked_too(tmp_path: Path) -> None:
    _infra(tmp_path, {"API_TOKEN": "literal-token-value"})
    done = _call(tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["content"][0]["text"] == "API_TOKEN=***"


def test_a_missing_variable_is_one_line_naming_it(tmp_path: Path) -> None:
    _infra(tmp_path, {"API_TOKEN": "env:S3_API_TOKEN"})
    done = _call(tmp_path, "-q")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "env 'API_TOKEN' needs environment variable S3_API_TOKEN" in lines[0], done.stderr
