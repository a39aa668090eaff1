"""The contract's edge cases, each a regression case that once failed: option forwarding on the
async path, async ``call_tool``/``execute`` on both paths, ``status`` and ``is_error`` agreeing,
plain dicts as values, skill time limits (``0`` is a limit), advertise keys, config refusals and
a connect timeout reported on time."""

from __future__ import annotations

import asyncio
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from mas.runtime.config import ConfigError
from mas.runtime.contracts.tool_contract import ToolContract, ToolResultEnvelope, ainvoke_call_tool
from mas.runtime.registry import RuntimeRegistry
from mas.runtime.skills import SkillToolProvider
from mas.runtime.yaml_source import load_tool_documents


class Composite(ToolContract):
    """A composite provider whose call_tool declares only ``user``."""

    name = "composite"

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def call_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, user: str = "") -> ToolResultEnvelope:
        self.seen.append({"user": user})
        return ToolResultEnvelope.success(user)


class AsyncCallTool:
    def list_tools(self) -> list[dict[str, Any]]:
        return [{"name": "a", "description": "", "parameters": {"type": "object"}}]

    async def call_tool(self, tool_name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"result": "awaited", "is_error": False}


class AsyncExecute(ToolContract):
    name = "aexec"

    async def execute(self, **kwargs: Any) -> str:
        await asyncio.sleep(0)
        return "awaited"


class NoDescription(ToolContract):
    name = "nodesc"


# 1. the async path follows the forwarding rule
def test_async_path_forwards_only_what_call_tool_declares() -> None:
    tool = Composite()
    envelope = asyncio.run(ainvoke_call_tool(tool, "composite", {}, timeout_seconds=1, user="u"))
    assert ToolResultEnvelope.coerce(envelope).result == "u"
    registry = RuntimeRegistry({"local": tool})
    assert asyncio.run(registry.acall_tool("composite", {}, timeout_seconds=1, user="v")).result == "v"


# 2. coroutines are awaited, never returned as a result
def test_sync_registry_awaits_an_async_call_tool() -> None:
    registry = RuntimeRegistry({"p": AsyncCallTool()})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        envelope = registry.call_tool("a", {})
    assert envelope.result == "awaited" and not envelope.is_error


@pytest.mark.parametrize("path", ["sync", "async"])
def test_async_execute_works_on_both_paths(path: str) -> None:
    registry = RuntimeRegistry({"local": AsyncExecute()})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        if path == "sync":
            envelope = registry.call_tool("aexec", {})
        else:
            envelope = asyncio.run(registry.acall_tool("aexec", {}))
    assert (envelope.status, envelope.result) == ("success", "awaited")


# 3. status and is_error agree; what is an envelope
def test_is_error_alone_makes_status_error() -> None:
    envelope = ToolResultEnvelope.coerce({"is_error": True, "result": "x"})
    assert (envelope.status, envelope.is_error) == ("error", True)


def test_status_error_alone_makes_is_error_true() -> None:
    envelope = ToolResultEnvelope.coerce({"status": "error", "result": "x"})
    assert (envelope.status, envelope.is_error) == ("error", True)


def test_a_plain_status_dict_is_a_value() -> None:
    assert ToolResultEnvelope.coerce({"status": "running"}).result == {"status": "running"}


def test_a_dict_with_non_envelope_keys_is_a_value() -> None:
    assert ToolResultEnvelope.coerce({"is_error": False, "total": 3}).result == {"is_error": False, "total": 3}


# 4. timeouts on sync skills; 0 is not "unset"
def _slow_skill(tmp_path: Path, timeout: float | None = None) -> SkillToolProvider:
    extra = f"  timeout_seconds: {timeout}\n" if timeout is not None else ""
    (tmp_path / "slow.yaml").write_text(
        "apiVersion: toolgen/v1\nkind: Tool\nmetadata:\n  name: slow\nspec:\n  description: sleeps\n"
        "  handler: contract_helpers:sleep_for\n"
        "  parameters:\n    type: object\n    properties:\n      secs: {type: number}\n" + extra,
        encoding="utf-8",
    )
    return SkillToolProvider(load_tool_documents([tmp_path]))


