"""Library logging (the MCP SDK's among it) as one line per problem on stderr; details with -v.

With no handler configured, Python prints any warning a library logs, traceback and all, through
its last-resort handler, even when the run succeeds: a server's start-up banner on stdout makes
the MCP SDK log a pydantic traceback. The CLIs route every record through here instead.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from mas.runtime.redact import BlankingFormatter

__all__ = ["routed_logging"]


class _OneLine(logging.Formatter):
    def __init__(self, prog: str) -> None:
        super().__init__()
        self.prog = prog

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            message += f" ({type(record.exc_info[1]).__name__}; -v shows details)"
        # A library record never decides the exit status, so it is a warning whatever its level.
        text = " ".join(f"{self.prog}: warning: {record.name}: {message}".split())
        return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


@contextmanager
def routed_logging(prog: str, *, verbose: bool = False) -> Iterator[None]:
    """While active: warnings and errors from any logger as one line each (``verbose``: everything
    from INFO up, with tracebacks). Restores the root logger afterwards (CLIs run in-process in tests)."""
    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)
    inner = logging.Formatter(f"{prog}: %(levelname)s: %(name)s: %(message)s") if verbose else _OneLine(prog)
    # Every line, traceback included: a library may quote a reply that echoed a secret header.
    handler.setFormatter(BlankingFormatter(inner))
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO if verbose else logging.WARNING)
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
