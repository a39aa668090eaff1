"""The cache (codegen/cache.py) is trusted only when it is the user's own: a crafted or copied
``.toolgen-cache`` never makes ``generate --check`` pass a tampered package. Each run is a process of
its own, with its own user cache folder (``XDG_CACHE_HOME``); docs/security.md names each test.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from gen_helpers import REPO, run_module
from prefork import LIBRARIES, python_command

TIME = REPO / "tests" / "fixtures" / "mcp-tools-list" / "time.json"


pytestmark = pytest.mark.slow  # every test runs toolgen as a process


# --- a crafted or copied cache never makes --check pass ------------------------------------------

_HEAVY = (
    "import sys; from codegen.cli import main; code = main(['generate', *sys.argv[1:]]); "
    "print(code, sorted(m for m in ('datamodel_code_generator', 'ruff') if m in sys.modules))"
)


def _cached_run(cwd: Path, user: Path, *args: str) -> tuple[int, str]:
    """``generate ARGS`` as ``user`` (their cache key lives in USER/toolgen/cache.key); the exit code
    and whether the generator libraries had to be loaded (a cache miss)."""
    # A fork of the tests' pre-imported interpreter (tests/prefork.py): it holds pydantic and the
    # MCP SDK, never the two generator libraries this looks for.
    assert not {"datamodel_code_generator", "ruff"} & {name.split(".")[0] for name in LIBRARIES}
    command = python_command("-c", _HEAVY, *args, pythonpath=os.environ.get("PYTHONPATH"))
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True,
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

    from codegen.cache import _digest, _entry_text

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
    data_text = json.dumps(entry["data"], ensure_ascii=False)
    for secret in (None, attacker_key):  # unkeyed, then keyed with the attacker's own secret
        payload = _digest("files", entry["key"], data_text).encode()
        forged = hmac.new(secret, payload, "sha256").hexdigest() if secret else hashlib.sha256(payload).hexdigest()
        path.write_text(_entry_text(entry["key"], forged, data_text))
        proc = run_module(cached_project, "codegen", "generate", "--check", XDG_CACHE_HOME=str(users / "dev"))
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
