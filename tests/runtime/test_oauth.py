"""OAuth 2.1 on an infra entry (``auth:``) against a real OAuth-protected MCP server on 127.0.0.1.

The server is tests/servers/oauth_server.py: the sample MCP server behind the MCP SDK's own
authorization server and resource server pieces (discovery, dynamic registration, PKCE, refresh,
bearer checks), approving every sign-in at once. Where a person would use a browser, the tests
pass the registry's public ``authorize`` callback a small headless browser that follows the
redirects to the runtime's loopback listener. The official conformance suite's 22 ``auth/*``
scenarios are in tests/conformance.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import platformdirs
import pytest
from mcp.client.auth import OAuthFlowError
from prefork import python_command

from mas.runtime import redact
from mas.runtime.config import ConfigError
from mas.runtime.infra import load_infra
from mas.runtime.mcp._oauth import TOKEN_DIR_ENV, LoopbackReceiver, token_dir, token_store_path
from mas.runtime.registry import RuntimeRegistry
from mas.runtime.samples import SampleRecorder

REPO = Path(__file__).resolve().parents[2]
SERVER = REPO / "tests" / "servers" / "oauth_server.py"


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def oauth_server(
    tmp_path: Path, *extra: str, lifetime: int = 3600, port: int | None = None, log: str = "grants.jsonl"
) -> Iterator[tuple[str, Path]]:
    """Run the OAuth-protected sample server; yield its MCP URL and its grants log."""
    port = port or free_port()
    grants = tmp_path / log
    proc = subprocess.Popen(
        python_command(
            str(SERVER), "--port", str(port), "--token-lifetime", str(lifetime), "--grants", str(grants), *extra
        ),
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        # One client for every try: each new one loads the CA bundle (70 ms of CPU; 29 tries a run).
        with httpx2.Client(timeout=1) as client:
            while True:
                try:
                    client.get(f"http://127.0.0.1:{port}/.well-known/oauth-authorization-server")
                    break
                except httpx2.HTTPError:
                    assert proc.poll() is None, "the OAuth server exited during startup"
                    assert time.monotonic() < deadline, "the OAuth server did not start listening"
                    time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp", grants
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def write_infra(folder: Path, url: str, auth: dict[str, Any] | None = None) -> Path:
    entry = {"name": "secure", "protocol": "mcp", "transport": "streamable-http", "url": url, "auth": auth or {}}
    doc = {"apiVersion": "toolgen/v1", "kind": "ToolServerRegistry", "spec": {"servers": [entry]}}
    path = folder / "infra.yaml"
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return path


def browser(visits: list[str]) -> Any:
    """A person's browser for the ``authorize`` callback: open the page, follow the redirects."""

    def visit(url: str) -> None:
        visits.append(url)
        with httpx2.Client(follow_redirects=True, timeout=10) as client:
            assert client.get(url).status_code == 200

    return visit


