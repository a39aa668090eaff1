"""MCPToolProvider: the ToolContract surface over one MCP server, on the official MCP SDK.

``list_tools()`` discovers the server's tools (following ``nextCursor``) and ``call_tool()``
sends ``tools/call`` with the same name and arguments; results come back as
:class:`ToolResultEnvelope`. ``call_tool`` never raises: timeouts, a server that exits mid-call,
connection failures and unknown tools all become one-line error envelopes naming the server.

Threading model: each provider owns a private event loop on a daemon thread
(:class:`~mas.runtime.mcp._loop.BackgroundLoop`). One long-lived task on that loop enters the SDK's
transport and ``ClientSession`` context managers and later exits them (the SDK requires the
same task for both; see ``_mcp_session``). Sync methods block on that loop; async methods await
it from any loop. A sync call made on the provider's own loop thread (for example from inside a
progress callback) raises :class:`LoopThreadError`: use ``acall_tool`` there.

Transports (from :class:`MCPServerConfig`):

* ``stdio``: command/args/env/cwd. A command of exactly ``python`` or ``python3`` runs
  ``sys.executable``, so a server module runs in the runtime's own virtualenv. The SDK passes
  only a few variables (PATH, HOME, ...) to the child; put anything else in ``env``.
* ``streamable-http`` and ``sse``: url and headers. A header value ``env:VAR`` (or
  ``Bearer env:VAR``) is read from the environment at connect time, never stored resolved, and
  blanked out (``***``) of every message this module produces and every result it returns.

``connect_timeout_seconds`` bounds connect + protocol negotiation (``server/discover``, else
``initialize``), and each ``tools/list`` page. A failed call's envelope carries its failure kind
in ``metadata["error_kind"]`` (``docs/tool.md``, "Failure kinds").
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Coroutine, Mapping
from contextlib import suppress
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, Unpack, cast

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import mcp_param_headers
from pydantic import TypeAdapter, ValidationError

from mas.runtime import redact
from mas.runtime.config import MCPServerConfig
from mas.runtime.contracts._rules import checked_options, one_line, pointer_token
from mas.runtime.contracts.tool_contract import (
    ERROR_KIND_KEY,
    CallOptions,
    ToolResultEnvelope,
    takes_checked_options,
    tool_entry_from_mcp,
)
from mas.runtime.mcp._convert import (
    ToolServerError,
    clip,
    dump_wire,
    envelope_from_result,
    scrub_envelope,
    server_identity,
)
from mas.runtime.mcp._error_kinds import (
    kind_of_error_code,
    kind_of_error_result,
    kind_of_invalid_params,
    url_elicitations,
)
from mas.runtime.mcp._http_limits import ERROR_STATUSES
from mas.runtime.mcp._input import TOKEN_PREFIX, PendingCall
from mas.runtime.mcp._lenient_listing import CacheHint, list_page, teach
from mas.runtime.mcp._lenient_listing import summary as listing_summary
from mas.runtime.mcp._loop import BackgroundLoop, LoopThreadError, await_future
from mas.runtime.mcp._oauth import AuthorizeCallback
from mas.runtime.mcp._session import Connection, ProgressCallback, ProgressRelay, SessionKeeper
from mas.runtime.mcp._subscribe import ResourceWatches
from mas.runtime.mcp._surface import DEFAULT_TIMEOUT_SECONDS, ServerSurface
from mas.runtime.mcp._tasks import (
    MAX_WAIT_SECONDS,
    TASK_CANCEL_PREFIX,
    TASK_PREFIX,
    TASK_PREFIXES,
    CreatedTask,
    TaskEnded,
    Tasks,
    TaskState,
    dialect_of,
    state_of_created,
    task_support_of,
)
from mas.runtime.mcp._wire import non_json_number
from mas.runtime.subscriptions import (
    DEFAULT_MAX_QUEUED,
    ResourceSubscription,
    SubscriptionError,
    UpdateCallback,
)
from mas.runtime.tool_filters import agent_facing

if TYPE_CHECKING:
    from mcp.client.session import ClientSession

    from mas.runtime.pinning import ServerPin

__all__ = [
    "AuthorizeCallback",
    "CancelSignal",
    "LoopThreadError",
    "MCPToolProvider",
    "ProgressCallback",
    "ToolServerError",
]

logger = logging.getLogger("mas.runtime.mcp_provider")  # the name users see in log lines, as before the move
#: HTTP 431 Request Header Fields Too Large: the server's HTTP layer refused the request's headers.
HEADER_TOO_LARGE = 431

_POLL_SECONDS = 0.05  # how often a cancel_event is polled
_INPUT_RESPONSES: TypeAdapter[dict[str, types.InputResponse]] = TypeAdapter(dict[str, types.InputResponse])

# Process-wide listing cache (cache_scope "process"): server identity -> (expires at, raw tools).
_PROCESS_CACHE: dict[tuple[Any, ...], tuple[float, list[dict[str, Any]]]] = {}
_PROCESS_CACHE_LOCK = threading.Lock()


class CancelSignal(Protocol):
    """A cancel signal: ``threading.Event``, ``asyncio.Event`` or anything with ``is_set()``."""

    def is_set(self) -> bool: ...


#: The server's HTTP layer refused the request's headers (a long x-mcp-header argument under a
#: limit below max_header_bytes).
_HEADERS_REFUSED = (
    "the server refused the request's headers as too large (HTTP 431), so the tool did not run; "
    "an x-mcp-header argument is longer than this server takes: shorten it, or set "
    "max_header_bytes to the server's limit"
)


async def _call_on(
    session: Any,
    tool_name: str,
    arguments: dict[str, Any],
    options: CallOptions,
    relay: ProgressRelay | None,
    responses: Any,
) -> Any:
    """The SDK's ``tools/call`` on ``session``, with the call's options in the SDK's terms."""
    meta = options.get("meta")
    return await session.call_tool(
        tool_name,
        arguments,
        read_timeout_seconds=options.get("timeout_seconds"),
        progress_callback=relay,
        input_responses=responses,
        request_state=options.get("request_state"),
        meta=cast(Any, dict(meta)) if meta is not None else None,
        # Always received: the envelope says input_required and the caller answers it
        # (generated packages do so with on_input); only an explicit False refuses it.
        allow_input_required=options.get("allow_input_required") is not False,
        # A 2026 task is a claimed result the provider follows itself (_mcp_tasks).
        allow_claimed=True,
    )


