"""The MCP provider's connection machinery: one SDK session per provider, reconnected on demand.

The SDK's transport and ``ClientSession`` context managers must be entered and exited by the
same task, so :class:`SessionKeeper` starts one owner task per connection that enters them,
initializes, hands the session out and then waits to be told to stop. Calls use the session
from their own tasks, which the SDK allows. Everything here runs on the provider's loop.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import sys
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any, cast

import anyio
import anyio.lowlevel
import httpx2
import mcp_types as types
from mcp.client._probe import negotiate_auto  # the SDK's own mode="auto" policy (Client uses it)
from mcp.client._transport import TransportStreams
from mcp.client.session import ClientSession, IncomingMessage
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mas.runtime import redact
from mas.runtime.config import MCPServerConfig
from mas.runtime.mcp._convert import ToolServerError, clip, exception_text, resolve_env, resolve_headers, scrub
from mas.runtime.mcp._http_limits import ACCEPT_ENCODING, HttpState, limit_responses
from mas.runtime.mcp._input import InputBridge
from mas.runtime.mcp._oauth import AuthorizeCallback, build_auth
from mas.runtime.mcp._server_stderr import StderrSink
from mas.runtime.mcp._server_stderr import report as report_stderr
from mas.runtime.mcp._stdio import StdioLimits, StdioState, stdio_transport
from mas.runtime.mcp._tasks import client_extension_kwargs

__all__ = [
    "CLIENT_INFO",
    "CLOSE_TIMEOUT",
    "Connection",
    "ProgressCallback",
    "ProgressRelay",
    "SessionKeeper",
    "falls_back",
    "pinned_discover",
]

logger = logging.getLogger("mas.runtime.mcp_provider")

ProgressCallback = Callable[[float, float | None, str | None], Any]
#: Upper bound for tearing a session down; the SDK's stdio shutdown escalates within ~6 s.
CLOSE_TIMEOUT = 15.0
#: A failed probe that took this long was waited out, not refused: worth a hint to skip it.
_SLOW_PROBE_SECONDS = 3.0
#: A Python server that died importing its own code (often a published server built on the mcp
#: 1.x SDK, run in an environment with mcp 2.x): the last stderr line of its traceback.
_IMPORT_CRASH = re.compile(r"^(?:ImportError|ModuleNotFoundError|AttributeError: module )|cannot import name ")
IMPORT_CRASH_HINT = (
    "a Python server that cannot import its own code usually needs an environment of its own "
    "(one built on the mcp 1.x SDK cannot share toolgen's mcp 2.x): set its `command` to that "
    'environment\'s interpreter or script (docs/infra.md, "A server in its own environment")'
)


def _limits(cfg: MCPServerConfig) -> StdioLimits:
    """One message's limits from the infra keys, the same on every transport."""
    return StdioLimits(max_message_bytes=cfg.max_result_bytes, max_json_depth=cfg.max_json_depth)


def _client_info() -> types.Implementation:
    try:
        release = version("toolgen")
    except PackageNotFoundError:  # a source tree that was never installed
        release = "0+unknown"
    return types.Implementation(name="toolgen", title="toolgen runtime (mas.runtime)", version=release)


#: Who the client says it is, in ``initialize`` and in ``server/discover``'s ``_meta``.
CLIENT_INFO = _client_info()


@dataclass(eq=False)
class Connection:
    """One session and the task that owns its context managers."""

    ready: asyncio.Future[ClientSession]
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    broken: bool = False
    #: A full paginated tools/list ran on this session (so the SDK knows every output schema).
    listed: bool = False
    #: How many ``tools/list_changed`` notifications arrived on this session.
    changes: int = 0
    #: ``changes`` as it was when the last listing checked against a pin began (None: never).
    pin_checked: int | None = None
    #: What the stdio reader knows (a fault it ended the connection for, a partial answer); None on HTTP.
    stdio: StdioState | None = None
    #: What the HTTP response limits know (a fault they ended the connection for); None on stdio.
    http: HttpState | None = None
    #: Tool name -> ``execution.taskSupport`` from this session's last full listing (None: not listed).
    task_support: dict[str, str] | None = None

    @property
    def fault(self) -> str | None:
        """Why the transport itself ended this connection (e.g. a message over max_result_bytes)."""
        for state in (self.stdio, self.http):
            if state is not None and state.fault is not None:
                return state.fault
        return None

    def mid_answer(self) -> bool:
        """Part of a message has arrived and the rest has not (a call timed out while it was sent)."""
        return self.stdio is not None and self.stdio.partial > 0

    def usable(self) -> bool:
        if self.broken or self.task is None or self.task.done():
            return False
        if not self.ready.done():
            return True  # still connecting: share it
        if self.ready.cancelled() or self.ready.exception() is not None:
            return False
        # The SDK has no public "closed" flag; its dispatcher marks EOF here (best effort).
        return not getattr(getattr(self.ready.result(), "_dispatcher", None), "_closed", False)

    def note_failure(self, exc: BaseException) -> None:
        """Mark the session for replacement unless the failure left it intact."""
        if isinstance(exc, MCPError):
            if exc.code == types.CONNECTION_CLOSED:
                self.broken = True
            return  # the server answered: the session is fine
        if not isinstance(exc, RuntimeError | ValueError):  # SDK complaints (bad result shape) keep it too
            self.broken = True


