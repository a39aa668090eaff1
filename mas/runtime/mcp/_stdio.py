"""The stdio transport: an MCP server as a child process, JSON-RPC lines on its stdin and stdout.

Why not the SDK's ``mcp.client.stdio.stdio_client`` (checked against mcp 2.3.0): its stdout reader

* decodes strictly: one invalid UTF-8 byte (a Latin-1 ``caf\\xe9``) raises inside the reader, which
  then only drains stdout. The session never hears of it: that call and every later one wait
  for their timeout, or forever (issue 17, item 1). Its ``encoding_error_handler="replace"``
  parameter would cure only this one;
* joins ``buffer + chunk`` for every 64 KiB read, so one long line costs time quadratic in its
  length: 100 MB took 181 s (item 3);
* hands each line to pydantic's JSON parser, which refuses nesting past ~200 levels; the answer is
  logged and dropped and its call waits for the timeout (item 2).

This module keeps the SDK's process policy (a new session/process group; on close: stdin closed,
a grace of 2 s (infra ``exit_grace_seconds``), SIGTERM to the group, SIGKILL; every wait bounded and
shielded) and feeds the SDK's ``ClientSession`` the same two memory streams. Its reader splits
bytes on ``\\n`` in one growing buffer (linear), decodes with ``errors="replace"``, and applies the
limits of :class:`StdioLimits`:

* a message longer than ``max_message_bytes`` ends the connection at once, with a *fault* that
  every call in flight reports as a ``protocol`` error naming the size; the next call reconnects;
* a message the SDK's parser refuses is parsed again with :mod:`json`; nested deeper than
  ``max_json_depth`` (or not a valid JSON-RPC message) while carrying an id, it is answered
  with a JSON-RPC error for that id, so the call fails at once instead of waiting.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any, TextIO

import anyio
import anyio.abc
import anyio.lowlevel
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client._transport import TransportStreams
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.shared.message import SessionMessage

from mas.runtime import redact

__all__ = [
    "REFUSED",
    "SDK_PARSER_DEPTH",
    "LineBuffer",
    "StdioLimits",
    "StdioState",
    "answer_id",
    "json_depth",
    "stdio_transport",
    "too_big",
    "too_deep",
]

logger = logging.getLogger("mas.runtime.stdio")

#: JSON-RPC error code of an answer this client refused (too deep, not valid JSON-RPC). It is
#: the "parse error" code: the server's text could not be used. Reported as kind ``protocol``.
REFUSED = types.PARSE_ERROR

# The SDK's shutdown timings (mcp.client.stdio, 2.3.0), kept so both transports behave alike. Its
# 2 s exit grace is the default of the infra's ``exit_grace_seconds`` (MCPServerConfig).
_TERM_GRACE = 2.0
_REAP = 2.0
_FLUSH = 0.5
_POLL = 0.01
#: Nesting the SDK's parser (pydantic-core's JSON parser, through mcp 2.3.0's
#: ``jsonrpc_message_adapter``) refuses beyond: its recursion limit.
SDK_PARSER_DEPTH = 200
#: How much of a line that is not JSON-RPC a warning quotes.
_QUOTE = 120


@dataclass(frozen=True)
class StdioLimits:
    """What one message from the server may be (infra ``max_result_bytes``, ``max_json_depth``)."""

    max_message_bytes: int = 16 * 1024 * 1024
    max_json_depth: int = 256


@dataclass
class StdioState:
    """What the reader knows about the connection, for the provider's error messages."""

    server: str
    #: Why the transport ended the connection itself (a message over the size limit), or None.
    fault: str | None = None
    #: Bytes of a message that has started to arrive but not ended (a call timed out mid-answer).
    partial: int = 0
    #: Lines on stdout that were not JSON-RPC (a banner, log output) and the first of them.
    noise: int = 0
    first_noise: str = ""
    on_fault: list[Callable[[str], None]] = field(default_factory=list)

    def noise_hint(self) -> str:
        """``; the server wrote N line(s) ...`` for a connect failure, or ""."""
        if not self.noise:
            return ""
        return f"; the server wrote {self.noise} line(s) to stdout that are not JSON-RPC, the first: {self.first_noise}"


