"""``mas-runtime code check|run`` and ``mas-runtime serve --code-mode``, as a user runs them: the
installed command in a child process, the repo's generated package, the sample MCP server (over
stdio, started by the infra file), and a real MCP SDK client talking to the code-mode server over
stdio and over streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_helpers import free_port, sample_stdio_infra, served
from prefork import python_args, python_command

REPO = Path(__file__).resolve().parents[2]
PACKAGE = str(REPO / "generated" / "sample_tools")
INFRA = sample_stdio_infra()
TOOLS = str(REPO / "library-samples" / "tools")
SOURCES = ["--infra", INFRA, "--tools", TOOLS, "--package", PACKAGE]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
pytestmark = pytest.mark.slow  # child processes: the command, the sample server, the sandbox

GOOD = """\
from tools import sample, skills
total = 0.0
for city in ["Paris", "Berlin"]:
    weather = await sample.get_weather(city=city)
    total += weather["temperature"]
converted = await skills.unit_convert(value=10, from_unit="km", to_unit="mi")
print("converted", converted["unit"])
round(total, 1)
"""
BAD = """\
from tools import sample

weather = await sample.get_weather(city="Paris", unit="celsius")
weather["temp"]
"""


def mas_runtime(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        python_command("-m", "mas.runtime", *args, pythonpath=ENV.get("PYTHONPATH")),
        input=stdin,
        capture_output=True,
        text=True,
        cwd=REPO,
        env=ENV,
        timeout=120,
    )


def test_check_prints_file_line_col_code_message_and_exits_1(tmp_path: Path) -> None:
    snippet = tmp_path / "bad.py"
    snippet.write_text(BAD, encoding="utf-8")
    done = mas_runtime("code", "check", str(snippet), "--package", PACKAGE)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    message = "Argument `unit` does not match any known parameter of function `get_weather`"
    assert f"{snippet}:3:50: unknown-argument: {message}" in lines
    assert any(line.startswith(f'{snippet}:4:9: invalid-key: Unknown key "temp"') for line in lines), lines


def test_check_reads_standard_input_and_exits_0_when_clean() -> None:
    done = mas_runtime("code", "check", "-", "--package", PACKAGE, stdin=GOOD)
    assert (done.returncode, done.stdout) == (0, ""), done.stderr


def test_run_prints_the_output_then_the_value() -> None:
    done = mas_runtime("code", "run", "-", "-q", *SOURCES, stdin=GOOD)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["converted mi", "30.3"]


def test_run_of_code_that_fails_its_check_exits_1_and_starts_no_server(tmp_path: Path) -> None:
    snippet = tmp_path / "bad.py"
    snippet.write_text(BAD, encoding="utf-8")
    done = mas_runtime("code", "run", str(snippet), *SOURCES)
    assert done.returncode == 1
    assert f"{snippet}:3:50: unknown-argument" in done.stderr
    assert "connecting" not in done.stderr  # no server was started for code that cannot run


def test_run_json_has_the_calls_and_a_failed_run_exits_1() -> None:
    done = mas_runtime("code", "run", "-", "-q", "--json", *SOURCES, stdin=GOOD)
    report = json.loads(done.stdout)
    assert [c["wire_name"] for c in report["calls"]] == ["get_weather", "get_weather", "unit_convert"]
    assert report["calls"][2]["arguments"] == {"value": 10, "from_unit": "km", "to_unit": "mi"}
    failed = mas_runtime("code", "run", "-", "-q", "--timeout", "1", *SOURCES, stdin="while True:\n    pass\n")
    assert failed.returncode == 1 and "timeout" in failed.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["code", "check", "no-such-file.py", "--package", PACKAGE],
        ["code", "check", "-", "--package", "no_such_package"],
        ["code", "check", "-"],  # no --package
        ["code", "frobnicate", "-", "--package", PACKAGE],
        ["serve", "--package", PACKAGE],  # no --code-mode
    ],
)
def test_bad_usage_exits_2(args: list[str]) -> None:
    done = mas_runtime(*args, stdin="1\n")
    assert done.returncode == 2, (done.stdout, done.stderr)


# --- the MCP face -------------------------------------------------------------------------------


@asynccontextmanager
async def stdio_face() -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=[*python_args("-m", "mas.runtime", "serve", "--code-mode", "-q", *SOURCES)],
        env=ENV,
        cwd=str(REPO),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def http_face() -> AsyncIterator[ClientSession]:
    port = free_port()
    proc = subprocess.Popen(
        python_command(
            "-m",
            "mas.runtime",
            "serve",
            "--code-mode",
            "-q",
            "--http",
            "--port",
            str(port),
            *SOURCES,
            pythonpath=ENV.get("PYTHONPATH"),
        ),  # fmt: skip
        cwd=REPO,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    with served(proc, port, "code-mode server", 60):
        async with (
            streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


FACES: dict[str, Callable[[], AbstractAsyncContextManager[ClientSession]]] = {"stdio": stdio_face, "http": http_face}


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


@pytest.mark.parametrize("face", sorted(FACES))
def test_the_mcp_face_answers_a_real_sdk_client(face: str) -> None:
    async def talk() -> None:
        async with FACES[face]() as session:
            listed = await session.list_tools()
            assert sorted(t.name for t in listed.tools) == ["get_stubs", "list_functions", "run_code", "search_tools"]
            run_code = next(t for t in listed.tools if t.name == "run_code")
            assert "async def get_weather(" in (run_code.description or "")  # a small catalog: the whole API

            found = await session.call_tool("search_tools", {"query": "convert units", "limit": 1})
            assert not found.is_error and "async def unit_convert(" in _text(found)

            good = await session.call_tool("run_code", {"code": GOOD})
            assert not good.is_error, _text(good)
            assert _text(good) == "value: 30.3\noutput:\nconverted mi\n"
            assert [c["tool"] for c in (good.structured_content or {})["calls"]] == [
                "get_weather", "get_weather", "unit_convert"
            ]  # fmt: skip

            bad = await session.call_tool("run_code", {"code": BAD})
            assert bad.is_error
            text = _text(bad)
            assert "line 3, column 50: unknown-argument: Argument `unit`" in text
            assert 'line 4, column 9: invalid-key: Unknown key "temp"' in text
            assert (bad.structured_content or {})["calls"] == []

    asyncio.run(talk())


@pytest.mark.full  # the other tests here run code mode's command lines; this one, every README line
def test_the_readme_code_mode_lines_run_as_written(tmp_path: Path) -> None:
    """The README's code-mode block, line by line in a folder beside the repo's samples (the
    ``serve`` line runs until stopped: the MCP-face test above serves the same)."""
    import re
    import shlex

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```sh\n(.*?)```", readme, flags=re.S) if "mas-runtime code check" in b)
    lines = [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]
    assert [shlex.split(line)[:3] for line in lines[1:]] == [
        ["mas-runtime", "code", "check"], ["mas-runtime", "code", "run"], ["mas-runtime", "serve", "--code-mode"]
    ]  # fmt: skip
    for name in ("generated", "library-samples"):
        (tmp_path / name).symlink_to(REPO / name)
    runtime = f"{shlex.quote(sys.executable)} -m mas.runtime"
    outputs = []
    for line in lines[:3]:
        done = subprocess.run(
            line.replace("mas-runtime", runtime), shell=True, cwd=tmp_path, env=ENV, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, (line, done.stderr)
        outputs.append(done.stdout)
    assert outputs == ["", "", "19.4\n"]


def test_run_starts_only_the_servers_whose_modules_the_code_imports(tmp_path: Path) -> None:
    """Issue 30, item 9: ``code run`` started every server of the infra, not only those the code uses."""
    from gen_helpers import generate

    raw = REPO / "tests" / "servers" / "raw_jsonrpc_server.py"
    records = {name: tmp_path / f"{name}.jsonl" for name in ("alpha", "beta", "gamma")}
    servers = [
        {"name": name, "protocol": "mcp", "transport": "stdio", "command": sys.executable, "connect_mode": "legacy",
         "args": [str(raw), "--prefix", name, "--record", str(record)]}
        for name, record in records.items()
    ]  # fmt: skip
    infra = tmp_path / "infra.yaml"
    infra.write_text(json.dumps({"kind": "ToolServerRegistry", "spec": {"servers": servers}}), encoding="utf-8")
    assert generate(tmp_path, ["--infra", str(infra), "--out", "out", "--package", "three", "-q"]) == 0
    for record in records.values():
        record.unlink()  # generating listed them all
    snippet = tmp_path / "snippet.py"
    snippet.write_text('from tools import beta\nr = await beta.beta_echo(text="hi")\nr\n', encoding="utf-8")
    done = mas_runtime("code", "run", str(snippet), "--package", str(tmp_path / "out" / "three"), "--infra", str(infra))
    assert done.returncode == 0, done.stderr
    assert [name for name, record in records.items() if record.exists()] == ["beta"]
    snippet.write_text("import tools.gamma\nfrom tools import alpha\n1\n", encoding="utf-8")
    done = mas_runtime("code", "run", str(snippet), "--package", str(tmp_path / "out" / "three"), "--infra", str(infra))
    assert done.returncode == 0, done.stderr
    assert [name for name, record in records.items() if record.exists()] == ["alpha", "beta", "gamma"]
