"""How real servers behave, met by the runtime: schemas the SDK rejects, noise, failure kinds, many servers.

Servers: the sample server (mcp 2.3), FastMCP on the mcp 1.x SDKs in cached venvs (tests/old_sdk.py),
the banner server, and the hand-written tests/servers/raw_jsonrpc_server.py.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import forked_python
from mcp_helpers import stdio_config
from npm_cache import Reference, reference_or_skip
from prefork import python_command
from tiers import tiered

from mas.runtime.mcp.provider import MCPToolProvider
from mas.runtime.registry import RuntimeRegistry

SERVERS = Path(__file__).resolve().parents[1] / "servers"
RAW_SERVER = SERVERS / "raw_jsonrpc_server.py"
TYPELESS = {"$schema": "http://json-schema.org/draft-07/schema#"}


def _write_infra(folder: Path, servers: list[dict[str, Any]]) -> Path:
    spec = {"kind": "ToolServerRegistry", "spec": {"servers": servers}}
    path = folder / "infra.yaml"
    path.write_text(json.dumps(spec), encoding="utf-8")  # JSON is YAML
    return path


def _stdio(name: str, script: Path, *args: str, command: str = "python", **extra: Any) -> dict[str, Any]:
    """An infra entry; a ``python`` server runs as a fork of the tests' pre-imported interpreter."""
    run = (
        forked_python(str(script), *args) if command == "python" else {"command": command, "args": [str(script), *args]}
    )
    entry = {"name": name, "protocol": "mcp", "transport": "stdio", **run, "connect_timeout_seconds": 30}
    return {**entry, **extra}


def _runtime_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = python_command("-m", "mas.runtime", *args, pythonpath=os.environ.get("PYTHONPATH"))
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


# --- a schema the SDK rejects (issue 16 item 5) -----------------------------------------------------


def test_tools_without_an_object_type_are_listed_as_sent_with_one_line_and_still_called(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="mas.runtime.mcp_provider")
    config = stdio_config("gitlabish", "--typeless", script=RAW_SERVER)
    with MCPToolProvider(config) as provider:
        tools = provider.list_mcp_tools()
        # Exactly as sent: the generator judges the schema (and warns), not the runtime.
        assert [(t["name"], t["inputSchema"]) for t in tools] == [("echo", TYPELESS), ("shout", TYPELESS)]
        # The SDK learnt the tools too, so a call does not make it list again and fail.
        assert provider.call_tool("shout", {"text": "hi"}).result == "HI"
    (line,) = [r.getMessage() for r in caplog.records if "MCP schema" in r.getMessage()]
    assert line == (
        "MCP server 'gitlabish': 2 tool(s) do not match the MCP schema; listed as sent: "
        "inputSchema has no \"type\": \"object\" ('echo', 'shout')"
    )


def test_the_registry_lists_and_calls_a_typeless_server_and_the_cli_says_one_line(tmp_path: Path) -> None:
    infra = _write_infra(tmp_path, [_stdio("gitlabish", RAW_SERVER, "--typeless")])
    with RuntimeRegistry.from_sources(infra=[infra]) as registry:
        (echo, _) = registry.list_tools()
        assert echo["parameters"] == TYPELESS
        assert registry.call_tool("echo", {"text": "sent"}).result == "sent"
    listed = _runtime_cli(tmp_path, "list", "--infra", "infra.yaml", "-q")
    assert listed.returncode == 0, listed.stderr
    assert listed.stderr.splitlines() == [
        "mas-runtime: warning: mas.runtime.mcp_provider: MCP server 'gitlabish': 2 tool(s) do not match the MCP "
        "schema; listed as sent: inputSchema has no \"type\": \"object\" ('echo', 'shout')"
    ]


# --- server noise (issue 16 item 9) ----------------------------------------------------------------


