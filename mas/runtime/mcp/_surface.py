"""The MCP provider's server surface: resources, resource templates, prompts and completions.

The ServerContract's operations (``mas/runtime/contracts/server_contract.py``) on one MCP server,
over the provider's own session (:class:`~mas.runtime.mcp._session.SessionKeeper`), with the
rules of its tool calls: listings follow ``nextCursor`` up to ``max_pages`` (a repeated cursor is
an error), each page bounded by ``connect_timeout_seconds``, reused under ``cache_ttl_ms`` /
``cache_scope`` (and the server's 2026 hints); every answer blanked of secrets, every error one
line cut to ``max_error_chars``, every message bounded by ``max_result_bytes`` (the transport's).
A listing is only asked for when the server declares the capability: a server without resources
lists none without a request. Guide: ``docs/resources-and-prompts.md``.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError

from mas.runtime import redact
from mas.runtime.contracts._rules import one_line
from mas.runtime.contracts.server_contract import LISTINGS, PROMPT_REF, completion_ref
from mas.runtime.contracts.tool_contract import ToolResultEnvelope
from mas.runtime.mcp._convert import ToolServerError, clip, dump_wire, server_identity
from mas.runtime.mcp._error_kinds import kind_of_error_code
from mas.runtime.mcp._lenient_listing import CacheHint

if TYPE_CHECKING:
    from mcp.client.session import ClientSession

    from mas.runtime.config import MCPServerConfig
    from mas.runtime.mcp._session import Connection, SessionKeeper

__all__ = ["APP_SCHEME", "DEFAULT_TIMEOUT_SECONDS", "ServerSurface", "app_only"]

logger = logging.getLogger("mas.runtime.mcp_provider")

#: How long a read, a prompt or a completion may take when the caller gives no ``timeout_seconds``.
DEFAULT_TIMEOUT_SECONDS = 60.0
#: MCP Apps' user-interface resources: for apps, left out unless ``app_only_tools: keep``.
APP_SCHEME = "ui://"
#: resources/read's "not found" (MCP -32002): the resource named does not exist.
RESOURCE_NOT_FOUND = -32002

#: Keys of a result that are the protocol's (2026 cache hints, result type), not the answer's.
_PROTOCOL_KEYS = ("resultType", "ttlMs", "cacheScope")

# Process-wide cache (cache_scope "process"): (server identity, listing) -> (expires at, items).
_PROCESS_CACHE: dict[tuple[Any, ...], tuple[float, list[dict[str, Any]]]] = {}
_PROCESS_CACHE_LOCK = threading.Lock()

_Pager = Callable[["ClientSession", "types.PaginatedRequestParams | None"], Awaitable[Any]]
_PAGERS: Mapping[str, tuple[_Pager, str]] = {
    "resources": (lambda s, p: s.list_resources(params=p), "resources"),
    "resource_templates": (lambda s, p: s.list_resource_templates(params=p), "resource_templates"),
    "prompts": (lambda s, p: s.list_prompts(params=p), "prompts"),
}


def app_only(item: Mapping[str, Any]) -> bool:
    """A ``ui://`` resource or template of MCP Apps: for an app's user interface, not the agent."""
    where = item.get("uri", item.get("uriTemplate"))
    return isinstance(where, str) and where.startswith(APP_SCHEME)


