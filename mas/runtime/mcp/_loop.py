"""A private event loop on a daemon thread, so synchronous code can drive async clients.

The MCP SDK is async and its context managers must be entered and exited by the same task,
so a provider keeps its session on one long-lived loop. :class:`BackgroundLoop` owns that loop:

* ``run(coro)`` blocks the calling thread until ``coro`` finishes on the loop. It works from
  plain sync code and from worker threads of another running loop (``asyncio.to_thread``).
* ``arun(coro)`` awaits ``coro`` from any event loop without blocking it.
* ``call_soon(callback)`` and ``wait(future)``: for work that completes a caller's future itself,
  possibly before it ends (an MCP call that hands back an ``input_required`` envelope).
* Calling ``run`` on the loop's own thread would deadlock, so it raises
  :class:`LoopThreadError` telling the user to use the async API instead.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["BackgroundLoop", "LoopThreadError"]

T = TypeVar("T")


class LoopThreadError(RuntimeError):
    """A blocking call was made on the background loop's own thread."""


class BackgroundLoop:
    """An asyncio loop running on a daemon thread, started lazily and stopped by :meth:`close`."""

    def __init__(self, name: str, *, async_hint: str = "the async API") -> None:
        self._name = name
        self._async_hint = async_hint
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The running loop, or None before the first use and after :meth:`close`."""
        return self._loop

    def in_loop_thread(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def _ensure_started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._closed:
                raise RuntimeError(f"{self._name} is closed")
            if self._loop is not None:
                return self._loop
            loop = asyncio.new_event_loop()
            started = threading.Event()

            def runner() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(started.set)
                try:
                    loop.run_forever()
                finally:
                    _drain(loop)

            thread = threading.Thread(target=runner, name=f"{self._name}-loop", daemon=True)
            thread.start()
            started.wait()
            self._loop, self._thread = loop, thread
            return loop

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop and return a thread-safe future.

        As ``asyncio.run_coroutine_threadsafe`` does (cancelling the future cancels the task; the
        task's cancellation cancels the future), except that the future is completed by the task's
        last step itself, not by a done callback one loop turn later: a blocking call (``run``)
        returns that much sooner, which a caller making one call after another feels.
        """
        try:
            loop = self._ensure_started()
        except BaseException:
            coro.close()  # never leave an un-awaited coroutine behind
            raise
        future: concurrent.futures.Future[T] = concurrent.futures.Future()

        async def bridge() -> None:
            try:
                result = await coro
            except asyncio.CancelledError:
                future.cancel()
                raise
            except BaseException as exc:
                if future.set_running_or_notify_cancel():
                    future.set_exception(exc)
                if not isinstance(exc, Exception):
                    raise  # KeyboardInterrupt, SystemExit: as from any task
            else:
                if future.set_running_or_notify_cancel():
                    future.set_result(result)

        def start() -> None:
            if future.cancelled():
                coro.close()
                return
            task = loop.create_task(bridge())
            future.add_done_callback(lambda done: done.cancelled() and loop.call_soon_threadsafe(task.cancel))

        loop.call_soon_threadsafe(start)
        return future

    def call_soon(self, callback: Callable[..., object], *args: object) -> None:
        """Run ``callback(*args)`` on the loop, from any thread (starting the loop when needed)."""
        self._ensure_started().call_soon_threadsafe(callback, *args)

    def check_blocking(self) -> None:
        """Raise :class:`LoopThreadError` on the loop's own thread, where blocking would deadlock."""
        if self.in_loop_thread():
            raise LoopThreadError(
                f"{self._name}: a blocking call was made on its own event-loop thread (it would deadlock); "
                f"use {self._async_hint} instead"
            )

    def wait(self, future: concurrent.futures.Future[T]) -> T:
        """Block until ``future``, which work on the loop completes, is done; Ctrl-C cancels it."""
        try:
            return future.result()
        except KeyboardInterrupt:
            future.cancel()  # stop the work on the loop too, then let Ctrl-C through
            raise

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and block until it finishes."""
        try:
            self.check_blocking()
        except LoopThreadError:
            coro.close()
            raise
        return self.wait(self.submit(coro))

    async def arun(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` on the background loop from any event loop (or inline when already on it)."""
        if self.in_loop_thread():
            return await coro
        # Cancelling the awaiting task cancels the wrapped future, which cancels the task on our loop.
        return await asyncio.wrap_future(self.submit(coro))

    def close(self, timeout: float = 10.0) -> None:
        """Stop the loop and join its thread. Idempotent; must not be called from the loop thread."""
        with self._lock:
            self._closed = True
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        if threading.current_thread() is thread:
            raise LoopThreadError(f"{self._name}: close() was called on its own event-loop thread")
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)


def _drain(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what is left on a stopped loop and close it, as ``asyncio.run`` does on exit."""
    try:
        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        # getaddrinfo and friends run in the default executor; join its threads too.
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        loop.close()