def test_sync_skill_honours_timeout_seconds(tmp_path: Path) -> None:
    skills = _slow_skill(tmp_path)
    started = time.monotonic()
    envelope = RuntimeRegistry({"skills": skills}).call_tool("slow", {"secs": 5.0}, timeout_seconds=0.2)
    assert time.monotonic() - started < 3  # the handler sleeps 5 s
    assert envelope.is_error and envelope.metadata == {"error_kind": "timeout"}


def test_sync_skill_honours_spec_timeout_seconds(tmp_path: Path) -> None:
    skills = _slow_skill(tmp_path, timeout=0.2)
    started = time.monotonic()
    envelope = skills.call_tool("slow", {"secs": 5.0})
    assert time.monotonic() - started < 3 and envelope.metadata == {"error_kind": "timeout"}


def test_timeout_zero_is_not_unset(tmp_path: Path) -> None:
    skills = _slow_skill(tmp_path, timeout=5)
    envelope = asyncio.run(skills.acall_tool("slow", {"secs": 0.3}, timeout_seconds=0))
    assert envelope.metadata == {"error_kind": "timeout"}


# 5. smaller cases
def test_a_tool_without_description_does_not_advertise_the_base_docstring() -> None:
    assert NoDescription().list_tools()[0]["description"] == ""


@pytest.mark.parametrize(
    "data",
    [
        {"status": "weird"},
        {"execution_mode": "later"},
        {"is_error": "yes"},
        {"result_mode": "paper"},
        {"result_type": 3},
        {"metadata": "x"},
        {"session_id": 3},
        {"events": {}},
        {"content": "text"},
    ],
)
def test_from_dict_validates_every_enumerated_key(data: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=next(iter(data))):
        ToolResultEnvelope.from_dict(data)


def test_result_type_none_is_omitted() -> None:
    assert "result_type" not in ToolResultEnvelope(result_type=None).to_dict()  # type: ignore[arg-type]


def test_yaml_read_only_null_means_omit(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(
        "apiVersion: toolgen/v1\nkind: Tool\nmetadata:\n  name: t\nspec:\n  description: d\n"
        "  read_only: null\n  parameters: {type: object}\n",
        encoding="utf-8",
    )
    (definition,) = load_tool_documents([tmp_path])
    entry = definition.to_entry()
    assert "read_only" not in entry and "annotations" not in entry


def test_headers_on_a_stdio_server_are_refused(tmp_path: Path) -> None:
    from mas.runtime.infra import load_infra

    (tmp_path / "i.yaml").write_text(
        "apiVersion: toolgen/v1\nkind: ToolServerRegistry\nmetadata:\n  name: i\nspec:\n  servers:\n"
        "    - name: s\n      protocol: mcp\n      transport: stdio\n      command: python\n"
        "      headers:\n        X-Key: v\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_infra(tmp_path / "i.yaml")
    assert str(caught.value).endswith(
        "i.yaml:7: spec.servers[0]: `headers` are HTTP headers; a stdio server cannot send them "
        "(use `env`, with `env:VAR` for a secret)"
    )


def test_a_connect_timeout_reports_on_time() -> None:
    import sys

    from mcp_helpers import REPO, stdio_config

    from mas.runtime.mcp.provider import MCPToolProvider, ToolServerError

    config = stdio_config(
        "mute", "--mute", script=REPO / "tests" / "servers" / "hang_server.py", connect_timeout_seconds=1.0
    )
    assert sys.executable
    with MCPToolProvider(config) as provider:
        started = time.monotonic()
        with pytest.raises(ToolServerError, match="timed out after 1.0 s"):
            provider.list_tools()
        reported = time.monotonic() - started
    assert reported < 1.6, f"reported after {reported:.2f} s"
