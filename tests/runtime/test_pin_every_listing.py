"""``pin: refuse`` holds for every listing the runtime acts on, not only the first (issue 17, item 13).

``tests/servers/shifty_server.py`` (stdio) serves ``get`` read-only until its state file says
``v2``; then ``get`` is destructive and takes ``force``. The lock is made from the v1 listing.
The server records each call it receives, so a test can prove that a refused call was never sent.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import REPO
from prefork import python_args

from codegen.lock import render_lock
from mas.runtime.infra import load_infra
from mas.runtime.mcp.provider import MCPToolProvider
from mas.runtime.registry import RuntimeRegistry

SERVER = REPO / "tests" / "servers" / "shifty_server.py"


#: A fork of the pre-imported interpreter (tests/prefork.py) running the server.
ARGS = json.dumps([*python_args(str(SERVER), pythonpath=None), "--state", "state"])


def _infra(folder: Path, pin: str) -> Path:
    path = folder / "infra.yaml"
    path.write_text(
        "kind: ToolServerRegistry\nspec:\n  servers:\n    - name: shifty\n      protocol: mcp\n"
        f"      transport: stdio\n      command: python\n      args: {ARGS}\n"
        f"      cwd: .\n      connect_timeout_seconds: 20\n      pin: {pin}\n      lock: lock.json\n"
    )
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A lock of the v1 listing, made from exactly what the provider lists."""
    (config,) = load_infra(_infra(tmp_path, "refuse"))
    with MCPToolProvider(config) as provider:
        (tmp_path / "lock.json").write_text(render_lock({"shifty": provider.list_mcp_tools()}))
    return tmp_path


def _received(folder: Path) -> list[dict[str, Any]]:
    calls = folder / "state.calls"
    return [json.loads(line) for line in calls.read_text().splitlines()] if calls.exists() else []


def _refused(envelope: Any) -> bool:
    return bool(envelope.is_error and (envelope.metadata or {}).get("reason") == "pinned")


def test_a_tool_that_changed_across_a_reconnect_is_refused_and_never_sent(folder: Path) -> None:
    with RuntimeRegistry.from_sources(infra=[folder / "infra.yaml"]) as registry:
        ok = registry.call_tool("get", {"id": "a"}, timeout_seconds=10)
        assert not ok.is_error, ok.result
        (folder / "state").write_text("v2")  # the server will come back changed
        died = registry.call_tool("exit", {}, timeout_seconds=10)
        assert (died.metadata or {}).get("error_kind") == "unavailable"
        forced = registry.call_tool("get", {"id": "a", "force": True}, timeout_seconds=10)
        assert _refused(forced), forced
        assert forced.metadata is not None and forced.metadata["pointer"].startswith("/")
        assert "refused: it differs from the lock lock.json at /" in str(forced.result)
    # Only the first call reached a server; the forced one was refused before it was sent.
    assert [c["arguments"] for c in _received(folder)] == [{"id": "a"}]


def test_a_tool_list_changed_notification_is_checked_before_the_next_call(folder: Path) -> None:
    with RuntimeRegistry.from_sources(infra=[folder / "infra.yaml"]) as registry:
        assert not registry.call_tool("get", {"id": "a"}, timeout_seconds=10).is_error
        shifted = registry.call_tool("shift", {}, timeout_seconds=10)
        assert not shifted.is_error, shifted.result
        deadline = time.monotonic() + 5  # the notification may arrive just after the answer
        forced = registry.call_tool("get", {"id": "b", "force": True}, timeout_seconds=10)
        while not _refused(forced) and time.monotonic() < deadline:
            time.sleep(0.1)
            forced = registry.call_tool("get", {"id": "c", "force": True}, timeout_seconds=10)
        assert _refused(forced), forced
    assert [c["arguments"] for c in _received(folder)][:1] == [{"id": "a"}]
    assert all("force" not in c["arguments"] for c in _received(folder))


def test_a_server_that_comes_back_as_locked_is_called_again(folder: Path) -> None:
    (folder / "state").write_text("v2")
    with RuntimeRegistry.from_sources(infra=[folder / "infra.yaml"]) as registry:
        assert _refused(registry.call_tool("get", {"id": "a"}, timeout_seconds=10))
        (folder / "state").write_text("v1")
        registry.call_tool("exit", {}, timeout_seconds=10)
        # The next call reconnects, and the new connection's listing is checked again.
        assert not registry.call_tool("ping", {}, timeout_seconds=10).is_error
        again = registry.call_tool("get", {"id": "b"}, timeout_seconds=10)
        assert not again.is_error, again.result  # the reconnect's listing matches the lock again
    assert [c["arguments"] for c in _received(folder)] == [{"id": "b"}]


def test_pin_warn_calls_a_tool_that_changed_across_a_reconnect_after_one_warning(
    folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _infra(folder, "warn")
    with RuntimeRegistry.from_sources(infra=[folder / "infra.yaml"]) as registry:
        assert not registry.call_tool("get", {"id": "a"}, timeout_seconds=10).is_error
        (folder / "state").write_text("v2")
        registry.call_tool("exit", {}, timeout_seconds=10)
        assert not registry.call_tool("get", {"id": "b", "force": True}, timeout_seconds=10).is_error
    warnings = [r.getMessage() for r in caplog.records if r.name == "mas.runtime.pinning"]
    assert len(warnings) == 1 and "tool 'get' (server 'shifty'): it differs from the lock" in warnings[0]
