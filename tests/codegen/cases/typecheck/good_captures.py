"""Correct use of the package generated from every tools/list capture: no checker may complain.

tests/codegen/test_typecheck.py copies this file beside the generated package ``captures`` and runs
mypy --strict and pyright (strict) over both.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, Literal, assert_type

from captures import (
    NOT_GIVEN,
    TOOLS,
    AsyncTools,
    CallOptions,
    ToolCallError,
    ToolEnvelope,
    ToolError,
    ToolFailedError,
    ToolInfo,
    ToolOutput,
    ToolResult,
    Tools,
    inputs,
    outputs,
)


class Provider:
    def call_tool(self, tool_name: str, arguments: dict[str, Any], timeout_seconds: float | None = None) -> object:
        return {"is_error": False, "result": {"tool": tool_name, "arguments": arguments}}


def sync_calls() -> None:
    tools = Tools(Provider())
    now = tools.time.get_current_time(timezone="UTC")
    assert_type(now, outputs.TimeGetCurrentTimeOutput)
    assert_type(now.is_dst, bool)
    assert_type(now.datetime, str)
    converted = tools.time.convert_time(source_timezone="UTC", target_timezone="Asia/Tokyo", time="12:00")
    assert_type(converted.source, outputs.TimeConvertTimeOutputTimeResult)
    assert_type(converted.target.day_of_week, str)
    echoed = tools.everything.echo(message="hi")
    assert_type(echoed, ToolOutput)
    assert_type(echoed.text, str)
    kind: Literal["error", "success", "debug"] = "debug"
    tools.everything.get_annotated_message(message_type=kind, include_image=True)
    edit: inputs.FilesystemEditFileInputEdit = {"oldText": "a", "newText": "b"}
    diff = tools.filesystem.edit_file(path="notes.txt", edits=[edit, {"oldText": "c", "newText": "d"}])
    assert_type(diff, outputs.FilesystemEditFileOutput)
    tools.filesystem.read_text_file(path="notes.txt", head=3)
    tools.git.git_log(repo_path=".", max_count=5, start_timestamp=None)  # nullable: None is sent as null
    tools.filesystem.edit_file(path="notes.txt", edits=[], dry_run=NOT_GIVEN)  # the same as leaving it out
    tools.memory.create_entities(entities=[{"name": "n", "entityType": "t", "observations": ["o"]}])
    graph = tools.memory.read_graph()
    assert_type(graph.entities[0].observations, list[str])
    page = tools.fetch.fetch(url="https://example.org", max_length=100, raw=False)
    assert_type(page, ToolOutput)
    result = tools.results.time.get_current_time(timezone="UTC")
    assert_type(result, ToolResult[outputs.TimeGetCurrentTimeOutput])
    assert_type(result.value, outputs.TimeGetCurrentTimeOutput)
    assert_type(result.text, str)
    slow = tools.with_options(timeout_seconds=5.0)
    assert_type(slow, Tools)
    assert_type(slow.time.with_options(timeout_seconds=1.0).get_current_time(timezone="UTC").timezone, str)
    info = TOOLS["get_current_time"]
    assert_type(info, ToolInfo[Any])
    assert_type(info.name, str)


async def async_calls() -> None:
    tools = AsyncTools(Provider())
    now = await tools.time.get_current_time(timezone="UTC")
    assert_type(now, outputs.TimeGetCurrentTimeOutput)
    result = await tools.results.memory.search_nodes(query="x")
    assert_type(result.value, outputs.MemorySearchNodesOutput)
    both = await asyncio.gather(tools.time.get_current_time(timezone="UTC"), tools.everything.get_sum(a=1, b=2.5))
    assert_type(both, tuple[outputs.TimeGetCurrentTimeOutput, ToolOutput])


class AsyncProvider:
    def acall_tool(self, tool_name: str, arguments: dict[str, Any]) -> Awaitable[object]:
        raise NotImplementedError


def options_and_errors() -> None:
    options: CallOptions = {"timeout_seconds": 2.0, "meta": {"trace": "x"}}
    tools = Tools(Provider(), options)
    try:
        tools.git.git_status(repo_path=".")
    except ToolCallError as exc:
        assert_type(exc.payload, Any)
        assert_type(exc.envelope, ToolEnvelope)
        as_dict: dict[str, Any] = exc.envelope  # still the dict it was
        assert as_dict is exc.envelope
        assert_type(exc.envelope.is_error, bool)
    except ToolFailedError as exc:
        assert_type(exc.kind, str)
        assert_type(exc.message, str)
    except ToolError as exc:
        assert_type(exc.tool_name, str)
    AsyncTools(AsyncProvider()).with_options(timeout_seconds=1.0, user="me")
