"""The two tiers of the suite (docs/tests.md, "Two tiers"): ``nox -s tests`` runs the fast tier,
``nox -s tests_full`` (``pytest --full``, or ``TOOLGEN_TESTS_FULL=1``) runs the tests marked ``full``
too. tests/conftest.py deselects them otherwise; a module that starts work for its tests up front
(a batch, a pool of scenarios) asks ``full_tier`` which of them will run."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

#: The environment variable that selects the full tier, like ``--full``.
FULL_ENV = "TOOLGEN_TESTS_FULL"


def full_tier(config: pytest.Config) -> bool:
    """Whether this run is the full tier: ``--full`` given, or ``TOOLGEN_TESTS_FULL=1``."""
    return bool(config.getoption("full", default=False)) or os.environ.get(FULL_ENV) == "1"


_WHOLE = re.compile(r"^pytestmark = .*\bpytest\.mark\.full\b", re.MULTILINE)


def whole_module_full(path: Path) -> bool:
    """Whether the test module at ``path`` is in the full tier as a whole (``pytestmark`` names ``full``)."""
    if not path.name.startswith("test_"):
        return False
    try:
        return _WHOLE.search(path.read_text(encoding="utf-8")) is not None
    except OSError:
        return False


def tiered(values: Iterable[object], fast: Iterable[object]) -> list[object]:
    """Parameters for ``pytest.mark.parametrize``: those not in ``fast`` marked ``full``."""
    kept = list(fast)
    return [v if v in kept else pytest.param(v, marks=pytest.mark.full) for v in values]


def examples(fast: int, full: int) -> int:
    """A property's count of random examples in this run's tier (read when its module is imported;
    tests/conftest.py sets ``TOOLGEN_TESTS_FULL`` for ``--full`` before any test module is)."""
    return full if os.environ.get(FULL_ENV) == "1" else fast
