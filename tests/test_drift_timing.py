"""The drift timing script runs and classifies every planted change (two per tool)."""

from __future__ import annotations

import re
import subprocess
import sys

from gen_helpers import REPO


def test_drift_timing_classifies_two_changes_per_tool() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "drift_timing.py")], capture_output=True, text=True, check=True
    )
    found = re.fullmatch(r"(\d+) tools, (\d+) changes classified: median [\d.]+ ms \(21 runs\)\n", done.stdout)
    assert found is not None, done.stdout
    assert int(found[1]) == 55 and int(found[2]) == 110
