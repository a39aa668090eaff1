"""Code mode over FastMCP's wrapped results (``x-fastmcp-wrap-result``), against the real stdio
server that answers as FastMCP does (tests/servers/fastmcp_wrap_server.py): the stubs promise the
value itself, as the package's methods return it, and the sandbox gets exactly that value."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import generate, import_fresh
from prefork import python_args

from codegen.cli import main as toolgen
from mas.runtime.code_mode import CodeMode
from mas.runtime.registry import RuntimeRegistry

SERVER = Path(__file__).resolve().parents[1] / "servers" / "fastmcp_wrap_server.py"
pytestmark = pytest.mark.slow  # a server, the generator and a sandbox


@pytest.fixture(scope="module")
def fm(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    root = tmp_path_factory.mktemp("fastmcp-code-mode")
    server = {"name": "fm", "protocol": "mcp", "transport": "stdio", "command": "python",
              "args": list(python_args(str(SERVER), pythonpath=None)),
              "connect_timeout_seconds": 20}  # fmt: skip
    infra = {"apiVersion": "toolgen/v1", "kind": "ToolServerRegistry", "metadata": {"name": "f"},
             "spec": {"servers": [server]}}  # fmt: skip
    (root / "infra.yaml").write_text(json.dumps(infra))
    (root / "examples.yaml").write_text("- tool: legacy_cities\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        assert toolgen(["record", "--examples", "examples.yaml", "--infra", "infra.yaml", "-q"]) == 0
        assert generate(root, ["--infra", "infra.yaml", "--out", "out", "--package", "fmcm", "-q"], mp) == 0
    return root, import_fresh(root / "out", "fmcm")


def test_the_stubs_promise_the_unwrapped_values(fm: tuple[Path, Any]) -> None:
    _, pkg = fm
    stub = (Path(pkg.__file__).parent / "code_mode" / "fm.pyi").read_text()
    for line in (
        "async def add(*, name: str = ...) -> int:",
        "async def cities(*, name: str = ...) -> list[str]:",
        "async def greet(*, name: str = ...) -> str:",
        "async def legacy_cities(*, name: str = ...) -> list[str] | str:",
        "async def point(*, name: str = ...) -> FmPointOutputPoint:",
    ):
        assert line in stub


def test_the_sandbox_gets_the_values_themselves(fm: tuple[Path, Any]) -> None:
    root, pkg = fm
    code = (
        "from tools import fm\n"
        "p = await fm.point()\n"
        "[await fm.greet(name='Ada'), await fm.add() + 1, await fm.cities(), p['x'], await fm.legacy_cities()]\n"
    )
    with RuntimeRegistry.from_sources(infra=[root / "infra.yaml"]) as registry, CodeMode(registry, package=pkg) as mode:
        assert [str(d) for d in mode.check("from tools import fm\n(await fm.add()) + 'x'\n")] == [
            '2:1: unsupported-operator: Operator `+` is not supported between objects of type `int` and `Literal["x"]`'
        ]
        run = mode.run(code)
        assert run.error is None, run.error
        assert run.value == ["hello Ada", 43, ["Paris", "Lyon"], 3, ["Kyoto", "Osaka"]]
        assert [c.wire_name for c in run.calls] == ["point", "greet", "add", "cities", "legacy_cities"]
