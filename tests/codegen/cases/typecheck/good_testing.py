"""Correct use of the test kit of the package generated from every tools/list capture.

tests/codegen/test_typecheck.py copies this file beside the generated package ``captures`` and runs
mypy --strict and pyright (strict) over both: no checker may complain.
"""

from __future__ import annotations

import asyncio
from typing import assert_type

from captures import AsyncTools, ToolArgumentsError, ToolOutput, Tools
from captures.inputs import TimeGetCurrentTimeInput
from captures.outputs import TimeGetCurrentTimeOutput
from captures.testing import Call, FakeTools, FakeToolsError, Recorder, ToolHandle


def now(args: TimeGetCurrentTimeInput) -> TimeGetCurrentTimeOutput:
    if args["timezone"] == "Mars":
        raise ToolArgumentsError("get_current_time", {"is_error": True, "result": "no such zone"})
    return TimeGetCurrentTimeOutput(timezone=args["timezone"], datetime="2026-01-01T00:00:00Z",
                                    day_of_week="Thursday", is_dst=False)  # fmt: skip


def setters() -> None:
    fake = FakeTools(strict=True, seed=3)
    handle = fake.time.get_current_time
    assert_type(handle, ToolHandle[TimeGetCurrentTimeInput, TimeGetCurrentTimeOutput])
    handle.returns(now({"timezone": "UTC"})).asks("Which zone?", {"type": "object"})
    handle.answers(now).runs_as_task(states=["working", "input_required", "completed"])
    fake.time.convert_time.fails("timeout", message="slow")
    fake.everything.toggle_simulated_logging.returns(ToolOutput())
    value = Tools(fake).time.get_current_time(timezone="UTC")
    assert_type(value, TimeGetCurrentTimeOutput)
    calls = handle.calls
    first: Call[TimeGetCurrentTimeInput] = calls[0]
    assert_type(first.arguments["timezone"], str)
    calls.assert_calls({"timezone": "UTC"})
    handle.calls.assert_called_once_with({"timezone": "UTC"})
    try:
        fake.check()
    except FakeToolsError as exc:
        print(exc.tool, exc.pointer)
    replayed = FakeTools.replay("cassette.json")
    assert_type(replayed, FakeTools)
    with Recorder(fake, "cassette.json") as recorder:
        Tools(recorder).time.get_current_time(timezone="UTC")
    fake.with_listing_change("get_current_time", description="changed").list_tools()


async def async_use() -> TimeGetCurrentTimeOutput:
    return await AsyncTools(FakeTools()).time.get_current_time(timezone="UTC")


if __name__ == "__main__":
    setters()
    print(asyncio.run(async_use()))
