"""End to end: lock the sample server, start it with one tool changed, and watch `toolgen diff`,
`generate --check` and `pin: refuse` / `pin: warn` each report it with the right severity and exit code.

The sample server runs over stdio (a real child process); ``--drift`` changes ``get_weather``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import forked_python, generate

from codegen.cli import main as toolgen_main
from mas.runtime.config import ConfigError, MCPServerConfig
from mas.runtime.mcp.provider import MCPToolProvider
from mas.runtime.registry import RuntimeRegistry

PARAM_REMOVED = "param-removed"
DESCRIBED = "description-rewritten"


def _infra(path: Path, drift: str | None = None, pin: str | None = None) -> Path:
    server = forked_python("-m", "mas.samples.mcp_server", *(["--drift", drift] if drift else []))
    pinning = f"      pin: {pin}\n      lock: lock.json\n" if pin else ""
    path.write_text(
        "kind: ToolServerRegistry\nspec:\n  servers:\n"
        "    - name: sample\n      protocol: mcp\n      transport: stdio\n"
        + "".join(f"      {key}: {json.dumps(value)}\n" for key, value in server.items())
        + f"      connect_timeout_seconds: 20\n{pinning}",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def locked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with lock.json and out/pkg generated from the unchanged sample server."""
    root = tmp_path_factory.mktemp("drift")
    _infra(root / "good.yaml")
    for drift in (PARAM_REMOVED, DESCRIBED):
        _infra(root / f"{drift}.yaml", drift)
        for pin in ("refuse", "warn"):
            _infra(root / f"{drift}-{pin}.yaml", drift, pin)
    _infra(root / "good-refuse.yaml", None, "refuse")
    mp = pytest.MonkeyPatch()
    try:
        assert generate(root, _args("good.yaml"), mp) == 0
    finally:
        mp.undo()
    return root


def _args(infra: str) -> list[str]:
    return ["--infra", infra, "--lock", "lock.json", "--out", "out", "--package", "pkg"]


