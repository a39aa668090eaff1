"""Which listed MCP tools reach the agent-facing API: the runtime's listings, the lock and the
generated package (one rule, one place; ``toolgen generate --mcp-json`` applies it too).

Two rules of the 2026-07-28 revision:

* **x-mcp-header** (SEP-2243): a parameter may ask that its value also travel as an
  ``Mcp-Param-<Name>`` HTTP header. A client MUST exclude a tool whose annotation is invalid (not
  on a property reached by ``properties`` alone, not an RFC 9110 token, on a type other than
  string, integer or boolean, or a name used twice) and say so in a warning. The validity test
  is the SDK's own (``mcp.shared.inbound.find_invalid_x_mcp_header``, mcp 2.3.0), which also
  drops such tools on 2026 sessions and mirrors the valid ones into headers on streamable HTTP;
  here the rule holds on every session and for saved listings too.
* **App-only tools** (MCP Apps): ``_meta.ui.visibility`` lists who may call a tool; without
  ``"model"`` it is meant for an app's user interface, not for an agent, and is left out unless
  the server entry says ``app_only_tools: keep``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["X_MCP_HEADER_KEY", "agent_facing", "header_of", "is_app_only"]

logger = logging.getLogger("mas.runtime.mcp_provider")

#: The annotation's key; the SDK's ``mcp.shared.inbound.X_MCP_HEADER_KEY`` (a test holds them equal).
#: Named here so that a listing without it never imports the SDK: ``toolgen generate`` and
#: ``--check`` over saved listings start in a fraction of the SDK's import time.
X_MCP_HEADER_KEY = "x-mcp-header"


def is_app_only(tool: Mapping[str, Any]) -> bool:
    """``_meta.ui.visibility`` is a list without ``"model"``: the tool is for an app's UI only."""
    meta = tool.get("_meta")
    ui = meta.get("ui") if isinstance(meta, Mapping) else None
    visibility = ui.get("visibility") if isinstance(ui, Mapping) else None
    return isinstance(visibility, list) and "model" not in visibility


def header_of(prop: Any) -> str | None:
    """The ``Mcp-Param-*`` header a (valid) parameter schema is mirrored into, or None."""
    token = prop.get(X_MCP_HEADER_KEY) if isinstance(prop, Mapping) else None
    return f"Mcp-Param-{token}" if isinstance(token, str) else None


def _mentions_header(schema: Any) -> bool:
    """Whether ``"x-mcp-header"`` occurs anywhere in ``schema`` (as a key or not): when it does not,
    no annotation can be invalid, and the SDK's walk (and import) is skipped. A superset test, so
    it never lets an invalid tool through; JSON's C encoder makes it cheap."""
    try:
        text = json.dumps(schema, ensure_ascii=False, check_circular=False, default=repr)
    except (TypeError, ValueError, RecursionError):  # not JSON-like: let the SDK decide
        return True
    return X_MCP_HEADER_KEY in text


def agent_facing(tools: Iterable[Mapping[str, Any]], server: str, *, keep_app_only: bool = False) -> list[Any]:
    """``tools`` without those an agent must not see, in order; one warning per invalid tool."""
    kept: list[Any] = []
    apps: list[str] = []
    for tool in tools:
        name = tool.get("name")
        schema = tool.get("inputSchema")
        reason = None
        if _mentions_header(schema):
            from mcp.shared.inbound import find_invalid_x_mcp_header  # the SDK's rule, loaded when needed

            reason = find_invalid_x_mcp_header(schema)
        if reason is not None:
            logger.warning("MCP server %r: dropping tool %r: invalid x-mcp-header (%s)", server, name, reason)
            continue
        if is_app_only(tool) and not keep_app_only:
            apps.append(repr(name))
            continue
        kept.append(tool)
    if apps:
        logger.info(
            "MCP server %r: left out %d app-only tool(s) (_meta.ui.visibility without \"model\"; "
            "`app_only_tools: keep` lists them): %s",
            server, len(apps), ", ".join(apps),
        )  # fmt: skip
    return kept
