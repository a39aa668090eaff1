"""The MCP provider's resource subscriptions, in both dialects of the protocol.

* A 2025-11-25 (``initialize``) session: ``resources/subscribe`` once per subscription, updates as
  ``notifications/resources/updated`` on the session (routed here by
  :meth:`ResourceWatches.updated`), ``resources/unsubscribe`` when the last subscription of that
  URI on that connection is closed.
* A 2026-07-28 session: one ``subscriptions/listen`` stream per subscription, its filter
  ``resourceSubscriptions: [uri]``; its ``ResourceUpdated`` events are the updates; closing the
  subscription ends the stream (the SDK cancels the request, and the server drops the listener).

Both: nothing is sent to a server that does not declare ``resources.subscribe`` (a
``SubscriptionError`` of kind ``protocol``); subscribing is bounded by ``timeout_seconds``,
unsubscribing by ``connect_timeout_seconds``; when the connection ends every subscription on it
ends with an ``unavailable`` error (no re-subscribe: there is no replay). Every coroutine runs on
the provider's loop. The queue and its bound: ``mas/runtime/subscriptions.py``.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import AsyncExitStack, suppress
from typing import TYPE_CHECKING

import anyio
import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mas.runtime.mcp._convert import ToolServerError
from mas.runtime.subscriptions import ResourceSubscription, ResourceUpdate, SubscriptionError, UpdateCallback, deliver

if TYPE_CHECKING:
    from mcp.client.session import ClientSession

    from mas.runtime.mcp._session import Connection, SessionKeeper
    from mas.runtime.mcp._surface import ServerSurface

__all__ = ["ResourceWatches"]

logger = logging.getLogger("mas.runtime.mcp_provider")

#: How often a connection with 2025-11-25 subscriptions is checked for its end (the SDK has no
#: event for it; a 2026-07-28 listen stream notices on its own).
EOF_POLL_SECONDS = 0.25


class ResourceWatches:
    """Every open subscription of one MCP provider (see the module docstring)."""

    def __init__(self, keeper: SessionKeeper, surface: ServerSurface) -> None:
        self._keeper = keeper
        self._surface = surface
        self.name = keeper.name
        #: 2025-11-25 subscriptions: (connection, subscription), in the order they were made.
        self._legacy: list[tuple[Connection, ResourceSubscription]] = []
        #: 2026-07-28 subscriptions: subscription -> (connection, the task that holds its stream).
        self._modern: dict[ResourceSubscription, tuple[Connection, asyncio.Task[None]]] = {}
        #: Connections with 2025-11-25 subscriptions -> the task that notices their end.
        self._watchers: dict[Connection, asyncio.Task[None]] = {}

    def __len__(self) -> int:
        return len(self._legacy) + len(self._modern)

    async def open(
        self,
        sub: ResourceSubscription,
        timeout: float,
        on_update: UpdateCallback | None,
        caller_loop: asyncio.AbstractEventLoop | None,
    ) -> None:
        """Subscribe ``sub`` on the server; raises :class:`SubscriptionError` when it cannot."""
        label = f"subscribe to {sub.uri!r}"
        try:
            with anyio.fail_after(timeout):
                conn, session = await self._keeper.acquire()
        except TimeoutError:
            raise self._failed(label, f"timed out after {timeout} s", "timeout") from None
        except ToolServerError as exc:
            raise self._failed(label, f"failed: {exc.detail}", "unavailable") from None
        caps = session.server_capabilities
        resources = None if caps is None else caps.resources
        if resources is None or not resources.subscribe:
            # Nothing is sent: the server said it cannot (mcp 1.x servers never declare it).
            raise self._failed(label, "not sent: the server does not declare resources.subscribe", "protocol")
        if session.protocol_version in MODERN_PROTOCOL_VERSIONS:
            await self._listen(conn, session, sub, timeout, label)
        else:
            await self._subscribe(conn, session, sub, timeout, label)
        if on_update is not None:
            sub.delivery = asyncio.ensure_future(deliver(sub, on_update, caller_loop))

    # --- 2025-11-25: resources/subscribe + notifications/resources/updated ----------------------
    async def _subscribe(
        self, conn: Connection, session: ClientSession, sub: ResourceSubscription, timeout: float, label: str
    ) -> None:
        entry = (conn, sub)
        self._legacy.append(entry)  # before the request: an update sent right after it is not lost
        try:
            with anyio.fail_after(timeout):
                # send_request, not the SDK's subscribe_resource(): that warns it is removed in 2026-07-28,
                # which this session did not negotiate.
                await session.send_request(_subscribe_request(sub.uri), types.EmptyResult)
        except BaseException as exc:
            self._legacy.remove(entry)
            if isinstance(exc, Exception):
                raise self._request_failed(conn, label, timeout, exc) from None
            raise
        if conn not in self._watchers:
            self._watchers[conn] = asyncio.ensure_future(self._watch(conn))

    async def _watch(self, conn: Connection) -> None:
        """End ``conn`` once its server is gone (EOF), so its subscriptions end instead of waiting forever."""
        try:
            while any(c is conn for c, _sub in self._legacy):
                if not conn.usable():
                    conn.broken = True
                    conn.stop.set()  # the owner task ends it; connection_ended() ends its subscriptions
                    return
                await asyncio.sleep(EOF_POLL_SECONDS)
        finally:
            self._watchers.pop(conn, None)

    def updated(self, uri: str) -> None:
        """A ``notifications/resources/updated`` arrived (it may name a sub-resource of a subscribed URI)."""
        for _conn, sub in list(self._legacy):
            if uri == sub.uri or uri.startswith(sub.uri.rstrip("/") + "/"):
                sub.push(ResourceUpdate(self.name, uri))

    # --- 2026-07-28: subscriptions/listen with resourceSubscriptions ----------------------------
    async def _listen(
        self, conn: Connection, session: ClientSession, sub: ResourceSubscription, timeout: float, label: str
    ) -> None:
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(self._hold(conn, session, sub, timeout, label, ready))
        self._modern[sub] = (conn, task)
        try:
            await asyncio.shield(ready)
        except BaseException:
            self._modern.pop(sub, None)
            task.cancel()
            with suppress(BaseException):
                await task
            raise

    async def _hold(
        self,
        conn: Connection,
        session: ClientSession,
        sub: ResourceSubscription,
        timeout: float,
        label: str,
        ready: asyncio.Future[None],
    ) -> None:
        """Own one listen stream: the SDK's context manager is entered and left by this task."""
        from mcp.client.subscriptions import ResourceUpdated, SubscriptionLost, listen

        try:
            async with AsyncExitStack() as stack:
                try:
                    with anyio.fail_after(timeout):
                        stream = await stack.enter_async_context(listen(session, resource_subscriptions=[sub.uri]))
                except Exception as exc:
                    ready.set_exception(self._request_failed(conn, label, timeout, exc))
                    return
                if sub.uri not in (stream.honored.resource_subscriptions or ()):
                    detail = "refused: subscriptions/listen did not honour resourceSubscriptions"
                    ready.set_exception(self._failed(label, detail, "protocol"))
                    return
                ready.set_result(None)
                try:
                    async for event in stream:
                        if isinstance(event, ResourceUpdated):
                            sub.push(ResourceUpdate(self.name, event.uri))
                    why = "the server ended the subscription"
                except SubscriptionLost:
                    why = "the subscription stream was lost (did the server exit?)"
                sub.end(self._failed(label, f"ended: {why}; subscribe again", "unavailable"))
        except Exception as exc:
            if not ready.done():
                ready.set_exception(self._request_failed(conn, label, timeout, exc))
            else:
                sub.end(self._failed(label, f"ended: {self._keeper.text(exc)}", "unavailable"))
        finally:
            self._modern.pop(sub, None)

    # --- ending -------------------------------------------------------------------------------
    async def release(self, sub: ResourceSubscription) -> None:
        """The caller closed ``sub``: unsubscribe on the server, within ``connect_timeout_seconds``."""
        sub.end()
        delivery = sub.delivery
        if delivery is not None and not delivery.done() and delivery is not asyncio.current_task():
            delivery.cancel()
        held = self._modern.pop(sub, None)
        if held is not None:
            _conn, task = held
            task.cancel()  # leaving listen() ends the stream on the server
            with suppress(BaseException):
                await asyncio.wait_for(task, self._keeper.config.connect_timeout_seconds)
            return
        entries = [entry for entry in self._legacy if entry[1] is sub]
        if not entries:
            return
        conn = entries[0][0]
        self._legacy.remove(entries[0])
        if any(c is conn and s.uri == sub.uri for c, s in self._legacy):
            return  # another subscription of this URI on this connection still wants updates
        if not conn.usable() or not conn.ready.done() or self._keeper.closed:
            return  # the session is gone, and its subscriptions with it
        try:
            with anyio.fail_after(self._keeper.config.connect_timeout_seconds):
                await conn.ready.result().send_request(_unsubscribe_request(sub.uri), types.EmptyResult)
        except Exception as exc:
            text = self._keeper.text(exc)
            logger.debug("MCP server %r: resources/unsubscribe %r failed: %s", self.name, sub.uri, text)

    def connection_ended(self, conn: Connection) -> None:
        """Every subscription made on ``conn`` ends: its server (or the provider) is gone."""
        ended = [sub for c, sub in self._legacy if c is conn]
        self._legacy = [(c, sub) for c, sub in self._legacy if c is not conn]
        for sub, (c, task) in list(self._modern.items()):
            if c is conn:
                ended.append(sub)
                task.cancel()
        for sub in ended:
            label = f"subscribe to {sub.uri!r}"
            sub.end(self._failed(label, "ended: the connection to the server ended; subscribe again", "unavailable"))

    # --- failures -----------------------------------------------------------------------------
    def _failed(self, label: str, what: str, kind: str) -> SubscriptionError:
        envelope = self._surface.failure(label, what, kind)
        return SubscriptionError(envelope.text, kind)

    def _request_failed(self, conn: Connection, label: str, timeout: float, exc: Exception) -> SubscriptionError:
        """One rule with the surface's requests: MCP error codes to kinds, secrets blanked, cut."""
        if isinstance(exc, TimeoutError):
            return self._failed(label, f"timed out after {timeout} s", "timeout")
        conn.note_failure(exc)
        envelope = self._surface.error_envelope(label, exc)
        return SubscriptionError(envelope.text, envelope.error_kind or "protocol")


def _subscribe_request(uri: str) -> types.SubscribeRequest:
    return types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri))


def _unsubscribe_request(uri: str) -> types.UnsubscribeRequest:
    return types.UnsubscribeRequest(params=types.UnsubscribeRequestParams(uri=uri))
