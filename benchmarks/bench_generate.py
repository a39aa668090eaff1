"""Benchmark: toolgen on a 1,000-tool catalog against one batched datamodel-code-generator call.

Run: ``python benchmarks/bench_generate.py [--tools 1000] [--repeat 5]``. Prints medians and
ratios measured in this one run (the machines are noisy; absolute seconds mean little).
The catalog repeats the real captures' tools under new names, so schemas are realistic.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codegen.build import build_package
from codegen.datamodels import generate_models
from codegen.model import SourceTools
from codegen.render import render_package
from codegen.schemas import SchemaDocument
from codegen.write import write_package

CAPTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "mcp-tools-list"


def catalog(n: int) -> list[dict[str, Any]]:
    base = [t for p in sorted(CAPTURES.glob("*.json")) for t in json.loads(p.read_text())["tools"]]
    return [{**base[i % len(base)], "name": f"{base[i % len(base)]['name']}_{i:04d}"} for i in range(n)]


def median_of(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    tools = catalog(args.tools)
    source = SourceTools(name="bench", kind="mcp-json", origin="bench", tools=tuple(tools))

    # The baseline: every input and output schema in ONE datamodel-code-generator call.
    doc, used = SchemaDocument(), set[str]()
    for i, tool in enumerate(tools):
        doc.add(f"T{i}Input", tool["inputSchema"], where="bench", used=used)
        if "outputSchema" in tool:
            doc.add(f"T{i}Output", tool["outputSchema"], where="bench", used=used)
    baseline = median_of(lambda: generate_models(doc.document(), kind="outputs"), args.repeat)

    pkg_holder: dict[str, Any] = {}
    build = median_of(
        lambda: pkg_holder.update(pkg=build_package([source], package="bench", header="# h")), args.repeat
    )
    render = median_of(lambda: pkg_holder.update(files=render_package(pkg_holder["pkg"])), args.repeat)

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench"
        write = median_of(lambda: (write_package(out, pkg_holder["files"]), __import__("shutil").rmtree(out)), 3)
        write_package(out, pkg_holder["files"])
        code = "import time; s = time.perf_counter(); import bench; print(time.perf_counter() - s)"
        # As users import it: bytecode cached (some machines set PYTHONDONTWRITEBYTECODE), after a warm-up.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        imports = [float(subprocess.run([sys.executable, "-c", code], cwd=tmp, capture_output=True, text=True,
                                        check=True, env=env).stdout) for _ in range(args.repeat + 1)][1:]  # fmt: skip
        lines = sum(text.count("\n") for text in pkg_holder["files"].values())

    total = build + render + write
    print(f"tools: {args.tools}  generated lines: {lines}  runs: {args.repeat} (medians)")
    print(f"one batched datamodel-code-generator call: {baseline:7.2f} s   (1.00x)")
    print(f"toolgen build (2 batched dmcg calls + IR):  {build:7.2f} s   ({build / baseline:.2f}x)")
    print(f"toolgen render (Jinja2 + black):           {render:7.2f} s   ({render / baseline:.2f}x)")
    print(f"toolgen write (staged swap):               {write:7.2f} s   ({write / baseline:.2f}x)")
    print(f"toolgen total:                             {total:7.2f} s   ({total / baseline:.2f}x)")
    print(f"import of the generated package (cached):  {statistics.median(imports):7.2f} s")


if __name__ == "__main__":
    main()