class ServerSurface:
    """The server surface of one MCP provider; every coroutine runs on the provider's loop."""

    def __init__(self, config: MCPServerConfig, keeper: SessionKeeper) -> None:
        self.config = config
        self.name = config.name
        self._keeper = keeper
        self._cache: dict[str, tuple[float, list[dict[str, Any]]]] = {}

    def forget(self) -> None:
        """Drop cached listings (the server said they changed)."""
        self._cache.clear()
        with _PROCESS_CACHE_LOCK:
            for which in LISTINGS:
                _PROCESS_CACHE.pop((*server_identity(self.config), which), None)

    # --- listings -----------------------------------------------------------------------------
    async def listing(self, which: str) -> list[dict[str, Any]]:
        """Every item of ``which`` (a key of ``LISTINGS``), as wire objects, app-only ones left out."""
        cached = self._cached(which)
        if cached is None:
            items, hint = await self._fetch(which)
            self._store(which, items, hint)
            cached = items
        return copy.deepcopy(cached)

    def _cached(self, which: str) -> list[dict[str, Any]] | None:
        if self.config.cache_ttl_ms <= 0:
            return None
        hit = self._cache.get(which)
        if (hit is None or hit[0] <= time.monotonic()) and self.config.cache_scope == "process":
            with _PROCESS_CACHE_LOCK:
                hit = _PROCESS_CACHE.get((*server_identity(self.config), which))
        return None if hit is None or hit[0] <= time.monotonic() else hit[1]

    def _store(self, which: str, items: list[dict[str, Any]], hint: CacheHint | None) -> None:
        # The tool listing's rule (mcp_provider._store_listing): a hint only shortens, private stays here.
        ttl_ms, scope = self.config.cache_ttl_ms, self.config.cache_scope
        if hint is not None and self.config.cache_hints == "honour":
            ttl_ms = min(ttl_ms, hint.ttl_ms)
            scope = scope if hint.scope == "public" else "provider"
        if ttl_ms <= 0:
            return
        entry = (time.monotonic() + ttl_ms / 1000, copy.deepcopy(items))
        if scope == "process":
            with _PROCESS_CACHE_LOCK:
                _PROCESS_CACHE[(*server_identity(self.config), which)] = entry
        else:
            self._cache[which] = entry

    async def _fetch(self, which: str) -> tuple[list[dict[str, Any]], CacheHint | None]:
        method, _key, capability = LISTINGS[which]
        pager, attr = _PAGERS[which]
        conn, session = await self._keeper.acquire()
        caps = session.server_capabilities
        if caps is None or getattr(caps, capability, None) is None:
            return [], None  # not declared: nothing to list, and nothing is asked
        cfg = self.config
        items: list[dict[str, Any]] = []
        seen: set[str] = set()
        cursor: str | None = None
        pages = 0
        hint: CacheHint | None = None
        try:
            while True:
                if pages >= cfg.max_pages:
                    raise ToolServerError(self.name, f"{method} returned more than max_pages={cfg.max_pages} pages")
                params = types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
                with anyio.fail_after(cfg.connect_timeout_seconds):
                    page = await pager(session, params)
                pages += 1
                items.extend(redact.blank_json(dump_wire(item), self._keeper.secrets) for item in getattr(page, attr))
                page_hint = CacheHint(page.ttl_ms, page.cache_scope) if "ttl_ms" in page.model_fields_set else None
                hint = page_hint if pages == 1 else (None if hint is None else hint.merged(page_hint))
                if not cfg.follow_pagination or not page.next_cursor:
                    break
                if page.next_cursor in seen or page.next_cursor == cursor:
                    detail = f"{method} repeated cursor {page.next_cursor!r} on page {pages + 1}; stopped paging"
                    raise ToolServerError(self.name, detail)
                if cursor is not None:
                    seen.add(cursor)
                cursor = page.next_cursor
        except ToolServerError:
            raise
        except TimeoutError:
            detail = f"{method} timed out after {cfg.connect_timeout_seconds} s (page {pages + 1})"
            raise ToolServerError(self.name, detail) from None
        except Exception as exc:
            conn.note_failure(exc)
            raise ToolServerError(self.name, f"{method} failed: {self._keeper.text(exc)}") from None
        if cfg.app_only_tools != "keep":
            items = [item for item in items if not app_only(item)]
        return items, hint

    # --- requests -----------------------------------------------------------------------------
    async def read(self, uri: str, timeout_seconds: float | None) -> ToolResultEnvelope:
        label = f"resources/read {uri!r}"
        return await self._request(label, timeout_seconds, lambda s: s.read_resource(uri))

    async def prompt(
        self, name: str, arguments: Mapping[str, str] | None, timeout_seconds: float | None
    ) -> ToolResultEnvelope:
        label = f"prompts/get {name!r}"
        bad = [key for key, value in (arguments or {}).items() if not isinstance(value, str)]
        if bad:  # MCP prompt arguments are strings; pydantic would refuse it mid-send
            return self.failure(label, f"not sent: argument {bad[0]!r} is not a string", "invalid_arguments")
        args = dict(arguments or {})
        return await self._request(label, timeout_seconds, lambda s: s.get_prompt(name, args))

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        context: Mapping[str, str] | None,
        timeout_seconds: float | None,
    ) -> ToolResultEnvelope:
        found = completion_ref(ref)
        if isinstance(found, str):
            return self.failure("completion/complete", f"not sent: {found}", "invalid_arguments")
        kind, target = found
        label = f"completion/complete {target!r}"
        reference: types.PromptReference | types.ResourceTemplateReference = (
            types.PromptReference(name=target) if kind == PROMPT_REF else types.ResourceTemplateReference(uri=target)
        )
        ctx = dict(context) if context is not None else None
        return await self._request(
            label, timeout_seconds, lambda s: s.complete(reference, {"name": argument, "value": value}, ctx)
        )

    async def _request(
        self, label: str, timeout_seconds: float | None, send: Callable[[ClientSession], Awaitable[Any]]
    ) -> ToolResultEnvelope:
        timeout = DEFAULT_TIMEOUT_SECONDS if timeout_seconds is None else timeout_seconds
        conn: Connection | None = None
        try:
            with anyio.fail_after(timeout):
                conn, session = await self._keeper.acquire()
                result = await send(session)
        except TimeoutError:
            if conn is not None and conn.mid_answer():
                conn.broken = True
            return self.failure(label, f"timed out after {timeout} s", "timeout")
        except ToolServerError as exc:
            return self.failure(label, f"failed: {exc.detail}", "unavailable")
        except Exception as exc:
            if conn is not None:
                conn.note_failure(exc)
                if conn.fault is not None:
                    return self.failure(label, f"failed: {conn.fault}", "protocol")
            return self.error_envelope(label, exc)
        wire = redact.blank_json(dump_wire(result), self._keeper.secrets)
        meta = wire.pop("_meta", None)
        for key in _PROTOCOL_KEYS:  # the protocol's, not the answer's
            wire.pop(key, None)
        return ToolResultEnvelope.success(wire, meta=meta)

    def error_envelope(self, label: str, exc: Exception) -> ToolResultEnvelope:
        if isinstance(exc, MCPError):
            message = self._keeper.scrub(exc.message)
            if exc.code == types.CONNECTION_CLOSED:
                detail = "the connection to the server closed (did it exit?); the next request reconnects"
                return self.failure(label, f"failed: {detail}", "unavailable")
            if exc.code == RESOURCE_NOT_FOUND:
                kind = "unknown_tool"
            elif exc.code == types.INVALID_PARAMS:
                lowered = message.lower()
                kind = "unknown_tool" if "not found" in lowered or "unknown" in lowered else "invalid_arguments"
            else:
                kind = kind_of_error_code(exc.code)[0]
            return self.failure(label, f"failed: {message} (MCP error {exc.code})", kind)
        # The SDK raises ValueError (pydantic) or RuntimeError for answers it cannot use.
        kind = "protocol" if isinstance(exc, RuntimeError | ValueError) else "unavailable"
        return self.failure(label, f"failed: {self._keeper.text(exc)}", kind)

    def failure(self, label: str, what: str, kind: str) -> ToolResultEnvelope:
        text = one_line(f"MCP server {self.name!r}: {label} {what}")
        return ToolResultEnvelope.failure(clip(self._keeper.scrub(text), self.config.max_error_chars), kind=kind)
