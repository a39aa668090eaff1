"""Agent code: the runtime registry and package ``two`` (the time and fetch captures). Must check clean.

agent_one.py and agent_two.py differ only in the package they import: adding the fetch source
may not move or rename a call site of the time source.
"""

from __future__ import annotations

from two import AsyncTools, ToolResult, Tools, outputs

from mas.runtime.registry import RuntimeRegistry


def now_in(registry: RuntimeRegistry, zone: str) -> str:
    tools = Tools(registry)
    now: outputs.TimeGetCurrentTimeOutput = tools.time.get_current_time(timezone=zone)
    converted = tools.time.convert_time(source_timezone=zone, target_timezone="UTC", time="12:00")
    whole: ToolResult[outputs.TimeGetCurrentTimeOutput] = tools.results.time.get_current_time(timezone=zone)
    return f"{now.datetime} {converted.time_difference} {whole.value.is_dst}"


async def now_async(registry: RuntimeRegistry) -> bool:
    return (await AsyncTools(registry).time.get_current_time(timezone="UTC")).is_dst


def main() -> None:
    with RuntimeRegistry.from_sources(tools=["tools"]) as registry:
        print(now_in(registry, "Europe/Paris"), [t["name"] for t in registry.list_tools()])
