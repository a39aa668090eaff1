"""One tools/list page, also from a server whose tools the MCP schema rejects.

The SDK validates a whole page at once: one tool whose ``inputSchema`` lacks ``"type": "object"``
(a published GitLab server sends only ``{"$schema": ...}``) fails every tool, with a
pydantic dump of one error per tool and field. Such a page is fetched again as sent: tools that
validate are kept as the SDK would give them, the others exactly as the server sent them (the
generator decides what to make of their schemas), and one line says what the server got wrong.
The SDK still learns every tool it can parse, so calls check output schemas as usual.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession
from mcp_types import methods
from pydantic import ValidationError

from mas.runtime.mcp._convert import ToolServerError, dump_wire

__all__ = ["CacheHint", "Page", "list_page", "summary", "teach"]

_NAMES_SHOWN = 5


@dataclass
class Page:
    tools: list[dict[str, Any]]
    next_cursor: str | None
    #: What the server got wrong, one text per rejected tool: (tool name, problem).
    problems: list[tuple[str, str]] = field(default_factory=list)
    #: The page's 2026-07-28 cache hints (``ttlMs``, ``cacheScope``), when the server sent them.
    hint: CacheHint | None = None


@dataclass(frozen=True)
class CacheHint:
    """How long a client may reuse a list result, and whether a shared cache may serve it to others."""

    ttl_ms: int
    scope: str  # "public" or "private"

    def merged(self, other: CacheHint | None) -> CacheHint:
        """The hint of a listing of several pages: the shortest reuse, private if any page is."""
        if other is None:
            return self
        scope = "public" if self.scope == other.scope == "public" else "private"
        return CacheHint(min(self.ttl_ms, other.ttl_ms), scope)


async def list_page(session: ClientSession, params: types.PaginatedRequestParams | None, server: str) -> Page:
    """``tools/list`` through the SDK; when the SDK rejects the page, the page as sent."""
    try:
        page = await session.list_tools(params=params)
    except ValidationError as exc:
        raw = await _raw_page(session, params, exc)
        return _tolerated(session, raw, params, server)
    hint = CacheHint(page.ttl_ms, page.cache_scope) if "ttl_ms" in page.model_fields_set else None
    return Page([dump_wire(tool) for tool in page.tools], page.next_cursor, hint=hint)


async def _raw_page(
    session: ClientSession, params: types.PaginatedRequestParams | None, rejected: ValidationError
) -> Mapping[str, Any]:
    # The SDK has no public "send and give me the JSON" call; these are the two steps its own
    # send_request takes before validating. Without them (another SDK release) the SDK's verdict stands.
    stamp = getattr(session, "_stamp", None)
    dispatcher = getattr(session, "_dispatcher", None)
    if stamp is None or dispatcher is None:
        raise rejected
    data = types.ListToolsRequest(params=params).model_dump(by_alias=True, mode="json", exclude_none=True)
    opts: dict[str, Any] = {}
    stamp(data, opts)
    raw: Mapping[str, Any] = await dispatcher.send_raw_request(data["method"], data.get("params"), opts)
    return raw


def _tolerated(
    session: ClientSession, raw: Mapping[str, Any], params: types.PaginatedRequestParams | None, server: str
) -> Page:
    items = raw.get("tools")
    if not isinstance(items, list):
        raise ToolServerError(server, "tools/list: the result has no `tools` array")
    cursor = raw.get("nextCursor")
    if cursor is not None and not isinstance(cursor, str):
        raise ToolServerError(server, "tools/list: `nextCursor` is not a string")
    tools: list[dict[str, Any]] = []
    parsed: list[types.Tool] = []
    problems: list[tuple[str, str]] = []
    version = session.protocol_version or "2025-11-25"  # the SDK's own fallback before a handshake
    for index, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ToolServerError(server, f"tools/list: tools[{index}] is not a tool object with a string `name`")
        try:
            # The SDK checks a page against the negotiated revision's wire schema; so does this, one tool at a time.
            methods.validate_server_result("tools/list", version, {"tools": [item]})
            tool = types.Tool.model_validate(item, by_name=False)
        except ValidationError as exc:
            problems.append((item["name"], _problem(exc)))
            tools.append(copy.deepcopy(item))  # as sent: the schema is the generator's to judge
            held = _held(item)
            if held is not None:
                parsed.append(held)
            continue
        tools.append(dump_wire(tool))
        parsed.append(tool)
    _teach_sdk(session, types.ListToolsResult(tools=parsed, next_cursor=cursor), params)
    ttl, scope = raw.get("ttlMs"), raw.get("cacheScope")
    hint = None
    if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl >= 0:
        hint = CacheHint(ttl, "public" if scope == "public" else "private")
    return Page(tools, cursor, problems, hint)


def _problem(exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    loc = first["loc"][2:] if first["loc"][:1] == ("tools",) else first["loc"]  # drop "tools.0."
    where = ".".join(str(part) for part in loc)
    if first["type"] == "missing" and where in ("inputSchema.type", "outputSchema.type"):
        text = f'{where.split(".")[0]} has no "type": "object"'
    else:
        text = f"{where}: {first['msg']}"
    return text if len(errors) == 1 else f"{text} (and {len(errors) - 1} more)"


def _held(item: Mapping[str, Any]) -> types.Tool | None:
    """The tool as the SDK can hold it (object schemas marked so), only for its own bookkeeping."""
    fixed = dict(item)
    for key in ("inputSchema", "outputSchema"):
        schema = fixed.get(key)
        if isinstance(schema, Mapping) and "type" not in schema:
            fixed[key] = {**schema, "type": "object"}
    try:
        return types.Tool.model_validate(fixed, by_name=False)
    except ValidationError:
        return None


def _teach_sdk(
    session: ClientSession, page: types.ListToolsResult, params: types.PaginatedRequestParams | None
) -> None:
    # The SDK checks each structured result against the output schema it saw in tools/list, and
    # lists again (and would fail again) for a tool it never saw: give it what parsed.
    absorb = getattr(session, "_absorb_tool_listing", None)
    if absorb is not None:
        absorb(page, complete=(params is None or params.cursor is None) and page.next_cursor is None)


def teach(session: ClientSession, tools: list[dict[str, Any]]) -> None:
    """Give the SDK a tool list it did not fetch (infra ``tools:``), as if listed on ``session``."""
    parsed = [held for held in map(_held, tools) if held is not None]
    _teach_sdk(session, types.ListToolsResult(tools=parsed), None)


def summary(problems: list[tuple[str, str]]) -> str:
    """One line for a listing's rejected tools, grouped by what is wrong."""
    by_problem: dict[str, list[str]] = {}
    for name, problem in problems:
        by_problem.setdefault(problem, []).append(name)
    parts = []
    for problem, names in by_problem.items():
        shown = ", ".join(repr(n) for n in names[:_NAMES_SHOWN])
        more = f" and {len(names) - _NAMES_SHOWN} more" if len(names) > _NAMES_SHOWN else ""
        parts.append(f"{problem} ({shown}{more})")
    return f"{len(problems)} tool(s) do not match the MCP schema; listed as sent: " + "; ".join(parts)
