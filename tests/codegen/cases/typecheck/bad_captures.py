"""Mistakes a user can make with the package generated from the captures; each must be reported.

tests/codegen/test_typecheck.py compares the full list of (line, rule) diagnostics of mypy --strict
and pyright (strict) on this file with a snapshot. Add new mistakes at the end to keep lines stable.
"""

from __future__ import annotations

from typing import Any

from captures import AsyncTools, CallOptions, Tools, outputs


class Provider:
    def call_tool(self, tool_name: str, arguments: dict[str, Any]) -> object:
        return {"is_error": False, "result": {}}


def mistakes() -> None:
    tools = Tools(Provider())
    tools.time.get_current_time(timezone=1)  # wrong argument type
    tools.time.get_current_time(timezone="UTC", tz="UTC")  # unknown keyword argument
    tools.time.convert_time(source_timezone="UTC", time="12:00")  # missing required argument
    tools.time.get_current_time("UTC")  # positional argument
    tools.filesystem.edit_file(path="a.txt", edits=[{"old_text": "a", "newText": "b"}])  # wrong nested key
    tools.everything.get_annotated_message(message_type="warning")  # value outside the enum
    text: str = tools.time.get_current_time(timezone="UTC")  # result used as the wrong type
    flag: str = tools.time.get_current_time(timezone="UTC").is_dst  # field used as the wrong type
    print(tools.time.get_current_time(timezone="UTC").is_dts)  # unknown field
    print(tools.everything.echo(message="hi").value)  # ToolOutput is not a ToolResult
    tools.with_options(timeout=5)  # unknown call option
    print(text, flag)


async def async_mistakes() -> None:
    tools = AsyncTools(Provider())
    now: outputs.TimeGetCurrentTimeOutput = tools.time.get_current_time(timezone="UTC")  # not awaited
    print(now)


class AsyncProvider:
    async def acall_tool(self, tool_name: str, arguments: dict[str, Any]) -> object:
        return {}


def provider_and_option_mistakes() -> None:
    Tools(AsyncProvider())  # an async-only provider needs AsyncTools
    options: CallOptions = {"timeout": 2.0}  # unknown call option key
    Tools(Provider(), {"timeout_seconds": "soon"})  # call option of the wrong type
    print(options)


def omission_mistakes() -> None:
    tools = Tools(Provider())
    tools.filesystem.edit_file(path="a.txt", edits=[], dry_run=None)  # None where the schema allows no null
