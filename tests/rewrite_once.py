"""The test modules' assert-rewritten bytecode, written once before pytest-xdist's workers start.

In a new clone every worker otherwise rewrites every test module at the same moment: collecting
took 9.7 and 8.7 CPU-s without the tests' ``__pycache__`` against 5.8 and 4.7 with it, and four
workers' collections in a new clone 7 CPU-s each against about 3 with this (stop 40). It uses
pytest's own rewrite functions, which are private: if they change, :func:`rewrite_once` writes
nothing and the workers rewrite as before (tests/test_rewrite_once.py fails, to say so).

Imported as ``rewrite_once`` (tests/conftest.py puts tests/ on sys.path).
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest


def rewrite_once(config: pytest.Config, folder: Path) -> int:
    """Write the rewritten bytecode of every ``test_*.py`` under ``folder`` that lacks it or has an
    out-of-date one; how many modules were due (0 when nothing could be done). Two forked
    processes share the work, unless this process runs other threads (a fork copies only the
    calling one, and could inherit a lock another holds): then it does it alone."""
    try:
        from _pytest.assertion import rewrite

        state = config.stash[rewrite.assertstate_key]
        todo = [fn for fn in sorted(folder.rglob("test_*.py")) if _stale(rewrite, state, fn) is not None]
    except Exception:  # a pytest whose private rewrite functions changed: the workers rewrite
        return 0
    if not todo or sys.dont_write_bytecode:
        return 0
    if not hasattr(os, "fork") or threading.active_count() > 1:
        _write(rewrite, state, config, todo)
        return len(todo)
    children = [_fork(rewrite, state, config, part) for part in (todo[0::2], todo[1::2])]
    for pid in children:
        os.waitpid(pid, 0)
    return len(todo)


def _fork(rewrite: Any, state: Any, config: pytest.Config, part: list[Path]) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 0  # the child: write its half and exit at once (no atexit handlers, no pytest teardown)
    try:
        _write(rewrite, state, config, part)
    except BaseException:  # what is not written, a worker rewrites
        code = 1
    os._exit(code)


def _write(rewrite: Any, state: Any, config: pytest.Config, part: list[Path]) -> None:
    for fn in part:
        pyc = _stale(rewrite, state, fn)
        if pyc is not None and rewrite.try_makedirs(pyc.parent):
            source_hash, co = rewrite._rewrite_test(fn, config)
            rewrite._write_pyc(state, co, source_hash, pyc)


def _stale(rewrite: Any, state: Any, fn: Path) -> Path | None:
    """The path of ``fn``'s rewritten bytecode when it is missing or out of date; else None."""
    pyc = rewrite.get_cache_dir(fn) / (fn.name[:-3] + rewrite.PYC_TAIL)
    return pyc if rewrite._read_pyc(fn, pyc, state.trace) is None else None
