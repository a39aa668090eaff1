"""Code mode side by side with pydantic-ai-harness's and FastMCP's, on the same sample server and task.

``python benchmarks/side_by_side.py [--repeat 15]`` prints a table; ``nox -s bench`` runs it as the
group ``side-by-side``. The task is three calls on the repo's sample MCP server over stdio
(``get_weather`` twice, ``list_cities`` once) and a value made of them; the failed check is one call
with an ``int`` where the tool takes a ``str``. Every figure is the median of warm runs (the first,
cold run of each is left out).

- ours: ``CodeMode.run`` over a ``RuntimeRegistry`` with the sample server (stdio), in this process;
  the failed check is ``run()`` of the bad snippet (it stops at the check; nothing is sent).
- pydantic-ai-harness: its ``CodeMode`` capability on an ``Agent`` (no LLM: a ``FunctionModel``
  asks for one ``run_code``, then ends the turn), the server as an ``MCPToolset``: a run is that
  agent turn, so it also counts two (instant) model steps; the floor row says what a turn without
  a tool call costs.
- FastMCP: its ``CodeMode`` transform on a proxy of the server, called through ``fastmcp.Client``
  in memory. FastMCP checks no types: its bad snippet runs, and the call fails at the server; that
  time is shown, not as a check.

Each peer is installed from PyPI, at the exact versions of ``PEERS``, into a venv of its own cached
under ``~/.cache/toolgen-tests`` (``tests/old_sdk.py``'s ``cached_venv``), and runs
``peer_code_mode.py`` there. A peer that cannot be installed is named with the reason; when PyPI
cannot be reached, the group is skipped and says so. The peers run after ours, in their own
processes: not interleaved, so the machine's load moves between them (the report gives it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
#: Each peer's requirements, exact: the figures are these versions'.
PEERS: dict[str, tuple[str, ...]] = {
    "pydantic-ai-harness": ("pydantic-ai-harness[code-mode]==0.62.0", "pydantic-ai-slim[mcp]==2.62.0"),
    "fastmcp": ("fastmcp[code-mode]==4.1.6",),
}
_SCRIPT = {"pydantic-ai-harness": "harness", "fastmcp": "fastmcp"}

TASK = """\
from tools import sample
paris = await sample.get_weather(city='Paris')
tokyo = await sample.get_weather(city='Tokyo')
cities = await sample.list_cities(country='FR')
[paris['temperature'], tokyo['temperature'], len(cities)]
"""
BAD = "from tools import sample\nawait sample.get_weather(city=3)\n"


@dataclass
class Found:
    """What one side measured (ms), or why it could not."""

    run: list[float] = field(default_factory=list)
    check: list[float] | None = None
    failed_call: list[float] | None = None
    turn: list[float] | None = None
    value: str = ""
    refused: str = ""
    problem: str = ""


def ours(repeat: int) -> Found:
    sys.path.insert(0, str(REPO / "tests"))
    from gen_helpers import import_fresh
    from mcp_helpers import stdio_config

    from mas.runtime.code_mode import CodeMode
    from mas.runtime.mcp.provider import MCPToolProvider
    from mas.runtime.registry import RuntimeRegistry

    package = import_fresh(REPO / "generated", "sample_tools")
    found = Found(check=[])
    with RuntimeRegistry({"sample": MCPToolProvider(stdio_config("sample"))}) as registry:
        with CodeMode(registry, package=package) as mode:
            for i in range(repeat + 1):
                start = time.perf_counter()
                done = mode.run(TASK)
                took = (time.perf_counter() - start) * 1000
                assert done.ok, done.error
                start = time.perf_counter()
                refused = mode.run(BAD)
                failed = (time.perf_counter() - start) * 1000
                assert refused.error is not None and refused.error.kind == "check"
                if i:
                    found.run.append(took)
                    found.check.append(failed)  # type: ignore[union-attr]
            found.value = json.dumps(done.value)
            found.refused = str(refused.error)
    return found


def peer(name: str, repeat: int) -> Found:
    from old_sdk import cached_venv  # tests/ is on sys.path (ours() put it there)

    try:
        python = cached_venv(name, PEERS[name])
    except AssertionError as exc:  # installed nothing: say why
        return Found(problem=f"cannot be installed: {' '.join(str(exc).split())[:300]}")
    proc = subprocess.run(
        [str(python), str(HERE / "peer_code_mode.py"), _SCRIPT[name], "--server", sys.executable,
         "--repeat", str(repeat)],
        capture_output=True, text=True, timeout=900, cwd=REPO, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        last = [line for line in proc.stderr.splitlines() if line.strip()][-1:] or ["(no output)"]
        return Found(problem=f"its code mode failed: {last[0][:300]}")
    data: dict[str, Any] = json.loads(proc.stdout)
    return Found(
        run=data["run"],
        check=data.get("check"),
        failed_call=data.get("failed_call"),
        turn=data.get("turn"),
        value=data.get("value", ""),
        refused=data.get("refused", ""),
    )


def measure(repeat: int) -> tuple[Found, dict[str, Found], str]:
    """Ours and each peer's figures; the third item is why the peers were skipped ("" if not)."""
    mine = ours(repeat)
    import pytest

    peers: dict[str, Found] = {}
    for name in PEERS:
        try:
            peers[name] = peer(name, repeat)
        except pytest.skip.Exception as exc:  # cached_venv: PyPI is unreachable
            return mine, {}, str(exc)
    return mine, peers, ""


