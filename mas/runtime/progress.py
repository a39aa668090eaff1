"""Progress of slow work (listing MCP servers) on stderr, shared by ``mas-runtime`` and ``toolgen``.

On a terminal each server gets a live line (rich): connecting, page N, then done with its tool
count and time. Anywhere else (CI logs, pipes, tests) the same events are plain lines, one per
event, so a log reads top to bottom. ``quiet`` prints nothing; ``verbose`` adds detail lines.
Progress never goes to stdout, which carries the command's result.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:  # rich is loaded by the first live display only: a CI run or a pipe never pays it
    from rich.progress import Progress as _RichProgress
    from rich.progress import TaskID

__all__ = ["Progress", "ServerTask"]


class ServerTask:
    """One server being listed: ``page()`` after each tools/list page, ``done()`` with the total."""

    def __init__(self, progress: Progress, name: str) -> None:
        self._progress = progress
        self.name = name
        self.started = time.monotonic()
        self.tools: int | None = None
        self._task: TaskID | None = None

    def _show(self, text: str) -> None:
        self._progress._event(self, text)

    def page(self, number: int, tools_so_far: int) -> None:
        self._show(f"page {number}, {tools_so_far} tool(s) so far")

    def done(self, tools: int) -> None:
        self.tools = tools
        self._show(f"{tools} tool(s) in {time.monotonic() - self.started:.1f} s")


class Progress:
    """Where progress goes; use as a context manager so a live display is always closed."""

    def __init__(
        self,
        prog: str,
        *,
        quiet: bool = False,
        verbose: bool = False,
        stream: TextIO | None = None,
        live: bool | None = None,
    ) -> None:
        self.prog = prog
        self.quiet = quiet
        self.verbose = verbose and not quiet
        self._stream = stream if stream is not None else sys.stderr
        isatty = getattr(self._stream, "isatty", None)
        self.live = not quiet and (live if live is not None else bool(isatty and isatty()))
        self._bars: _RichProgress | None = None
        # Servers are listed side by side: their events arrive from several threads.
        self._lock = threading.RLock()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        if self._bars is not None:
            self._bars.stop()
            self._bars = None

    def note(self, message: str) -> None:
        """A progress line (silenced by ``quiet``)."""
        if not self.quiet:
            self._line(message)

    def detail(self, message: str) -> None:
        """A line shown only with ``verbose``."""
        if self.verbose:
            self._line(message)

    @contextmanager
    def server(self, name: str) -> Iterator[ServerTask]:
        """Report one server's listing; an exception marks it failed and propagates."""
        task = ServerTask(self, name)
        self._event(task, "connecting")
        try:
            yield task
        except BaseException:
            self._event(task, "failed", final=True)
            raise
        if task.tools is None:
            self._event(task, f"done in {time.monotonic() - task.started:.1f} s", final=True)
        elif self._bars is not None and task._task is not None:
            self._bars.update(task._task, completed=1, total=1)

    # --- output ---------------------------------------------------------------------------------
    def _line(self, message: str) -> None:
        with self._lock:
            self._write(message)

    def _write(self, message: str) -> None:
        if self._bars is not None:
            self._bars.console.print(f"{self.prog}: {message}", markup=False, highlight=False)
        else:
            # One write, newline included: print() writes the text and the newline apart, and a
            # log record from another thread (a server's stray stdout line, say) landed between.
            self._stream.write(f"{self.prog}: {message}\n")
            self._stream.flush()

    def _event(self, task: ServerTask, text: str, *, final: bool = False) -> None:
        if self.quiet:
            return
        with self._lock:
            self._show(task, text, final)

    def _show(self, task: ServerTask, text: str, final: bool) -> None:
        if not self.live:
            self._line(f"{task.name}: {text}")
            return
        bars = self._live_bars()
        description = f"{task.name}: {text}"
        if task._task is None:
            task._task = bars.add_task(description, total=None)
        else:
            bars.update(task._task, description=description)
        if final:
            bars.update(task._task, completed=1, total=1)

    def _live_bars(self) -> _RichProgress:
        if self._bars is None:
            from rich.console import Console
            from rich.progress import Progress as _RichProgress
            from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

            console = Console(file=self._stream, force_terminal=True, highlight=False)
            self._bars = _RichProgress(
                SpinnerColumn(finished_text="-"),
                TextColumn("{task.description}", markup=False),
                TimeElapsedColumn(),
                console=console,
                transient=False,
            )
            self._bars.start()
        return self._bars