def test_server_stderr_is_no_warning_and_the_lines_and_their_count_show_under_v(tmp_path: Path) -> None:
    """Issue 30, item 7: a server logging to stderr is normal, so it is said at INFO only (it was one
    warning per server on every run, even with -q, and in users' own programs)."""
    _write_infra(
        tmp_path,
        [
            _stdio("banner", SERVERS / "banner_server.py", prefix="b"),
            _stdio("noisy", RAW_SERVER, "--stderr", "40", prefix="n"),
        ],
    )
    quiet = _runtime_cli(tmp_path, "list", "--infra", "infra.yaml")
    assert quiet.returncode == 0, quiet.stderr
    noise = sorted(line for line in quiet.stderr.splitlines() if "warning" in line)
    assert noise == [  # a stray stdout line is still one warning (mas/runtime/mcp/_stdio.py); stderr is none
        "mas-runtime: warning: mas.runtime.stdio: MCP server 'banner': stdout line 1 is not JSON-RPC, ignored: "
        "'Banner Server v1.0 starting... (this line is not JSON-RPC)'",
    ]
    assert "raw server: log line" not in quiet.stderr and "Traceback" not in quiet.stderr
    assert "on stderr" not in quiet.stderr
    verbose = _runtime_cli(tmp_path, "list", "--infra", "infra.yaml", "-v")
    assert verbose.returncode == 0, verbose.stderr
    shown = [line for line in verbose.stderr.splitlines() if "MCP server 'noisy' stderr: raw server: log line" in line]
    assert len(shown) == 40 and shown[0].endswith("log line 1") and shown[-1].endswith("log line 40")
    assert "MCP server 'noisy' wrote 40 line(s) on stderr" in verbose.stderr  # the count, at INFO


def test_a_server_that_dies_importing_its_code_is_named_with_its_last_stderr_line_and_where_to_read(
    tmp_path: Path,
) -> None:
    """Issue 30, item 13: a published server on mcp 1.x crashes at import on mcp 2.x; the error said only
    "Connection closed". It now quotes the server's last stderr line and points to per-server environments."""
    said = "ImportError: cannot import name FastMCP from mcp.server.fastmcp"
    crash = f"import sys; print({said!r}, file=sys.stderr); sys.exit(1)"
    _write_infra(tmp_path, [{"name": "crashy", "protocol": "mcp", "transport": "stdio", "command": sys.executable,
                             "args": ["-c", crash], "connect_mode": "legacy"}])  # fmt: skip
    listed = _runtime_cli(tmp_path, "list", "--infra", "infra.yaml", "-q")
    assert listed.returncode == 2, listed.stderr
    (line,) = listed.stderr.splitlines()
    assert "could not connect: " in line
    assert "its last stderr line: 'ImportError: cannot import name FastMCP from mcp.server.fastmcp'" in line
    assert line.endswith('(docs/infra.md, "A server in its own environment")'), line


def test_a_server_that_writes_nothing_on_stderr_gets_no_summary(tmp_path: Path) -> None:
    _write_infra(tmp_path, [_stdio("quiet", RAW_SERVER)])
    listed = _runtime_cli(tmp_path, "list", "--infra", "infra.yaml", "-q")
    assert (listed.returncode, listed.stderr) == (0, "")


# --- failure kinds on real servers (issue 16 item 10) -----------------------------------------------


@pytest.fixture(scope="module")
def everything_server() -> Reference:
    """The reference "everything" server (TypeScript SDK, zod) and its Node, installed once (tests/npm_cache.py)."""
    return reference_or_skip()


def _kinds(provider: MCPToolProvider, calls: list[tuple[str, dict[str, Any]]]) -> list[str | None]:
    kinds = []
    for name, arguments in calls:
        envelope = provider.call_tool(name, arguments)
        assert envelope.is_error, (name, envelope.result)
        assert envelope.metadata is not None and "error_kind" in envelope.metadata  # always set
        kinds.append(envelope.error_kind)
    return kinds