class SessionKeeper:
    """Owns the provider's current :class:`Connection`; connects and reconnects on demand."""

    def __init__(self, config: MCPServerConfig, *, authorize: AuthorizeCallback | None = None) -> None:
        self.config = config
        self.name = config.name
        #: Resolved secret values (headers, OAuth secrets and tokens), only to blank them out of messages.
        self.secrets: set[str] = set()
        self.closed = False
        #: The handshake (infra ``connect_mode``); ``auto`` turns into ``legacy`` once a server needed it.
        self.mode = config.connect_mode
        self._probing = False  # an ``auto`` probe is out (for the timeout message)
        self._authorize = authorize
        self._conn: Connection | None = None
        #: The calls in flight and the server-to-client requests routed to them (``_mcp_input``).
        self.inputs = InputBridge(config.name, config.client_capabilities, config.max_client_requests)
        #: Lines the current connection's server(s) wrote on stderr, reported when it ends.
        self._stderr_lines = 0
        self._stderr_last: str | None = None  # the last stderr line of the latest stdio process
        self._lock: asyncio.Lock | None = None  # created lazily on the provider's loop
        self._clock: _ConnectClock | None = None
        # One OAuth provider per keeper: a reconnect keeps its tokens and discovered metadata.
        self._auth: httpx2.Auth | None = None
        self._auth_built = False
        #: Called when the server says its tool list changed (the provider drops its cache).
        self.on_list_changed: Callable[[], None] | None = None
        #: Called when the server says its resources or prompts changed (the surface drops its cache).
        self.on_surface_changed: Callable[[], None] | None = None
        #: Called with the URI of each ``notifications/resources/updated`` (2025-11-25 subscriptions).
        self.on_resource_updated: Callable[[str], None] | None = None
        #: Called when a connection has ended (its resource subscriptions end with it).
        self.on_connection_end: Callable[[Connection], None] | None = None
        #: Subscribe to tools/list_changed on modern (2026-07-28) sessions: set for pinned servers.
        self.watch_tools = False

    def remember_secret(self, value: str) -> None:
        """A secret resolved for this server (an OAuth token, a client secret): blanked from
        this provider's messages and, through ``mas.runtime.redact``, from every output of the process."""
        if value:
            self.secrets.add(value)
            redact.remember([value])

    def text(self, exc: BaseException) -> str:
        """The exception as one blanked line, cut to ``max_error_chars`` (a server's 10 MB message)."""
        return clip(exception_text(exc, self.secrets), self.config.max_error_chars)

    def scrub(self, text: str) -> str:
        return scrub(text, self.secrets)

    async def acquire(self) -> tuple[Connection, ClientSession]:
        """The live session, connecting (or reconnecting after the server died) when needed."""
        if self.closed:
            raise ToolServerError(self.name, "the provider is closed")
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            conn = self._conn
            if conn is not None and not conn.usable():
                self._conn = None
                await self._stop(conn)
                logger.info("MCP server %r: reconnecting", self.name)
                conn = None
            if conn is None:
                conn = Connection(ready=asyncio.get_running_loop().create_future())
                conn.task = asyncio.ensure_future(self._own(conn))
                self._conn = conn
        try:
            # Shielded: one cancelled call must not abort a connect that other calls share.
            return conn, await asyncio.shield(conn.ready)
        except BaseException:
            # A failed connect whose owner task still tears down stays here, so the next acquire
            # or shutdown waits for that teardown instead of leaving it running.
            if self._conn is conn and conn.ready.done() and conn.task is not None and conn.task.done():
                self._conn = None
            raise

    async def shutdown(self) -> None:
        self.closed = True
        self.inputs.close()
        conn, self._conn = self._conn, None
        if conn is not None:
            await self._stop(conn)

    async def _stop(self, conn: Connection) -> None:
        conn.stop.set()
        if conn.task is not None and not conn.task.done():
            try:
                await asyncio.wait_for(asyncio.shield(conn.task), CLOSE_TIMEOUT)
            except TimeoutError:
                conn.task.cancel()
                with suppress(BaseException):
                    await conn.task

    async def _own(self, conn: Connection) -> None:
        """Enter transport + session, negotiate, then hold them open until asked to stop."""
        timeout = self.config.connect_timeout_seconds

        def expire() -> None:
            # Report the timeout when it happens: tearing the transport down (stopping a stdio
            # child) may take seconds more, and nobody should wait for that.
            if not conn.ready.done():
                conn.ready.set_exception(ToolServerError(self.name, self._timed_out(conn, timeout)))

        timer = asyncio.get_running_loop().call_later(timeout, expire)
        try:
            with anyio.CancelScope() as scope:
                # One scope around everything: the connect deadline is lifted once negotiated,
                # without exiting a cancel scope out of order.
                scope.deadline = anyio.current_time() + timeout
                self._clock = _ConnectClock(scope, timer, timeout, expire)
                await self._ensure_auth()
                for mode in self._modes():
                    async with AsyncExitStack() as stack:
                        read, write = await stack.enter_async_context(self._transport(stack, conn))
                        session = await stack.enter_async_context(
                            ClientSession(
                                read,
                                write,
                                message_handler=self._on_message,
                                client_info=CLIENT_INFO,
                                **self.inputs.session_callbacks(conn),
                                # Declared on modern sessions only (SEP-2663): tasks are followed here.
                                **client_extension_kwargs(),
                            )
                        )
                        started = anyio.current_time()
                        try:
                            await self._handshake(session, mode)
                        except Exception as exc:
                            if mode != "auto" or not falls_back(exc):
                                raise
                            # Leaving the block stops this connection; the next mode starts afresh.
                            self._fell_back(exc, anyio.current_time() - started)
                            continue
                        self._clock.stop()
                        self._clock = None
                        logger.debug("MCP server %r: connected over %s (%s)", self.name, self.config.transport, mode)
                        conn.ready.set_result(session)
                        await self._hold(conn, session)
                        break
            if scope.cancelled_caught and not conn.ready.done():
                conn.ready.set_exception(ToolServerError(self.name, self._timed_out(conn, timeout)))
        except ToolServerError as exc:
            if not conn.ready.done():
                conn.ready.set_exception(exc)
        except Exception as exc:
            if not conn.ready.done():
                conn.ready.set_exception(ToolServerError(self.name, self._could_not_connect(exc)))
            else:
                logger.debug("MCP server %r: session ended: %s", self.name, self.text(exc))
        finally:
            if self._clock is not None:
                self._clock.stop()  # it may have re-armed its own timer after a sign-in
                self._clock = None
            timer.cancel()
            conn.broken = True
            if self.on_connection_end is not None:
                self.on_connection_end(conn)
            # One line per connection, a failed discover attempt's server included.
            lines, self._stderr_lines = self._stderr_lines, 0
            report_stderr(self.name, lines)
            if not conn.ready.done():
                conn.ready.set_exception(ToolServerError(self.name, "the connection closed during connect"))
            # Nobody may be waiting on `ready` any more; mark its exception as retrieved.
            if not conn.ready.cancelled():
                conn.ready.exception()

    async def _ensure_auth(self) -> None:
        """Build the OAuth provider of an HTTP server with ``auth:`` once, on its first connect."""
        if not self._auth_built and self.config.auth is not None and self.config.transport != "stdio":
            self._auth = await build_auth(
                self.config,
                on_secret=self.remember_secret,
                authorize=self._authorize,
                person_wait=self.person_wait,
            )
            self._auth_built = True

    async def _hold(self, conn: Connection, session: ClientSession) -> None:
        """Keep a negotiated session open (watching its tool list, if asked) until asked to stop."""
        async with anyio.create_task_group() as watchers:
            if self.watch_tools:
                watchers.start_soon(self._watch_tools, conn, session)
            await conn.stop.wait()
            watchers.cancel_scope.cancel()

    def _modes(self) -> tuple[str, ...]:
        """The handshakes to try, in order: ``auto`` ends with ``legacy`` on a fresh connection."""
        mode = self.mode
        return ("auto", "legacy") if mode == "auto" else (mode,)

    async def _handshake(self, session: ClientSession, mode: str) -> None:
        if mode == "legacy":
            await session.initialize()
        elif mode == "auto":
            # The SDK's own policy (what ``Client(mode="auto")`` runs): probe server/discover (the
            # SDK waits 10 s for it) and fall back to initialize on this session for any answer that
            # is not modern evidence. The probe has the whole connect budget: a cold start (npx, a
            # loaded machine) must not be mistaken for a server that never answers.
            self._probing = True
            try:
                await negotiate_auto(session)
            finally:
                self._probing = False
        else:  # a pinned modern version: adopt it without a probe, as Client(mode=version) does
            session.adopt(pinned_discover(mode))

    def _fell_back(self, exc: Exception, seconds: float) -> None:
        """Remember that this server needs ``initialize`` (reconnects skip the probe) and say why."""
        self.mode = "legacy"
        if seconds >= _SLOW_PROBE_SECONDS:
            # The probe waited for an answer that never came (mcp 1.6 stops reading): tell how to
            # avoid the wait. Quick fallbacks are normal for older servers and shown only with -v.
            logger.warning(
                "MCP server %r did not answer server/discover (%.0f s: %s); connected again with the "
                "initialize handshake (set `connect_mode: legacy` on its infra entry to skip the probe)",
                self.name,
                seconds,
                self.text(exc),
            )
        else:
            logger.info(
                "MCP server %r: server/discover failed (%s); connecting again with the initialize handshake",
                self.name,
                self.text(exc),
            )

    def _timed_out(self, conn: Connection, timeout: float) -> str:
        # A server that printed only a banner (or Latin-1 noise) did not "time out" for no reason.
        hint = "" if conn.stdio is None else conn.stdio.noise_hint()
        if not hint and self._probing:  # mcp 1.6 servers never answer the probe: the way round it
            hint = " (server/discover got no answer; a server on the mcp 1.x SDK needs `connect_mode: legacy`)"
        return f"connect + initialize timed out after {timeout} s{hint}"

    def _transport(self, stack: AsyncExitStack, conn: Connection) -> AbstractAsyncContextManager[TransportStreams]:
        cfg = self.config
        if cfg.transport == "stdio":
            if not cfg.command:
                raise ToolServerError(self.name, "stdio transport needs a command")
            # A bare "python" would run whatever interpreter PATH finds, not the runtime's venv.
            command = sys.executable if cfg.command in ("python", "python3") else cfg.command
            env, secrets = resolve_env(cfg)  # env:VAR values, read now and blanked like header secrets
            self.secrets |= secrets
            params = StdioServerParameters(command=command, args=list(cfg.args), env=env or None, cwd=cfg.cwd)
            # The server's stderr goes to a sink, never straight into the caller's stderr (docs:
            # tool-server-registry.md, "Server stderr"); registered first, so it drains last.
            sink = StderrSink(self.name, self.scrub)
            stack.callback(self._stderr_done, sink)
            # Our own reader, not the SDK's stdio_client: see mas/runtime/mcp/_stdio.py for why (mcp 2.3.0).
            state = StdioState(self.name)
            if conn.stdio is not None:  # a handshake fallback's second process: one count, one warning
                state.noise, state.first_noise = conn.stdio.noise, conn.stdio.first_noise
            state.on_fault.append(lambda reason: self._faulted(conn))
            conn.stdio = state
            transport = stdio_transport(params, state, _limits(cfg), sink.errlog, exit_grace=cfg.exit_grace_seconds)
            return _spawned(transport, sink)
        if not cfg.url:
            raise ToolServerError(self.name, f"{cfg.transport} transport needs a url")
        headers, secrets = resolve_headers(cfg)
        self.secrets |= secrets
        # Every response body is bounded by max_result_bytes and max_json_depth on its way to the
        # SDK (mcp 2.3.0 reads a JSON answer whole, unbounded): see mas/runtime/mcp/_http_limits.py.
        bounds = HttpState(self.name)
        bounds.on_fault.append(lambda reason: self._faulted(conn))
        conn.http = bounds
        hooks = {"response": [limit_responses(bounds, _limits(cfg))]}
        bounded = httpx2.Headers(headers)
        bounded["Accept-Encoding"] = ACCEPT_ENCODING  # only what the limits can inflate in bounded pieces

        def client(
            headers: dict[str, str] | None = None,
            timeout: httpx2.Timeout | None = None,
            auth: httpx2.Auth | None = None,
        ) -> httpx2.AsyncClient:
            return httpx2.AsyncClient(
                headers={**(headers or {}), **bounded},
                timeout=timeout or httpx2.Timeout(cfg.connect_timeout_seconds, read=300),
                auth=auth,
                event_hooks=hooks,
            )

        if cfg.transport == "streamable-http":
            http = client(auth=self._auth)
            stack.push_async_callback(http.aclose)
            # The SDK's own SSE event bound (1 MiB by default) would refuse answers our limit allows.
            return streamable_http_client(cfg.url, http_client=http, max_sse_event_size=cfg.max_result_bytes)
        if cfg.transport == "sse":
            return cast(
                AbstractAsyncContextManager[TransportStreams],
                sse_client(
                    cfg.url,
                    timeout=cfg.connect_timeout_seconds,
                    auth=self._auth,
                    httpx_client_factory=client,
                ),
            )
        raise ToolServerError(self.name, f"unsupported transport {cfg.transport!r}")

    @staticmethod
    def _faulted(conn: Connection) -> None:
        # The calls in flight end with the fault; the next acquire connects afresh, and the
        # owner stops this one's server now rather than at the next call.
        conn.broken = True
        conn.stop.set()

    def _stderr_done(self, sink: StderrSink) -> None:
        self._stderr_lines += sink.finish()
        self._stderr_last = sink.last_line or self._stderr_last

    def _could_not_connect(self, exc: BaseException) -> str:
        """Why a connection failed; for a stdio server that wrote on stderr, its last line, and for
        one that died importing its own code, where to read about giving it its own environment."""
        message = f"could not connect: {self.text(exc)}"
        last, self._stderr_last = self._stderr_last, None
        if last is None:
            return message
        message += f"; its last stderr line: {last!r}"
        if _IMPORT_CRASH.search(last):
            message += f"; {IMPORT_CRASH_HINT}"
        return message

    @contextmanager
    def person_wait(self) -> Iterator[None]:
        """Lift the connect deadline while a person signs in (the sign-in has its own timeout)."""
        clock = self._clock
        if clock is None:
            yield
            return
        clock.pause()
        try:
            yield
        finally:
            clock.resume()

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):  # transport faults; the calls they break report them
            logger.debug("MCP server %r: transport error: %s", self.name, self.text(message))
        elif isinstance(message, types.ToolListChangedNotification):  # the initialize-era form
            if self._conn is not None:
                self._tools_changed(self._conn)
        elif isinstance(message, types.ResourceListChangedNotification | types.PromptListChangedNotification):
            if self.on_surface_changed is not None:
                self.on_surface_changed()
        elif isinstance(message, types.ResourceUpdatedNotification):
            if self.on_resource_updated is not None:
                self.on_resource_updated(str(message.params.uri))
        await anyio.lowlevel.checkpoint()

    def _tools_changed(self, conn: Connection) -> None:
        conn.changes += 1  # the listing this session was checked with is stale
        conn.listed = False
        if self.on_list_changed is not None:
            self.on_list_changed()

    async def _watch_tools(self, conn: Connection, session: ClientSession) -> None:
        """Count ``tools/list_changed`` events of a modern session (they come only to a
        ``subscriptions/listen`` stream there); lives as long as the connection."""
        from mcp.client.subscriptions import listen

        try:
            async with listen(session, tools_list_changed=True) as subscription:
                if not subscription.honored.tools_list_changed:
                    return
                async for _event in subscription:
                    self._tools_changed(conn)
        except Exception as exc:  # an older server, or the connection ended: nothing to watch
            logger.debug("MCP server %r: no tools/list_changed subscription: %s", self.name, self.text(exc))


