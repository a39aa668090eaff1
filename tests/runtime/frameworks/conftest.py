"""The fixtures the framework adapter tests share: one registry per test module (the sample
server over stdio and the YAML skills, ``framework_helpers.sample_registry``) behind a recorder,
and the recorder emptied for each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from framework_helpers import Recording, sample_registry


@pytest.fixture(scope="module")
def registry() -> Iterator[Recording]:
    with sample_registry() as recording:
        yield recording


@pytest.fixture
def recording(registry: Recording) -> Recording:
    registry.calls.clear()
    registry.options.clear()
    return registry
