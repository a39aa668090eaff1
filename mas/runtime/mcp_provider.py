"""MCPToolProvider: the ToolContract surface over one MCP server, on the official MCP SDK.

``list_tools()`` discovers the server's tools (following ``nextCursor``) and ``call_tool()``
sends ``tools/call`` with the same name and arguments; results come back as
:class:`ToolResultEnvelope`. ``call_tool`` never raises: timeouts, a server that exits mid-call,
connection failures and unknown tools all become one-line error envelopes naming the server.

Threading model: each provider owns a private event loop on a daemon thread
(:class:`~mas.runtime._loop.BackgroundLoop`). One long-lived task on that loop enters the SDK's
transport and ``ClientSession`` context managers and exits them again (the SDK requires the
same task for both). Sync methods block on that loop; async methods await it from any loop.

Transports (from :class:`MCPServerConfig`): ``stdio`` (command/args/env/cwd; a command of
exactly ``python`` or ``python3`` runs ``sys.executable`` so a server module runs in the same
virtualenv as the runtime), ``streamable-http`` and ``sse`` (url, headers). Header values
``env:VAR`` are read from the environment at connect time and scrubbed from every message.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import math
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, suppress
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol, cast

import anyio
import httpx2
import mcp_types as types
from mcp.client._transport import TransportStreams
from mcp.client.session import ClientSession, IncomingMessage
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter, ValidationError

from mas.runtime._loop import BackgroundLoop, LoopThreadError
from mas.runtime._mcp_convert import (
    ToolServerError,
    dump_wire,
    envelope_from_result,
    exception_text,
    one_line,
    resolve_headers,
    scrub,
    server_identity,
    tool_entry_from_mcp,
)
from mas.runtime.config import MCPServerConfig
from mas.runtime.contracts.tool_contract import ToolResultEnvelope

__all__ = ["LoopThreadError", "MCPToolProvider", "ToolServerError"]

logger = logging.getLogger(__name__)

ProgressCallback = Callable[[float, float | None, str | None], Any]
_POLL_SECONDS = 0.05  # how often a cancel_event is polled
_CLOSE_TIMEOUT = 15.0  # the SDK's stdio shutdown escalates within ~6 s; leave headroom
_INPUT_RESPONSES: TypeAdapter[dict[str, types.InputResponse]] = TypeAdapter(dict[str, types.InputResponse])

# Process-wide listing cache (cache_scope "process"): identity -> (expires at, raw MCP tools).
_PROCESS_CACHE: dict[tuple[Any, ...], tuple[float, list[dict[str, Any]]]] = {}
_PROCESS_CACHE_LOCK = threading.Lock()


class _Settable(Protocol):
    def is_set(self) -> bool: ...


@dataclass(eq=False)
class _Connection:
    """One live session and the task that owns its context managers."""

    ready: asyncio.Future[ClientSession]
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    broken: bool = False
    listed: bool = False

    def usable(self) -> bool:
        if self.broken or self.task is None or self.task.done():
            return False
        if not self.ready.done():
            return True  # still connecting: share it
        if self.ready.cancelled() or self.ready.exception() is not None:
            return False
        # The SDK has no public "closed" flag; its dispatcher marks EOF here (best effort).
        return not getattr(getattr(self.ready.result(), "_dispatcher", None), "_closed", False)


class MCPToolProvider:
    """List and call the tools of one MCP server through the ToolContract surface."""

    def __init__(self, config: MCPServerConfig) -> None:
        self.config = config
        self._runner = BackgroundLoop(f"MCP server {config.name!r}", async_hint="acall_tool()/alist_tools()")
        self._conn: _Connection | None = None
        self._conn_lock: asyncio.Lock | None = None  # created on the background loop
        self._cache: tuple[float, list[dict[str, Any]]] | None = None
        self._secrets: set[str] = set()
        self._closed = False

    @property
    def name(self) -> str:
        return self.config.name

    def __repr__(self) -> str:  # never shows headers or env
        return f"MCPToolProvider(name={self.name!r}, transport={self.config.transport!r})"

    # --- listing ------------------------------------------------------------------------------
    def list_tools(self) -> list[dict[str, Any]]:
        """Contract entries (``name``, ``description``, ``parameters`` + advertise keys when set)."""
        return [tool_entry_from_mcp(tool) for tool in self.list_mcp_tools()]

    async def alist_tools(self) -> list[dict[str, Any]]:
        return [tool_entry_from_mcp(tool) for tool in await self.alist_mcp_tools()]

    def list_mcp_tools(self) -> list[dict[str, Any]]:
        """The raw MCP tool objects (wire keys), in server order, across all pages."""
        if self.config.tools is not None:
            return self._explicit_tools()
        return self._runner.run(self._list_mcp_tools())

    async def alist_mcp_tools(self) -> list[dict[str, Any]]:
        if self.config.tools is not None:
            return self._explicit_tools()
        return await self._runner.arun(self._list_mcp_tools())

    def _explicit_tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        for index, raw in enumerate(self.config.tools or ()):
            try:
                tools.append(dump_wire(types.Tool.model_validate(dict(raw), by_name=False)))
            except ValidationError as exc:
                raise ToolServerError(
                    self.name, f"explicit tools[{index}] is not a valid MCP tool: {one_line(str(exc))}"
                ) from None
        return tools

    async def _list_mcp_tools(self) -> list[dict[str, Any]]:
        cached = self._cached_listing()
        if cached is not None:
            return cached
        tools = await self._fetch_listing()
        self._store_listing(tools)
        return copy.deepcopy(tools)

    def _cached_listing(self) -> list[dict[str, Any]] | None:
        if self.config.cache_ttl_ms <= 0:
            return None
        now = time.monotonic()
        if self.config.cache_scope == "process":
            with _PROCESS_CACHE_LOCK:
                hit = _PROCESS_CACHE.get(server_identity(self.config))
        else:
            hit = self._cache
        if hit is None or hit[0] <= now:
            return None
        return copy.deepcopy(hit[1])  # callers may mutate what they get

    def _store_listing(self, tools: list[dict[str, Any]]) -> None:
        if self.config.cache_ttl_ms <= 0:
            return
        entry = (time.monotonic() + self.config.cache_ttl_ms / 1000, copy.deepcopy(tools))
        if self.config.cache_scope == "process":
            with _PROCESS_CACHE_LOCK:
                _PROCESS_CACHE[server_identity(self.config)] = entry
        else:
            self._cache = entry

    async def _fetch_listing(self) -> list[dict[str, Any]]:
        conn, session = await self._session()
        cfg = self.config
        tools: list[dict[str, Any]] = []
        seen: set[str] = set()
        cursor: str | None = None
        pages = 0
        try:
            while True:
                if pages >= cfg.max_pages:
                    raise ToolServerError(
                        self.name, f"tools/list returned more than max_pages={cfg.max_pages} pages; stopped paging"
                    )
                params = types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
                # tools/list has no timeout of its own; a hung server must not hang discovery.
                with anyio.fail_after(cfg.connect_timeout_seconds):
                    page = await session.list_tools(params=params)
                pages += 1
                tools.extend(dump_wire(tool) for tool in page.tools)
                if not cfg.follow_pagination or not page.next_cursor:
                    break
                if page.next_cursor in seen or page.next_cursor == cursor:
                    raise ToolServerError(
                        self.name,
                        f"tools/list repeated cursor {page.next_cursor!r} on page {pages + 1}; stopped paging",
                    )
                if cursor is not None:
                    seen.add(cursor)
                cursor = page.next_cursor
        except ToolServerError:
            raise
        except TimeoutError:
            raise ToolServerError(
                self.name, f"tools/list timed out after {cfg.connect_timeout_seconds} s (page {pages + 1})"
            ) from None
        except Exception as exc:
            self._note_failure(conn, exc)
            raise ToolServerError(self.name, f"tools/list failed: {self._text(exc)}") from None
        conn.listed = cfg.follow_pagination
        return tools

    # --- calling ------------------------------------------------------------------------------
    def call_tool(
        self,
        tool_name: str,
        arguments: Mapping[str, Any] | None,
        *,
        timeout_seconds: float | None = None,
        progress_callback: ProgressCallback | None = None,
        cancel_event: _Settable | None = None,
        meta: Mapping[str, Any] | None = None,
        input_responses: Mapping[str, Any] | None = None,
        request_state: str | None = None,
        allow_input_required: bool | None = None,
        allow_claimed: bool | None = None,
        ctx: Any = None,
        user: str = "",
    ) -> ToolResultEnvelope:
        """Send ``tools/call``; block until the envelope is ready. Never raises (except on misuse:
        calling it on the provider's own loop thread raises :class:`LoopThreadError`).

        ``ctx`` and ``user`` are accepted for the contract and have no MCP mapping.
        """
        call = self._call(
            tool_name, arguments, timeout_seconds, progress_callback, cancel_event, meta,
            input_responses, request_state, allow_input_required, allow_claimed, caller_loop=None,
        )  # fmt: skip
        try:
            return self._runner.run(call)
        except LoopThreadError:
            raise
        except Exception as exc:  # closed provider, loop failure: still an envelope
            return self._failure(tool_name, f"failed: {self._text(exc)}")

    async def acall_tool(
        self,
        tool_name: str,
        arguments: Mapping[str, Any] | None,
        *,
        timeout_seconds: float | None = None,
        progress_callback: ProgressCallback | None = None,
        cancel_event: _Settable | None = None,
        meta: Mapping[str, Any] | None = None,
        input_responses: Mapping[str, Any] | None = None,
        request_state: str | None = None,
        allow_input_required: bool | None = None,
        allow_claimed: bool | None = None,
        ctx: Any = None,
        user: str = "",
    ) -> ToolResultEnvelope:
        """Async twin of :meth:`call_tool`; async progress callbacks run on the caller's loop."""
        call = self._call(
            tool_name, arguments, timeout_seconds, progress_callback, cancel_event, meta,
            input_responses, request_state, allow_input_required, allow_claimed,
            caller_loop=asyncio.get_running_loop(),
        )  # fmt: skip
        try:
            return await self._runner.arun(call)
        except Exception as exc:
            return self._failure(tool_name, f"failed: {self._text(exc)}")

    async def _call(
        self,
        tool_name: str,
        arguments: Mapping[str, Any] | None,
        timeout_seconds: float | None,
        progress_callback: ProgressCallback | None,
        cancel_event: _Settable | None,
        meta: Mapping[str, Any] | None,
        input_responses: Mapping[str, Any] | None,
        request_state: str | None,
        allow_input_required: bool | None,
        allow_claimed: bool | None,
        *,
        caller_loop: asyncio.AbstractEventLoop | None,
    ) -> ToolResultEnvelope:
        if cancel_event is not None and cancel_event.is_set():
            return self._failure(tool_name, "was cancelled before it started")
        try:
            responses = None if input_responses is None else _INPUT_RESPONSES.validate_python(dict(input_responses))
        except ValidationError as exc:
            return self._failure(tool_name, f"failed: invalid input_responses: {one_line(str(exc))}")
        relay = _ProgressRelay(progress_callback, caller_loop, self._label(tool_name)) if progress_callback else None

        async def send() -> ToolResultEnvelope:
            conn, session = await self._session()
            await self._prefetch_listing(conn)
            try:
                result = await session.call_tool(
                    tool_name,
                    dict(arguments or {}),
                    read_timeout_seconds=timeout_seconds,
                    progress_callback=relay,
                    input_responses=responses,
                    request_state=request_state,
                    meta=cast(Any, dict(meta)) if meta is not None else None,
                    allow_input_required=bool(allow_input_required),
                    allow_claimed=bool(allow_claimed),
                )
            except MCPError as exc:
                if exc.code == types.REQUEST_TIMEOUT:
                    return self._failure(tool_name, f"timed out after {timeout_seconds} s")
                self._note_failure(conn, exc)
                if exc.code == types.CONNECTION_CLOSED:
                    return self._failure(
                        tool_name,
                        "failed: the connection closed mid-call (did the server exit?); the next call reconnects",
                    )
                return self._failure(tool_name, f"failed: {self._scrub(exc.message)} (MCP error {exc.code})")
            except Exception as exc:
                # SDK-level complaints (RuntimeError, bad result shape) leave the session usable;
                # anything else is a transport failure, so reconnect next time.
                if not isinstance(exc, RuntimeError | ValidationError):
                    conn.broken = True
                raise
            return envelope_from_result(result)

        relay_task = asyncio.ensure_future(relay.run()) if relay else None
        work = asyncio.ensure_future(send())
        try:
            if cancel_event is not None:
                while not work.done():
                    await asyncio.wait({work}, timeout=_POLL_SECONDS)
                    if not work.done() and cancel_event.is_set():
                        work.cancel()  # the SDK sends notifications/cancelled for the in-flight request
                        with suppress(BaseException):
                            await work
                        return self._failure(tool_name, "was cancelled by the caller (cancel_event)")
            envelope = await work
        except ToolServerError as exc:
            return self._failure(tool_name, f"failed: {exc.detail}")
        except Exception as exc:
            return self._failure(tool_name, f"failed: {self._text(exc)}")
        finally:
            if not work.done():
                work.cancel()
            if relay is not None and relay_task is not None:
                await relay.finish(relay_task)
        return envelope

    async def _prefetch_listing(self, conn: _Connection) -> None:
        # The SDK validates structured results against output schemas it has seen in tools/list,
        # but only fetches the first page itself; one full listing per session covers every page.
        if conn.listed or self.config.tools is not None or not self.config.follow_pagination:
            return
        conn.listed = True
        try:
            self._store_listing(await self._fetch_listing())
        except ToolServerError as exc:
            logger.debug("%s", exc)

    # --- connection ---------------------------------------------------------------------------
    async def _session(self) -> tuple[_Connection, ClientSession]:
        """The live session, connecting (or reconnecting after the server died) when needed."""
        if self._closed:
            raise ToolServerError(self.name, "the provider is closed")
        if self._conn_lock is None:
            self._conn_lock = asyncio.Lock()
        async with self._conn_lock:
            conn = self._conn
            if conn is not None and not conn.usable():
                self._conn = None
                await self._stop(conn)
                logger.info("MCP server %r: reconnecting", self.name)
                conn = None
            if conn is None:
                conn = _Connection(ready=asyncio.get_running_loop().create_future())
                conn.task = asyncio.ensure_future(self._own_session(conn))
                self._conn = conn
        try:
            # Shielded: a cancelled call must not abort a connect other calls may share.
            return conn, await asyncio.shield(conn.ready)
        except BaseException:
            if self._conn is conn and conn.ready.done():
                self._conn = None
            raise

    async def _own_session(self, conn: _Connection) -> None:
        """Enter transport + session, initialize, then hold them open until asked to stop."""
        timeout = self.config.connect_timeout_seconds
        try:
            with anyio.CancelScope() as scope:
                # One scope around everything so the connect deadline can be lifted once
                # initialized without exiting a cancel scope out of order.
                scope.deadline = anyio.current_time() + timeout
                async with AsyncExitStack() as stack:
                    read, write = await stack.enter_async_context(self._transport(stack))
                    session = await stack.enter_async_context(
                        ClientSession(read, write, message_handler=self._on_message)
                    )
                    await session.initialize()
                    scope.deadline = math.inf
                    logger.debug("MCP server %r: connected over %s", self.name, self.config.transport)
                    conn.ready.set_result(session)
                    await conn.stop.wait()
            if scope.cancelled_caught and not conn.ready.done():
                conn.ready.set_exception(
                    ToolServerError(self.name, f"connect + initialize timed out after {timeout} s")
                )
        except ToolServerError as exc:
            if not conn.ready.done():
                conn.ready.set_exception(exc)
        except Exception as exc:
            if not conn.ready.done():
                conn.ready.set_exception(ToolServerError(self.name, f"could not connect: {self._text(exc)}"))
            else:
                logger.debug("MCP server %r: session ended: %s", self.name, self._text(exc))
        finally:
            conn.broken = True
            if not conn.ready.done():
                conn.ready.set_exception(ToolServerError(self.name, "the connection closed during connect"))
            # Nobody may be waiting on `ready`; mark the exception retrieved to avoid a noisy warning.
            if not conn.ready.cancelled():
                conn.ready.exception()

    def _transport(self, stack: AsyncExitStack) -> AbstractAsyncContextManager[TransportStreams]:
        cfg = self.config
        if cfg.transport == "stdio":
            if not cfg.command:
                raise ToolServerError(self.name, "stdio transport needs a command")
            # A bare "python" would run whatever interpreter PATH finds, not the runtime's venv.
            command = sys.executable if cfg.command in ("python", "python3") else cfg.command
            params = StdioServerParameters(command=command, args=list(cfg.args), env=dict(cfg.env) or None, cwd=cfg.cwd)
            return stdio_client(params, errlog=_errlog())
        if not cfg.url:
            raise ToolServerError(self.name, f"{cfg.transport} transport needs a url")
        headers, secrets = resolve_headers(cfg)
        self._secrets |= secrets
        if cfg.transport == "streamable-http":
            client = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(cfg.connect_timeout_seconds, read=300))
            stack.push_async_callback(client.aclose)
            return streamable_http_client(cfg.url, http_client=client)
        if cfg.transport == "sse":
            return cast(
                AbstractAsyncContextManager[TransportStreams],
                sse_client(cfg.url, headers=headers, timeout=cfg.connect_timeout_seconds),
            )
        raise ToolServerError(self.name, f"unsupported transport {cfg.transport!r}")

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):  # transport faults; the calls they break report them
            logger.debug("MCP server %r: transport error: %s", self.name, self._text(message))
        await anyio.lowlevel.checkpoint()

    def _note_failure(self, conn: _Connection, exc: BaseException) -> None:
        if isinstance(exc, MCPError) and exc.code != types.CONNECTION_CLOSED:
            return  # the server answered: the session is fine
        conn.broken = True

    async def _stop(self, conn: _Connection) -> None:
        conn.stop.set()
        if conn.task is not None and not conn.task.done():
            try:
                await asyncio.wait_for(asyncio.shield(conn.task), _CLOSE_TIMEOUT)
            except TimeoutError:
                conn.task.cancel()
                with suppress(BaseException):
                    await conn.task

    # --- lifecycle ----------------------------------------------------------------------------
    async def _shutdown(self) -> None:
        self._closed = True
        conn, self._conn = self._conn, None
        if conn is not None:
            await self._stop(conn)

    def close(self) -> None:
        """Close the session (stopping a stdio server) and the background thread. Idempotent."""
        if self._runner.in_loop_thread():
            raise LoopThreadError(f"MCP server {self.name!r}: close() on the provider's loop thread; use aclose()")
        self._closed = True
        if self._runner.loop is not None:
            with suppress(RuntimeError):
                self._runner.run(self._shutdown())
        self._runner.close()

    async def aclose(self) -> None:
        self._closed = True
        if self._runner.loop is not None:
            with suppress(RuntimeError):
                await self._runner.arun(self._shutdown())
        await asyncio.to_thread(self._runner.close)

    def __enter__(self) -> MCPToolProvider:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    async def __aenter__(self) -> MCPToolProvider:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # --- messages -----------------------------------------------------------------------------
    def _label(self, tool_name: str) -> str:
        return f"MCP server {self.name!r}: tools/call {tool_name!r}"

    def _failure(self, tool_name: str, what: str) -> ToolResultEnvelope:
        return ToolResultEnvelope.failure(self._scrub(one_line(f"{self._label(tool_name)} {what}")))

    def _scrub(self, text: str) -> str:
        return scrub(text, self._secrets)

    def _text(self, exc: BaseException) -> str:
        return exception_text(exc, self._secrets)


