"""In-process tools: a registry over ``ToolContract`` classes or instances."""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from typing import Any

from mas.runtime.config import ConfigError, SourceLocation
from mas.runtime.contracts import _rules
from mas.runtime.contracts._rules import checked_options
from mas.runtime.contracts.tool_contract import (
    CallCancelled,
    CallOptions,
    ToolContract,
    ToolResultEnvelope,
    acall_with_options,
    await_with_timeout,
    bound_failure,
    call_with_options,
    run_with_timeout,
    takes_checked_options,
)

__all__ = ["LocalToolRegistry", "import_tool_class"]


def _origin(tool: ToolContract) -> str:
    cls = type(tool)
    return f"{cls.__module__}:{cls.__qualname__}"


def import_tool_class(spec: str) -> type[Any]:
    """``"package.module:Class"`` -> the ToolContract (or LocalServer) subclass; ConfigError when it is neither."""
    module_name, sep, attr = spec.partition(":")
    where = SourceLocation(spec)
    if not sep or not module_name or not attr:
        raise ConfigError("a local tool must be given as 'package.module:Class'", where)
    try:
        target: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            target = getattr(target, part)
    except Exception as exc:
        raise ConfigError(f"cannot import local tool: {type(exc).__name__}: {exc}", where) from exc
    from mas.runtime.local_server import LocalServer  # resources and prompts from Python

    if not (isinstance(target, type) and issubclass(target, ToolContract | LocalServer)):
        raise ConfigError("not a ToolContract or LocalServer subclass", where)
    return target


@takes_checked_options
class LocalToolRegistry:
    """Merges the ``list_tools`` of several ToolContract tools and routes calls by name.

    Classes are instantiated with no arguments; two tools with the same name are a ConfigError.
    """

    def __init__(self, tools: Iterable[ToolContract | type[ToolContract]], *, name: str = "local") -> None:
        self.name = name
        self._tools: dict[str, ToolContract] = {}
        self._entries: list[dict[str, Any]] = []
        for item in tools:
            tool = item() if isinstance(item, type) else item
            for entry in tool.list_tools():
                other = self._tools.get(entry["name"])
                if other is not None:
                    raise ConfigError(
                        f"duplicate local tool name {entry['name']!r}: {_origin(other)} and {_origin(tool)}",
                        SourceLocation(_origin(tool)),
                    )
                self._tools[entry["name"]] = tool
                self._entries.append(entry)

    @property
    def tools(self) -> Mapping[str, ToolContract]:
        return dict(self._tools)

    def origin_of(self, tool_name: str) -> str | None:
        """``module:Class`` of the tool serving ``tool_name`` (for error messages and tooling)."""
        tool = self._tools.get(tool_name)
        return None if tool is None else _origin(tool)

    def list_tools(self) -> list[dict[str, Any]]:
        return [dict(entry) for entry in self._entries]

    def _unknown(self, tool_name: str) -> ToolResultEnvelope:
        return ToolResultEnvelope.failure(
            f"unknown tool {tool_name!r} (local: {', '.join(self._tools)})", kind="unknown_tool"
        )

    def _prepare(self, tool_name: str, options: CallOptions) -> tuple[ToolContract, float | None] | ToolResultEnvelope:
        """The tool and its time limit, or the envelope that says why not."""
        tool = self._tools.get(tool_name)
        if tool is None:
            return self._unknown(tool_name)
        # timeout_seconds=0 is a limit ("at once"), not "unset": only None falls back to the spec.
        given = options.get("timeout_seconds")
        return tool, given if given is not None else tool.get_timeout_seconds()

    def call_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any) -> ToolResultEnvelope:
        """The tool's ``call_tool``; ``timeout_seconds`` (else the tool's own) and ``cancel_event``
        bound the wait. A tool that declares ``cancel_event`` also receives it, to stop early."""
        return self.call_checked(tool_name, arguments, checked_options(kwargs))

    async def acall_tool(
        self, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any
    ) -> ToolResultEnvelope:
        return await self.acall_checked(tool_name, arguments, checked_options(kwargs))

    def call_checked(
        self, tool_name: str, arguments: Mapping[str, Any] | None, options: CallOptions
    ) -> ToolResultEnvelope:
        """:meth:`call_tool` with its options checked already (the registry's one value)."""
        prepared = self._prepare(tool_name, options)
        if isinstance(prepared, ToolResultEnvelope):
            return prepared
        tool, limit = prepared
        try:
            value = run_with_timeout(
                lambda: call_with_options(tool, tool_name, arguments, options), limit, options.get("cancel_event")
            )
        except (TimeoutError, CallCancelled) as exc:
            return bound_failure(tool_name, limit, exc)
        return ToolResultEnvelope.coerce(value)

    async def acall_checked(
        self, tool_name: str, arguments: Mapping[str, Any] | None, options: CallOptions
    ) -> ToolResultEnvelope:
        prepared = self._prepare(tool_name, options)
        if isinstance(prepared, ToolResultEnvelope):
            return prepared
        tool, limit = prepared
        try:
            value = await await_with_timeout(
                acall_with_options(tool, tool_name, arguments, options), limit, options.get("cancel_event")
            )
        except (TimeoutError, CallCancelled) as exc:
            return bound_failure(tool_name, limit, exc)
        return ToolResultEnvelope.coerce(value)

    def close(self) -> None:
        for tool in {id(t): t for t in self._tools.values()}.values():
            closer = getattr(tool, "close", None)
            if callable(closer):
                closer()

    async def aclose(self) -> None:
        for tool in {id(t): t for t in self._tools.values()}.values():
            await _rules.aclose(tool)