class _ConnectClock:
    """The connect deadline (a cancel scope and a timer that reports it) that a sign-in can pause."""

    def __init__(
        self, scope: anyio.CancelScope, timer: asyncio.TimerHandle, timeout: float, expire: Callable[[], None]
    ) -> None:
        self._scope = scope
        self._timer = timer
        self._expire = expire
        self._left = timeout
        self._ends = anyio.current_time() + timeout
        self._pauses = 0

    def pause(self) -> None:
        if self._pauses == 0:
            self._left = max(0.0, self._ends - anyio.current_time())
            self._scope.deadline = math.inf
            self._timer.cancel()
        self._pauses += 1

    def resume(self) -> None:
        self._pauses -= 1
        if self._pauses == 0:
            self._ends = anyio.current_time() + self._left
            self._scope.deadline = self._ends
            self._timer = asyncio.get_running_loop().call_later(self._left, self._expire)

    def stop(self) -> None:
        """Connected: no deadline any more."""
        self._scope.deadline = math.inf
        self._timer.cancel()
        self._pauses = -(10**9)  # a late resume() must not re-arm anything


class ProgressRelay:
    """Delivers progress to the user's callback in wire order, one at a time, never far behind.

    The SDK runs each progress notification in its own task; enqueueing without awaiting keeps
    their order, and a single consumer keeps callbacks from overlapping. Sync callbacks run on
    the provider's loop thread; async ones on the caller's loop when the call came from one.

    Bounded (``max_lag`` seconds, the infra key ``max_progress_lag_seconds``): an update that
    waited longer than ``max_lag`` is skipped when a newer one is queued, at most
    ``MAX_QUEUED`` wait, and :meth:`finish` gives the callback at most ``max_lag`` more after the
    call ended. A slow callback under a flood of progress costs dropped updates, never the
    call's result (issue 17, item 4).
    """

    #: Updates kept waiting at most; the oldest is dropped first.
    MAX_QUEUED = 256

    def __init__(
        self,
        callback: ProgressCallback,
        caller_loop: asyncio.AbstractEventLoop | None,
        label: str,
        max_lag: float = 2.0,
    ) -> None:
        self._callback = callback
        self._caller_loop = caller_loop
        self._label = label
        self._max_lag = max_lag
        self._queue: deque[tuple[float, tuple[float, float | None, str | None]]] = deque()
        self._wake = asyncio.Event()
        self._closing = False
        self._task: asyncio.Future[None] | None = None
        #: Updates never delivered (skipped as stale, dropped from a full queue, or cut at the end).
        self.dropped = 0

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        if len(self._queue) >= self.MAX_QUEUED:
            self._queue.popleft()
            self.dropped += 1
        # A server may echo a header secret into its progress text.
        item = (progress, total, None if message is None else scrub(message, ()))
        self._queue.append((time.monotonic(), item))
        self._wake.set()

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while True:
            while self._queue:
                received, item = self._queue.popleft()
                if self._queue and time.monotonic() - received > self._max_lag:
                    self.dropped += 1  # stale, and a newer update is waiting: show that one instead
                    continue
                try:
                    await self._deliver(*item)
                except Exception as exc:
                    logger.warning("%s: progress callback raised %s", self._label, type(exc).__name__)
            if self._closing:
                return
            self._wake.clear()
            await self._wake.wait()

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

    async def finish(self) -> None:
        """Let received progress reach the callback for at most ``max_lag`` more, then stop.

        Never raises for a slow callback: the call's result is what the caller waits for.
        """
        task = self._task
        if task is None:
            return
        self._closing = True
        self._wake.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), self._max_lag)
        except TimeoutError:
            task.cancel()
            self.dropped += len(self._queue)
            with suppress(BaseException):
                await task
        except asyncio.CancelledError:
            task.cancel()
            raise
        if self.dropped:
            logger.info("%s: %d progress update(s) not delivered (max_progress_lag_seconds)", self._label, self.dropped)


@asynccontextmanager
async def _spawned(
    transport: AbstractAsyncContextManager[TransportStreams], sink: StderrSink
) -> AsyncIterator[TransportStreams]:
    """The stdio transport, with our copy of the stderr pipe closed once the child has its own."""
    try:
        async with transport as streams:
            sink.spawned()
            yield streams
    finally:
        sink.spawned()


def falls_back(exc: BaseException) -> bool:
    """Whether an ``auto`` handshake failure means "try ``initialize`` on a new connection".

    Anything but the SDK's one verdict of real incompatibility (-32022 naming only modern
    versions, none shared) does: an error, a close, a timeout or a result the SDK could not use.
    """
    if isinstance(exc, MCPError) and exc.code == types.UNSUPPORTED_PROTOCOL_VERSION:
        return False
    return isinstance(exc, Exception)


def pinned_discover(version: str) -> types.DiscoverResult:
    """The result ``Client(mode=version)`` adopts for a pinned modern version (no probe sent)."""
    return types.DiscoverResult(
        supported_versions=[version],
        capabilities=types.ServerCapabilities(),
        result_type="complete",
        ttl_ms=0,
        cache_scope="public",
    )
