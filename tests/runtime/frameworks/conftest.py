"""The fixtures the framework adapter tests share: one registry per test module (the sample
server over stdio and the YAML skills, ``framework_helpers.sample_registry``) behind a recorder,
and the recorder emptied for each test; the same with the sample server's MCP tasks on."""

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
    registry.clear()
    return registry


@pytest.fixture(scope="module")
def with_tasks() -> Iterator[Recording]:
    """The sample server started ``--with-tasks`` (its ``compile_report`` runs as an MCP task)."""
    with sample_registry("--with-tasks") as recording:
        yield recording


@pytest.fixture
def tasks(with_tasks: Recording) -> Recording:
    with_tasks.clear()
    return with_tasks
