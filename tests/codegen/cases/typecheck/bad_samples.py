"""Mistakes with the package generated from library-samples/tools; the test snapshots every diagnostic."""

from __future__ import annotations

from typing import Any

from samples import Tools


class Provider:
    def call_tool(self, tool_name: str, arguments: dict[str, Any]) -> object:
        return {"is_error": False, "result": {}}


def mistakes() -> None:
    tools = Tools(Provider()).skills
    tools.unit_convert(value="3", from_unit="km", to_unit="mi")  # wrong argument type
    tools.unit_convert(value=3, from_unit="parsec", to_unit="mi")  # value outside the enum
    tools.unit_convert(value=3, from_unit="km")  # missing required argument
    tools.web_search(query="x", limit=3)  # unknown keyword argument
    tools.current_time(timezone=None)  # None where the default is a string
    count: int = tools.web_search(query="x").results  # result used as the wrong type
    print(count)