def grants(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def issued_secrets(log: Path) -> set[str]:
    """Every access token, refresh token and client secret the server handed out."""
    return {secret for line in grants(log) for secret in line["secrets"]}


def run(*args: str, tokens: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A CLI in a child process with no terminal (stdin closed), as in CI."""
    env = {**os.environ, TOKEN_DIR_ENV: str(tokens), "PYTHONPATH": str(REPO)}
    return subprocess.run(
        python_command(*args), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def leaked(secrets: set[str], folder: Path) -> list[str]:
    """Files under ``folder`` holding any of ``secrets`` (the token store excluded by the caller)."""
    hits = []
    for path in folder.rglob("*"):
        if path.is_file():
            text = path.read_bytes().decode("utf-8", "replace")
            hits.extend(f"{path.relative_to(folder)}" for s in secrets if s in text)
    return hits


def test_sign_in_once_then_a_new_process_refreshes_and_nothing_leaks(tmp_path: Path, monkeypatch: Any) -> None:
    """Authorization code + PKCE with dynamic registration, the redirect received once on
    127.0.0.1, tokens in a 0600 file outside the work folder; a later process without a terminal
    refreshes the expired token from that file (no person), and `toolgen generate --infra` and
    `mas-runtime list -v` reach the server without any token or client secret appearing in the
    lock, the package, the samples or their stderr."""
    tokens = tmp_path / "token-store"
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv(TOKEN_DIR_ENV, str(tokens))
    with oauth_server(tmp_path, lifetime=3) as (url, log):
        infra = write_infra(work, url)
        visits: list[str] = []
        samples = work / "toolgen.samples.json"
        with RuntimeRegistry.from_sources(
            infra=[infra], authorize=browser(visits), recorder=SampleRecorder(samples, rate=1.0)
        ) as registry:
            assert registry.owner_of("get_weather") == "secure"
            envelope = registry.call_tool("whoami", {})
            assert not envelope.is_error, envelope.result
            assert envelope.structured_content["header_sha256"] is not None  # a bearer token was sent
            secrets_known = registry.providers["secure"]._keeper.secrets
        assert len(visits) == 1, "the person signs in once"
        assert "code_challenge_method=S256" in visits[0] and "resource=" in visits[0]
        assert [g["grant"] for g in grants(log)] == ["register", "authorization_code"]
        assert issued_secrets(log) <= secrets_known, "every token and client secret is blanked out of messages"
        assert issued_secrets(log) <= redact.known(), "... and, through mas.runtime.redact, out of every output"

        (store,) = tokens.iterdir()
        assert stat.S_IMODE(store.stat().st_mode) == 0o600
        assert stat.S_IMODE(tokens.stat().st_mode) == 0o700

        time.sleep(3.5)  # the access token expires; the next process must refresh it, not ask a person
        listed = run("-m", "mas.runtime", "list", "-v", "--infra", str(infra), tokens=tokens, cwd=work)
        assert listed.returncode == 0, listed.stderr
        assert "get_weather" in listed.stdout
        assert [g["grant"] for g in grants(log)][-1] == "refresh_token"

        generated = run(
            "-m", "codegen", "generate", "-v", "--no-cache", "--infra", str(infra), "--lock",
            str(work / "toolgen.lock.json"), "--out", str(work / "generated"), "--package", "secure_tools",
            tokens=tokens, cwd=work,
        )  # fmt: skip
        assert generated.returncode == 0, generated.stderr
        assert (work / "generated" / "secure_tools").is_dir()
        assert "get_weather" in (work / "toolgen.lock.json").read_text(encoding="utf-8")

    secrets = issued_secrets(log)
    assert secrets and samples.exists()
    assert leaked(secrets, work) == []  # lock, package, samples, infra
    for output in (listed.stdout, listed.stderr, generated.stdout, generated.stderr):
        assert not [s for s in secrets if s in output]
    # The token store is where they are, and only there.
    assert any(s in store.read_text(encoding="utf-8") for s in secrets)

    offline = run(
        "-m", "codegen", "generate", "--offline", "--no-cache", "--infra", str(infra), "--lock",
        str(work / "toolgen.lock.json"), "--out", str(work / "offline"), "--package", "secure_tools",
        tokens=tmp_path / "no-tokens", cwd=work,
    )  # fmt: skip
    assert offline.returncode == 0, offline.stderr  # no server, no token: --offline needs neither


def expire_access_tokens(url: str) -> None:
    """Every access token the server handed out is refused from now on; refresh tokens stay good."""
    assert httpx2.post(url.removesuffix("/mcp") + "/test/expire-access-tokens", timeout=10).status_code == 204


def test_a_refused_token_the_client_holds_for_valid_is_refreshed_not_signed_in_again(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Issue 31 (the flaky sign-in test): a server that counts a token's lifetime in whole seconds,
    or whose clock runs ahead, refuses an access token the client still holds for valid. The SDK
    answers any 401 with the full flow, which needs a person; the refresh token is now tried
    once first, so a new process without a person goes on."""
    monkeypatch.setenv(TOKEN_DIR_ENV, str(tmp_path / "tokens"))
    with oauth_server(tmp_path) as (url, log):
        infra = write_infra(tmp_path, url)
        visits: list[str] = []
        with RuntimeRegistry.from_sources(infra=[infra], authorize=browser(visits)) as registry:
            assert not registry.call_tool("whoami", {}).is_error
        expire_access_tokens(url)
        with RuntimeRegistry.from_sources(infra=[infra], authorize=browser(visits)) as registry:
            envelope = registry.call_tool("whoami", {})
            assert not envelope.is_error, envelope.result
        assert len(visits) == 1, "nobody signs in again"
        assert [g["grant"] for g in grants(log)] == ["register", "authorization_code", "refresh_token"]


def test_a_refresh_that_lost_the_race_to_another_process_keeps_the_tokens_it_wrote(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Issue 31: two processes share a token file. The first refreshes, and the server rotates the
    refresh token; the second's refresh with the old one fails. It used to forget the tokens by
    writing back its own stale copy of the file, which dropped the first one's fresh tokens too
    (the next process needed a person). Now it re-reads the file under the folder's lock, finds
    the newer tokens and uses them; nothing is lost and nobody signs in again."""
    tokens = tmp_path / "tokens"
    monkeypatch.setenv(TOKEN_DIR_ENV, str(tokens))
    with oauth_server(tmp_path) as (url, log):
        infra = write_infra(tmp_path, url)
        visits: list[str] = []
        with (
            RuntimeRegistry.from_sources(infra=[infra], authorize=browser(visits)) as first,
            RuntimeRegistry.from_sources(infra=[infra], authorize=browser(visits)) as second,
        ):
            assert not first.call_tool("whoami", {}).is_error  # signs in, writes the file
            assert not second.call_tool("whoami", {}).is_error  # reads the file: same tokens
            expire_access_tokens(url)
            assert not first.call_tool("whoami", {}).is_error  # refreshes; the old refresh token is dead
            envelope = second.call_tool("whoami", {})  # its refresh fails: the file has newer tokens
            assert not envelope.is_error, envelope.result
        assert len(visits) == 1, "nobody signs in again"
        assert [g["grant"] for g in grants(log)] == ["register", "authorization_code", "refresh_token"]
        (store,) = tokens.glob("*.json")
        refreshed = grants(log)[-1]["secrets"]
        assert all(secret in store.read_text(encoding="utf-8") for secret in refreshed[:2])
        with RuntimeRegistry.from_sources(infra=[infra], authorize=browser(visits)) as third:
            assert not third.call_tool("whoami", {}).is_error
        assert len(visits) == 1 and len(grants(log)) == 3, "a later process uses the stored tokens"


def test_without_a_terminal_the_sign_in_fails_at_once_with_one_line(tmp_path: Path) -> None:
    """No stored token, no terminal, no authorize callback: nobody could finish signing in, so
    the command stops at once with one error line instead of waiting for a browser."""
    with oauth_server(tmp_path) as (url, _log):
        infra = write_infra(tmp_path, url)
        started = time.monotonic()
        done = run("-m", "mas.runtime", "list", "-q", "--infra", str(infra), tokens=tmp_path / "empty", cwd=tmp_path)
        elapsed = time.monotonic() - started
    assert done.returncode == 2
    assert elapsed < 20
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "signing in needs a person" in lines[0] and "no terminal" in lines[0]
    assert "spec.servers[0]" in lines[0]


def test_registry_signs_in_through_the_authorize_callback_in_the_same_process(tmp_path: Path, monkeypatch: Any) -> None:
    """A second registry in the same store reuses the tokens: no second sign-in, no new registration."""
    monkeypatch.setenv(TOKEN_DIR_ENV, str(tmp_path / "tokens"))
    with oauth_server(tmp_path) as (url, log):
        infra = write_infra(tmp_path, url)
        visits: list[str] = []
        for _ in range(2):
            with RuntimeRegistry.from_sources(infra=[infra], authorize=browser(visits)) as registry:
                assert not registry.call_tool("get_weather", {"city": "Paris"}).is_error
        assert len(visits) == 1
        assert [g["grant"] for g in grants(log)] == ["register", "authorization_code"]


def test_token_store_memory_keeps_nothing_on_disk(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv(TOKEN_DIR_ENV, str(tmp_path / "tokens"))
    with oauth_server(tmp_path) as (url, _log):
        infra = write_infra(tmp_path, url, {"token_store": "memory"})
        with RuntimeRegistry.from_sources(infra=[infra], authorize=browser([])) as registry:
            assert not registry.call_tool("get_weather", {"city": "Paris"}).is_error
    assert not (tmp_path / "tokens").exists()


def test_default_token_folder_is_the_user_cache_folder(monkeypatch: Any) -> None:
    monkeypatch.delenv(TOKEN_DIR_ENV, raising=False)
    assert token_dir() == Path(platformdirs.user_cache_dir("toolgen")) / "oauth"
    monkeypatch.setenv(TOKEN_DIR_ENV, "/somewhere/else")
    assert token_dir() == Path("/somewhere/else")


def test_loopback_receiver_takes_one_redirect_then_stops_listening() -> None:
    async def scenario() -> None:
        port = free_port()
        receiver = LoopbackReceiver(f"http://127.0.0.1:{port}/callback")
        receiver.state = "xyz"  # the authorization request's state
        await receiver.start()
        async with httpx2.AsyncClient() as client:
            other = await client.get(f"http://127.0.0.1:{port}/favicon.ico")
            assert other.status_code == 404
            waiting = asyncio.ensure_future(receiver.wait(5))
            done = await client.get(f"http://127.0.0.1:{port}/callback?code=abc&state=xyz")
            assert done.status_code == 200
            result = await waiting
            assert (result.code, result.state) == ("abc", "xyz")
            with pytest.raises(httpx2.ConnectError):
                await client.get(f"http://127.0.0.1:{port}/callback?code=again")

        refused = LoopbackReceiver(f"http://127.0.0.1:{free_port()}/cb")
        refused.state = "s1"
        await refused.start()
        async with httpx2.AsyncClient() as client:
            waiting = asyncio.ensure_future(refused.wait(5))
            forged = await client.get(f"http://127.0.0.1:{refused.port}/cb?error=access_denied&error_description=x")
            assert forged.status_code == 404 and refused.foreign == 1  # no state: not this sign-in
            await client.get(
                f"http://127.0.0.1:{refused.port}/cb?error=access_denied&state=s1&error_description=no+%1b]0;thanks"
            )
            with pytest.raises(OAuthFlowError, match="refused: no ]0;thanks$"):  # the escape blanked
                await waiting

        silent = LoopbackReceiver(f"http://127.0.0.1:{free_port()}/cb")
        await silent.start()
        with pytest.raises(OAuthFlowError, match="within 0.2 s"):
            await silent.wait(0.2)

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"transport": "stdio", "command": "x", "auth": {}},
            "`auth` is OAuth for HTTP servers; a stdio server cannot use it",
        ),
        (
            {"transport": "streamable-http", "url": "http://h/mcp", "auth": {"grant": "client_credentials"}},
            "`grant: client_credentials` needs `client_id`",
        ),
        (
            {"transport": "streamable-http", "url": "http://h/mcp", "auth": {"client_secret": "hunter2hunter2"}},
            "spec.servers[0].auth.client_secret",
        ),
        (
            {"transport": "streamable-http", "url": "http://h/mcp", "auth": {"grant": "password"}},
            "spec.servers[0].auth.grant",
        ),
        (
            {"transport": "streamable-http", "url": "http://h/mcp", "auth": {"redirect_uri": "http://evil.example/cb"}},
            "spec.servers[0].auth.redirect_uri",
        ),
        (
            {
                "transport": "streamable-http",
                "url": "http://h/mcp",
                "auth": {
                    "grant": "client_credentials",
                    "client_id": "c",
                    "client_secret": "env:S",
                    "token_endpoint_auth_method": "none",
                },
            },
            "cannot be `none`",
        ),
        (
            {
                "transport": "streamable-http",
                "url": "http://h/mcp",
                "auth": {"client_id": "c", "token_endpoint_auth_method": "private_key_jwt"},
            },
            "`private_key_jwt` signs with `private_key`",
        ),
    ],
)
def test_bad_auth_blocks_are_one_line_errors(tmp_path: Path, entry: dict[str, Any], message: str) -> None:
    doc = {"kind": "ToolServerRegistry", "spec": {"servers": [{"name": "s", "protocol": "mcp", **entry}]}}
    path = tmp_path / "infra.yaml"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_infra(path)
    assert message in str(caught.value)
    assert "hunter2" not in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_missing_secret_variable_is_named_and_nothing_is_sent(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.delenv("NO_SUCH_CLIENT_SECRET", raising=False)
    auth = {"grant": "client_credentials", "client_id": "ci", "client_secret": "env:NO_SUCH_CLIENT_SECRET"}
    infra = write_infra(tmp_path, "http://127.0.0.1:9/mcp", auth)
    with pytest.raises(ConfigError, match="auth.client_secret needs environment variable NO_SUCH_CLIENT_SECRET"):
        RuntimeRegistry.from_sources(infra=[infra])


def test_a_slow_person_is_not_cut_off_by_the_connect_timeout(tmp_path: Path, monkeypatch: Any) -> None:
    """The connect deadline (here 3 s) is lifted while the person signs in; only the sign-in's
    own timeout bounds that wait."""
    monkeypatch.setenv(TOKEN_DIR_ENV, str(tmp_path / "tokens"))
    visits: list[str] = []
    visit = browser(visits)

    def slow(url: str) -> None:
        time.sleep(4)  # reading the consent page
        visit(url)

    with oauth_server(tmp_path) as (url, _log):
        entry = {"name": "secure", "protocol": "mcp", "transport": "streamable-http", "url": url, "auth": {}}
        entry["connect_timeout_seconds"] = 3
        infra = tmp_path / "infra.yaml"
        infra.write_text(json.dumps({"kind": "ToolServerRegistry", "spec": {"servers": [entry]}}), encoding="utf-8")
        with RuntimeRegistry.from_sources(infra=[infra], authorize=slow) as registry:
            assert not registry.call_tool("get_weather", {"city": "Paris"}).is_error
    assert len(visits) == 1


FAKE_BROWSER = """
import sys, httpx2
with httpx2.Client(follow_redirects=True, timeout=10) as client:
    client.get(sys.argv[1])
"""


@pytest.mark.full  # test_sign_in_once_then_a_new_process_refreshes_and_nothing_leaks stays fast
def test_on_a_terminal_the_url_is_printed_and_a_browser_opened(tmp_path: Path) -> None:
    """With a terminal and no callback, the authorization URL goes to stderr and to the browser
    (``$BROWSER`` here: a script that follows the redirects as a browser would)."""
    script = tmp_path / "fake_browser.py"
    script.write_text(FAKE_BROWSER, encoding="utf-8")
    primary, secondary = os.openpty()
    with oauth_server(tmp_path) as (url, log):
        infra = write_infra(tmp_path, url)
        env = {
            **os.environ,
            TOKEN_DIR_ENV: str(tmp_path / "tokens"),
            "PYTHONPATH": str(REPO),
            "BROWSER": f"{sys.executable} {script} %s",
        }
        try:
            done = subprocess.run(
                [sys.executable, "-m", "mas.runtime", "list", "-q", "--infra", str(infra)],
                cwd=tmp_path, env=env, stdin=secondary, capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip
        finally:
            os.close(secondary)
            os.close(primary)
    assert done.returncode == 0, done.stderr
    assert "get_weather" in done.stdout
    assert "MCP server 'secure': to sign in, open this URL in a browser:" in done.stderr
    assert "code_challenge=" in done.stderr
    assert [g["grant"] for g in grants(log)] == ["register", "authorization_code"]
    assert not [s for s in issued_secrets(log) if s in done.stderr + done.stdout]


def test_the_printed_url_stays_on_one_line_under_live_progress(monkeypatch: Any) -> None:
    """While rich shows live progress it owns stderr and hard-wraps at the terminal width; the
    authorization URL must reach the person whole, or a copied URL misses its PKCE challenge."""
    import io

    from rich.console import Console
    from rich.file_proxy import FileProxy

    from mas.runtime.mcp import _oauth

    screen = io.StringIO()
    console = Console(file=screen, width=40, force_terminal=False)
    monkeypatch.setattr(sys, "stderr", FileProxy(console, io.StringIO()))
    url = "http://127.0.0.1:1/authorize?" + "&".join(f"k{i}=v{i}" for i in range(30))
    _oauth._show(f"to sign in, open:\n  {url}")
    assert url in screen.getvalue().splitlines()[1]


# --- issue 31: the client keeps its secrets (defects 2, 3, 8, 9) -------------------------------------
def recorded(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


def basic(client_id: str, secret: str) -> str:
    import base64

    return "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()


def test_a_configured_issuer_keeps_the_sign_in_and_the_client_secret_at_that_authorization_server(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Defect 2: with `issuer` on an `authorization_code` entry, an MCP server whose metadata names
    another authorization server (another process: another origin) gets neither the person's sign-in
    nor the pre-registered client secret; the flow stops on the issuer mismatch."""
    monkeypatch.setenv(TOKEN_DIR_ENV, str(tmp_path / "tokens"))
    monkeypatch.setenv("PREREGISTERED_SECRET", "pre-registered-" + os.urandom(8).hex())
    evil_port, record = free_port(), tmp_path / "evil.jsonl"
    evil_base = f"http://127.0.0.1:{evil_port}"
    with (
        oauth_server(tmp_path, "--any-client", "--record", str(record), port=evil_port, log="evil-grants.jsonl"),
        oauth_server(tmp_path, "--issuer", evil_base) as (url, _log),
    ):
        honest = url.removesuffix("/mcp")
        auth = {"client_id": "toolgen-ci", "client_secret": "env:PREREGISTERED_SECRET", "issuer": honest}
        infra = write_infra(tmp_path, url, auth)
        visits: list[str] = []
        with pytest.raises(ConfigError) as caught:
            RuntimeRegistry.from_sources(infra=[infra], authorize=browser(visits))
    assert "issuer mismatch" in str(caught.value), caught.value
    assert visits == [], "the person is never sent to another authorization server"
    secret = basic("toolgen-ci", os.environ["PREREGISTERED_SECRET"])
    assert [r for r in recorded(record) if r["path"] in ("/authorize", "/token") or r["authorization"] == secret] == []


def test_a_token_folder_others_can_write_is_refused_and_a_planted_token_file_never_refreshes(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Defect 3: `TOOLGEN_TOKEN_DIR` on a folder others can write (a shared runner's /tmp): a token
    file planted there, naming the planter's token endpoint, would receive the client secret at the
    next refresh. Such a folder is refused in one line; nothing is sent anywhere."""
    monkeypatch.setenv("PREREGISTERED_SECRET", "pre-registered-" + os.urandom(8).hex())
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv(TOKEN_DIR_ENV, str(shared))
    evil_port, record = free_port(), tmp_path / "evil.jsonl"
    evil_base = f"http://127.0.0.1:{evil_port}"
    with (
        oauth_server(tmp_path, "--any-client", "--record", str(record), port=evil_port, log="evil-grants.jsonl"),
        oauth_server(tmp_path) as (url, _log),
    ):
        infra = write_infra(tmp_path, url, {"client_id": "toolgen-ci", "client_secret": "env:PREREGISTERED_SECRET"})
        (config,) = load_infra(infra)
        planted = {
            "tokens": {"access_token": "planted", "token_type": "Bearer", "refresh_token": "planted-refresh"},
            "expires_at": 1,
            "server_metadata": {
                "issuer": evil_base,
                "authorization_endpoint": f"{evil_base}/authorize",
                "token_endpoint": f"{evil_base}/token",
                "response_types_supported": ["code"],
            },
        }
        store = token_store_path(config)
        assert store is not None and store.parent == shared
        store.write_text(json.dumps(planted), encoding="utf-8")
        with pytest.raises(ConfigError) as caught:
            RuntimeRegistry.from_sources(infra=[infra], authorize=browser([]))
    assert f"the token folder {shared} is mode 0777: others may write to it" in str(caught.value)
    assert "\n" not in str(caught.value)
    # (the test's own start-up probe reads the well-known metadata; the client sends nothing)
    assert [r for r in recorded(record) if not r["path"].startswith("/.well-known/")] == []


def test_a_loosened_token_file_is_not_trusted_and_a_planted_tmp_symlink_is_not_followed(
    tmp_path: Path, monkeypatch: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect 3, inside a folder of our own: a token file others may write is ignored (one
    warning; the person signs in afresh), and the store's temporary file is a fresh one created
    exclusively, so a symlink planted at `<file>.tmp` receives no token."""
    tokens = tmp_path / "tokens"
    tokens.mkdir(mode=0o700)
    monkeypatch.setenv(TOKEN_DIR_ENV, str(tokens))
    outside = tmp_path / "outside.json"
    outside.write_text("", encoding="utf-8")
    with oauth_server(tmp_path) as (url, log):
        infra = write_infra(tmp_path, url)
        (config,) = load_infra(infra)
        store = token_store_path(config)
        assert store is not None
        store.write_text(json.dumps({"tokens": {"access_token": "planted", "token_type": "Bearer"}}), encoding="utf-8")
        store.chmod(0o666)
        store.with_name(store.name + ".tmp").symlink_to(outside)
        visits: list[str] = []
        with RuntimeRegistry.from_sources(infra=[infra], authorize=browser(visits)) as registry:
            assert not registry.call_tool("get_weather", {"city": "Paris"}).is_error
        assert len(visits) == 1 and [g["grant"] for g in grants(log)] == ["register", "authorization_code"]
    assert outside.read_text(encoding="utf-8") == ""
    assert stat.S_IMODE(store.stat().st_mode) == 0o600 and "planted" not in store.read_text(encoding="utf-8")
    assert any("is not trusted (mode 0666" in r.getMessage() for r in caplog.records)


def forging_browser(visits: list[str], port: int) -> Any:
    """A browser beside another local process that hits the loopback port first, with a code and
    an error of its own (no valid `state`), before the person finishes signing in."""
    real = browser(visits)

    def visit(url: str) -> None:
        forged = [
            f"http://127.0.0.1:{port}/callback?code=forged&state=guessed",
            f"http://127.0.0.1:{port}/callback?code=forged",
            f"http://127.0.0.1:{port}/callback?error=access_denied&error_description=Unlock+it+at+http://evil.example",
        ]
        for attempt in forged:
            assert httpx2.get(attempt, timeout=5).status_code == 404
        real(url)

    return visit


def test_the_loopback_receiver_ends_the_sign_in_only_with_its_own_state(tmp_path: Path, monkeypatch: Any) -> None:
    """Defect 8: any local process or web page can reach the loopback port; a redirect without
    this sign-in's `state` is answered 404 and ignored, and the person's own redirect completes it."""
    monkeypatch.setenv(TOKEN_DIR_ENV, str(tmp_path / "tokens"))
    port = free_port()
    with oauth_server(tmp_path) as (url, log):
        infra = write_infra(tmp_path, url, {"redirect_uri": f"http://127.0.0.1:{port}/callback"})
        visits: list[str] = []
        with RuntimeRegistry.from_sources(infra=[infra], authorize=forging_browser(visits, port)) as registry:
            assert not registry.call_tool("get_weather", {"city": "Paris"}).is_error
    assert len(visits) == 1 and [g["grant"] for g in grants(log)] == ["register", "authorization_code"]


def test_a_failed_authorize_callback_frees_the_loopback_port_for_the_next_sign_in(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Defect 9: an `authorize` callback that fails must not leave the listener open: with a
    fixed redirect port, every later sign-in would fail "address already in use"."""
    import socket

    monkeypatch.setenv(TOKEN_DIR_ENV, str(tmp_path / "tokens"))
    port = free_port()

    def failing(url: str) -> None:
        raise RuntimeError("the browser could not be started")

    with oauth_server(tmp_path) as (url, log):
        infra = write_infra(tmp_path, url, {"redirect_uri": f"http://127.0.0.1:{port}/callback"})
        with pytest.raises(ConfigError, match="the browser could not be started"):
            RuntimeRegistry.from_sources(infra=[infra], authorize=failing)
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0, "nothing listens on the port any more"
        visits: list[str] = []
        with RuntimeRegistry.from_sources(infra=[infra], authorize=browser(visits)) as registry:
            assert not registry.call_tool("get_weather", {"city": "Paris"}).is_error
    assert len(visits) == 1 and [g["grant"] for g in grants(log)][-1] == "authorization_code"
