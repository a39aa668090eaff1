"""The handshake against real servers: ``server/discover`` first, ``initialize`` on any unusable answer.

Servers: the repo's sample server (mcp 2.3, modern), FastMCP servers on the mcp 1.x SDK in their
own cached venvs (tests/old_sdk.py), and a hand-written server that answers ``server/discover``
badly on purpose (tests/servers/raw_jsonrpc_server.py).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from gen_helpers import import_fresh, toolgen_in_process
from mcp.client import session as mcp_session
from mcp.shared.exceptions import MCPError
from mcp_helpers import stdio_config
from old_sdk import OLD_SDK_SERVER, old_sdk_python
from tiers import tiered

from mas.runtime.config import MCPServerConfig
from mas.runtime.infra import load_infra
from mas.runtime.mcp import _session as _mcp_session
from mas.runtime.mcp._session import CLIENT_INFO, falls_back
from mas.runtime.mcp.provider import MCPToolProvider
from mas.runtime.registry import RuntimeRegistry

SERVERS = Path(__file__).resolve().parents[1] / "servers"
RAW_SERVER = SERVERS / "raw_jsonrpc_server.py"
STDERR_LOGGER = "mas.runtime.server_stderr"


def _old_infra(folder: Path, version: str, mode: str | None = None, *args: str) -> Path:
    python = old_sdk_python(version)
    mode_line = f"      connect_mode: {mode}\n" if mode else ""
    infra = folder / "infra.yaml"
    infra.write_text(
        "kind: ToolServerRegistry\n"
        "spec:\n"
        "  servers:\n"
        "    - name: old\n"
        "      protocol: mcp\n"
        "      transport: stdio\n"
        f"      command: {python}\n"
        f"      args: [{json.dumps(str(OLD_SDK_SERVER))}{''.join(', ' + json.dumps(a) for a in args)}]\n"
        "      connect_timeout_seconds: 30\n"
        # mcp 1.6 does not exit when its stdin closes: each close would wait the default 2 s.
        "      exit_grace_seconds: 0.2\n" + mode_line,
        encoding="utf-8",
    )
    return infra


def _raw(discover: str, record: Path, *extra: str, **overrides: Any) -> MCPServerConfig:
    return stdio_config("raw", "--discover", discover, "--record", str(record), *extra, script=RAW_SERVER, **overrides)


def _requests(record: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if "method" in line]


def _methods(record: Path) -> list[str]:
    return [line["method"] for line in _requests(record)]


# --- mcp 1.x servers ------------------------------------------------------------------------------


@pytest.mark.slow  # mcp 1.6 never answers server/discover: the probe waits out the SDK's bound
@pytest.mark.parametrize("version", tiered(["1.6.0", "1.30.0"], ["1.30.0"]))  # one old-SDK venv in the fast tier
def test_the_registry_calls_an_old_sdk_server_with_the_default_handshake(
    version: str,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The SDK waits DISCOVER_TIMEOUT_SECONDS (10 s) for the probe. A bound just over the runtime's
    # "slow probe" threshold proves the same (the wait, the fallback, the hint) in under half the time.
    monkeypatch.setattr(mcp_session, "DISCOVER_TIMEOUT_SECONDS", _mcp_session._SLOW_PROBE_SECONDS + 1)
    infra = _old_infra(tmp_path, version, None, "--noisy")
    caplog.set_level(logging.WARNING)
    caplog.set_level(logging.INFO, logger=STDERR_LOGGER)  # the stderr summary is an info line (issue 30)
    with RuntimeRegistry.from_sources(infra=[infra]) as registry:
        assert sorted(e["name"] for e in registry.list_tools()) == ["add", "client_info", "greet"]
        added = registry.call_tool("add", {"a": 2, "b": 3})
        assert not added.is_error, added.result
        assert "5" in json.dumps(added.result)
        greeted = registry.call_tool("greet", {"name": "Ada"})
        assert "Hello, Ada!" in json.dumps(greeted.result)
    # The server's own stderr (its banner, and mcp 1.6's 100-line validation dump) never reaches
    # ours; one line says how much there was.
    err = capfd.readouterr().err
    assert "Failed to validate" not in err and "start-up line" not in err and "Traceback" not in err
    summaries = [r.getMessage() for r in caplog.records if r.name == STDERR_LOGGER and " wrote " in r.getMessage()]
    assert len(summaries) == 1 and "MCP server 'old' wrote" in summaries[0]
    assert all(r.levelno <= logging.INFO for r in caplog.records if r.name == STDERR_LOGGER)
    hints = [r.getMessage() for r in caplog.records if "connect_mode: legacy" in r.getMessage()]
    # Only a server that never answers the probe costs time, and only then does the user hear of it.
    assert len(hints) == (1 if version == "1.6.0" else 0)


@pytest.mark.parametrize("version", tiered(["1.6.0", "1.30.0"], ["1.30.0"]))  # one old-SDK venv in the fast tier
def test_connect_mode_legacy_sends_only_initialize_and_is_quick(
    version: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (config,) = load_infra(_old_infra(tmp_path, version, "legacy"))
    assert config.connect_mode == "legacy"
    caplog.set_level(logging.INFO, logger="mas.runtime.mcp_provider")
    with MCPToolProvider(config) as provider:
        assert [t["name"] for t in provider.list_mcp_tools()] == ["add", "greet", "client_info"]
        info = provider.call_tool("client_info", {})
    # No probe waited out or refused (mcp 1.6 would cost 10 s): the first connection was the one.
    assert not [r for r in caplog.records if "server/discover" in r.getMessage()]
    # The client says who it is: toolgen's runtime and its version, not the SDK's "mcp"/"0.1.0".
    assert json.loads(info.content[0]["text"]) == {"name": "toolgen", "version": CLIENT_INFO.version}
    assert CLIENT_INFO.name == "toolgen" and CLIENT_INFO.version != ""


@pytest.mark.slow  # builds a package from a live 1.x server, twice
@pytest.mark.parametrize("version", tiered(["1.6.0", "1.30.0"], ["1.30.0"]))  # one old-SDK venv in the fast tier
def test_generate_infra_from_an_old_sdk_server_is_quiet_and_its_package_answers(
    version: str, tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # In this process, so the SDK's 10 s probe bound can be shortened as in the test above; the
    # server is still a process whose stderr must reach neither toolgen's output nor our fd 2.
    monkeypatch.setattr(mcp_session, "DISCOVER_TIMEOUT_SECONDS", _mcp_session._SLOW_PROBE_SECONDS + 1)
    infra = _old_infra(tmp_path, version, None, "--noisy")
    args = ["--infra", str(infra), "--out", "out", "--package", "old_tools"]
    run = toolgen_in_process(tmp_path, *args)
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    # Progress (and for mcp 1.6, which never answers the probe, the hint to skip it): no 95-line
    # "Failed to validate request" dump, no banner, no traceback, and no warning that the server
    # wrote on stderr (issue 30, item 7: normal for a server, said at INFO only).
    assert "Failed to validate" not in run.stderr and "start-up line" not in run.stderr
    assert "Traceback" not in run.stderr and len(lines) <= 7, run.stderr
    hints = [line for line in lines if "connect_mode: legacy" in line]
    assert len(hints) == (1 if version == "1.6.0" else 0), run.stderr
    assert [line for line in lines if "stderr" in line] == [], run.stderr
    # -v shows the server's stderr whatever the handshake: `connect_mode: legacy` spares mcp 1.6's
    # 10 s probe a second time (the wait and its hint are proved by the run above).
    _old_infra(tmp_path, version, "legacy", "--noisy")
    verbose = toolgen_in_process(tmp_path, *args, "-v")
    assert verbose.returncode == 0, verbose.stderr
    assert "MCP server 'old' stderr: old-sdk server: start-up line 1 of 3" in verbose.stderr  # -v shows them
    assert "MCP server 'old' wrote " in verbose.stderr  # and their count (banner and request logs)
    assert "start-up line" not in capfd.readouterr().err  # never straight from the server to fd 2
    package = import_fresh(tmp_path / "out", "old_tools")
    # The call needs no probe: `connect_mode: legacy` (the hint's advice) spares mcp 1.6's 10 s wait.
    legacy = _old_infra(tmp_path, version, "legacy")
    with RuntimeRegistry.from_sources(infra=[legacy]) as registry:
        tools = package.Tools(registry)
        added = tools.old.add(a=40, b=2)
        if version == "1.6.0":  # no output schemas before mcp 1.10: the value is text content
            assert [block.text for block in added.content] == ["42"]
        else:  # FastMCP wraps a plain value as {"result": ...} (unwrapped where the generator does)
            assert getattr(added, "result", added) == 42


# --- what server/discover may answer --------------------------------------------------------------


@pytest.mark.parametrize("answer", ["empty", "invalid", "error", "close"])
def test_any_unusable_discover_answer_falls_back_to_initialize(answer: str, tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    with MCPToolProvider(_raw(answer, record)) as provider:
        assert [t["name"] for t in provider.list_mcp_tools()] == ["echo", "shout"]
        assert provider.call_tool("shout", {"text": "hi"}).result == "HI"
    methods = _methods(record)
    assert methods[0] == "server/discover"
    assert methods[1:] == ["initialize", "notifications/initialized", "tools/list", "tools/call"]
    # The clientInfo the server got, in the probe's _meta and in initialize.
    first, second = (line["params"] for line in _requests(record)[:2])
    assert first["_meta"]["io.modelcontextprotocol/clientInfo"]["name"] == "toolgen"
    assert second["clientInfo"] == {"name": "toolgen", "title": CLIENT_INFO.title, "version": CLIENT_INFO.version}


def test_a_server_that_closes_on_discover_is_reached_on_a_new_connection_and_later_ones_skip_the_probe(
    tmp_path: Path,
) -> None:
    record = tmp_path / "record.jsonl"
    with MCPToolProvider(_raw("close", record)) as provider:
        provider.list_mcp_tools()
        assert provider._keeper.mode == "legacy"  # learnt: a reconnect sends initialize straight away
        provider._keeper._conn.broken = True  # type: ignore[union-attr]
        assert provider.call_tool("echo", {"text": "again"}).result == "again"
    assert _methods(record).count("server/discover") == 1
    assert _methods(record).count("initialize") == 2


def test_a_connect_that_times_out_on_an_unanswered_probe_names_the_way_round(tmp_path: Path) -> None:
    from mas.runtime.mcp.provider import ToolServerError

    record = tmp_path / "record.jsonl"
    # The raw server is stdlib-only and forked: it is up at once, and the bound runs out on the probe.
    with MCPToolProvider(_raw("ignore", record, connect_timeout_seconds=1.5)) as provider:
        with pytest.raises(ToolServerError) as caught:
            provider.list_mcp_tools()
    assert str(caught.value) == (
        "MCP server 'raw': connect + initialize timed out after 1.5 s (server/discover got no answer; "
        "a server on the mcp 1.x SDK needs `connect_mode: legacy`)"
    )


def test_connect_mode_legacy_never_sends_discover(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    with MCPToolProvider(_raw("error", record, connect_mode="legacy")) as provider:
        provider.list_mcp_tools()
    assert "server/discover" not in _methods(record)


@pytest.mark.parametrize("mode", ["auto", "2026-07-28"])
def test_the_modern_sample_server_is_reached_by_discover_or_a_pinned_version(mode: str) -> None:
    with MCPToolProvider(stdio_config("sample", connect_mode=mode)) as provider:
        names = [t["name"] for t in provider.list_mcp_tools()]
        assert "greet" in names
        envelope = provider.call_tool("greet", {"greeting": "Hi"})
        assert not envelope.is_error, envelope.result
        session = provider._keeper._conn.ready.result()  # type: ignore[union-attr]
        assert session.discover_result is not None and session.initialize_result is None


def test_only_a_disjoint_modern_only_server_is_an_incompatibility() -> None:
    data = {"supported": ["2099-01-01"], "requested": "2026-07-28"}
    disjoint = MCPError(types.UNSUPPORTED_PROTOCOL_VERSION, "unsupported", data)
    assert not falls_back(disjoint)
    for exc in (
        MCPError(types.CONNECTION_CLOSED, "Connection closed"),
        MCPError(types.INVALID_PARAMS, "Invalid request parameters"),
        MCPError(types.REQUEST_TIMEOUT, "timed out"),
        TimeoutError(),
        ValueError("bad result"),
        OSError("broken pipe"),
    ):
        assert falls_back(exc), exc


def test_connect_mode_is_checked_by_the_schema_and_names_the_sdk_modes(tmp_path: Path) -> None:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    from mas.runtime.config import ConfigError
    from mas.runtime.yaml_source import load_schema

    allowed = load_schema("mas.runtime", "infra.schema.yaml")["$defs"]["server"]["properties"]["connect_mode"]["enum"]
    assert allowed == ["auto", "legacy", *MODERN_PROTOCOL_VERSIONS]  # the SDK's Client(mode=...) values
    infra = tmp_path / "infra.yaml"
    infra.write_text(
        "kind: ToolServerRegistry\nspec:\n  servers:\n    - name: s\n      protocol: mcp\n"
        "      transport: stdio\n      command: x\n      connect_mode: 2025-06-18\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=r"infra.yaml:8: .*connect_mode"):
        load_infra(infra)  # a handshake-era version is no mode: that is what `legacy` is for
    infra.write_text(infra.read_text(encoding="utf-8").replace("2025-06-18", "2026-07-28"), encoding="utf-8")
    (config,) = load_infra(infra)  # written bare, YAML reads a date: it is still the version
    assert config.connect_mode == "2026-07-28"
