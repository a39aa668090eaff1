"""Shared test fixtures."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Test helper modules (gen_helpers) live in tests/; the repository root is deliberately NOT put on
# sys.path, so the tests exercise the installed package, not the source tree.
sys.path.insert(0, str(Path(__file__).resolve().parent))

import prefork  # noqa: E402  # found through the line above
from pyright_batch import FILES as PYRIGHT_BATCH_FILES  # noqa: E402
from pyright_batch import Batch  # noqa: E402
from rewrite_once import rewrite_once  # noqa: E402
from tiers import FULL_ENV, full_tier, whole_module_full  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def repo_root() -> Path:
    return REPO


@pytest.fixture
def fixtures_dir() -> Path:
    """Copies of the shared real MCP captures (tools/list and tools/call), unedited."""
    return FIXTURES


#: How long the threads a test module started may take to end after its teardown.
THREAD_END_SECONDS = 5.0


@pytest.fixture(autouse=True, scope="module")
def _no_thread_left() -> Iterator[None]:
    """A test module that leaves a non-daemon thread running fails here, naming the thread. Such a
    thread keeps its xdist worker from forking (tests/codegen/test_parallel.py failed on one left by
    a framework's event loop) and shows up far from the test that left it. Module scope: a
    module's fixtures (a code-mode sandbox with its call pool, say) own threads across its tests.
    Daemon threads are allowed: a call a test timed out on purpose goes on in one
    (``run_with_timeout``)."""
    before = set(threading.enumerate())
    yield
    left = [t for t in threading.enumerate() if t not in before and not t.daemon]
    deadline = time.monotonic() + THREAD_END_SECONDS
    for thread in left:
        thread.join(max(deadline - time.monotonic(), 0.0))
    alive = [t.name for t in left if t.is_alive()]
    if alive:
        pytest.fail(f"the module left non-daemon threads running: {alive}", pytrace=False)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--full",
        action="store_true",
        default=False,
        help=f"run the full tier too: the tests marked `full` (docs/tests.md; or {FULL_ENV}=1). "
        "`nox -s tests` runs the fast tier, `nox -s tests_full` both.",
    )


def pytest_report_header(config: pytest.Config) -> str:
    if full_tier(config):
        return "tier: full (the tests marked full run too)"
    return "tier: fast (the tests marked full are left out; --full or nox -s tests_full runs them)"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """In the fast tier a module marked ``full`` as a whole is not even imported: it may need what
    only the full tier installs (jedi, pre-commit: the test-full dependency group)."""
    if collection_path.suffix == ".py" and not full_tier(config) and whole_module_full(collection_path):
        return True
    return None


def pytest_configure(config: pytest.Config) -> None:
    """pytest-xdist's loadfile mode sorts files by how many tests they hold, unless told not to:
    then a file with one long test (the fuzz run, the benchmark smoke test) starts last and the
    other worker idles while it runs. Keep the order below instead.

    Every mypy the tests run shares one cache per test process (each xdist worker its own, so no
    two mypy processes write one cache at once): the standard library and pydantic are analysed
    once per process instead of once per run. mypy checks each cached module against its source
    and options, so a package generated anew is checked anew.

    The controller of an xdist run starts the pre-imported interpreters its workers' servers and
    clients are forked from (tests/prefork.py), once for all of them."""
    if full_tier(config):  # modules that size their work at import (test_fuzz.py's count) read it
        os.environ[FULL_ENV] = "1"
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
    if _starts_workers(config):  # before they start: they inherit the zygotes through the environment
        prefork.share([None, prefork.REPO, os.environ.get("PYTHONPATH")])
        rewrite_once(config, Path(__file__).parent)
        _fork_workers(config)
    cache = tempfile.mkdtemp(prefix="toolgen-tests-mypy-")
    os.environ["MYPY_CACHE_DIR"] = cache
    config.add_cleanup(lambda: shutil.rmtree(cache, ignore_errors=True))


def _fork_workers(config: pytest.Config) -> None:
    """Start the workers as forks of the zygote for this run's PYTHONPATH (tests/prefork.py) rather
    than as cold interpreters, unless TOOLGEN_TESTS_PREFORK=0 or the zygote does not listen."""
    python = prefork.worker_python(os.environ.get("PYTHONPATH"))
    tx = config.getoption("tx", None) or []
    if python is not None and tx and all(spec == "popen" for spec in tx):  # -n N, no --tx of the user's
        config.option.tx = [f"popen//python={python}"] * len(tx)


def _starts_workers(config: pytest.Config) -> bool:
    """Whether this is pytest-xdist's controller about to start workers (``-n`` above 0)."""
    if hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("xdist"):
        return False
    return bool(config.getoption("numprocesses", None)) and config.getoption("dist", "no") != "no"


@pytest.fixture(scope="session")
def pyright_batch(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Batch:
    """The test process's one pyright run over every declared workspace of this tier (tests/pyright_batch.py)."""
    return Batch(tmp_path_factory.mktemp("pyright-batch"), full=full_tier(pytestconfig))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without --full, the tests marked ``full`` are deselected (docs/tests.md, "Two tiers").

    Files with a test marked ``slow`` run first: under pytest-xdist they then overlap the many
    short tests instead of starting last and leaving the other workers idle at the end. The other
    files follow in an order that mixes those that mostly wait with those that compute (``_mixed``).
    Whole files move, so the files scheduled together (``pytest_xdist_make_scheduler``) stay one
    after another. The sort is stable and the same in every worker, as xdist requires.

    A test that may run the pyright batch (it builds and checks every workspace) gets ten minutes
    instead of the usual two."""
    if not full_tier(config):
        left_out = [item for item in items if item.get_closest_marker("full") is not None]
        if left_out:
            config.hook.pytest_deselected(items=left_out)
            items[:] = [item for item in items if item.get_closest_marker("full") is None]
    slow = {item.path for item in items if item.get_closest_marker("slow") is not None}
    place = _mixed(list(dict.fromkeys(item.path for item in items if item.path not in slow)))
    items.sort(key=lambda item: (item.path not in slow, place.get(item.path, 0.0)))
    for item in items:
        if "pyright_batch" in item.fixturenames and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(600))


def _mixed(files: list[Path]) -> dict[Path, float]:
    """Each file's place in a run order that spreads the runtime's files (they mostly wait: on
    servers, timeouts, clocks) evenly among the others (they compute), each kind in its own order,
    so the cores always have work. Run one kind after the other, a stretch of the run sat at
    30-90% of two cores while only waiting files were left (stop 39)."""
    runtime = REPO / "tests" / "runtime"
    waiting = [f for f in files if f.is_relative_to(runtime)]
    computing = [f for f in files if not f.is_relative_to(runtime)]
    return {
        **{f: (i + 0.5) / len(waiting) for i, f in enumerate(waiting)},
        **{f: (i + 0.5) / len(computing) for i, f in enumerate(computing)},
    }


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
