"""The README's agent snippet runs as written (from the repository root, generated/ on the path)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from gen_helpers import REPO


def test_readme_snippet_runs_against_the_sample_server() -> None:
    readme = (REPO / "README.md").read_text()
    snippets = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    assert len(snippets) == 1
    code = snippets[0]
    assert len([line for line in code.splitlines() if line.strip() and not line.startswith("#")]) <= 6
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, ["generated", os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert float(proc.stdout.strip()) == 19.4  # the sample server's deterministic weather for Paris
