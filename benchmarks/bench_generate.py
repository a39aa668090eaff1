"""Benchmark: toolgen on a 1,000-tool catalog against one batched datamodel-code-generator call.

Run: ``python benchmarks/bench_generate.py [--tools 1000] [--repeat 5]``. Prints medians and
ratios measured in this one run (the machines are noisy; absolute seconds mean little).
The catalog repeats the real captures' tools under new names, so schemas are realistic.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codegen.build import build_package
from codegen.datamodels import _COMMON
from codegen.model import PackageSpec, SourceTools
from codegen.render import render_package
from codegen.schemas import SchemaDocument
from codegen.write import write_package

CAPTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "mcp-tools-list"


def catalog(n: int) -> list[dict[str, Any]]:
    base = [t for p in sorted(CAPTURES.glob("*.json")) for t in json.loads(p.read_text())["tools"]]
    return [{**base[i % len(base)], "name": f"{base[i % len(base)]['name']}_{i:04d}"} for i in range(n)]


def dmcg_once(document: dict[str, Any]) -> str:
    """The yardstick: one batched datamodel-code-generator call, pydantic models, no formatting."""
    import datamodel_code_generator as dcg
    from datamodel_code_generator.enums import DataModelType, InputFileType
    from datamodel_code_generator.format import PythonVersion

    with warnings.catch_warnings():  # its notes on dropped constraints are not what is measured
        warnings.simplefilter("ignore")
        code = dcg.generate(
            document,
            input_file_type=InputFileType.JsonSchema,
            output_model_type=DataModelType.PydanticV2BaseModel,
            target_python_version=PythonVersion.PY_311,
            **_COMMON,
        )
    assert isinstance(code, str)
    return code


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

    # The yardstick sees every input and output schema at once.
    doc, used = SchemaDocument(), set[str]()
    for i, tool in enumerate(tools):
        doc.add(f"T{i}Input", tool["inputSchema"], where="bench", used=used)
        if "outputSchema" in tool:
            doc.add(f"T{i}Output", tool["outputSchema"], where="bench", used=used)
    baseline = median_of(lambda: dmcg_once(doc.document()), args.repeat)

    built: dict[str, PackageSpec] = {}

    def build(parallel: bool) -> None:
        built["pkg"] = build_package([source], package="bench", header="# h", parallel=parallel)

    one_core = median_of(lambda: build(False), args.repeat)
    two_cores = median_of(lambda: build(True), args.repeat)
    files: dict[str, dict[str, str]] = {}
    render = median_of(lambda: files.update(pkg=render_package(built["pkg"])), args.repeat)

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench"
        write = median_of(lambda: (write_package(out, files["pkg"]), shutil.rmtree(out)), args.repeat)
        write_package(out, files["pkg"])
        code = "import time; s = time.perf_counter(); import bench; print(time.perf_counter() - s)"
        # As users import it: bytecode cached (some machines set PYTHONDONTWRITEBYTECODE), after a warm-up.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        run = [sys.executable, "-c", code]
        imports = [
            float(subprocess.run(run, cwd=tmp, capture_output=True, text=True, check=True, env=env).stdout)
            for _ in range(args.repeat + 1)
        ][1:]
    lines = sum(text.count("\n") for text in files["pkg"].values())
    total = two_cores + render + write

    def row(label: str, seconds: float) -> None:
        print(f"{label:44} {seconds:7.2f} s   ({seconds / baseline:.2f}x)")

    print(f"tools: {args.tools}  generated lines: {lines}  runs: {args.repeat} (medians)")
    row("one batched datamodel-code-generator call", baseline)
    row("toolgen build, one core (2 dmcg + black)", one_core)
    row("toolgen build, two cores (the default)", two_cores)
    row("toolgen render (Jinja2; wrappers laid out)", render)
    row("toolgen write (staged swap)", write)
    row("toolgen total (two cores)", total)
    print(f"{'import of the generated package (cached)':44} {statistics.median(imports):7.2f} s")


if __name__ == "__main__":
    main()
