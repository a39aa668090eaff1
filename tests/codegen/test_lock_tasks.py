"""The lock records each server's task dialect, and drift reports when it changes (docs/lock.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codegen.errors import GenerateError
from codegen.lock import TASKS_KEY, drift_between, parse_lock, render_lock

TOOLS: list[dict[str, Any]] = [
    {"name": "report", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
    {"name": "echo", "inputSchema": {"type": "object"}},
]


def _lock(tmp_path: Path, tasks: dict[str, str] | None) -> Any:
    return parse_lock(render_lock({"srv": TOOLS}, tasks=tasks), tmp_path / "toolgen.lock.json")


def test_the_dialect_is_recorded_only_for_a_server_that_has_one(tmp_path: Path) -> None:
    with_tasks = json.loads(render_lock({"srv": TOOLS, "plain": TOOLS}, tasks={"srv": "2025-11-25"}))
    assert with_tasks["servers"]["srv"][TASKS_KEY] == "2025-11-25"
    assert TASKS_KEY not in with_tasks["servers"]["plain"]  # a lock without tasks stays as it was
    assert render_lock({"plain": TOOLS}) == render_lock({"plain": TOOLS}, tasks={})
    assert _lock(tmp_path, {"srv": "2026-07-28"}).tasks == {"srv": "2026-07-28"}


@pytest.mark.parametrize(("old", "new"), [(None, "2026-07-28"), ("2025-11-25", None), ("2025-11-25", "2026-07-28")])
def test_a_changed_dialect_is_one_review_change_per_tool(tmp_path: Path, old: str | None, new: str | None) -> None:
    before = _lock(tmp_path, {"srv": old} if old else None)
    after = _lock(tmp_path, {"srv": new} if new else None)
    changes = drift_between(before, after)
    assert sorted((c.tool, c.kind, c.severity) for c in changes) == [
        ("echo", "task-dialect-changed", "review"),
        ("report", "task-dialect-changed", "review"),
    ]
    assert changes[0].message == f"the server's task dialect changed from {old or 'none'} to {new or 'none'}"
    assert drift_between(after, after) == ()


def test_an_unknown_dialect_is_refused_with_its_pointer(tmp_path: Path) -> None:
    data = json.loads(render_lock({"srv": TOOLS}, tasks={"srv": "2025-11-25"}))
    data["servers"]["srv"][TASKS_KEY] = "2030-01-01"
    with pytest.raises(GenerateError) as caught:
        parse_lock(json.dumps(data), tmp_path / "toolgen.lock.json")
    assert "/servers/srv/task_dialect" in str(caught.value) and "unknown task dialect '2030-01-01'" in str(caught.value)
