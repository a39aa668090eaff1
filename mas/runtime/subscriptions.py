"""Resource subscriptions: one bounded queue of updates per subscription, read by iterating or by a callback.

``subscribe_resource(uri)`` (the MCP provider, a local source, the registry) returns a
:class:`ResourceSubscription`. The server side (``mas/runtime/mcp/_subscribe.py`` for MCP: both
dialects) pushes a :class:`ResourceUpdate` each time the server says the resource changed; the
caller either iterates (``for update in sub`` / ``async for update in sub``, or ``get(timeout)``)
or gave ``on_update``, which a delivery task calls one update at a time, in order.

Bounded: at most ``max_queued`` updates wait (``DEFAULT_MAX_QUEUED``); when a new one arrives on
a full queue the **oldest** is dropped and counted in ``dropped`` (an update only says "read it
again", so the newest is the one worth keeping). Nothing here ever blocks the server's connection.

Ending: ``close()`` / ``aclose()`` (or leaving ``with`` / ``async with``, also when cancelled)
unsubscribes on the server, within a bounded wait; iteration then stops. When the connection ends
(the server exited, the provider was closed), the subscription ends too: updates already queued
are still delivered, then iteration raises :class:`SubscriptionError` (``kind`` ``unavailable``).
No replay and no automatic re-subscribe: subscribe again, and read the resource again.
Guide: ``docs/resources-and-prompts.md``, "Subscriptions".
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DEFAULT_MAX_QUEUED",
    "ResourceSubscription",
    "ResourceUpdate",
    "SubscriptionError",
    "UpdateCallback",
]

logger = logging.getLogger("mas.runtime.subscriptions")

#: Updates one subscription keeps waiting unless ``max_queued`` says otherwise.
DEFAULT_MAX_QUEUED = 64

UpdateCallback = Callable[["ResourceUpdate"], Any]


@dataclass(frozen=True)
class ResourceUpdate:
    """The server said ``uri`` changed (read it again to see how). ``uri`` may be a sub-resource
    of the subscribed one (the 2026-07-28 revision allows it)."""

    server: str
    uri: str


class SubscriptionError(Exception):
    """A subscription could not be made, or ended because its connection did.

    ``kind`` is one of the contract's failure kinds (``docs/tool.md``, "Failure kinds"):
    ``protocol`` for a server that does not declare ``resources.subscribe`` (nothing is sent) or
    refuses it, ``timeout``, ``unavailable`` (no connection, the connection ended),
    ``unknown_tool`` (no server lists the URI), ``invalid_arguments``.
    """

    def __init__(self, message: str, kind: str = "unavailable") -> None:
        super().__init__(message)
        self.kind = kind


class ResourceSubscription:
    """Updates of one resource from one server, bounded; see the module docstring."""

    def __init__(
        self,
        server: str,
        uri: str,
        *,
        max_queued: int = DEFAULT_MAX_QUEUED,
        release: Callable[[], None] | None = None,
        arelease: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        if max_queued < 1:
            raise ValueError(f"max_queued must be at least 1, not {max_queued}")
        self.server = server
        self.uri = uri
        self.max_queued = max_queued
        #: Updates dropped because the queue was full (the oldest go first).
        self.dropped = 0
        #: Why the subscription ended without being closed (its connection ended); None otherwise.
        self.error: SubscriptionError | None = None
        #: The callback's delivery task (set by the side that made the subscription).
        self.delivery: asyncio.Future[None] | None = None
        self._queue: deque[ResourceUpdate] = deque()
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._closed = False  # closed by the caller: iteration stops at once
        self._ended = False  # no more updates will come (closed or lost)
        self._release = release
        self._arelease = arelease
        self._released = False

    def __repr__(self) -> str:
        state = "closed" if self._closed else "ended" if self._ended else "open"
        return f"ResourceSubscription(server={self.server!r}, uri={self.uri!r}, {state}, dropped={self.dropped})"

    @property
    def closed(self) -> bool:
        """No more updates will come (closed by the caller, or lost with the connection)."""
        return self._ended

    # --- the server side ------------------------------------------------------------------------
    def push(self, update: ResourceUpdate) -> None:
        """Queue an update (from any thread); on a full queue the oldest is dropped and counted."""
        with self._lock:
            if self._ended:
                return
            if len(self._queue) >= self.max_queued:
                self._queue.popleft()
                self.dropped += 1
            self._queue.append(update)
            self._wake()

    def end(self, error: SubscriptionError | None = None) -> None:
        """No more updates: the connection ended (``error``) or the subscription was released."""
        with self._lock:
            if self._ended:
                return
            self._ended = True
            if error is not None and not self._closed:
                self.error = error
            self._wake()

    def _wake(self) -> None:  # holds the lock
        self._ready.notify_all()
        waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            if not loop.is_closed():
                loop.call_soon_threadsafe(_settle, future)

    # --- the caller's side --------------------------------------------------------------------
    def _take(self) -> ResourceUpdate | None:
        """The next queued update, None when none waits; raises/stops at the end (holds the lock)."""
        if self._closed:
            raise _Done
        if self._queue:
            return self._queue.popleft()
        if self._ended:
            if self.error is not None:
                raise self.error
            raise _Done
        return None

    def get(self, timeout: float | None = None) -> ResourceUpdate | None:
        """The next update, waiting at most ``timeout`` seconds (None: until one comes or the
        subscription ends); None when the wait ran out or the subscription was closed.
        Raises :class:`SubscriptionError` when it was lost."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while True:
                try:
                    update = self._take()
                except _Done:
                    return None
                if update is not None:
                    return update
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return None
                self._ready.wait(left)

    async def aget(self, timeout: float | None = None) -> ResourceUpdate | None:
        """``get`` for async code: waits without blocking the caller's loop."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            with self._lock:
                try:
                    update = self._take()
                except _Done:
                    return None
                if update is not None:
                    return update
                waiter: asyncio.Future[None] = loop.create_future()
                self._waiters.append((loop, waiter))
            left = None if deadline is None else deadline - loop.time()
            if left is not None and left <= 0:
                return None
            try:
                await asyncio.wait_for(waiter, left)
            except TimeoutError:
                return None
            finally:
                with self._lock:
                    if (loop, waiter) in self._waiters:
                        self._waiters.remove((loop, waiter))

    def __iter__(self) -> Iterator[ResourceUpdate]:
        while True:
            update = self.get()
            if update is None:
                return
            yield update

    def __aiter__(self) -> AsyncIterator[ResourceUpdate]:
        return self._aiter()

    async def _aiter(self) -> AsyncIterator[ResourceUpdate]:
        while True:
            update = await self.aget()
            if update is None:
                return
            yield update

    def close(self) -> None:
        """Stop: unsubscribe on the server (bounded), end iteration. Idempotent."""
        if self._close_locally():
            if self._release is not None:
                self._release()

    async def aclose(self) -> None:
        if self._close_locally():
            if self._arelease is not None:
                # Finish unsubscribing even when the caller's task is being cancelled.
                await asyncio.shield(self._arelease())
            elif self._release is not None:
                await asyncio.to_thread(self._release)

    def _close_locally(self) -> bool:
        with self._lock:
            self._closed = True
            first, self._released = not self._released, True
        self.end()
        return first

    def __enter__(self) -> ResourceSubscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> ResourceSubscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _Done(Exception):
    """Internal: iteration is over."""


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def deliver(
    sub: ResourceSubscription, callback: UpdateCallback, caller_loop: asyncio.AbstractEventLoop | None
) -> None:
    """Call ``callback`` with each update of ``sub``, one at a time, in order, until it ends.

    A plain function runs in a worker thread (a slow one delays only its own subscription, whose
    queue then drops the oldest); a coroutine function runs on the loop the subscription was made
    from (``caller_loop``), or here. A callback that raises is logged (one line) and the next
    update is still delivered. The subscription's ``error`` says why it ended, if it was lost.
    """
    while True:
        try:
            update = await sub.aget()
        except SubscriptionError as exc:
            logger.warning("subscription to %r on %r ended: %s", sub.uri, sub.server, exc)
            return
        if update is None:
            return
        try:
            if asyncio.iscoroutinefunction(callback):
                outcome = callback(update)
                here = asyncio.get_running_loop()
                if caller_loop is not None and caller_loop is not here and not caller_loop.is_closed():
                    await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(outcome, caller_loop))
                else:
                    await outcome
            else:
                await asyncio.to_thread(callback, update)
        except Exception as exc:
            logger.warning("subscription to %r on %r: the callback raised %s", sub.uri, sub.server, type(exc).__name__)