def test_zod_validation_and_unknown_tools_of_the_typescript_reference_server(everything_server: Reference) -> None:
    server = everything_server
    config = stdio_config("everything", "stdio", script=server.everything, command=str(server.node), env={})
    with MCPToolProvider(config) as provider:
        calls = [("echo", {"message": 5}), ("echo", {}), ("get-sum", {"a": "x", "b": 1}), ("nope", {})]
        assert _kinds(provider, calls) == [
            "invalid_arguments",
            "invalid_arguments",
            "invalid_arguments",
            "unknown_tool",
        ]
        assert not provider.call_tool("get-sum", {"a": 1, "b": 2}).is_error


@pytest.mark.parametrize("version", tiered(["1.6.0", "1.30.0"], ["1.30.0"]))  # one old-SDK venv in the fast tier
def test_pydantic_validation_and_unknown_tools_of_old_sdk_servers(version: str) -> None:
    from old_sdk import OLD_SDK_SERVER, old_sdk_python

    python = str(old_sdk_python(version))
    # mcp 1.6 does not exit when its stdin closes: the close would wait the default 2 s.
    config = stdio_config(
        "old", script=OLD_SDK_SERVER, connect_mode="legacy", command=python, env={}, exit_grace_seconds=0.2
    )
    with MCPToolProvider(config) as provider:
        calls = [("add", {"a": "x", "b": 1}), ("greet", {}), ("nope", {})]
        assert _kinds(provider, calls) == ["invalid_arguments", "invalid_arguments", "unknown_tool"]


def test_jsonschema_validation_of_the_old_sdks_low_level_server_is_invalid_arguments() -> None:
    """Issue 30, item 6: the mcp 1.x low-level Server's own wording, as a published shell server sends it."""
    from old_sdk import old_sdk_python

    script = Path(__file__).resolve().parents[1] / "servers" / "old_lowlevel_server.py"
    python = str(old_sdk_python("1.30.0"))
    config = stdio_config("ll", script=script, connect_mode="legacy", command=python, env={}, exit_grace_seconds=0.2)
    with MCPToolProvider(config) as provider:
        envelope = provider.call_tool("run", {"command": "ls"})
        assert envelope.is_error and envelope.text == "Input validation error: 'ls' is not of type 'array'"
        assert _kinds(provider, [("run", {"command": "ls"}), ("run", {})]) == ["invalid_arguments"] * 2
        assert not provider.call_tool("run", {"command": ["ls"]}).is_error


def test_the_sample_servers_errors_by_kind_and_an_ordinary_tool_error_stays_one(repo_root: Path) -> None:
    with MCPToolProvider(stdio_config("sample")) as provider:
        # -32602 naming the tool; its own wording for bad arguments is no SDK's, so it stays tool_error;
        # a tool that fails on good arguments is a tool_error.
        calls = [("no_such_tool", {}), ("get_weather", {}), ("notes.delete", {"id": "missing"})]
        assert _kinds(provider, calls) == ["unknown_tool", "tool_error", "tool_error"]


def test_a_generated_package_raises_tool_arguments_error_for_a_real_servers_validation_message(
    tmp_path: Path, everything_server: Reference
) -> None:
    from gen_helpers import generate, import_fresh

    server = _stdio("everything", everything_server.everything, "stdio", command=str(everything_server.node))
    infra = _write_infra(tmp_path, [server])
    assert generate(tmp_path, ["--infra", str(infra), "--out", "out", "--package", "every_tools", "-q"]) == 0
    package = import_fresh(tmp_path / "out", "every_tools")
    with RuntimeRegistry.from_sources(infra=[infra]) as registry:
        tools = package.Tools(registry)
        with pytest.raises(package.ToolArgumentsError):
            tools.everything.results.echo(message=5)  # type: ignore[arg-type]


# --- servers listed side by side (issue 16 item 8) --------------------------------------------------


