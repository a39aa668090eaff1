"""MCP test helpers shared by test modules: sample-server configs and an HTTP sample server.

Imported as ``mcp_helpers`` (tests/conftest.py puts tests/ on sys.path).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from prefork import python_args, python_command

from mas.runtime.config import MCPServerConfig

REPO = Path(__file__).resolve().parents[1]


def stdio_config(
    name: str, *args: str, script: Path | None = None, command: str = "python", **overrides: Any
) -> MCPServerConfig:
    """A stdio config; ``python`` (not sys.executable) also checks the venv-interpreter rule. A
    ``python`` server is a fork of a pre-imported interpreter (tests/prefork.py): a real process on
    the runtime's pipes, without paying ``import mcp`` for every test. Another ``command`` (node,
    an old SDK's venv) runs ``script`` itself."""
    target: tuple[str, ...] = (str(script),) if script else ("-m", "mas.samples.mcp_server")
    if command == "python":
        target = python_args(*target)
    settings: dict[str, Any] = {
        "connect_timeout_seconds": 20.0,
        "env": {"PYTHONPATH": str(REPO)},
        "cwd": str(REPO),
        **overrides,
    }
    return MCPServerConfig(name=name, transport="stdio", command=command, args=(*target, *args), **settings)


SAMPLE_STDIO = REPO / "library-samples" / "infra" / "sample-stdio.yaml"
_SAMPLE_ARGS = "      args: [-m, mas.samples.mcp_server]\n"


@cache
def sample_stdio_infra() -> str:
    """library-samples/infra/sample-stdio.yaml, its server forked from the tests' pre-imported
    interpreter (tests/prefork.py; the runtime passes no PYTHONPATH to it): the same file but its
    ``args`` line, written once per test process. A cold ``python -m mas.samples.mcp_server`` costs
    about a CPU-second; a run started 40 of them, most through this file (docs/tests.md, stop 40)."""
    text = SAMPLE_STDIO.read_text(encoding="utf-8")
    if text.count(_SAMPLE_ARGS) != 1:
        raise AssertionError(f"{SAMPLE_STDIO} no longer has the line {_SAMPLE_ARGS.strip()!r} to fork")
    forked = f"      args: {json.dumps(python_args('-m', 'mas.samples.mcp_server', pythonpath=None))}\n"
    folder = tempfile.mkdtemp(prefix="toolgen-infra-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = Path(folder) / SAMPLE_STDIO.name
    path.write_text(text.replace(_SAMPLE_ARGS, forked), encoding="utf-8")
    return str(path)


def http_config(name: str, url: str, **overrides: Any) -> MCPServerConfig:
    settings: dict[str, Any] = {"connect_timeout_seconds": 10.0, **overrides}
    return MCPServerConfig(name=name, transport="streamable-http", url=url, **settings)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def http_sample_server(
    port: int, token: str, *args: str, transport: str = "streamable-http"
) -> Iterator[subprocess.Popen[bytes]]:
    """Run the sample server over HTTP on 127.0.0.1:port until the block ends."""
    proc = subprocess.Popen(
        python_command("-m", "mas.samples.mcp_server", "--transport", transport, "--port", str(port), *args),
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "SAMPLE_SERVER_TOKEN": token},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    with served(proc, port, "sample HTTP server"):
        yield proc


@contextmanager
def served(proc: subprocess.Popen[bytes], port: int, what: str, seconds: float = 20.0) -> Iterator[str]:
    """The one test-server setup: wait (at most ``seconds``) until ``proc`` listens on
    127.0.0.1:``port``, yield its MCP URL, and stop it when the block ends (killed if it does not
    stop within 5 s). ``what`` names the server in a failed start."""
    try:
        deadline = time.monotonic() + seconds
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert proc.poll() is None, f"the {what} exited during startup"
                assert time.monotonic() < deadline, f"the {what} did not start listening"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
