"""What the framework adapter tests share: the registry over the repo's sample server (stdio) and
the YAML skills, behind a recorder that keeps every call exactly as it reached the registry."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mcp_helpers import stdio_config

from mas.runtime.contracts.tool_contract import ToolResultEnvelope, ainvoke_call_tool, invoke_call_tool
from mas.runtime.mcp.provider import MCPToolProvider
from mas.runtime.registry import RuntimeRegistry
from mas.runtime.skills import SkillToolProvider
from mas.runtime.yaml_source import load_tool_documents

REPO = Path(__file__).resolve().parents[1]


class Recording:
    """The registry, with every call it receives kept (wire name, arguments, the options sent)."""

    def __init__(self, inner: RuntimeRegistry) -> None:
        self.inner = inner
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.options: list[dict[str, Any]] = []

    def list_tools(self) -> list[dict[str, Any]]:
        return self.inner.list_tools()

    def owner_of(self, tool_name: str) -> str | None:
        return self.inner.owner_of(tool_name)

    def call_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        self.calls.append((tool_name, dict(arguments or {})))
        self.options.append(dict(kwargs))
        return invoke_call_tool(self.inner, tool_name, arguments, **kwargs)

    async def acall_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        self.calls.append((tool_name, dict(arguments or {})))
        self.options.append(dict(kwargs))
        return await ainvoke_call_tool(self.inner, tool_name, arguments, **kwargs)


@contextmanager
def sample_registry() -> Iterator[Recording]:
    """The sample server over stdio as ``sample``, the library's YAML skills as ``skills``."""
    skills = SkillToolProvider(load_tool_documents([REPO / "library-samples" / "tools"]), name="skills")
    skills.resolve()
    registry = RuntimeRegistry({"skills": skills, "sample": MCPToolProvider(stdio_config("sample"))})
    with registry:
        yield Recording(registry)


class Tampered:
    """The recorder, with one tool's structured content replaced: a server whose output no longer
    fits the output model the package was generated with."""

    def __init__(self, inner: Recording, tool_name: str, structured: Any) -> None:
        self.inner = inner
        self.tool_name = tool_name
        self.structured = structured

    def list_tools(self) -> list[dict[str, Any]]:
        return self.inner.list_tools()

    def owner_of(self, tool_name: str) -> str | None:
        return self.inner.owner_of(tool_name)

    def call_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        envelope = ToolResultEnvelope.coerce(self.inner.call_tool(tool_name, arguments, **kwargs)).to_dict()
        if tool_name == self.tool_name:
            envelope.update(structured_content=self.structured, result=self.structured)
        return envelope
