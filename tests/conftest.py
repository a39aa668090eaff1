"""Shared test fixtures."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

# Test helper modules (gen_helpers) live in tests/; the repository root is deliberately NOT put on
# sys.path, so the tests exercise the installed package, not the source tree.
sys.path.insert(0, str(Path(__file__).resolve().parent))

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def repo_root() -> Path:
    return REPO


@pytest.fixture
def fixtures_dir() -> Path:
    """Copies of the shared real MCP captures (tools/list and tools/call), unedited."""
    return FIXTURES


def pytest_configure(config: pytest.Config) -> None:
    """pytest-xdist's loadfile mode sorts files by how many tests they hold, unless told not to:
    then a file with one long test (the fuzz run, the benchmark smoke test) starts last and the
    other worker idles while it runs. Keep the order below instead.

    Every mypy the tests run shares one cache per test process (each xdist worker its own, so no
    two mypy processes write one cache at once): the standard library and pydantic are analysed
    once per process instead of once per run. mypy checks each cached module against its source
    and options, so a package generated anew is checked anew."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
    cache = tempfile.mkdtemp(prefix="toolgen-tests-mypy-")
    os.environ["MYPY_CACHE_DIR"] = cache
    config.add_cleanup(lambda: shutil.rmtree(cache, ignore_errors=True))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` run first: under pytest-xdist they (and, with --dist loadfile, the rest
    of their file) then overlap the many short tests instead of starting last and leaving the other
    workers idle at the end. The sort is stable and the same in every worker, as xdist requires."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
