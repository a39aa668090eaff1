"""``cancel_event`` ends the wait for in-process tools and skills, as ``timeout_seconds`` does (issue 17).

Through the registry, as an agent calls: a local ``ToolContract`` and a YAML skill whose handlers
block for 30 s; the event is set from another thread (``threading.Event``) or task
(``asyncio.Event``) after a moment, and the call must come back ``cancelled`` within a second.
"""

from __future__ import annotations

import asyncio
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mas.runtime.contracts.tool_contract import ToolContract, ToolResultEnvelope
from mas.runtime.registry import RuntimeRegistry


class Blocking(ToolContract):
    name = "blocking"
    description = "Blocks until released."
    #: Set when a test ends, so its blocked thread ends too (a fresh one per test).
    release = threading.Event()

    def execute(self, **kwargs: Any) -> str:
        type(self).release.wait(30)
        return "finished"


HANDLERS = """
import asyncio
import threading

RELEASE = threading.Event()

def block():
    RELEASE.wait(30)
    return "finished"

async def ablock():
    await asyncio.sleep(30)
    return "finished"
"""


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RuntimeRegistry]:
    (tmp_path / "cancel_handlers.py").write_text(textwrap.dedent(HANDLERS), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    docs = [
        f"kind: Tool\nmetadata:\n  name: {name}\nspec:\n  description: {name}\n  parameters: {{type: object}}\n"
        f"  handler: cancel_handlers:{handler}\n"
        for name, handler in (("skill_block", "block"), ("skill_ablock", "ablock"))
    ]
    (tmp_path / "tools.yaml").write_text("---\n".join(docs), encoding="utf-8")
    Blocking.release = threading.Event()
    with RuntimeRegistry.from_sources(tools=[tmp_path / "tools.yaml"], local=[Blocking]) as built:
        yield built
    _release()
    sys.modules.pop("cancel_handlers", None)


def _release() -> None:
    Blocking.release.set()
    sys.modules["cancel_handlers"].RELEASE.set()


def _cancelled(envelope: ToolResultEnvelope) -> bool:
    return envelope.is_error and (envelope.metadata or {}).get("error_kind") == "cancelled"


@pytest.mark.parametrize("tool", ["blocking", "skill_block", "skill_ablock"])
def test_a_set_cancel_event_ends_a_sync_call_at_once(registry: RuntimeRegistry, tool: str) -> None:
    event = threading.Event()
    threading.Timer(0.3, event.set).start()
    start = time.monotonic()
    envelope = registry.call_tool(tool, {}, cancel_event=event)
    took = time.monotonic() - start
    assert _cancelled(envelope), envelope
    assert envelope.result == f"tool {tool!r} was cancelled by the caller (cancel_event)"
    assert 0.25 < took < 5, took  # a cancel that did not work waits out the 30 s block


@pytest.mark.parametrize("tool", ["blocking", "skill_block", "skill_ablock"])
def test_a_set_cancel_event_ends_an_async_call_at_once(registry: RuntimeRegistry, tool: str) -> None:
    async def run() -> tuple[ToolResultEnvelope, float]:
        event = asyncio.Event()
        asyncio.get_running_loop().call_later(0.3, event.set)
        start = time.monotonic()
        envelope = await registry.acall_tool(tool, {}, cancel_event=event)
        took = time.monotonic() - start
        _release()  # asyncio.run waits for its worker threads: let the abandoned handler end
        return envelope, took

    envelope, took = asyncio.run(run())
    assert _cancelled(envelope), envelope
    assert 0.25 < took < 5, took  # a cancel that did not work waits out the 30 s block


def test_an_event_set_before_the_call_cancels_it_before_it_starts(registry: RuntimeRegistry) -> None:
    event = threading.Event()
    event.set()
    envelope = registry.call_tool("skill_block", {}, cancel_event=event)
    assert _cancelled(envelope) and envelope.result == "tool 'skill_block' was cancelled before it started"


def test_an_unset_event_changes_nothing_and_the_timeout_still_applies(registry: RuntimeRegistry) -> None:
    event = threading.Event()
    start = time.monotonic()
    envelope = registry.call_tool("blocking", {}, cancel_event=event, timeout_seconds=0.3)
    assert (envelope.metadata or {}).get("error_kind") == "timeout" and time.monotonic() - start < 5
