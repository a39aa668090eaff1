"""Correct use of the package generated from library-samples/tools: no checker may complain."""

from __future__ import annotations

from typing import Any, Literal, assert_type

from samples import NOT_GIVEN, AsyncTools, ToolOutput, ToolResult, Tools, outputs


class Provider:
    def call_tool(self, tool_name: str, arguments: dict[str, Any]) -> object:
        return {"is_error": False, "result": {}}


def sync_calls() -> None:
    tools = Tools(Provider()).skills
    now = tools.current_time()
    assert_type(now, outputs.SkillsCurrentTimeOutput)
    assert_type(tools.current_time(timezone="Europe/Paris", at=NOT_GIVEN).utc_offset, str)
    converted = tools.unit_convert(value=3, from_unit="km", to_unit="mi")
    assert_type(converted.value, float)
    assert_type(converted.category, Literal["length", "mass", "volume", "temperature"])
    found = tools.web_search(query="typed tools", max_results=5)
    assert_type(found.results[0].score, int)
    summary = tools.summarize_text(text="One. Two. Three.", max_sentences=1)
    assert_type(summary, ToolOutput)
    result = tools.results.unit_convert(value=1.5, from_unit="kg", to_unit="lb")
    assert_type(result, ToolResult[outputs.SkillsUnitConvertOutput])


async def async_calls() -> None:
    tools = AsyncTools(Provider()).skills
    found = await tools.web_search(query="x")
    assert_type(found, outputs.SkillsWebSearchOutput)
    summary = await tools.results.summarize_text(text="x")
    assert_type(summary.value.text, str)
