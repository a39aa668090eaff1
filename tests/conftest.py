"""Shared test fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def repo_root() -> Path:
    return REPO


@pytest.fixture
def fixtures_dir() -> Path:
    """Copies of the shared real MCP captures (tools/list and tools/call), unedited."""
    return FIXTURES
