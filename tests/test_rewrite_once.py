"""tests/rewrite_once.py: the rewritten bytecode it writes is pytest's own, and a second run has
nothing to do. Fails when pytest's private rewrite functions change under it."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest
from rewrite_once import rewrite_once


@pytest.mark.parametrize("threads", [1, 2], ids=["forked", "alone"])
def test_it_writes_what_pytest_reads_and_then_nothing(
    tmp_path: Path, pytestconfig: pytest.Config, monkeypatch: pytest.MonkeyPatch, threads: int
) -> None:
    """Forked in two processes when this is the only thread, in this process otherwise; the same
    files either way. (Other threads here, an earlier test's daemon thread say, are ignored.)"""
    from _pytest.assertion import rewrite

    monkeypatch.setattr(threading, "active_count", lambda: threads)
    forks: list[int] = []
    fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: forks.append(1) or fork())
    (tmp_path / "sub").mkdir()
    for fn in (tmp_path / "test_a.py", tmp_path / "sub" / "test_b.py"):
        fn.write_text("def test_x():\n    x = 1\n    assert x == 2\n", encoding="utf-8")
    (tmp_path / "helper.py").write_text("X = 1\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "dont_write_bytecode", False)
        assert rewrite_once(pytestconfig, tmp_path) == 2
        assert len(forks) == (2 if threads == 1 else 0)
        assert rewrite_once(pytestconfig, tmp_path) == 0
    state = pytestconfig.stash[rewrite.assertstate_key]
    pyc = tmp_path / "__pycache__" / f"test_a{rewrite.PYC_TAIL}"
    code = rewrite._read_pyc(tmp_path / "test_a.py", pyc, state.trace)
    assert code is not None
    [function] = [const for const in code.co_consts if hasattr(const, "co_varnames")]
    assert any(name.startswith("@py_assert") for name in function.co_varnames)  # rewritten, not plain
    assert not (tmp_path / "__pycache__" / f"helper{rewrite.PYC_TAIL}").exists()
    # An edited module is due again.
    (tmp_path / "test_a.py").write_text("def test_x():\n    assert 1\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "dont_write_bytecode", False)
        assert rewrite_once(pytestconfig, tmp_path) == 1
