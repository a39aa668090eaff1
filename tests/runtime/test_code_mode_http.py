"""``mas-runtime serve --code-mode`` served safely and speaking MCP fully, as an operator runs it:
the installed command in a child process, the sample server behind it, a real MCP SDK client.

Off loopback, code execution is served only with a bearer token (``--auth-token env:VAR``) and the
SDK's DNS-rebinding check stays on with an allowed-hosts list; the start line says so. 127.0.0.2 is
the "off loopback" address here: the rule counts only 127.0.0.1, localhost and ::1 as loopback, and
the test never leaves the machine. ``run_code`` declares an output schema, annotations and server
instructions, and forwards the progress of the tool calls inside a run.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_helpers import free_port, sample_stdio_infra
from prefork import python_command

from mas.runtime.code_mode.server import RUN_OUTPUT_SCHEMA, HttpSecurityError, http_security

REPO = Path(__file__).resolve().parents[2]
PACKAGE = str(REPO / "generated" / "sample_tools")
INFRA = sample_stdio_infra()
TOOLS = str(REPO / "library-samples" / "tools")
SOURCES = ["--infra", INFRA, "--tools", TOOLS, "--package", PACKAGE]
TOKEN = "code-mode-test-token-0123456789"
ENV = {**os.environ, "PYTHONPATH": str(REPO), "CODE_MODE_TOKEN": TOKEN}
pytestmark = pytest.mark.slow  # child processes: the command, the sample server, the sandbox

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    command = python_command("-m", "mas.runtime", "serve", "--code-mode", *args, pythonpath=ENV.get("PYTHONPATH"))
    return subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=ENV, timeout=60)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--host", "0.0.0.0"], "--host 0.0.0.0 is not loopback: serving code execution there needs --auth-token"),
        (["--host", "192.0.2.7"], "--host 192.0.2.7 is not loopback"),
        (
            ["--host", "0.0.0.0", "--auth-token", "env:CODE_MODE_TOKEN"],
            "name the hosts clients use with --allowed-host",
        ),
        (["--host", "127.0.0.2", "--auth-token", "env:NO_SUCH_VARIABLE"], "the variable is unset or shorter than 16"),
        (["--host", "127.0.0.2", "--auth-token", TOKEN], "--auth-token takes env:VAR"),
    ],
    ids=["wildcard", "address", "wildcard-without-hosts", "unset-token", "literal-token"],
)
def test_serving_off_loopback_without_protection_refuses_to_start(args: list[str], message: str) -> None:
    done = serve("--http", *args, *SOURCES)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert TOKEN not in done.stderr  # a token given literally is never echoed


def test_the_guard_for_each_host() -> None:
    loopback = http_security("127.0.0.1", None)
    assert loopback.token is None and "127.0.0.1:*" in loopback.allowed_hosts and "[::1]:*" in loopback.allowed_hosts
    with pytest.raises(HttpSecurityError):
        http_security("10.1.2.3", None)
    os.environ["CODE_MODE_TOKEN_UNIT"] = TOKEN
    try:
        guard = http_security("0.0.0.0", "env:CODE_MODE_TOKEN_UNIT", ["mcp.internal"])  # noqa: S104
    finally:
        del os.environ["CODE_MODE_TOKEN_UNIT"]
    assert guard.token == TOKEN and guard.allowed_hosts == ("mcp.internal:*",)
    assert "https://mcp.internal:*" in guard.allowed_origins
    assert TOKEN not in guard.describe("0.0.0.0", 8770)  # noqa: S104


@contextmanager
def served(*args: str, port: int | None = None) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    port = port or free_port()
    command = python_command(
        "-m", "mas.runtime", "serve", "--code-mode", "--http", "--port", str(port), *args, *SOURCES,
        pythonpath=ENV.get("PYTHONPATH"),
    )  # fmt: skip
    proc = subprocess.Popen(command, cwd=REPO, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    host = args[args.index("--host") + 1] if "--host" in args else "127.0.0.1"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection((host, port), timeout=0.2).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else "exited"
                assert time.monotonic() < deadline, "the code-mode server did not start listening"
                time.sleep(0.1)
        yield port, proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_off_loopback_every_request_needs_the_token_and_a_known_host() -> None:
    with served("--host", "127.0.0.2", "--auth-token", "env:CODE_MODE_TOKEN") as (port, proc):
        url = f"http://127.0.0.2:{port}/mcp"
        with httpx2.Client(timeout=10) as http:
            assert http.post(url, json=INITIALIZE, headers=ACCEPT).status_code == 401
            wrong = {**ACCEPT, "authorization": "Bearer not-the-token-at-all"}
            assert http.post(url, json=INITIALIZE, headers=wrong).status_code == 401
            good = {**ACCEPT, "authorization": f"Bearer {TOKEN}"}
            forged = http.post(url, json=INITIALIZE, headers={**good, "host": "evil.example"})
            assert forged.status_code == 421, forged.status_code  # DNS rebinding: an unknown Host
            hostile_page = http.post(url, json=INITIALIZE, headers={**good, "origin": "http://evil.example"})
            assert hostile_page.status_code == 403, hostile_page.status_code
            assert http.post(url, json=INITIALIZE, headers=good).status_code == 200

        async def talk() -> None:
            client = httpx2.AsyncClient(headers={"authorization": f"Bearer {TOKEN}"}, timeout=30)
            async with (
                client,
                streamable_http_client(url, http_client=client) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                reply = await session.call_tool(
                    "run_code", {"code": "from tools import sample\n(await sample.get_weather(city='Paris'))['city']"}
                )
                assert not reply.is_error and reply.content[0].text == 'value: "Paris"'  # type: ignore[union-attr]

        asyncio.run(talk())
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    start = next(line for line in err.splitlines() if "code mode on" in line)
    expected = (
        f"code mode on http://127.0.0.2:{port}/mcp; every request needs the bearer token from env:CODE_MODE_TOKEN"
    )
    assert expected in start
    assert "DNS-rebinding protection on, Host must be one of: 127.0.0.2" in start
    assert TOKEN not in err


def test_on_loopback_a_forged_host_is_refused() -> None:
    with served() as (port, proc), httpx2.Client(timeout=10) as http:
        url = f"http://127.0.0.1:{port}/mcp"
        assert http.post(url, json=INITIALIZE, headers={**ACCEPT, "host": "evil.example"}).status_code == 421
        assert http.post(url, json=INITIALIZE, headers=ACCEPT).status_code == 200


@asynccontextmanager
async def stdio_face() -> AsyncIterator[tuple[ClientSession, Any]]:
    [command, *args] = python_command("-m", "mas.runtime", "serve", "--code-mode", "-q", *SOURCES,
                                      pythonpath=ENV.get("PYTHONPATH"))  # fmt: skip
    params = StdioServerParameters(
        command=command,
        args=args,
        env=ENV,
        cwd=str(REPO),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        yield session, await session.initialize()


def test_run_code_declares_its_output_schema_annotations_and_the_server_its_instructions() -> None:
    async def talk() -> None:
        async with stdio_face() as (session, initialized):
            assert "search_tools" in (initialized.instructions or "") and "await" in (initialized.instructions or "")
            listed = await session.list_tools()
            run_code = next(t for t in listed.tools if t.name == "run_code")
            assert run_code.output_schema == RUN_OUTPUT_SCHEMA
            assert run_code.annotations is not None
            assert (run_code.annotations.read_only_hint, run_code.annotations.destructive_hint) == (False, True)
            reply = await session.call_tool("run_code", {"code": "1 + 1"})  # the client checks it against the schema
            assert not reply.is_error and reply.structured_content == {"ok": True, "calls": [], "error": None}

    asyncio.run(talk())


def test_progress_of_the_calls_inside_a_run_reaches_the_client() -> None:
    async def talk() -> None:
        async with stdio_face() as (session, _):
            updates: list[tuple[float, str | None]] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                updates.append((progress, message))

            code = "from tools import sample\nawait sample.count_slowly(steps=3, delay_seconds=0.2)\n"
            reply = await session.call_tool("run_code", {"code": code}, progress_callback=on_progress)
            assert not reply.is_error
            for _ in range(50):  # notifications may trail the reply a little
                if len(updates) >= 3:
                    break
                await asyncio.sleep(0.05)
            assert [p for p, _ in updates] == [1.0, 2.0, 3.0]
            assert [m for _, m in updates] == [f"count_slowly: step {i}/3" for i in (1, 2, 3)]

    asyncio.run(talk())


@contextmanager
def introspection_server(resource: str) -> Iterator[tuple[str, list[str]]]:
    """A stand-in authorization server on 127.0.0.1: its RFC 7662 endpoint answers for a few
    tokens (good, issued for another resource, expired, without the scope, inactive) and keeps the
    Authorization header of each request (the client's credentials)."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import parse_qs

    now = int(time.time())
    answers = {
        "good-token": {"active": True, "aud": [resource], "scope": "mcp:run other", "exp": now + 600, "sub": "u1"},
        "other-audience": {
            "active": True,
            "aud": "https://elsewhere.example/mcp",
            "scope": "mcp:run",
            "exp": now + 600,
        },
        "expired": {"active": True, "aud": resource, "scope": "mcp:run", "exp": now - 10},
        "no-scope": {"active": True, "aud": resource, "scope": "read", "exp": now + 600},
    }
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server hook's name
            seen.append(self.headers.get("authorization", ""))
            form = parse_qs(self.rfile.read(int(self.headers.get("content-length", "0"))).decode())
            body = json.dumps(answers.get(form.get("token", [""])[0], {"active": False})).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/introspect", seen
    finally:
        server.shutdown()
        server.server_close()


def test_oauth_resource_server_mode_takes_only_tokens_issued_for_it() -> None:
    """``--oauth-*``: off loopback without a bearer token, each request's access token is checked by
    introspection at the authorization server (as the configured client): only an active, unexpired
    token whose audience is this server and that holds the required scope gets in; the SDK serves the
    RFC 9728 metadata naming the authorization server; the start line says so; no secret is shown."""
    port = free_port()
    resource = f"http://127.0.0.2:{port}/mcp"
    with introspection_server(resource) as (endpoint, seen):
        oauth = ["--oauth-issuer", "http://127.0.0.1:9/", "--oauth-resource", resource, "--oauth-introspection",
                 endpoint, "--oauth-scope", "mcp:run", "--oauth-client-id", "code-mode",
                 "--oauth-client-secret", "env:CODE_MODE_TOKEN"]  # fmt: skip
        with served("--host", "127.0.0.2", *oauth, port=port) as (_, proc):
            with httpx2.Client(timeout=10) as http:
                assert http.post(resource, json=INITIALIZE, headers=ACCEPT).status_code == 401
                for token, status in (("other-audience", 401), ("expired", 401), ("inactive", 401), ("no-scope", 403)):
                    bad = {**ACCEPT, "authorization": f"Bearer {token}"}
                    assert http.post(resource, json=INITIALIZE, headers=bad).status_code == status, token
                good = {**ACCEPT, "authorization": "Bearer good-token"}
                assert http.post(resource, json=INITIALIZE, headers=good).status_code == 200
                forged = http.post(resource, json=INITIALIZE, headers={**good, "host": "evil.example"})
                assert forged.status_code == 421  # the DNS-rebinding check stays on
                meta = http.get(f"http://127.0.0.2:{port}/.well-known/oauth-protected-resource/mcp")
                assert meta.status_code == 200, meta.status_code
                assert meta.json()["resource"] == resource
                assert meta.json()["authorization_servers"] == ["http://127.0.0.1:9/"]

            async def talk() -> None:
                client = httpx2.AsyncClient(headers={"authorization": "Bearer good-token"}, timeout=30)
                async with (
                    client,
                    streamable_http_client(resource, http_client=client) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    code = "from tools import sample\n(await sample.get_weather(city='Paris'))['city']"
                    reply = await session.call_tool("run_code", {"code": code})
                    assert not reply.is_error and reply.content[0].text == 'value: "Paris"'  # type: ignore[union-attr]

            asyncio.run(talk())
            proc.terminate()
            _, err = proc.communicate(timeout=10)
    import base64

    assert seen and all(h == "Basic " + base64.b64encode(f"code-mode:{TOKEN}".encode()).decode() for h in seen)
    start = next(line for line in err.splitlines() if "code mode on" in line)
    assert f"every request needs an OAuth access token for {resource}, checked at {endpoint}" in start
    assert TOKEN not in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--oauth-issuer", "https://as.example/"],
         "OAuth resource-server mode needs --oauth-resource, --oauth-introspection"),
        (["--oauth-issuer", "https://as.example/", "--oauth-resource", "https://mcp.example/mcp",
          "--oauth-introspection", "http://as.example/introspect"], "--oauth-introspection must be https off loopback"),
        (["--oauth-issuer", "https://as.example/", "--oauth-resource", "https://mcp.example/mcp",
          "--oauth-introspection", "https://as.example/introspect", "--auth-token", "env:CODE_MODE_TOKEN"],
         "--auth-token and the --oauth-* options are two ways to guard; choose one"),
    ],
)  # fmt: skip
def test_oauth_settings_that_would_not_guard_refuse_to_start(args: list[str], message: str) -> None:
    proc = serve("--http", "--host", "127.0.0.2", *args, *SOURCES)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
