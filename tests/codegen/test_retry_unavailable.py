"""Retries on ``unavailable``, end to end: a generated package, the runtime and a server that dies.

``tests/servers/dies_once_server.py`` kills its process in the middle of the first call; the
provider sees the transport close (``unavailable``) and reconnects on the next call, to a new
process that answers. A read-only and idempotent tool is retried when the caller opts in; a tool
without both hints never is (issue 7: "hints that act"). Nothing is mocked.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from gen_helpers import forked_python, generate, import_fresh
from mcp_helpers import REPO, stdio_config

from mas.runtime.mcp.provider import MCPToolProvider

SCRIPT = REPO / "tests" / "servers" / "dies_once_server.py"


class Counted:
    """Forwards to the provider and counts what was sent (the package sees a ``**kwargs`` callee)."""

    def __init__(self, provider: MCPToolProvider) -> None:
        self.provider = provider
        self.sent: list[str] = []

    def call_tool(self, tool_name: str, arguments: dict[str, Any], **kwargs: Any) -> Any:
        self.sent.append(tool_name)
        return self.provider.call_tool(tool_name, arguments, **kwargs)


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """The package generated from the live server's listing (nothing is called while listing)."""
    root = tmp_path_factory.mktemp("dies_once")
    server = {
        "name": "dies",
        "protocol": "mcp",
        "transport": "stdio",
        **forked_python(str(SCRIPT), "--marker", "unused"),
        "connect_timeout_seconds": 20,
    }
    infra = {"apiVersion": "toolgen/v1", "kind": "ToolServerRegistry", "metadata": {"name": "dies"}}
    (root / "infra.yaml").write_text(yaml.safe_dump({**infra, "spec": {"servers": [server]}}), encoding="utf-8")
    code = generate(root, ["--infra", "infra.yaml", "--out", "out", "--package", "dies_tools", "-q"])
    assert code == 0
    return import_fresh(root / "out", "dies_tools")


@pytest.fixture
def counted(tmp_path: Path) -> Any:
    with MCPToolProvider(stdio_config("dies", "--marker", str(tmp_path / "died"), script=SCRIPT)) as provider:
        yield Counted(provider)


def test_a_read_only_idempotent_tool_is_retried_when_the_server_dies(pkg: ModuleType, counted: Counted) -> None:
    found = pkg.Tools(counted).with_options(retries=1).dies.lookup(key="k")
    assert found.key == "k" and counted.sent == ["lookup", "lookup"]


def test_without_retries_the_failure_is_typed_unavailable(pkg: ModuleType, counted: Counted) -> None:
    with pytest.raises(pkg.ToolUnavailableError) as caught:
        pkg.Tools(counted).dies.lookup(key="k")
    assert caught.value.envelope["metadata"] == {"error_kind": "unavailable"}
    assert not isinstance(caught.value, pkg.ToolCallError) and counted.sent == ["lookup"]
    # The provider reconnects: the next call reaches a new process, which answers.
    assert pkg.Tools(counted).dies.lookup(key="again").key == "again"


def test_a_tool_that_is_not_idempotent_is_never_retried(pkg: ModuleType, counted: Counted) -> None:
    with pytest.raises(pkg.ToolUnavailableError):
        pkg.Tools(counted).with_options(retries=3).dies.append(key="k")
    assert counted.sent == ["append"]


def test_async_retries_follow_the_same_rule(pkg: ModuleType, counted: Counted) -> None:
    class AsyncCounted(Counted):
        async def acall_tool(self, tool_name: str, arguments: dict[str, Any], **kwargs: Any) -> Any:
            self.sent.append(tool_name)
            return await self.provider.acall_tool(tool_name, arguments, **kwargs)

    callee = AsyncCounted(counted.provider)
    found = asyncio.run(pkg.AsyncTools(callee).with_options(retries=2).dies.lookup(key="a"))
    assert found.key == "a" and callee.sent == ["lookup", "lookup"]
