"""Local sources of resources, templates and prompts (``mas/runtime/local_server.py``), through the
registry as an MCP server's are; and ``mas-runtime list`` showing every kind, ``--json --surface``
as one object while ``--json`` alone keeps printing the array of tools."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from mas.runtime.__main__ import main
from mas.runtime.config import ConfigError
from mas.runtime.contracts.server_contract import AsyncServerProvider, ServerProvider, SubscribingProvider
from mas.runtime.local_server import LocalServer
from mas.runtime.registry import RuntimeRegistry
from mas.runtime.subscriptions import ResourceUpdate, SubscriptionError
from mas.samples.local_docs import Notes
from mas.samples.local_tools import WordCount

NOTES = "mas.samples.local_docs:Notes"


class Broken(LocalServer):
    """Handlers that fail in each way the contract names."""

    name: ClassVar[str] = "broken"
    resources: ClassVar[tuple[dict[str, Any], ...]] = (
        {"uri": "b://raises", "name": "raises"},
        {"uri": "b://slow", "name": "slow"},
        {"uri": "b://odd", "name": "odd"},
        {"uri": "b://async", "name": "async"},
    )
    prompts: ClassVar[tuple[dict[str, Any], ...]] = ({"name": "p", "arguments": []},)

    def read(self, uri: str) -> Any:
        if uri == "b://raises":
            raise RuntimeError("disk on fire")
        if uri == "b://slow":
            time.sleep(2)
        if uri == "b://async":
            return self._async_read()
        return object()  # not contents

    async def _async_read(self) -> str:
        await asyncio.sleep(0)
        return "from a coroutine"

    def prompt(self, name: str, arguments: Mapping[str, str]) -> Any:
        return 42


def _text(envelope: Any) -> str:
    assert not envelope.is_error, envelope.result
    text: str = envelope.result["contents"][0]["text"]
    return text


def test_a_local_server_serves_through_the_registry_like_an_mcp_server() -> None:
    with RuntimeRegistry.from_sources(local=[NOTES, "mas.samples.local_tools:WordCount"]) as registry:
        assert registry.surface_providers() == ["notes"]
        assert [t["name"] for t in registry.list_tools()] == ["word_count"]  # tools unaffected
        assert [(r["server"], r["uri"]) for r in registry.list_resources()] == [
            ("notes", "notes://index"),
            ("notes", "notes://readme"),
        ]
        index = registry.read_resource("notes://index")
        assert index.result["contents"][0]["mimeType"] == "application/json"
        assert json.loads(_text(index)) == {"ids": ["welcome"]}
        assert _text(registry.read_resource("notes://readme")).startswith("# Notes")
        assert "in memory" in _text(registry.read_resource("notes://note/welcome"))  # via the template
        assert registry.read_resource("notes://note/nope").error_kind == "unknown_tool"  # KeyError
        assert registry.read_resource("elsewhere://x").error_kind == "unknown_tool"
        got = registry.get_prompt("summarise_note", {"id": "welcome", "words": "5"})
        assert got.result["messages"][0]["content"]["text"].startswith("Summarise this note in at most 5 words")
        assert registry.get_prompt("summarise_note", {}).error_kind == "invalid_arguments"
        assert registry.get_prompt("summarise_note", {"id": 3}).error_kind == "invalid_arguments"  # type: ignore[dict-item]
        assert registry.get_prompt("summarise_note", {"id": "welcome", "x": "y"}).error_kind == "invalid_arguments"
        assert registry.get_prompt("no_such", {}).error_kind == "unknown_tool"
        done = registry.complete({"type": "ref/prompt", "name": "summarise_note"}, "id", "we")
        assert done.result["completion"]["values"] == ["welcome"]

        async def twins() -> list[Any]:
            return [
                await registry.aread_resource("notes://note/welcome"),
                await registry.aget_prompt("summarise_note", {"id": "welcome"}),
                await registry.acomplete({"type": "ref/resource", "uri": "notes://note/{id}"}, "id", ""),
            ]

        read, prompt, completed = asyncio.run(twins())
        assert "in memory" in _text(read) and not prompt.is_error
        assert completed.result["completion"]["values"] == ["welcome"]


def test_handler_failures_are_envelopes_of_one_kind() -> None:
    server = Broken()
    assert isinstance(server, ServerProvider) and isinstance(server, AsyncServerProvider)
    assert isinstance(server, SubscribingProvider)
    raised = server.read_resource("b://raises")
    assert raised.error_kind == "tool_error" and "disk on fire" in raised.text
    assert raised.text.startswith("local server 'broken': resources/read 'b://raises' failed")
    slow = server.read_resource("b://slow", timeout_seconds=0.1)
    assert slow.error_kind == "timeout"
    assert server.read_resource("b://odd").error_kind == "protocol"
    assert server.get_prompt("p").error_kind == "protocol"
    assert _text(server.read_resource("b://async")) == "from a coroutine"
    assert _text(asyncio.run(server.aread_resource("b://async"))) == "from a coroutine"
    assert asyncio.run(server.aread_resource("b://slow", timeout_seconds=0.1)).error_kind == "timeout"
    assert server.complete({"type": "ref/tool"}, "a", "b").error_kind == "invalid_arguments"
    assert server.call_tool("anything", {}).error_kind == "unknown_tool"


def test_a_local_subscription_gets_the_sources_updates_bounded_and_ends_on_close() -> None:
    notes = Notes()
    with RuntimeRegistry({"notes": notes}) as registry:
        with registry.subscribe_resource("notes://index", max_queued=2) as sub:
            for n in range(5):
                notes.add_note(f"n{n}", "text")
            assert sub.dropped == 3
            assert [sub.get(1), sub.get(1), sub.get(0.05)] == [ResourceUpdate("notes", "notes://index")] * 2 + [None]
        notes.add_note("after", "close")
        assert sub.get(0) is None  # closed: nothing more arrives
        with pytest.raises(SubscriptionError) as unknown:
            registry.subscribe_resource("notes://nope", server="notes")
        assert unknown.value.kind == "unknown_tool"

        seen: list[ResourceUpdate] = []
        arrived = threading.Event()

        def record(update: ResourceUpdate) -> None:
            seen.append(update)
            arrived.set()

        registry.subscribe_resource("notes://index", on_update=record)
        notes.add_note("x", "y")
        assert arrived.wait(10) and seen == [ResourceUpdate("notes", "notes://index")]
        lost = registry.subscribe_resource("notes://index")
    with pytest.raises(SubscriptionError) as ended:  # the registry closed its sources
        lost.get(1)
    assert ended.value.kind == "unavailable"


def test_a_local_servers_name_must_be_its_own() -> None:
    class Local(LocalServer):
        name: ClassVar[str] = "local"  # the local tools' provider name

    with pytest.raises(ConfigError, match="local server name 'local' is taken"):
        RuntimeRegistry.from_sources(local=[WordCount, Local])
    with pytest.raises(ConfigError, match="not a ToolContract or LocalServer subclass"):
        RuntimeRegistry.from_sources(local=["mas.samples.local_docs:__all__"])


# --- mas-runtime list ---------------------------------------------------------------------------------


def test_list_shows_resources_templates_and_prompts_and_json_surface_is_one_object(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["list", "-q", "--local", NOTES]) == 0
    out = capsys.readouterr().out
    assert "notes://index   notes     application/json  index" in out
    assert "notes://note/{id}  notes     text/plain  note" in out
    assert "summarise_note  notes     -      id, words?" in out
    assert main(["list", "-q", "--json", "--local", NOTES, "--local", "mas.samples.local_tools:WordCount"]) == 0
    tools = json.loads(capsys.readouterr().out)
    assert [t["name"] for t in tools] == ["word_count"]  # --json alone: the array of tools, as before
    assert main(["list", "-q", "--json", "--surface", "--local", NOTES]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert sorted(whole) == ["prompts", "resource_templates", "resources", "tools"]
    assert [r["uri"] for r in whole["resources"]] == ["notes://index", "notes://readme"]
    assert [t["uriTemplate"] for t in whole["resource_templates"]] == ["notes://note/{id}"]
    assert [(p["name"], p["server"]) for p in whole["prompts"]] == [("summarise_note", "notes")]
