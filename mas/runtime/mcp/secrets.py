"""The secret values an MCP server's configuration resolves to: its ``env:VAR`` header and
environment values, what every text the runtime writes is scrubbed of.

Public and light (no SDK import), so a module outside the MCP client (the samples recorder) reads
them without reaching into the client's private parts.
"""

from __future__ import annotations

from mas.runtime.config import MCPServerConfig
from mas.runtime.mcp._convert import ToolServerError, resolve_env, resolve_headers

__all__ = ["config_secrets"]


def config_secrets(config: MCPServerConfig) -> set[str]:
    """The values ``config``'s headers and environment resolve to, as the provider resolves them
    when it connects; a variable that is unset: none (the server cannot have been sent it)."""
    try:
        return resolve_headers(config)[1] | resolve_env(config)[1]
    except ToolServerError:
        return set()