def _asks_for_task(answer: Exception | types.Result) -> bool:
    """The 2025-11-25 refusal of a plain call to a task-required tool: -32601 "... requires task
    augmentation", as an error (the spec) or as an error result (the TypeScript SDK's McpServer)."""
    if isinstance(answer, MCPError):
        return answer.code == types.METHOD_NOT_FOUND and "task" in answer.message.lower()
    if isinstance(answer, types.CallToolResult) and answer.is_error:
        text = " ".join(block.text for block in answer.content if isinstance(block, types.TextContent))
        return str(types.METHOD_NOT_FOUND) in text and "task augmentation" in text
    return False


def _of_task(envelope: ToolResultEnvelope, task_id: str | None) -> ToolResultEnvelope:
    """An envelope of a call that ran as a task: ``execution_mode: "async"``, ``metadata["task_id"]``."""
    if task_id is None:
        return envelope
    return dataclasses.replace(
        envelope, execution_mode="async", metadata={**(envelope.metadata or {}), "task_id": task_id}
    )


def with_error_kind(envelope: ToolResultEnvelope) -> ToolResultEnvelope:
    """An ``isError`` result says its failure kind too (docs/tool.md, "Failure kinds"), read from its text."""
    if not envelope.is_error or envelope.result_type != "complete":
        return envelope
    metadata = dict(envelope.metadata or {})
    metadata.setdefault(ERROR_KIND_KEY, kind_of_error_result(envelope.text))
    return dataclasses.replace(envelope, metadata=metadata)


class _Follower:
    """Hands one call's envelope to its caller's ``outcome`` (``MCPToolProvider._follow``); it is
    the call's ``follower``, called on the loop when the work ends or the server asks something.

    An object rather than closures that call one another: such closures form a reference cycle
    (with the call, its task and the caller's future hanging off it) that only the garbage
    collector frees, and one per call made it run so often that it took 0.5-0.9 ms of CPU a call
    with 200 in flight (two runs; benchmarks/results.md, "MCP over stdio"). Once the envelope is
    handed over, nothing the call keeps points back here.
    """

    __slots__ = (
        "cancel_event",
        "cancelling",
        "call",
        "loop",
        "outcome",
        "poll",
        "provider",
        "timeout_seconds",
        "tool_name",
        "work",
    )

    def __init__(
        self,
        provider: MCPToolProvider,
        tool_name: str,
        call: PendingCall,
        cancel_event: CancelSignal | None,
        timeout_seconds: float | None,
        outcome: concurrent.futures.Future[ToolResultEnvelope],
    ) -> None:
        assert call.work is not None
        self.provider, self.tool_name, self.call, self.work = provider, tool_name, call, call.work
        self.cancel_event, self.timeout_seconds = cancel_event, timeout_seconds
        self.outcome: concurrent.futures.Future[ToolResultEnvelope] | None = outcome
        self.loop = asyncio.get_running_loop()
        self.poll: asyncio.TimerHandle | None = None
        self.cancelling = False

    def start(self) -> None:
        call, outcome = self.call, self.outcome
        assert outcome is not None
        call.follower = self
        self.work.add_done_callback(self.work_done)
        if self.cancel_event is not None:
            self.poll = self.loop.call_later(_POLL_SECONDS, self.check_cancel)
        outcome.add_done_callback(self.caller_done)
        self()  # a resumed call may have its result, or questions left, already

    def deliver(self, envelope: ToolResultEnvelope, *, over: bool) -> None:
        call, outcome = self.call, self.outcome
        call.follower = None
        self.work.remove_done_callback(self.work_done)
        if self.poll is not None:
            self.poll.cancel()
            self.poll = None
        if over:
            self.provider._keeper.inputs.end(call, "the tools/call it belonged to is over")
        self.outcome = None  # the outcome keeps caller_done, so this is what breaks the cycle
        if outcome is not None and outcome.set_running_or_notify_cancel():
            outcome.set_result(envelope)

    def __call__(self) -> None:
        """Settle: hand over whatever there is to hand over now (the call's ``follower``)."""
        call, work, provider = self.call, self.work, self.provider
        if call.follower is not self:
            return  # handed over already
        if self.cancelling:
            if work.done():  # unwound: the SDK has told the server (a task is cancelled there too)
                what = "was cancelled by the caller (cancel_event)"
                if call.task_id is not None:
                    what += f"; task {call.task_id!r} was cancelled on the server"
                self.deliver(_of_task(provider._failure(self.tool_name, what, "cancelled"), call.task_id), over=True)
        elif call.result is not None:
            self.deliver(call.result, over=True)
        elif work.done():  # cancelled (e.g. the provider is closing): no envelope of its own
            self.deliver(provider._unfinished(self.tool_name, work), over=True)
        elif call.unanswered():
            keeper = provider._keeper
            suspended = envelope_from_result(keeper.inputs.suspend(call, self.timeout_seconds))
            self.deliver(scrub_envelope(suspended, keeper.secrets), over=False)

    def check_cancel(self) -> None:
        self.poll = None
        if self.call.follower is not self:
            return
        if self.cancel_event is not None and self.cancel_event.is_set():
            self.cancelling = True
            self.work.cancel()  # the SDK sends notifications/cancelled for the in-flight request
        else:
            self.poll = self.loop.call_later(_POLL_SECONDS, self.check_cancel)

    def give_up(self) -> None:
        """The caller stopped waiting (Ctrl-C, its task was cancelled)."""
        call, work, inputs = self.call, self.work, self.provider._keeper.inputs
        if call.follower is self:
            call.follower = None
            if self.poll is not None:
                self.poll.cancel()
                self.poll = None
        self.outcome = None
        work.cancel()
        work.add_done_callback(lambda _: inputs.end(call, "its caller stopped waiting"))

    def caller_done(self, done: concurrent.futures.Future[ToolResultEnvelope]) -> None:
        if done.cancelled():  # in the caller's thread
            with suppress(RuntimeError):  # the loop is closed already: nothing runs any more
                self.loop.call_soon_threadsafe(self.give_up)

    def work_done(self, _: object) -> None:
        """The work ended without handing over an envelope."""
        self()


