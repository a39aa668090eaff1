"""A stdio server's own stderr (and the non-JSON-RPC lines on its stdout), kept out of the caller's lines.

Servers write banners, request logs and, on an old SDK, 100-line validation dumps to stderr.
Passed straight through, they interleave with toolgen's own lines and make a good run look
broken. Each stdio connection gets a pipe instead: a reader thread forwards every line to the
``mas.runtime.server_stderr`` logger at INFO (the CLIs show INFO with ``-v``) and, when nobody
listens at INFO, only counts them; when the connection ends, one WARNING line says how many
there were (:func:`report`). Reading never stops, so a chatty server never blocks on a full pipe.

A banner printed on stdout makes the SDK log one pydantic traceback per line. :func:`owned_by`
marks the connection's task (a context variable, which the SDK's reader tasks inherit), and a
filter on the SDK's stdio logger counts those records into the same summary instead of showing
them; with INFO enabled they pass through untouched.
"""

from __future__ import annotations

import contextvars
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, TextIO, cast

__all__ = ["JOIN_SECONDS", "Noise", "StderrSink", "owned_by", "report"]

logger = logging.getLogger("mas.runtime.server_stderr")

#: How long the end of a connection waits for the reader to drain (a grandchild of the server
#: may keep the pipe open; the count then covers what arrived so far).
JOIN_SECONDS = 1.0
_MAX_LINE = 4096  # longer lines are cut: a server must not make us hold megabytes of one line


class StderrSink:
    """The write end goes to the child as its stderr; :meth:`finish` reports what came out."""

    def __init__(self, server: str, scrub: Callable[[str], str]) -> None:
        self.server = server
        self.lines = 0
        self._scrub = scrub
        read_fd, write_fd = os.pipe()
        self._read: IO[bytes] = os.fdopen(read_fd, "rb")
        #: Handed to the SDK's ``stdio_client(errlog=...)``, which needs a real file descriptor.
        self.errlog = cast(TextIO, os.fdopen(write_fd, "w", encoding="utf-8"))
        self._thread = threading.Thread(target=self._pump, name=f"stderr of MCP server {server!r}", daemon=True)
        self._thread.start()
        self._finished = False

    def spawned(self) -> None:
        """The child has its own copy of the write end now; ours would keep EOF from coming."""
        if not self.errlog.closed:
            self.errlog.close()

    def _pump(self) -> None:
        with self._read:
            while line := self._read.readline(_MAX_LINE):
                self.lines += 1
                if logger.isEnabledFor(logging.INFO):
                    text = line.decode("utf-8", "replace").rstrip("\r\n")
                    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in self._scrub(text))
                    logger.info("MCP server %r stderr: %s", self.server, shown)

    def finish(self) -> int:
        """After the child stopped: drain (bounded) and return how many lines it wrote."""
        if not self._finished:
            self._finished = True
            self.spawned()
            self._thread.join(JOIN_SECONDS)
        return self.lines


@dataclass
class Noise:
    """What one connection's server wrote besides JSON-RPC, counted until the connection ends."""

    stderr_lines: int = 0
    stdout_lines: int = 0  # lines on stdout that are not JSON-RPC (banners), which the SDK skips


_OWNER: contextvars.ContextVar[Noise | None] = contextvars.ContextVar("toolgen_mcp_noise", default=None)
_SDK_STDIO = logging.getLogger("mcp.client.stdio")
_NOT_JSON_RPC = "Failed to parse JSONRPC message"


def owned_by(noise: Noise) -> None:
    """Count SDK stdout complaints raised from this task (and the tasks it starts) into ``noise``."""
    _OWNER.set(noise)


class _CountBanners(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        noise = _OWNER.get()
        if noise is None or not str(record.msg).startswith(_NOT_JSON_RPC):
            return True  # not ours (another client in this process), or not a skipped line
        noise.stdout_lines += 1
        return logger.isEnabledFor(logging.INFO)  # -v: the SDK's own record, details and all


if not any(isinstance(f, _CountBanners) for f in _SDK_STDIO.filters):
    _SDK_STDIO.addFilter(_CountBanners())


def report(server: str, noise: Noise) -> None:
    """One line for what a connection's server wrote besides JSON-RPC, unless it was shown."""
    if logger.isEnabledFor(logging.INFO):
        return
    parts = []
    if noise.stderr_lines:
        parts.append(f"{noise.stderr_lines} line(s) on stderr")
    if noise.stdout_lines:
        parts.append(f"{noise.stdout_lines} line(s) on stdout that are not JSON-RPC (skipped)")
    if parts:
        logger.warning("MCP server %r wrote %s; -v shows them (logger %s at INFO)",
                       server, " and ".join(parts), logger.name)  # fmt: skip
