"""Which failure kind an MCP server's error is, from what real servers send (docs/tool.md, "Failure kinds").

Since the 2025-11-25 revision servers report bad arguments as tool results with ``isError``, not
as JSON-RPC errors, so the kind can only be read from the text. Only messages that an SDK itself
writes are recognised, each pattern anchored where that SDK puts it; anything else a tool says
stays ``tool_error``, so a tool that merely mentions "validation" is never mistaken for one.

* JSON-RPC ``-32602`` (invalid params) is ``invalid_arguments``, unless it names an unknown tool.
* The Python SDK (FastMCP in mcp 1.x, MCPServer in 2.x) validates arguments with a pydantic model
  named ``<tool>Arguments``: ``Error executing tool add: 1 validation error for addArguments``.
  It says ``Unknown tool: x`` for a name it does not have.
* The mcp 1.x low-level ``Server`` checks arguments against the input schema with jsonschema and
  answers ``Input validation error: 'ls' is not of type 'array'``.
* The TypeScript SDK validates with zod and turns its own McpError into the result text:
  ``MCP error -32602: Input validation error: Invalid arguments for tool echo: ...``, and
  ``MCP error -32602: Tool nope not found``.

JSON-RPC error codes other than -32602 have one kind each (:func:`kind_of_error_code`): the MCP
internal error (-32603) is the tool's, the 2026-07-28 codes and method-not-found (-32601) say
the client and server do not agree on the protocol, and URL elicitation required (-32042) means
a person must first visit a URL the error names: the tool is not available until then.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import mcp_types as types

__all__ = ["CODE_KINDS", "kind_of_error_code", "kind_of_error_result", "kind_of_invalid_params", "url_elicitations"]

#: code: (failure kind, the spec's name for it). Any other code is ``protocol``.
CODE_KINDS: Mapping[int, tuple[str, str]] = {
    types.INTERNAL_ERROR: ("tool_error", ""),
    types.METHOD_NOT_FOUND: ("protocol", "method not found"),
    types.HEADER_MISMATCH: ("protocol", "HeaderMismatch"),
    types.MISSING_REQUIRED_CLIENT_CAPABILITY: ("protocol", "MissingRequiredClientCapability"),
    types.UNSUPPORTED_PROTOCOL_VERSION: ("protocol", "UnsupportedProtocolVersion"),
    types.URL_ELICITATION_REQUIRED: ("unavailable", "URL elicitation required"),
}

_UNKNOWN_TOOL = (
    re.compile(r"^Unknown tool: ", re.IGNORECASE),  # Python SDK (and the sample server's -32602)
    re.compile(r"^(?:MCP error -32602: )?Tool \S+ not found\b"),  # TypeScript SDK
)
_INVALID_ARGUMENTS = (
    re.compile(r"^Error executing tool \S+: \d+ validation errors? for \S+Arguments\b"),  # pydantic
    re.compile(r"^MCP error -32602: "),  # TypeScript SDK: its invalid-params McpError as a result
    # The mcp 1.x low-level Server's own jsonschema check (``Input validation error: 'ls' is not of
    # type 'array'``, mcp 1.10 to 1.x), and the TypeScript SDK's unprefixed ``Input validation
    # error: Invalid arguments for tool x``.
    re.compile(r"^Input validation error: "),
)


def _unknown_tool(text: str) -> bool:
    return any(p.search(text) for p in _UNKNOWN_TOOL)


def kind_of_invalid_params(message: str) -> str:
    """The kind of a JSON-RPC -32602 error: arguments, unless the message names an unknown tool.

    The code already says "invalid params", so any mention of an unknown tool is enough here.
    """
    text = message.strip()
    return "unknown_tool" if "unknown tool" in text.lower() or _unknown_tool(text) else "invalid_arguments"


def kind_of_error_result(text: str) -> str:
    """The kind of an ``isError`` tool result, from its text."""
    text = text.strip()
    if _unknown_tool(text):
        return "unknown_tool"
    if any(p.search(text) for p in _INVALID_ARGUMENTS):
        return "invalid_arguments"
    return "tool_error"


def kind_of_error_code(code: int) -> tuple[str, str]:
    """The failure kind of a JSON-RPC error code (not -32602: see :func:`kind_of_invalid_params`),
    and the spec's name for the code ("" for the long-known ones)."""
    return CODE_KINDS.get(code, ("protocol", ""))


def url_elicitations(code: int, data: Any) -> list[dict[str, Any]]:
    """The URLs (with their message and id) of a -32042 error's ``data.elicitations``, as sent."""
    if code != types.URL_ELICITATION_REQUIRED or not isinstance(data, Mapping):
        return []
    items = data.get("elicitations")
    if not isinstance(items, list):
        return []
    keys = ("url", "message", "elicitationId")
    return [
        {key: item[key] for key in keys if isinstance(item.get(key), str)}
        for item in items
        if isinstance(item, Mapping) and isinstance(item.get("url"), str)
    ]
