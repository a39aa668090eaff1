"""The one formatting pass: ``ruff format``, pinned and configured here only.

Templates print each statement on one line; the formatter lays every generated module out, once
per run, in one batched call over all of them (ruff formats files in parallel, 60x faster than
black). black stays the reference style: on this output ruff's layout is byte-identical to it, and
tests/codegen/test_golden.py runs black over every golden tree to catch a drift. ``--isolated``:
no configuration file of the user's applies, only the flags below.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

from codegen.errors import GenerateError

__all__ = ["FORMAT_FLAGS", "Formatting", "format_files"]

#: black's defaults, spelled out so that no pyproject.toml above the output can change them.
FORMAT_FLAGS = ("--isolated", "--no-cache", "--line-length", "88", "--target-version", "py311")
_TIMEOUT = 120  # seconds; a 1,000-tool package takes well under one


def _ruff() -> str:
    # The binary of the pinned ruff package (not one on PATH); the package ships no type hints.
    from ruff.__main__ import find_ruff_bin  # type: ignore[import-untyped]

    return str(find_ruff_bin())


def format_files(files: Mapping[str, str]) -> dict[str, str]:
    """``files`` (relative path -> source) formatted, in one ruff run over a scratch folder."""
    with Formatting(files) as run:
        return run.result()


class Formatting:
    """One ruff run over ``files`` (relative path -> source), started at once in a scratch folder:
    the caller goes on (rendering other files on this core while ruff formats on the other) and
    takes the formatted files from ``result()``. Leaving the ``with`` block ends a run still going
    (an error in between) and removes the folder."""

    def __init__(self, files: Mapping[str, str]) -> None:
        self._files = list(files)
        self._process: subprocess.Popen[str] | None = None
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        if not files:
            return
        self._scratch = tempfile.TemporaryDirectory(prefix="toolgen-format-")
        self._root = Path(self._scratch.name)
        for rel, text in files.items():
            path = self._root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode("utf-8"))  # bytes: "\n" stays "\n" on every platform
        try:
            self._process = subprocess.Popen(
                [_ruff(), "format", *FORMAT_FLAGS, "--", *files],
                cwd=self._root,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        except OSError as exc:
            self._scratch.cleanup()
            raise GenerateError(f"the formatter (ruff format) did not run: {exc}") from exc

    def result(self) -> dict[str, str]:
        """The files formatted; waits for the run (at most ``_TIMEOUT`` seconds)."""
        if self._process is None:
            return {}
        try:
            _, stderr = self._process.communicate(timeout=_TIMEOUT)
        except subprocess.TimeoutExpired as exc:
            raise GenerateError(f"the formatter (ruff format) did not run: {exc}") from exc
        if self._process.returncode != 0:  # generated code that does not parse: a bug of ours, never input
            first = (stderr.strip().splitlines() or ["no message"])[0]
            raise GenerateError(f"the formatter (ruff format) failed: {first}")
        return {rel: (self._root / rel).read_bytes().decode("utf-8") for rel in self._files}

    def __enter__(self) -> Formatting:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.communicate()
        if self._scratch is not None:
            self._scratch.cleanup()