def rows(repeat: int) -> tuple[list[Any], list[str]]:
    """The bench's rows (``bench.Row``) and notes: each peer's run and failed check against ours."""
    from bench import Row

    mine, peers, skipped = measure(repeat)
    notes = (
        [f"side by side: peers skipped: {skipped}"]
        if skipped
        else [
            "side by side: each peer runs after ours, in a process of its own (its venv): not interleaved, so "
            "the ratio of medians is taken over runs minutes apart; the harness's runs are whole agent turns "
            "(with two instant FunctionModel steps, the floor row)"
        ]
    )
    out = [
        Row("side by side, ours: `CodeMode.run()` of the 3-call task, warm", mine.run, None, "ms", ""),
        Row("side by side, ours: a failed type check (`run()` of a bad snippet), warm", mine.check or [], None,
            "ms", ""),
    ]  # fmt: skip
    for name, found in peers.items():
        if found.problem:
            notes.append(f"side by side: {name} {found.problem}")
            continue
        n = min(len(found.run), len(mine.run))
        out.append(Row(f"side by side, 3-call task run: ours against {name}", mine.run[:n], found.run[:n], "ms",
                       "<= 1.0", name))  # fmt: skip
        if found.check:
            n = min(len(found.check), len(mine.check or []))
            out.append(Row(f"side by side, failed type check: ours against {name}", (mine.check or [])[:n],
                           found.check[:n], "ms", "<= 1.0", name))  # fmt: skip
        else:
            notes.append(f"side by side: {name} checks no types: its bad snippet runs and the call fails at the server")
        if found.failed_call:
            out.append(Row(f"side by side, {name}: the bad snippet run unchecked (the call fails at the server)",
                           found.failed_call, None, "ms", ""))  # fmt: skip
        if found.turn:
            out.append(Row(f"side by side, {name}: an agent turn with no tool call (the floor in its run)",
                           found.turn, None, "ms", ""))  # fmt: skip
    return out, notes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=15, help="warm runs of each figure")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from bench import table

    before = os.getloadavg()[0]
    found, notes = rows(args.repeat)
    print(f"load average {before:.1f} at the start and {os.getloadavg()[0]:.1f} at the end, "
          f"{os.cpu_count()} cores, Python {sys.version.split()[0]}\n")  # fmt: skip
    print(table(found))
    for note in notes:
        print(note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