def _slow_servers(folder: Path, delays: list[float]) -> tuple[Path, list[Path]]:
    records = [folder / f"record{i}.jsonl" for i in range(len(delays))]
    servers = [
        _stdio(f"s{i}", RAW_SERVER, "--delay", str(delay), "--prefix", f"s{i}", "--record", str(record),
               connect_mode="legacy")
        for i, (delay, record) in enumerate(zip(delays, records, strict=True))
    ]  # fmt: skip
    return _write_infra(folder, servers), records


def _times(record: Path) -> tuple[float, float]:
    """When the server started, and when it was asked for its tools."""
    lines = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    started = next(line["time"] for line in lines if line.get("started"))
    listed = next(line["time"] for line in lines if line.get("method") == "tools/list")
    return started, listed


@pytest.mark.parametrize("concurrency", ["1", None])
def test_the_registry_lists_servers_side_by_side_in_a_fixed_order(
    concurrency: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mas.runtime.side_by_side import ENV_LIMIT

    if concurrency is None:
        monkeypatch.delenv(ENV_LIMIT, raising=False)
    else:
        monkeypatch.setenv(ENV_LIMIT, concurrency)
    # The first server is the slowest: it still comes first. Side by side, the delays are what keeps
    # every server unlisted until all have started; one after the other, only their order matters.
    delays = [0.2, 0.1, 0.1, 0.1] if concurrency == "1" else [3.0, 1.5, 1.5, 1.5]
    infra, records = _slow_servers(tmp_path, delays)
    with RuntimeRegistry.from_sources(infra=[infra]) as registry:
        names = [e["name"] for e in registry.list_tools()]
    assert names == [f"s{i}_{tool}" for i in range(4) for tool in ("echo", "shout")]
    times = [_times(record) for record in records]
    if concurrency == "1":  # one after the other: each starts once the one before was listed
        assert all(times[i + 1][0] > times[i][1] for i in range(3)), times
    else:  # all started before any could answer
        assert max(started for started, _ in times) < min(listed for _, listed in times), times


def test_generate_writes_the_same_lock_and_package_whatever_the_order_servers_answer_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gen_helpers import generate, tree

    from mas.runtime.side_by_side import ENV_LIMIT

    outputs = []
    for concurrency, delays in (("1", [0.0, 0.0, 0.0]), ("8", [2.0, 1.0, 0.0])):
        folder = tmp_path / f"run{concurrency}"
        folder.mkdir()
        _slow_servers(folder, delays)
        monkeypatch.setenv(ENV_LIMIT, concurrency)
        assert generate(folder, ["--infra", "infra.yaml", "--out", "out", "--package", "pkg", "-q"]) == 0
        outputs.append(((folder / "toolgen.lock.json").read_bytes(), tree(folder / "out")))
    assert outputs[0] == outputs[1]


def test_a_failing_server_among_several_is_reported_first_in_order_and_the_rest_are_closed(tmp_path: Path) -> None:
    from codegen.errors import GenerateError
    from codegen.sources import parse_infra, read_live

    good = _stdio("good", RAW_SERVER, "--delay", "1")
    broken = {**_stdio("broken", SERVERS / "banner_server.py", "--garbage"), "connect_timeout_seconds": 2}
    gone = {**_stdio("gone", tmp_path / "missing.py"), "connect_timeout_seconds": 5}
    infra = _write_infra(tmp_path, [good, broken, gone])
    with pytest.raises(GenerateError) as caught:
        read_live(parse_infra([infra]), tmp_path / "toolgen.lock.json")
    assert "cannot list MCP server 'broken'" in str(caught.value)  # config order, not the quickest to fail


def test_the_concurrency_limit_is_checked() -> None:
    import os

    from mas.runtime.side_by_side import ENV_LIMIT, limit, map_side_by_side

    assert map_side_by_side(lambda n: n * n, list(range(20)), max_workers=3) == [n * n for n in range(20)]
    for bad in ("0", "many"):
        os.environ[ENV_LIMIT] = bad
        try:
            with pytest.raises(ValueError, match=ENV_LIMIT):
                limit()
        finally:
            del os.environ[ENV_LIMIT]
