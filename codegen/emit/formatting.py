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

from codegen.errors import GenerateError

__all__ = ["FORMAT_FLAGS", "format_files"]

#: black's defaults, spelled out so that no pyproject.toml above the output can change them.
FORMAT_FLAGS = ("--isolated", "--no-cache", "--line-length", "88", "--target-version", "py311")
_TIMEOUT = 120  # seconds; a 1,000-tool package takes well under one


def _ruff() -> str:
    # The binary of the pinned ruff package (not one on PATH); the package ships no type hints.
    from ruff.__main__ import find_ruff_bin  # type: ignore[import-untyped]

    return str(find_ruff_bin())


def format_files(files: Mapping[str, str]) -> dict[str, str]:
    """``files`` (relative path -> source) formatted, in one ruff run over a scratch folder."""
    if not files:
        return {}
    with tempfile.TemporaryDirectory(prefix="toolgen-format-") as scratch:
        root = Path(scratch)
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode("utf-8"))  # bytes: "\n" stays "\n" on every platform
        try:
            done = subprocess.run(
                [_ruff(), "format", *FORMAT_FLAGS, "--", *files],
                cwd=root,
                capture_output=True,
                text=True,
                timeout=_TIMEOUT,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GenerateError(f"the formatter (ruff format) did not run: {exc}") from exc
        if done.returncode != 0:  # generated code that does not parse: a bug of ours, never input
            first = (done.stderr.strip().splitlines() or ["no message"])[0]
            raise GenerateError(f"the formatter (ruff format) failed: {first}")
        return {rel: (root / rel).read_bytes().decode("utf-8") for rel in files}
