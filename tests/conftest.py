"""Shared test fixtures."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

# Test helper modules (gen_helpers) live in tests/; the repository root is deliberately NOT put on
# sys.path, so the tests exercise the installed package, not the source tree.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from pyright_batch import FILES as PYRIGHT_BATCH_FILES  # noqa: E402  # found through the line above
from pyright_batch import Batch  # noqa: E402

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


@pytest.fixture(scope="session")
def pyright_batch(tmp_path_factory: pytest.TempPathFactory) -> Batch:
    """The test process's one pyright run over every declared workspace (tests/pyright_batch.py)."""
    return Batch(tmp_path_factory.mktemp("pyright-batch"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Files with a test marked ``slow`` run first: under pytest-xdist they then overlap the many
    short tests instead of starting last and leaving the other workers idle at the end. Whole files
    move, so the files scheduled together (``pytest_xdist_make_scheduler``) stay one after another.
    The sort is stable and the same in every worker, as xdist requires.

    A test that may run the pyright batch (it builds and checks every workspace) gets ten minutes
    instead of the usual two."""
    slow = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.path not in slow)
    for item in items:
        if "pyright_batch" in item.fixturenames and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(600))


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's, absent under -p no:xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """--dist loadfile, except that the modules of the pyright batch are one unit, run by one worker."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Scheduling(LoadFileScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            file = nodeid.split("::", 1)[0]
            return "pyright batch" if file in PYRIGHT_BATCH_FILES else file

    return Scheduling(config, log)
