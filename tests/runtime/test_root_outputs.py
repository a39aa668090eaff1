"""Output that is not an object (2026-07-28): an ``outputSchema`` of any JSON Schema, and
``structuredContent`` that is an array or a primitive at the root, against a real server process.

The sample server with ``--with-root-outputs`` lists ``split_words`` (an array of strings),
``count_words`` (an integer) and ``mean_word_length`` (a number). Through the runtime, the envelope
carries the value as it is; through a package generated from the live listing, each typed method
returns the plain type (the root of a ``RootModel``), and code using them type-checks under mypy
--strict and strict pyright.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import generate, import_fresh
from mcp_helpers import REPO, stdio_config
from pyright_batch import Batch, pyright_workspace

from mas.runtime.mcp.provider import MCPToolProvider
from mas.runtime.registry import RuntimeRegistry

TEXT = "the quick brown fox jumps"

USE = """\
from roots import Tools
from roots._runtime import SupportsCallTool


def use(provider: SupportsCallTool) -> tuple[list[str], int, float]:
    tools = Tools(provider).sample
    words: list[str] = tools.split_words(text="a b")
    count: int = tools.count_words(text="a b")
    mean: float = tools.mean_word_length(text="a b")
    return words, count + 1, mean * 2
"""


def test_the_envelope_carries_an_array_and_primitives_at_the_root() -> None:
    with MCPToolProvider(stdio_config("sample", "--with-root-outputs")) as provider:
        schemas = {t["name"]: t["outputSchema"] for t in provider.list_mcp_tools() if "outputSchema" in t}
        split = provider.call_tool("split_words", {"text": TEXT})
        count = provider.call_tool("count_words", {"text": TEXT})
        mean = provider.call_tool("mean_word_length", {"text": TEXT})
    assert schemas["split_words"] == {"type": "array", "items": {"type": "string"}}
    assert schemas["count_words"]["type"] == "integer"
    assert (split.status, split.structured_content, split.result) == ("success", TEXT.split(), TEXT.split())
    assert (count.structured_content, count.result) == (5, 5)
    assert (mean.structured_content, mean.result) == (4.2, 4.2)


@pyright_workspace(include=["roots", "use_it.py"], root="out", full=True)
def checked(folder: Path) -> None:
    """A package generated from the live sample server with --with-root-outputs, and code using it."""
    config = stdio_config("sample", "--with-root-outputs")
    server = {"name": "sample", "protocol": "mcp", "transport": "stdio", "command": "python",
              "args": list(config.args), "env": dict(config.env), "cwd": str(REPO)}  # fmt: skip
    document = {"apiVersion": "toolgen/v1", "kind": "ToolServerRegistry", "spec": {"servers": [server]}}
    infra = folder / "infra.yaml"
    infra.write_text(json.dumps(document), encoding="utf-8")
    args = ["--infra", str(infra), "--out", "out", "--package", "roots", "--no-cache", "-q"]
    assert generate(folder, args) == 0
    (folder / "out" / "use_it.py").write_text(USE, encoding="utf-8")


@pytest.fixture(scope="module")
def roots(pyright_batch: Batch) -> Iterator[tuple[Path, Any, Any]]:
    """The package imported, and a registry."""
    folder = pyright_batch.built(checked)[0]
    pkg = import_fresh(folder / "out", "roots")
    with RuntimeRegistry.from_sources(infra=[folder / "infra.yaml"]) as registry:
        yield folder / "out", pkg, registry


def test_the_typed_methods_return_the_plain_values(roots: tuple[Path, Any, Any]) -> None:
    _, pkg, registry = roots
    tools = pkg.Tools(registry).sample
    words = tools.split_words(text=TEXT)
    count = tools.count_words(text=TEXT)
    mean = tools.mean_word_length(text=TEXT)
    assert words == TEXT.split() and type(words) is list
    assert count == 5 and type(count) is int
    assert mean == 4.2 and type(mean) is float


@pytest.mark.full
@pytest.mark.slow
def test_code_using_root_typed_methods_type_checks(roots: tuple[Path, Any, Any], pyright_batch: Batch) -> None:
    out, _, _ = roots
    (out / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--strict", "roots",
         "use_it.py"],
        cwd=out, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
    report = pyright_batch.report(checked)
    assert [d["message"] for d in report["generalDiagnostics"] if d["severity"] in ("error", "warning")] == []