class _ProgressRelay:
    """Delivers progress to the user's callback in wire order, one at a time.

    The SDK runs each progress notification in its own task; enqueueing synchronously keeps
    their order, and a single consumer keeps callbacks from overlapping.
    """

    def __init__(self, callback: ProgressCallback, caller_loop: asyncio.AbstractEventLoop | None, label: str) -> None:
        self._callback = callback
        self._caller_loop = caller_loop
        self._label = label
        self._queue: asyncio.Queue[tuple[float, float | None, str | None] | None] = asyncio.Queue()

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self._queue.put_nowait((progress, total, message))

    async def run(self) -> None:
        while (item := await self._queue.get()) is not None:
            try:
                await self._deliver(*item)
            except Exception as exc:
                logger.warning("%s: progress callback raised %s", self._label, type(exc).__name__)

    async def _deliver(self, progress: float, total: float | None, message: str | None) -> None:
        outcome = self._callback(progress, total, message)
        if not isinstance(outcome, Awaitable):
            return
        loop = self._caller_loop
        if asyncio.iscoroutine(outcome) and loop is not None and loop is not asyncio.get_running_loop():
            # An async callback belongs to the caller's loop (its events, queues, tasks).
            if loop.is_closed():
                outcome.close()
                return
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(outcome, loop))
        else:
            await outcome

    async def finish(self, task: asyncio.Future[None]) -> None:
        """Let already-received progress reach the callback, then stop the consumer."""
        self._queue.put_nowait(None)
        try:
            await asyncio.wait_for(asyncio.shield(task), _CLOSE_TIMEOUT)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
            raise


def _errlog() -> Any:
    # The SDK hands this to the child as its stderr, so it needs a real file descriptor
    # (pytest and notebooks may replace sys.stderr with an in-memory stream).
    try:
        sys.stderr.fileno()
        return sys.stderr
    except (AttributeError, OSError, ValueError):
        return sys.__stderr__