def _toolgen(
    root: Path, argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    monkeypatch.chdir(root)
    code = toolgen_main(argv)
    return code, capsys.readouterr().out


class CountingProvider(MCPToolProvider):
    """The real MCP provider, counting the calls that reach the server."""

    sent: list[str] = []

    def call_tool(self, tool_name: str, arguments: Any, **kwargs: Any) -> Any:
        CountingProvider.sent.append(tool_name)
        return super().call_tool(tool_name, arguments, **kwargs)


def _registry(root: Path, infra: str) -> RuntimeRegistry:
    CountingProvider.sent = []
    return RuntimeRegistry.from_sources(infra=[root / infra], mcp_factory=CountingProvider)


# --- a parameter removed: breaking -----------------------------------------------------------------
def test_diff_reports_a_removed_parameter_as_breaking(
    locked: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _toolgen(
        locked, ["diff", "--infra", f"{PARAM_REMOVED}.yaml", "--lock", "lock.json"], monkeypatch, capsys
    )
    assert code == 3, out
    assert "server 'sample': tool 'get_weather'" in out
    assert "breaking" in out and "parameter 'units' removed" in out and "/inputSchema/properties/units" in out
    assert out.rstrip().endswith("1 change(s): 1 breaking, 0 review, 0 compatible")

    code, out = _toolgen(
        locked, ["diff", "--json", "--infra", f"{PARAM_REMOVED}.yaml", "--lock", "lock.json"], monkeypatch, capsys
    )
    assert code == 3
    (change,) = json.loads(out)["changes"]
    assert change == {
        "source": "sample",
        "tool": "get_weather",
        "severity": "breaking",
        "kind": "param-removed",
        "pointer": "/inputSchema/properties/units",
        "old": {"default": "celsius", "enum": ["celsius", "fahrenheit"], "type": "string"},
        "new": None,
        "message": "parameter 'units' removed",
    }


def test_check_names_the_removed_parameter(
    locked: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lock_before = (locked / "lock.json").read_bytes()
    code, out = _toolgen(locked, ["generate", "--check", *_args(f"{PARAM_REMOVED}.yaml")], monkeypatch, capsys)
    assert code == 1, out
    lines = out.splitlines()
    assert "toolgen: server 'sample': tool 'get_weather': parameter 'units' removed (breaking)" in lines
    assert "toolgen: 1 change(s): 1 breaking, 0 review, 0 compatible" in lines
    assert (locked / "lock.json").read_bytes() == lock_before  # --check writes nothing


def test_writing_a_new_lock_prints_the_changes(
    locked: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("lock.json", f"{PARAM_REMOVED}.yaml"):
        (tmp_path / name).write_bytes((locked / name).read_bytes())
    code, out = _toolgen(tmp_path, ["generate", *_args(f"{PARAM_REMOVED}.yaml")], monkeypatch, capsys)
    assert code == 0, out
    assert out.splitlines()[:2] == [
        "toolgen: server 'sample': tool 'get_weather': parameter 'units' removed (breaking)",
        "toolgen: 1 change(s): 1 breaking, 0 review, 0 compatible",
    ]
    new_lock = json.loads((tmp_path / "lock.json").read_text())
    old_lock = json.loads((locked / "lock.json").read_text())
    changed = {
        n for n, h in new_lock["servers"]["sample"]["hashes"].items() if old_lock["servers"]["sample"]["hashes"][n] != h
    }
    assert changed == {"get_weather"}


def test_pin_refuse_fails_the_changed_tool_and_sends_nothing(locked: Path) -> None:
    with _registry(locked, f"{PARAM_REMOVED}-refuse.yaml") as registry:
        refused = registry.call_tool("get_weather", {"city": "Paris"})
        assert refused.is_error
        assert refused.metadata == {
            "reason": "pinned",
            "tool": "get_weather",
            "server": "sample",
            "pointer": "/inputSchema/properties/units",
            "lock": "lock.json",
            "error_kind": "unavailable",
        }
        assert "'get_weather'" in refused.text and "/inputSchema/properties/units" in refused.text
        assert asyncio.run(registry.acall_tool("get_weather", {"city": "Paris"})).metadata == refused.metadata
        # Unchanged tools still work; only they reached the server.
        assert registry.call_tool("whoami", {}).is_error is False
    assert CountingProvider.sent == ["whoami"]


# --- a description rewritten: review ---------------------------------------------------------------
def test_diff_reports_a_rewritten_description_for_review(
    locked: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["diff", "--infra", f"{DESCRIBED}.yaml", "--lock", "lock.json"]
    code, out = _toolgen(locked, argv, monkeypatch, capsys)
    assert code == 1, out  # a change, but below the default --fail-on breaking
    assert "review" in out and "tool description changed" in out and "/description" in out
    code, _ = _toolgen(locked, [*argv, "--fail-on", "review"], monkeypatch, capsys)
    assert code == 3


def test_check_names_the_rewritten_description(
    locked: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _toolgen(locked, ["generate", "--check", *_args(f"{DESCRIBED}.yaml")], monkeypatch, capsys)
    assert code == 1, out
    assert "toolgen: server 'sample': tool 'get_weather': tool description changed (review)" in out.splitlines()
    assert "toolgen: 1 change(s): 0 breaking, 1 review, 0 compatible" in out.splitlines()


def test_pin_refuse_fails_a_rewritten_description(locked: Path) -> None:
    with _registry(locked, f"{DESCRIBED}-refuse.yaml") as registry:
        refused = registry.call_tool("get_weather", {"city": "Paris"})
        assert refused.is_error and refused.metadata is not None
        assert refused.metadata["error_kind"] == "unavailable" and refused.metadata["pointer"] == "/description"
    assert CountingProvider.sent == []


def test_pin_warn_logs_one_line_and_calls(locked: Path, caplog: pytest.LogCaptureFixture) -> None:
    with (
        caplog.at_level(logging.WARNING, logger="mas.runtime.pinning"),
        _registry(locked, f"{DESCRIBED}-warn.yaml") as registry,
    ):
        first = registry.call_tool("get_weather", {"city": "Paris"})
        second = registry.call_tool("get_weather", {"city": "Oslo"})
    assert not first.is_error and not second.is_error
    assert CountingProvider.sent == ["get_weather", "get_weather"]
    warnings = [r.getMessage() for r in caplog.records if r.name == "mas.runtime.pinning"]
    assert warnings == ["tool 'get_weather' (server 'sample'): it differs from the lock lock.json at /description; "
                        "calling anyway (pin: warn)"]  # fmt: skip


# --- no change, and bad locks ----------------------------------------------------------------------
def test_unchanged_server_is_clean_everywhere(
    locked: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _toolgen(locked, ["diff", "--infra", "good.yaml", "--lock", "lock.json"], monkeypatch, capsys)
    assert (code, out) == (0, "no changes\n")
    with _registry(locked, "good-refuse.yaml") as registry:
        assert not registry.call_tool("get_weather", {"city": "Paris"}).is_error


def test_a_lock_of_an_unknown_version_is_refused(
    locked: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads((locked / "lock.json").read_text())
    data["toolgen_snapshot"] = 99
    (tmp_path / "lock.json").write_text(json.dumps(data))
    (tmp_path / "pinned.yaml").write_text((locked / "good-refuse.yaml").read_text())
    monkeypatch.chdir(tmp_path)
    assert toolgen_main(["generate", "--offline", *_args("pinned.yaml")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "toolgen: error: lock.json: /toolgen_snapshot: unknown lock format version 99 (this toolgen reads 1, 2, 3); "
        "upgrade toolgen"
    )
    with pytest.raises(ConfigError, match=r"lock 'lock.json': /toolgen_snapshot: unknown lock format version 99"):
        RuntimeRegistry.from_sources(infra=[tmp_path / "pinned.yaml"])


def test_pin_needs_a_lock_path(tmp_path: Path) -> None:
    (tmp_path / "i.yaml").write_text(
        "kind: ToolServerRegistry\nspec:\n  servers:\n    - name: s\n      protocol: mcp\n      transport: stdio\n"
        "      command: python\n      pin: refuse\n"
    )
    with pytest.raises(ConfigError, match="needs `lock`"):
        RuntimeRegistry.from_sources(infra=[tmp_path / "i.yaml"])


def test_pin_off_is_the_default(tmp_path: Path) -> None:
    from mas.runtime.infra import load_infra

    (tmp_path / "i.yaml").write_text(
        "kind: ToolServerRegistry\nspec:\n  servers:\n    - name: s\n      protocol: mcp\n      transport: stdio\n"
        "      command: python\n    - name: t\n      protocol: mcp\n      transport: stdio\n      command: python\n"
        "      pin: off\n"
    )
    configs: list[MCPServerConfig] = load_infra(tmp_path / "i.yaml")
    assert [c.pin for c in configs] == ["off", "off"]