def json_depth(value: Any) -> int:
    """How deeply arrays and objects nest in ``value`` (a scalar is 0); no recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        stack.extend((child, depth) for child in children)
    return deepest


def answer_id(data: Any) -> types.RequestId | None:
    """The id of a JSON-RPC response or error, so a refused answer can still end its call."""
    if not isinstance(data, dict) or ("result" not in data and "error" not in data):
        return None
    ident = data.get("id")
    return ident if isinstance(ident, int | str) and not isinstance(ident, bool) else None


def _refusal(ident: types.RequestId, message: str) -> SessionMessage:
    error = types.ErrorData(code=REFUSED, message=message)
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=ident, error=error))


class LineBuffer:
    """Splits a byte stream into lines in linear time, refusing any longer than ``limit`` bytes.

    mcp 2.3.0 joins ``buffer + chunk`` for each read, so a line of n bytes costs O(n**2 / 64 KiB);
    here a growing ``bytearray`` is searched only where new bytes arrived, and the consumed
    prefix is dropped once per chunk.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._buffer = bytearray()

    @property
    def partial(self) -> int:
        """Bytes of a line that has begun and not ended (0 between lines)."""
        return len(self._buffer)

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines ``chunk`` completes, without their newline; raises ``_Fault`` for a long one."""
        buffer = self._buffer
        scan = len(buffer)  # only the new bytes can hold the next newline
        buffer += chunk
        start = 0
        lines: list[bytes] = []
        while (end := buffer.find(b"\n", scan)) != -1:
            if end - start > self.limit:
                raise _Fault(too_big(end - start, self.limit, ended=True))
            lines.append(bytes(buffer[start:end]))
            start = scan = end + 1
        del buffer[:start]  # once per chunk: what stays is one partial line
        if len(buffer) > self.limit:
            raise _Fault(too_big(len(buffer), self.limit, ended=False))
        return lines


class _LineParser:
    def __init__(self, state: StdioState, limits: StdioLimits) -> None:
        self.state = state
        self.limits = limits
        self.line_number = 0

    def parse(self, raw: bytes) -> SessionMessage | Exception | None:
        """One stdout line as a message for the session, an exception to surface, or None (blank)."""
        self.line_number += 1
        # errors="replace": a server's stray Latin-1 byte costs one character, not the connection.
        text = raw.decode("utf-8", errors="replace")
        if not text.strip():
            return None
        try:
            message = SessionMessage(types.jsonrpc_message_adapter.validate_json(text, by_name=False))
        except ValueError as fast_error:
            return self._slow_path(text, fast_error)
        limit = self.limits.max_json_depth
        # The SDK's parser refuses more than SDK_PARSER_DEPTH levels, so only a lower limit needs a
        # check here; and a message with fewer brackets than the limit cannot be nested deeper.
        if limit < SDK_PARSER_DEPTH and raw.count(b"[") + raw.count(b"{") > limit:
            data = json.loads(text)
            depth = json_depth(data)
            if depth > limit:
                return self._too_deep(depth, answer_id(data), None)
        return message

    def _slow_path(self, text: str, fast_error: ValueError) -> SessionMessage | Exception:
        limit = self.limits.max_json_depth
        try:
            data = json.loads(text)
        except RecursionError:
            # No id to answer: the call it belongs to could only wait, so the connection ends instead.
            return _Fault(f"the server sent a message nested deeper than Python can parse (max_json_depth={limit})")
        except ValueError:
            self._noise(text)
            return fast_error
        ident = answer_id(data)
        depth = json_depth(data)
        if depth > limit:
            return self._too_deep(depth, ident, fast_error)
        try:
            return SessionMessage(types.jsonrpc_message_adapter.validate_python(data, by_name=False))
        except ValueError as exc:
            if ident is None:
                return self._dropped("a message that is not valid JSON-RPC", exc)
            detail = " ".join(str(exc).split())[:300]
            return _refusal(ident, f"the server's answer is not a valid JSON-RPC response: {detail}")

    def _too_deep(self, depth: int, ident: types.RequestId | None, exc: Exception | None) -> SessionMessage | Exception:
        message = too_deep(depth, self.limits.max_json_depth)
        if ident is not None:
            return _refusal(ident, message)
        return self._dropped(message, exc or ValueError(message))

    def _noise(self, text: str) -> None:
        state = self.state
        state.noise += 1
        if state.noise == 1:
            quoted = text.strip()
            state.first_noise = redact.blank(repr(quoted[:_QUOTE] + ("..." if len(quoted) > _QUOTE else "")))
            logger.warning(
                "MCP server %r: stdout line %d is not JSON-RPC, ignored: %s",
                state.server, self.line_number, state.first_noise,
            )  # fmt: skip
        else:
            logger.debug("MCP server %r: stdout line %d is not JSON-RPC, ignored", state.server, self.line_number)

    def _dropped(self, what: str, exc: Exception) -> Exception:
        logger.warning("MCP server %r: stdout line %d: %s, ignored", self.state.server, self.line_number, what)
        return exc


class _Fault(Exception):
    """Raised inside the reader to end the connection with a reason the calls report."""


@asynccontextmanager
async def stdio_transport(
    params: StdioServerParameters,
    state: StdioState,
    limits: StdioLimits | None = None,
    errlog: TextIO = sys.stderr,
    *,
    exit_grace: float,
) -> AsyncIterator[TransportStreams]:
    """Start the server and yield ``(read_stream, write_stream)`` for ``ClientSession``; on close,
    the server has ``exit_grace`` seconds to exit after its stdin closes before it is stopped."""
    limits = limits or StdioLimits()
    process = await anyio.open_process(
        [params.command, *params.args],
        env=get_default_environment() | (params.env or {}),
        stderr=errlog,
        cwd=params.cwd,
        start_new_session=True,  # the whole tree can be stopped as one group
    )
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()
    parser = _LineParser(state, limits)

    def fault(reason: str) -> None:
        state.fault = reason
        for callback in state.on_fault:
            callback(reason)

    async def deliver(message: SessionMessage | Exception | None) -> None:
        if isinstance(message, _Fault):
            raise message
        if message is not None:
            await read_writer.send(message)

    async def reader() -> None:
        assert process.stdout is not None
        lines = LineBuffer(limits.max_message_bytes)
        try:
            async with read_writer:
                try:
                    async for chunk in process.stdout:
                        for line in lines.feed(chunk):
                            await deliver(parser.parse(line))
                        state.partial = lines.partial
                    if lines.partial:  # stdout closed inside a message: it can never be whole
                        logger.debug(
                            "MCP server %r: stdout ended inside a message of %d bytes", state.server, lines.partial
                        )
                except _Fault as exc:
                    # Set before the read side closes below, so the calls it ends can say why.
                    fault(str(exc))
                    logger.warning("MCP server %r: %s", state.server, exc)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
            pass  # our own shutdown, or the session went away: the read stream is closed either way
        finally:
            # Keep the pipe moving, so a server blocked writing can still see its stdin close
            # (ends at EOF, or when the shutdown closes stdout).
            await _discard(process)

    async with anyio.create_task_group() as group:
        group.start_soon(reader)
        group.start_soon(_write_lines, process, write_reader, read_writer, writer_done)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):  # the child must be stopped even on cancellation
                read_stream.close()
                write_stream.close()
                with anyio.move_on_after(_FLUSH):
                    await writer_done.wait()
                await _stop(process, exit_grace)
                for stream in (read_stream, write_stream, read_writer, write_reader):
                    await stream.aclose()
                await anyio.lowlevel.checkpoint()
            group.cancel_scope.cancel()


async def _write_lines(
    process: anyio.abc.Process,
    write_reader: MemoryObjectReceiveStream[SessionMessage],
    read_writer: MemoryObjectSendStream[SessionMessage | Exception],
    done: anyio.Event,
) -> None:
    """The session's outgoing messages to the server's stdin, one JSON line each; a message that
    cannot be encoded is refused to its caller, not sent."""
    assert process.stdin is not None
    try:
        async with write_reader:
            async for outgoing in write_reader:
                try:
                    line = outgoing.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    data = line.encode("utf-8")
                except ValueError as exc:  # e.g. a lone surrogate in an argument
                    await _refuse_outgoing(outgoing, exc, read_writer)
                    continue
                await process.stdin.send(data)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        # The server stopped reading: end the read side too, so no request waits forever.
        await read_writer.aclose()
    finally:
        done.set()


def too_deep(depth: int, limit: int) -> str:
    """The refusal of an answer nested deeper than ``max_json_depth`` (stdio and HTTP say the same)."""
    return f"the server's answer is nested {depth} levels deep, more than max_json_depth={limit}"


def too_big(size: int, limit: int, *, ended: bool) -> str:
    """Why a connection ended: a message over ``max_result_bytes`` (stdio and HTTP say the same)."""
    so_far = "" if ended else " and counting"
    return (
        f"the server sent a message of {size} bytes{so_far}, more than max_result_bytes={limit}; "
        "the connection is replaced"
    )


async def _refuse_outgoing(
    outgoing: SessionMessage, exc: ValueError, read_writer: anyio.abc.ObjectSendStream[SessionMessage | Exception]
) -> None:
    message = outgoing.message
    if isinstance(message, types.JSONRPCRequest):
        detail = f"the request could not be encoded for the server: {' '.join(str(exc).split())[:200]}"
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await read_writer.send(_refusal(message.id, detail))


async def _discard(process: anyio.abc.Process) -> None:
    assert process.stdout is not None
    with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        while True:
            await process.stdout.receive()


async def _stop(process: anyio.abc.Process, exit_grace: float) -> None:
    """Close stdin, wait up to ``exit_grace``, then stop the process group (the MCP spec's shutdown order)."""
    assert process.stdin is not None and process.stdout is not None
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    if not await _exited(process, exit_grace):
        if sys.platform == "win32":  # pragma: no cover - no process groups
            with suppress(OSError):
                process.kill()
        else:
            from mcp.os.posix.utilities import terminate_posix_process_tree

            await terminate_posix_process_tree(process, _TERM_GRACE)
        if not await _exited(process, _REAP):
            logger.warning("MCP server process %d is still alive after SIGKILL; abandoning it", process.pid)
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdout.aclose()
    if process.returncode is not None:  # aclose() waits for the exit: never for an abandoned one
        with anyio.move_on_after(_REAP), suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.aclose()


async def _exited(process: anyio.abc.Process, timeout: float) -> bool:
    # returncode, not wait(): on 3.11+ wait() also waits for pipe EOF, which a grandchild can hold.
    with anyio.move_on_after(timeout):
        while process.returncode is None:
            await anyio.sleep(_POLL)
        return True
    return False
