"""ServerContract: the rest of an MCP server beside its tools (resources, templates, prompts, completions).

The ToolContract (``tool_contract.py``) stays exactly as the seed says: ``list_tools`` and
``call_tool``. What a server serves besides tools goes through this second boundary, with the
same discipline: one path per operation, routed by the registry to the owning server, with the
envelope rules, failure kinds, timeouts, secret blanking, size limits, pagination and listing
cache of tool calls. Guide: ``docs/resources-and-prompts.md``.

=============================================  ==============================================
Operation                                      Answer
=============================================  ==============================================
``list_resources()``                           MCP ``Resource`` objects (wire keys), every page
``list_resource_templates()``                  MCP ``ResourceTemplate`` objects, every page
``list_prompts()``                             MCP ``Prompt`` objects, every page
``read_resource(uri)``                         envelope; ``result`` is ``{"contents": [...]}``
``get_prompt(name, arguments)``                envelope; ``result`` is ``{"messages": [...], ...}``
``complete(ref, argument, value)``             envelope; ``result`` is ``{"completion": {...}}``
``subscribe_resource(uri)``                    a bounded ``ResourceSubscription`` (iterate it, or
                                               ``on_update=``); ``SubscriptionError`` if it cannot
=============================================  ==============================================

Listings raise when the server cannot be listed (as ``list_tools`` does); the three requests
never raise: a failure is an error envelope whose ``metadata["error_kind"]`` is one of the
contract's failure kinds (``unknown_tool`` names a resource or prompt the server does not have).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from mas.runtime.contracts.tool_contract import ToolResultEnvelope

if TYPE_CHECKING:  # only types: an up-to-date `generate --check` must not load asyncio through here
    from mas.runtime.subscriptions import ResourceSubscription, UpdateCallback

__all__ = [
    "LISTINGS",
    "PROMPT_REF",
    "RESOURCE_REF",
    "AsyncServerProvider",
    "ServerProvider",
    "SubscribingProvider",
    "completion_ref",
]

#: What a server lists besides tools: listing -> (MCP method, the result's array key, capability).
LISTINGS: Mapping[str, tuple[str, str, str]] = {
    "resources": ("resources/list", "resources", "resources"),
    "resource_templates": ("resources/templates/list", "resourceTemplates", "resources"),
    "prompts": ("prompts/list", "prompts", "prompts"),
}

#: The two reference types of ``completion/complete`` (MCP's ``ref/prompt`` and ``ref/resource``).
PROMPT_REF = "ref/prompt"
RESOURCE_REF = "ref/resource"


def completion_ref(ref: Mapping[str, Any]) -> tuple[str, str] | str:
    """``(type, name-or-uri)`` of a completion reference, or one line saying what is wrong with it."""
    kind = ref.get("type") if isinstance(ref, Mapping) else None
    if kind == PROMPT_REF and isinstance(ref.get("name"), str):
        return kind, ref["name"]
    if kind == RESOURCE_REF and isinstance(ref.get("uri"), str):
        return kind, ref["uri"]
    return f'a completion ref is {{"type": "{PROMPT_REF}", "name": ...}} or {{"type": "{RESOURCE_REF}", "uri": ...}}'


@runtime_checkable
class ServerProvider(Protocol):
    """A provider of the server surface (the MCP provider; the registry routes to it)."""

    def list_resources(self) -> list[dict[str, Any]]: ...
    def list_resource_templates(self) -> list[dict[str, Any]]: ...
    def list_prompts(self) -> list[dict[str, Any]]: ...
    def read_resource(self, uri: str, *, timeout_seconds: float | None = None) -> ToolResultEnvelope: ...
    def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, timeout_seconds: float | None = None
    ) -> ToolResultEnvelope: ...
    def complete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
        timeout_seconds: float | None = None,
    ) -> ToolResultEnvelope: ...


@runtime_checkable
class AsyncServerProvider(Protocol):
    """The async twins (``alist_resources``, ``aread_resource``, ...)."""

    async def alist_resources(self) -> list[dict[str, Any]]: ...
    async def alist_resource_templates(self) -> list[dict[str, Any]]: ...
    async def alist_prompts(self) -> list[dict[str, Any]]: ...
    async def aread_resource(self, uri: str, *, timeout_seconds: float | None = None) -> ToolResultEnvelope: ...
    async def aget_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, timeout_seconds: float | None = None
    ) -> ToolResultEnvelope: ...
    async def acomplete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
        timeout_seconds: float | None = None,
    ) -> ToolResultEnvelope: ...


@runtime_checkable
class SubscribingProvider(Protocol):
    """A provider whose resources can be subscribed to (``mas/runtime/subscriptions.py``): the MCP
    provider (both dialects) and local sources that implement these two methods."""

    def subscribe_resource(
        self,
        uri: str,
        *,
        on_update: UpdateCallback | None = None,
        max_queued: int = ...,  # DEFAULT_MAX_QUEUED of mas.runtime.subscriptions
        timeout_seconds: float | None = None,
    ) -> ResourceSubscription: ...
    async def asubscribe_resource(
        self,
        uri: str,
        *,
        on_update: UpdateCallback | None = None,
        max_queued: int = ...,  # DEFAULT_MAX_QUEUED of mas.runtime.subscriptions
        timeout_seconds: float | None = None,
    ) -> ResourceSubscription: ...