@takes_checked_options
class MCPToolProvider:
    """List and call the tools of one MCP server through the ToolContract surface."""

    def __init__(self, config: MCPServerConfig, *, authorize: AuthorizeCallback | None = None) -> None:
        """``authorize`` is called with the authorization URL when the server's ``auth:`` needs a
        person to sign in (``docs/infra.md``, "OAuth"); without it the URL is printed and opened in
        a browser, on a terminal only."""
        self.config = config
        self._runner = BackgroundLoop(f"MCP server {config.name!r}", async_hint="acall_tool()/alist_tools()")
        self._keeper = SessionKeeper(config, authorize=authorize)
        self._keeper.on_list_changed = self._on_list_changed
        #: Resources, templates, prompts and completions (the ServerContract; ``mcp._surface``).
        self._surface = ServerSurface(config, self._keeper)
        self._keeper.on_surface_changed = self._surface.forget
        #: Resource subscriptions, both dialects (``mcp._subscribe``).
        self._watches = ResourceWatches(self._keeper, self._surface)
        self._keeper.on_resource_updated = self._watches.updated
        self._keeper.on_connection_end = self._watches.connection_ended
        #: Run-time pinning (``mas.runtime.pinning``), given by the registry; None when not pinned.
        self._pin: ServerPin | None = None
        self._cache: tuple[float, list[dict[str, Any]]] | None = None
        #: The cache hint of the listing fetched last (2026 servers), for _store_listing.
        self._hint: CacheHint | None = None
        #: Called after each tools/list page with (page number, tools so far): for progress displays.
        self.on_page: Callable[[int, int], None] | None = None

    @property
    def name(self) -> str:
        return self.config.name

    def __repr__(self) -> str:  # never shows headers or env
        return f"MCPToolProvider(name={self.name!r}, transport={self.config.transport!r})"

    # --- listing ------------------------------------------------------------------------------
    def list_tools(self) -> list[dict[str, Any]]:
        """Contract entries (``name``, ``description``, ``parameters`` + advertise keys when set).

        Raises :class:`ToolServerError` when the server cannot be listed.
        """
        return [tool_entry_from_mcp(tool) for tool in self.list_mcp_tools()]

    async def alist_tools(self) -> list[dict[str, Any]]:
        return [tool_entry_from_mcp(tool) for tool in await self.alist_mcp_tools()]

    def list_mcp_tools(self) -> list[dict[str, Any]]:
        """The raw MCP tool objects (camelCase wire keys), in server order, across all pages."""
        if self.config.tools is not None:
            return self._explicit_tools()
        self._check_open()
        return self._runner.run(self._list_mcp_tools())

    async def alist_mcp_tools(self) -> list[dict[str, Any]]:
        if self.config.tools is not None:
            return self._explicit_tools()
        self._check_open()
        return await self._runner.arun(self._list_mcp_tools())

    def _check_open(self) -> None:
        if self._keeper.closed:
            raise ToolServerError(self.name, "the provider is closed")

    def _explicit_tools(self) -> list[dict[str, Any]]:
        # config.tools skips discovery entirely; still normalise it through the SDK's model.
        tools: list[dict[str, Any]] = []
        for index, raw in enumerate(self.config.tools or ()):
            try:
                tools.append(dump_wire(types.Tool.model_validate(dict(raw), by_name=False)))
            except ValidationError as exc:
                detail = f"explicit tools[{index}] is not a valid MCP tool: {one_line(str(exc))}"
                raise ToolServerError(self.name, detail) from None
        return self._agent_facing(tools)

    def _agent_facing(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Without tools whose x-mcp-header is invalid, nor app-only ones (``mas.runtime.tool_filters``)."""
        return agent_facing(tools, self.name, keep_app_only=self.config.app_only_tools == "keep")

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
        hit = self._cache  # a private listing stays here even under cache_scope: process
        if (hit is None or hit[0] <= time.monotonic()) and self.config.cache_scope == "process":
            with _PROCESS_CACHE_LOCK:
                hit = _PROCESS_CACHE.get(server_identity(self.config))
        if hit is None or hit[0] <= time.monotonic():
            return None
        return copy.deepcopy(hit[1])  # callers may mutate what they get

    def _store_listing(self, tools: list[dict[str, Any]]) -> None:
        """Keep the listing for reuse under the infra policy, as the server's hints allow (docs:
        tool-server-registry.md, "Listing cache"): its ``ttlMs`` only shortens ``cache_ttl_ms``, and
        a ``private`` listing is never shared across providers (they may hold other credentials)."""
        ttl_ms, scope = self.config.cache_ttl_ms, self.config.cache_scope
        hint = self._hint if self.config.cache_hints == "honour" else None
        if hint is not None:
            ttl_ms = min(ttl_ms, hint.ttl_ms)
            if hint.scope != "public":
                scope = "provider"
        if ttl_ms <= 0:
            return
        entry = (time.monotonic() + ttl_ms / 1000, copy.deepcopy(tools))
        if scope == "process":
            with _PROCESS_CACHE_LOCK:
                _PROCESS_CACHE[server_identity(self.config)] = entry
        else:
            self._cache = entry

    async def _fetch_listing(self, via: tuple[Connection, ClientSession] | None = None) -> list[dict[str, Any]]:
        conn, session = via or await self._keeper.acquire()
        generation = conn.changes  # a tools/list_changed arriving meanwhile makes this listing stale
        cfg = self.config
        tools: list[dict[str, Any]] = []
        seen: set[str] = set()
        cursor: str | None = None
        pages = 0
        problems: list[tuple[str, str]] = []
        hint: CacheHint | None = None
        first = True
        # Each page within connect_timeout_seconds, and the listing as a whole within
        # list_timeout_seconds: a server answering every page just in time cannot hold it longer.
        deadline = time.monotonic() + cfg.list_timeout_seconds
        page_wait = cfg.connect_timeout_seconds
        try:
            while True:
                if pages >= cfg.max_pages:
                    detail = f"tools/list returned more than max_pages={cfg.max_pages} pages; stopped paging"
                    raise ToolServerError(self.name, detail)
                params = types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
                # tools/list has no timeout of its own; a hung server must not hang discovery.
                page_wait = min(cfg.connect_timeout_seconds, deadline - time.monotonic())
                if page_wait <= 0:
                    raise TimeoutError
                with anyio.fail_after(page_wait):
                    page = await list_page(session, params, self.name)
                pages += 1
                # Blanked here, where listings enter: the lock, the generated package and every
                # listing printed are made from this (a server may echo a header into a description).
                tools.extend(redact.blank_json(tool) for tool in page.tools)
                problems.extend(page.problems)
                # A listing is as reusable as its least reusable page; a page without hints: no hint.
                hint = page.hint if first else (None if hint is None or page.hint is None else hint.merged(page.hint))
                first = False
                if self.on_page is not None:
                    self.on_page(pages, len(tools))
                if not cfg.follow_pagination or not page.next_cursor:
                    break
                if page.next_cursor in seen or page.next_cursor == cursor:
                    detail = f"tools/list repeated cursor {page.next_cursor!r} on page {pages + 1}; stopped paging"
                    raise ToolServerError(self.name, detail)
                if cursor is not None:
                    seen.add(cursor)
                cursor = page.next_cursor
        except ToolServerError:
            raise
        except TimeoutError:
            if page_wait < cfg.connect_timeout_seconds:  # the whole listing's bound ran out first
                detail = (
                    f"tools/list took more than list_timeout_seconds={cfg.list_timeout_seconds:g} s in total "
                    f"({pages} page(s) so far); stopped paging"
                )
            else:
                detail = f"tools/list timed out after {cfg.connect_timeout_seconds} s (page {pages + 1})"
            raise ToolServerError(self.name, detail) from None
        except Exception as exc:
            conn.note_failure(exc)
            raise ToolServerError(self.name, f"tools/list failed: {self._keeper.text(exc)}") from None
        if problems:  # listed anyway; the generator reports each schema in its own terms
            logger.warning("MCP server %r: %s", self.name, self._keeper.scrub(listing_summary(problems)))
        conn.listed = cfg.follow_pagination and generation == conn.changes
        if cfg.follow_pagination:  # every page: which tools want a task (2025-11-25) is known
            conn.task_support = {tool["name"]: task_support_of(tool) for tool in tools if "name" in tool}
        self._hint = hint
        tools = self._agent_facing(tools)
        if self._pin is not None:
            self._pin.check(tools)  # every listing fetched is compared with the lock (item 13)
            conn.pin_checked = generation
        return tools

    # --- the server surface: resources, templates, prompts, completions (ServerContract) ------
    def list_resources(self) -> list[dict[str, Any]]:
        """The server's resources (MCP ``Resource`` objects, every page); [] when it declares none.
        Raises :class:`ToolServerError` when they cannot be listed."""
        self._check_open()
        return self._runner.run(self._surface.listing("resources"))

    async def alist_resources(self) -> list[dict[str, Any]]:
        self._check_open()
        return await self._runner.arun(self._surface.listing("resources"))

    def list_resource_templates(self) -> list[dict[str, Any]]:
        self._check_open()
        return self._runner.run(self._surface.listing("resource_templates"))

    async def alist_resource_templates(self) -> list[dict[str, Any]]:
        self._check_open()
        return await self._runner.arun(self._surface.listing("resource_templates"))

    def list_prompts(self) -> list[dict[str, Any]]:
        self._check_open()
        return self._runner.run(self._surface.listing("prompts"))

    async def alist_prompts(self) -> list[dict[str, Any]]:
        self._check_open()
        return await self._runner.arun(self._surface.listing("prompts"))

    def read_resource(self, uri: str, *, timeout_seconds: float | None = None) -> ToolResultEnvelope:
        """``resources/read``; never raises: a failure is an error envelope with its kind."""
        return self._surface_request(f"resources/read {uri!r}", self._surface.read(uri, timeout_seconds))

    async def aread_resource(self, uri: str, *, timeout_seconds: float | None = None) -> ToolResultEnvelope:
        return await self._asurface_request(f"resources/read {uri!r}", self._surface.read(uri, timeout_seconds))

    def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, timeout_seconds: float | None = None
    ) -> ToolResultEnvelope:
        """``prompts/get``; never raises. Under ``pin`` a prompt that differs from the lock is refused."""
        return self._surface_request(f"prompts/get {name!r}", self._pinned_prompt(name, arguments, timeout_seconds))

    async def aget_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, timeout_seconds: float | None = None
    ) -> ToolResultEnvelope:
        return await self._asurface_request(
            f"prompts/get {name!r}", self._pinned_prompt(name, arguments, timeout_seconds)
        )

    def complete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
        timeout_seconds: float | None = None,
    ) -> ToolResultEnvelope:
        """``completion/complete`` for a prompt argument or a template variable; never raises."""
        work = self._surface.complete(ref, argument, value, context, timeout_seconds)
        return self._surface_request("completion/complete", work)

    async def acomplete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
        timeout_seconds: float | None = None,
    ) -> ToolResultEnvelope:
        work = self._surface.complete(ref, argument, value, context, timeout_seconds)
        return await self._asurface_request("completion/complete", work)

    def subscribe_resource(
        self,
        uri: str,
        *,
        on_update: UpdateCallback | None = None,
        max_queued: int = DEFAULT_MAX_QUEUED,
        timeout_seconds: float | None = None,
    ) -> ResourceSubscription:
        """Subscribe to changes of ``uri`` (``resources/subscribe`` on 2025-11-25 sessions,
        ``subscriptions/listen`` on 2026-07-28 ones): iterate the result, or pass ``on_update``.
        At most ``max_queued`` updates wait; on a full queue the oldest is dropped (counted in
        ``dropped``). Raises :class:`~mas.runtime.subscriptions.SubscriptionError` (with ``kind``)
        when it cannot subscribe. ``close()`` (or ``with``) unsubscribes."""
        self._runner.check_blocking()
        sub = self._new_subscription(uri, max_queued)
        self._runner.run(self._open_subscription(sub, on_update, None, timeout_seconds))
        return sub

    async def asubscribe_resource(
        self,
        uri: str,
        *,
        on_update: UpdateCallback | None = None,
        max_queued: int = DEFAULT_MAX_QUEUED,
        timeout_seconds: float | None = None,
    ) -> ResourceSubscription:
        """Async twin of :meth:`subscribe_resource` (``async for``/``async with`` the result); an
        async ``on_update`` runs on the caller's loop."""
        sub = self._new_subscription(uri, max_queued)
        caller = asyncio.get_running_loop()
        await self._runner.arun(self._open_subscription(sub, on_update, caller, timeout_seconds))
        return sub

    def _new_subscription(self, uri: str, max_queued: int) -> ResourceSubscription:
        if self._keeper.closed:
            raise SubscriptionError(f"MCP server {self.name!r}: subscribe to {uri!r} failed: the provider is closed")

        def release() -> None:
            if not self._keeper.closed:
                with suppress(RuntimeError):  # the provider's loop is gone: nothing left to unsubscribe
                    self._runner.run(self._watches.release(sub))

        async def arelease() -> None:
            if not self._keeper.closed:
                with suppress(RuntimeError):
                    await self._runner.arun(self._watches.release(sub))

        sub = ResourceSubscription(self.name, uri, max_queued=max_queued, release=release, arelease=arelease)
        return sub

    async def _open_subscription(
        self,
        sub: ResourceSubscription,
        on_update: UpdateCallback | None,
        caller: asyncio.AbstractEventLoop | None,
        timeout_seconds: float | None,
    ) -> None:
        timeout = DEFAULT_TIMEOUT_SECONDS if timeout_seconds is None else timeout_seconds
        await self._watches.open(sub, timeout, on_update, caller)

    async def _pinned_prompt(
        self, name: str, arguments: Mapping[str, str] | None, timeout_seconds: float | None
    ) -> ToolResultEnvelope:
        if self._pin is not None and self._pin.prompts is not None:
            try:
                self._pin.check_prompts(await self._surface.listing("prompts"))
            except ToolServerError as exc:
                return self._pin.prompt_unverified(name, exc.detail) or await self._surface.prompt(
                    name, arguments, timeout_seconds
                )
            refused = self._pin.prompt_refusal(name)
            if refused is not None:
                return refused
        return await self._surface.prompt(name, arguments, timeout_seconds)

    def _surface_request(self, label: str, work: Coroutine[Any, Any, ToolResultEnvelope]) -> ToolResultEnvelope:
        if self._keeper.closed:
            work.close()
            return self._surface.failure(label, "failed: the provider is closed", "unavailable")
        self._runner.check_blocking()
        try:
            return self._runner.run(work)
        except Exception as exc:
            return self._surface.failure(label, f"failed: {self._keeper.text(exc)}", "unavailable")

    async def _asurface_request(self, label: str, work: Coroutine[Any, Any, ToolResultEnvelope]) -> ToolResultEnvelope:
        if self._keeper.closed:
            work.close()
            return self._surface.failure(label, "failed: the provider is closed", "unavailable")
        try:
            return await self._runner.arun(work)
        except Exception as exc:
            return self._surface.failure(label, f"failed: {self._keeper.text(exc)}", "unavailable")

    # --- tasks ---------------------------------------------------------------------------------
    def task_dialect(self) -> str | None:
        """The task dialect the server advertises (``2025-11-25``, ``2026-07-28``), or None when it
        has no tasks (docs/tasks.md). Connects when not connected; raises :class:`ToolServerError`
        when it cannot."""
        self._check_open()
        return self._runner.run(self._task_dialect())

    async def atask_dialect(self) -> str | None:
        self._check_open()
        return await self._runner.arun(self._task_dialect())

    async def _task_dialect(self) -> str | None:
        _conn, session = await self._keeper.acquire()
        return dialect_of(session)

    # --- calling ------------------------------------------------------------------------------
    def call_tool(
        self, tool_name: str, arguments: Mapping[str, Any] | None, **options: Unpack[CallOptions]
    ) -> ToolResultEnvelope:
        """Send ``tools/call`` and block until the envelope is ready.

        Never raises, except :class:`LoopThreadError` for a call made on the provider's own loop
        thread, and :class:`TypeError` for a name that is not a call option (a caller bug).
        ``timeout_seconds`` becomes the SDK's ``read_timeout_seconds``; ``cancel_event`` is polled
        and cancels the in-flight request. ``ctx`` and ``user`` have no MCP mapping.
        """
        return self.call_checked(tool_name, arguments, checked_options(options))

    async def acall_tool(
        self, tool_name: str, arguments: Mapping[str, Any] | None, **options: Unpack[CallOptions]
    ) -> ToolResultEnvelope:
        """Async twin of :meth:`call_tool`; async progress callbacks run on the caller's loop."""
        return await self.acall_checked(tool_name, arguments, checked_options(options))

    def call_checked(
        self, tool_name: str, arguments: Mapping[str, Any] | None, options: CallOptions
    ) -> ToolResultEnvelope:
        """:meth:`call_tool` with its options checked already (``_rules.checked_options``): the
        registry passes its one value here, and it goes whole down to the SDK call."""
        self._runner.check_blocking()
        try:
            return self._runner.wait(self._start(tool_name, arguments, options, caller_loop=None))
        except Exception as exc:  # e.g. the provider was closed: still an envelope
            return self._failure(tool_name, f"failed: {self._keeper.text(exc)}", "unavailable")

    async def acall_checked(
        self, tool_name: str, arguments: Mapping[str, Any] | None, options: CallOptions
    ) -> ToolResultEnvelope:
        """Async twin of :meth:`call_checked`."""
        try:
            # Cancelling the awaiting task cancels the outcome, which cancels the work (_follow).
            outcome = self._start(tool_name, arguments, options, caller_loop=asyncio.get_running_loop())
            return await await_future(outcome)
        except Exception as exc:
            return self._failure(tool_name, f"failed: {self._keeper.text(exc)}", "unavailable")

    def _start(
        self,
        tool_name: str,
        arguments: Mapping[str, Any] | None,
        options: CallOptions,
        *,
        caller_loop: asyncio.AbstractEventLoop | None,
    ) -> concurrent.futures.Future[ToolResultEnvelope]:
        """The call's envelope to come (a thread-safe future): refused at once, or begun on the loop."""
        outcome: concurrent.futures.Future[ToolResultEnvelope] = concurrent.futures.Future()
        # The one copy of the arguments: the request is built on the provider's loop thread, and
        # a change the caller makes to its dict meanwhile (an async caller runs on) must not reach it.
        sent = {} if arguments is None else dict(arguments)
        refused = self._refusal(tool_name, sent, options)
        if refused is not None:
            outcome.set_result(refused)
        else:
            self._runner.call_soon(self._begin, tool_name, sent, options, caller_loop, outcome)
        return outcome

    def _refusal(self, tool_name: str, arguments: dict[str, Any], options: CallOptions) -> ToolResultEnvelope | None:
        """Why the call is not sent at all, found without the loop (any thread may ask), or None."""
        if self._keeper.closed:
            return self._failure(tool_name, "failed: the provider is closed", "unavailable")
        cancel_event = options.get("cancel_event")
        if cancel_event is not None and cancel_event.is_set():
            return self._failure(tool_name, "was cancelled before it started", "cancelled")
        for what, value in (
            ("arguments", arguments),
            ("meta", options.get("meta")),
            ("input_responses", options.get("input_responses")),
        ):
            problem = non_json_number(value)
            if problem is not None:  # pydantic would send it as null: refuse before anything is sent
                return self._failure(tool_name, f"not sent: invalid {what}: {problem}", "invalid_arguments")
        return None

    def _begin(
        self,
        tool_name: str,
        arguments: dict[str, Any],
        options: CallOptions,
        caller_loop: asyncio.AbstractEventLoop | None,
        outcome: concurrent.futures.Future[ToolResultEnvelope],
    ) -> None:
        """On the loop: start the call (or resume a suspended one) and follow it into ``outcome``."""
        try:
            call = self._launch(tool_name, arguments, options, caller_loop)
        except BaseException as exc:  # a callback's exception would reach nobody: the caller gets it
            if outcome.set_running_or_notify_cancel():
                outcome.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return
        if isinstance(call, ToolResultEnvelope):
            if outcome.set_running_or_notify_cancel():
                outcome.set_result(call)
            return
        self._follow(tool_name, call, options.get("cancel_event"), options.get("timeout_seconds"), outcome)

    def _launch(
        self,
        tool_name: str,
        arguments: dict[str, Any],
        options: CallOptions,
        caller_loop: asyncio.AbstractEventLoop | None,
    ) -> PendingCall | ToolResultEnvelope:
        """The call in flight (begun here, or suspended earlier and answered now), or the envelope
        that refuses it."""
        timeout_seconds = options.get("timeout_seconds")
        input_responses, request_state = options.get("input_responses"), options.get("request_state")
        inputs = self._keeper.inputs
        if request_state is not None and request_state.startswith(TOKEN_PREFIX):
            # The caller answers requests the server sent during a call still in flight.
            pending = inputs.resume(request_state)
            if pending is None:
                detail = "its input round is over (answered, given up or not this client's); call it again"
                return self._failure(tool_name, f"failed: {detail}", "protocol")
            if pending.follower is not None:  # one caller answers a round; the other would wait forever
                return self._failure(tool_name, "failed: another call is answering this input round", "protocol")
            problems = pending.answer(input_responses)
            if problems:
                inputs.end(pending, "the client's answer was invalid")
                if pending.work is not None:
                    pending.work.cancel()
                return self._failure(tool_name, f"failed: invalid input_responses: {problems[0]}", "invalid_arguments")
            return pending
        try:
            responses = None if input_responses is None else _INPUT_RESPONSES.validate_python(dict(input_responses))
        except ValidationError as exc:
            return self._failure(
                tool_name, f"failed: invalid input_responses: {one_line(str(exc))}", "invalid_arguments"
            )
        if responses:
            responses = inputs.fill_defaults(request_state, responses)  # SEP-1034, as for held calls
        progress = options.get("progress_callback")
        relay = (
            ProgressRelay(progress, caller_loop, self._label(tool_name), self.config.max_progress_lag_seconds)
            if progress
            else None
        )
        call = inputs.begin(self._label(tool_name))
        # A task is followed until this (``timeout_seconds``, else the bound every task wait has).
        deadline = time.monotonic() + (MAX_WAIT_SECONDS if timeout_seconds is None else timeout_seconds)

        async def run() -> ToolResultEnvelope:
            # The relay lives as long as the request, across the input rounds it may be suspended in.
            if relay is not None:
                relay.start()
            try:
                envelope = await self._send(tool_name, arguments, options, call, relay, responses, deadline)
            except ToolServerError as exc:
                envelope = self._failure(tool_name, f"failed: {exc.detail}", "unavailable")
            except Exception as exc:
                envelope = self._failure(tool_name, f"failed: {self._keeper.text(exc)}", "unavailable")
            finally:
                if relay is not None:
                    await relay.finish()
            call.ended(envelope)  # the caller gets it in this step, not one loop turn later
            return envelope

        call.work = asyncio.get_running_loop().create_task(run())
        return call

    async def _send(
        self,
        tool_name: str,
        arguments: dict[str, Any],
        options: CallOptions,
        call: PendingCall,
        relay: ProgressRelay | None,
        responses: Any,
        deadline: float,
    ) -> ToolResultEnvelope:
        """One call on a connection: pinned, resumed, run as a task, or sent and its result read."""
        timeout_seconds, meta = options.get("timeout_seconds"), options.get("meta")
        request_state, allow_claimed = options.get("request_state"), options.get("allow_claimed")
        if self._pin is not None and self.config.tools is not None:
            # An explicit list is never re-listed: decide before connecting.
            refused = self._pin.refusal(tool_name)
            if refused is not None:
                return refused
        conn, session = await self._keeper.acquire()
        refused = await self._check_pin(conn, session, tool_name)
        if refused is not None:
            return refused
        call.conn = conn  # server requests arriving on this connection are this call's to answer
        await self._prefetch_listing(conn)
        dialect = dialect_of(session)
        if request_state is not None and request_state.startswith(TASK_PREFIXES):
            return await self._resume_task(
                tool_name, call, conn, session, dialect, request_state, allow_claimed, deadline
            )
        if dialect == "2025-11-25" and self._wants_task(conn, tool_name, allow_claimed):
            return await self._run_task_2025(
                tool_name, call, conn, session, arguments, meta, timeout_seconds, allow_claimed, deadline
            )
        oversized = self._oversized_header(session, tool_name, arguments)
        if oversized is not None:
            return self._failure(tool_name, f"failed: {oversized}", "invalid_arguments")
        statuses: list[int] = []  # the HTTP error statuses this call's requests were answered with
        status_scope = ERROR_STATUSES.set(statuses)
        try:
            result = await _call_on(session, tool_name, arguments, options, relay, responses)
        except Exception as exc:
            ERROR_STATUSES.reset(status_scope)
            conn.note_failure(exc)
            if HEADER_TOO_LARGE in statuses:  # the tool never ran, and retrying cannot help
                return self._failure(tool_name, f"failed: {_HEADERS_REFUSED}", "invalid_arguments")
            if conn.mid_answer():
                # The reader is inside an answer nobody waits for any more: a fresh connection
                # serves the next call at once instead of after the rest of it (item 3).
                conn.broken = True
            if conn.fault is not None:  # the transport ended the connection, and says why
                return self._failure(tool_name, f"failed: {conn.fault}", "protocol")
            if dialect == "2025-11-25" and _asks_for_task(exc):
                # Not listed on this session (follow_pagination off): the server says it.
                return await self._run_task_2025(
                    tool_name, call, conn, session, arguments, meta, timeout_seconds, allow_claimed, deadline
                )
            return self._call_error(tool_name, exc, timeout_seconds)
        ERROR_STATUSES.reset(status_scope)
        if dialect == "2025-11-25" and tool_name not in (conn.task_support or {}) and _asks_for_task(result):
            return await self._run_task_2025(
                tool_name, call, conn, session, arguments, meta, timeout_seconds, allow_claimed, deadline
            )
        if isinstance(result, CreatedTask):
            tasks = Tasks(session, "2026-07-28")
            return await self._task_outcome(
                tool_name, call, conn, tasks, state_of_created(result), allow_claimed, deadline
            )
        if not isinstance(result, types.CallToolResult | types.InputRequiredResult) and not allow_claimed:
            detail = f"the server answered with a claimed result ({type(result).__name__}) this client does not handle"
            return self._failure(tool_name, f"failed: {detail}", "protocol")
        if isinstance(result, types.InputRequiredResult):
            self._keeper.inputs.remember_forms(result)
        return scrub_envelope(with_error_kind(envelope_from_result(result)), self._keeper.secrets)

    def _oversized_header(self, session: Any, tool_name: str, arguments: Mapping[str, Any] | None) -> str | None:
        """Why an ``x-mcp-header`` argument cannot travel as its ``Mcp-Param-*`` header, or None.

        The SDK mirrors such arguments into headers on a 2026 HTTP session; a header past the
        server's limit is refused by its HTTP layer before the tool runs, which reached the caller
        as ``tool_error`` or ``unavailable`` (retried by packages). Over ``max_header_bytes`` the
        call is the caller's mistake instead, and nothing is sent.
        """
        if self.config.transport == "stdio" or not arguments:
            return None
        header_map = getattr(session, "_x_mcp_header_maps", {}).get(tool_name)  # the SDK's own map
        limit = self.config.max_header_bytes
        for path, token in (header_map or {}).items():
            for name, value in mcp_param_headers({path: token}, arguments).items():
                size = len(name) + 2 + len(value.encode("utf-8", "surrogatepass"))
                if size > limit:
                    where = "/" + "/".join(pointer_token(p) for p in path)
                    return (
                        f"argument {where} travels as the HTTP header {name}, {size} bytes, more than "
                        f"max_header_bytes={limit}; nothing was sent"
                    )
        return None

    def _follow(
        self,
        tool_name: str,
        call: PendingCall,
        cancel_event: CancelSignal | None,
        timeout_seconds: float | None,
        outcome: concurrent.futures.Future[ToolResultEnvelope],
    ) -> None:
        """On the loop: give ``outcome`` the call's envelope as soon as there is one: the work's own,
        an ``input_required`` one when the server asks the caller something (the request stays in
        flight and the caller's answer resumes it: ``_mcp_input``), or a cancellation once
        ``cancel_event`` is set. Nothing here waits: the work's end, the server's questions and a
        poll timer call the :class:`_Follower`; the caller waits on ``outcome`` in its own way."""
        _Follower(self, tool_name, call, cancel_event, timeout_seconds, outcome).start()

    def _unfinished(self, tool_name: str, work: asyncio.Future[Any]) -> ToolResultEnvelope:
        """The envelope of a call whose work ended without one."""
        if work.cancelled():
            what = "the provider was closed during the call" if self._keeper.closed else "the call was cancelled"
            return self._failure(tool_name, f"failed: {what}", "unavailable")
        return self._failure(
            tool_name, f"failed: {self._keeper.text(cast(BaseException, work.exception()))}", "unavailable"
        )

    # --- tasks (docs/tasks.md) ----------------------------------------------------------------
    def _wants_task(self, conn: Connection, tool_name: str, allow_claimed: bool | None) -> bool:
        """2025-11-25: a task-required tool always runs as a task; a task-optional one when the
        caller asks for the task itself (``allow_claimed=True``)."""
        if self.config.tools is not None:
            listed = {str(t.get("name")): task_support_of(t) for t in self.config.tools}
        else:
            listed = conn.task_support or {}
        support = listed.get(tool_name, "forbidden")
        return support == "required" or (support == "optional" and bool(allow_claimed))

    async def _run_task_2025(
        self,
        tool_name: str,
        call: PendingCall,
        conn: Connection,
        session: ClientSession,
        arguments: dict[str, Any],
        meta: Mapping[str, Any] | None,
        timeout_seconds: float | None,
        allow_claimed: bool | None,
        deadline: float,
    ) -> ToolResultEnvelope:
        tasks = Tasks(session, "2025-11-25")
        try:
            started = await tasks.start(tool_name, arguments, meta, timeout_seconds)
        except Exception as exc:
            conn.note_failure(exc)
            return self._call_error(tool_name, exc, timeout_seconds)
        if isinstance(started, types.CallToolResult):  # the server ran it at once after all
            return scrub_envelope(with_error_kind(envelope_from_result(started)), self._keeper.secrets)
        return await self._task_outcome(tool_name, call, conn, tasks, started, allow_claimed, deadline)

    async def _resume_task(
        self,
        tool_name: str,
        call: PendingCall,
        conn: Connection,
        session: ClientSession,
        dialect: str | None,
        request_state: str,
        allow_claimed: bool | None,
        deadline: float,
    ) -> ToolResultEnvelope:
        """A task started earlier (by this process or another), named by ``request_state``:
        ``toolgen-task:<id>`` follows it (its status only, with ``allow_claimed=True``) and
        ``toolgen-task-cancel:<id>`` cancels it."""
        cancel = request_state.startswith(TASK_CANCEL_PREFIX)
        task_id = request_state[len(TASK_CANCEL_PREFIX if cancel else TASK_PREFIX) :]
        if dialect is None or not task_id:
            what = "the server advertises no tasks" if dialect is None else "the request_state names no task"
            return self._failure(tool_name, f"failed: cannot follow a task: {what}", "protocol")
        tasks = Tasks(session, dialect)
        try:
            if cancel:
                # The 2025-11-25 answer is the task; a 2026 one is an ack, so ask how it stands.
                state = (
                    await tasks.cancel(task_id) or (await tasks.get(task_id, self.config.connect_timeout_seconds))[0]
                )
                return self._task_envelope(tool_name, state)
            state, _ = await tasks.get(task_id, self.config.connect_timeout_seconds)
        except TaskEnded as exc:
            return self._failure(tool_name, f"failed: {exc.detail}", exc.kind)
        except Exception as exc:
            conn.note_failure(exc)
            return self._call_error(tool_name, exc, None)
        return await self._task_outcome(tool_name, call, conn, tasks, state, allow_claimed, deadline)

    async def _task_outcome(
        self,
        tool_name: str,
        call: PendingCall,
        conn: Connection,
        tasks: Tasks,
        state: TaskState,
        allow_claimed: bool | None,
        deadline: float,
    ) -> ToolResultEnvelope:
        """The task's envelope: at once (``allow_claimed=True``: ``result_mode: "session"``), else
        its final result inline, with every wait bounded and the task cancelled on the server when
        the caller stops waiting."""
        if allow_claimed:
            return self._task_envelope(tool_name, state)
        inputs = self._keeper.inputs
        call.task_id = state.task_id  # a cancel_event's envelope names the task it cancelled

        async def ask(method: str, request: types.InputRequest) -> Any:
            return await inputs.ask(conn, method, request, call)  # the task's own call: no guess

        try:
            result = await tasks.follow(state, deadline, ask)
        except TaskEnded as exc:
            return _of_task(self._failure(tool_name, f"failed: {exc.detail}", exc.kind), state.task_id)
        except TimeoutError:
            await tasks.cancel(state.task_id)
            what = f"timed out waiting for task {state.task_id!r} (cancelled on the server)"
            return _of_task(self._failure(tool_name, what, "timeout"), state.task_id)
        except asyncio.CancelledError:
            # cancel_event, an input round nobody answered, or close(): the task stops too.
            await asyncio.shield(tasks.cancel(state.task_id))
            raise
        envelope = _of_task(with_error_kind(envelope_from_result(result)), state.task_id)
        return scrub_envelope(envelope, self._keeper.secrets)

    def _task_envelope(self, tool_name: str, state: TaskState) -> ToolResultEnvelope:
        """A started (or looked-up, or cancelled) task as a session envelope: ``session_id`` is its
        id and ``session_status`` its status. The request worked, so it is no error whatever the
        task's status; ``status`` is ``running`` until the task ends."""
        text = f"task {state.task_id} is {state.status}" + (f": {state.message}" if state.message else "")
        envelope = ToolResultEnvelope(
            status="success" if state.done else "running",
            result=state.metadata(),
            result_mode="session",
            execution_mode="async",
            session_id=state.task_id,
            session_status=state.status,
            content=[{"type": "text", "text": text}],
            metadata={"task": state.metadata()},
        )
        return scrub_envelope(envelope, self._keeper.secrets)

    def _call_error(self, tool_name: str, exc: Exception, timeout_seconds: float | None) -> ToolResultEnvelope:
        """A failed tools/call as an error envelope with its kind (``docs/tool.md``, "Failure kinds")."""
        if isinstance(exc, MCPError):
            if exc.code == types.REQUEST_TIMEOUT:
                return self._failure(tool_name, f"timed out after {timeout_seconds} s", "timeout")
            if exc.code == types.CONNECTION_CLOSED:
                detail = "the connection to the server closed (did it exit?); the next call reconnects"
                return self._failure(tool_name, f"failed: {detail}", "unavailable")
            message = self._keeper.scrub(exc.message)
            if exc.code == types.INVALID_PARAMS:  # MCP reports an unknown tool as invalid params
                kind, named = kind_of_invalid_params(message), ""
            else:
                kind, name = kind_of_error_code(exc.code)
                named = f", {name}" if name else ""
            links = url_elicitations(exc.code, exc.data)
            # The URLs a person must visit before the call can succeed (blanked, as all server data).
            extra = {"url_elicitations": redact.blank_json(links, self._keeper.secrets)} if links else None
            return self._failure(tool_name, f"failed: {message} (MCP error {exc.code}{named})", kind, extra)
        if isinstance(exc, ToolServerError):
            return self._failure(tool_name, f"failed: {exc.detail}", "unavailable")
        if isinstance(exc, TimeoutError):
            return self._failure(tool_name, f"timed out after {timeout_seconds} s", "timeout")
        # The SDK raises RuntimeError/ValueError (pydantic's ValidationError) for replies it cannot use.
        kind = "protocol" if isinstance(exc, RuntimeError | ValueError) else "unavailable"
        return self._failure(tool_name, f"failed: {self._keeper.text(exc)}", kind)

    async def _check_pin(self, conn: Connection, session: ClientSession, tool_name: str) -> ToolResultEnvelope | None:
        """Under ``pin``, the listing of *this* connection is compared with the lock before a call is
        sent: a server that came back changed after a reconnect, or said ``tools/list_changed``,
        is listed again first. The refusal is the registry's (``ServerPin.refusal``)."""
        pin = self._pin
        if pin is None or self.config.tools is not None:
            return None
        if conn.pin_checked != conn.changes:
            try:
                self._store_listing(await self._fetch_listing((conn, session)))
            except ToolServerError as exc:
                return pin.unverified(tool_name, exc.detail)
            if conn.pin_checked != conn.changes:  # changed again while listing: never send unchecked
                return pin.unverified(tool_name, "the server's tool list changed while it was being listed")
        return pin.refusal(tool_name)

    def guard_with(self, pin: ServerPin) -> None:
        """Check every listing this provider fetches against ``pin`` (``PinGuard.attach`` calls this)."""
        self._pin = pin
        self._keeper.watch_tools = True  # the next connection subscribes to tools/list_changed

    def _on_list_changed(self) -> None:
        # The cached listing is stale too: the next listing or pinned call fetches a fresh one.
        self._cache = None
        if self.config.cache_scope == "process":
            with _PROCESS_CACHE_LOCK:
                _PROCESS_CACHE.pop(server_identity(self.config), None)

    async def _prefetch_listing(self, conn: Connection) -> None:
        # The SDK checks structured results against output schemas seen in tools/list but only
        # fetches the first page itself; one full listing per session covers every page.
        if conn.listed:
            return
        if self.config.tools is not None:
            # Nothing is listed: the SDK learns the declared tools from us instead, so it mirrors
            # their x-mcp-header arguments into Mcp-Param-* headers (a 2026 server refuses a call
            # without them: -32020) and checks results against their output schemas.
            conn.listed = True
            teach(conn.ready.result(), self._explicit_tools())
            return
        if not self.config.follow_pagination:
            return
        conn.listed = True
        try:
            self._store_listing(await self._fetch_listing())
        except ToolServerError as exc:
            logger.debug("%s", exc)

    # --- lifecycle ----------------------------------------------------------------------------
    def close(self) -> None:
        """Close the session (a stdio server is stopped) and the loop thread. Idempotent."""
        if self._runner.in_loop_thread():
            raise LoopThreadError(f"MCP server {self.name!r}: close() on the provider's loop thread; use aclose()")
        self._keeper.closed = True
        if self._runner.loop is not None:
            with suppress(RuntimeError):  # the loop is already closed
                self._runner.run(self._keeper.shutdown())
        self._runner.close()

    async def aclose(self) -> None:
        self._keeper.closed = True
        if self._runner.loop is not None:
            with suppress(RuntimeError):
                await self._runner.arun(self._keeper.shutdown())
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

    def _failure(
        self, tool_name: str, what: str, kind: str, metadata: dict[str, Any] | None = None
    ) -> ToolResultEnvelope:
        text = clip(self._keeper.scrub(one_line(f"{self._label(tool_name)} {what}")), self.config.max_error_chars)
        return ToolResultEnvelope.failure(text, kind=kind, metadata=metadata)
