"""A stdio server's own stderr, kept out of the caller's lines.

Servers write banners, request logs and, on an old SDK, 100-line validation dumps to stderr.
Passed straight through, they interleave with toolgen's own lines and make a good run look
broken. Each stdio connection gets a pipe instead: a reader thread forwards every line to the
``mas.runtime.server_stderr`` logger at INFO (the CLIs show INFO with ``-v``) and, when nobody
listens at INFO, only counts them and keeps the last; when the connection ends, one INFO line
says how many there were (:func:`report`), and a connection that fails quotes the last one.
Reading never stops, so a chatty server never blocks on a full pipe.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import IO, TextIO, cast

__all__ = ["JOIN_SECONDS", "StderrSink", "report"]

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
        self._last: str | None = None
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
                text = line.decode("utf-8", "replace").rstrip("\r\n")
                if text.strip():
                    self._last = text  # kept raw: scrubbed and made printable only when shown
                if logger.isEnabledFor(logging.INFO):
                    logger.info("MCP server %r stderr: %s", self.server, self._shown(text))

    def _shown(self, text: str) -> str:
        return "".join(c if c.isprintable() else repr(c)[1:-1] for c in self._scrub(text))

    @property
    def last_line(self) -> str | None:
        """The last non-blank line the server wrote (scrubbed, printable, at most 4096 bytes), if any:
        what a server that dies at start says about why (an import error, a missing setting)."""
        return None if self._last is None else self._shown(self._last)

    def finish(self) -> int:
        """After the child stopped: drain (bounded) and return how many lines it wrote."""
        if not self._finished:
            self._finished = True
            self.spawned()
            self._thread.join(JOIN_SECONDS)
        return self.lines


def report(server: str, lines: int) -> None:
    """One INFO line for how many lines a connection's server wrote on stderr (``-v`` shows it after
    the lines themselves). A server logging to stderr is normal: it is no warning, so a run (and
    a user's own program) says nothing of it unless asked; a connection that fails quotes the
    server's last line in its error instead (``_session.py``)."""
    if lines:
        logger.info("MCP server %r wrote %d line(s) on stderr", server, lines)
