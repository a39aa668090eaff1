"""Secret header values never leave the MCP provider: the helpers directly, then a hostile server.

The end-to-end test talks to ``tests/servers/echo_header_server.py`` over HTTP on 127.0.0.1. That
server echoes the headers it received in a failed listing, in a JSON-RPC error, in an error
result and in a plain result, so the token really reaches text the provider hands back or logs:
with redaction switched off, these tests fail.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import served
from prefork import python_command

from mas.runtime.config import ConfigError, MCPServerConfig
from mas.runtime.contracts.tool_contract import ToolResultEnvelope
from mas.runtime.mcp._convert import ToolServerError, exception_text, resolve_headers, scrub, scrub_envelope
from mas.runtime.mcp.provider import MCPToolProvider
from mas.runtime.registry import RuntimeRegistry

SERVER = Path(__file__).resolve().parents[1] / "servers" / "echo_header_server.py"
TOKEN_VAR = "TOOLGEN_TEST_ECHO_TOKEN"


def http(headers: dict[str, str], url: str = "http://127.0.0.1:9/mcp") -> MCPServerConfig:
    return MCPServerConfig(
        name="echo", transport="streamable-http", url=url, headers=headers, connect_timeout_seconds=10
    )


# --- scrub ---------------------------------------------------------------------------------------
def test_scrub_blanks_every_occurrence_of_every_secret() -> None:
    text = "a=s3cr3t-one b=s3cr3t-one c=other-secret d=keep"
    assert scrub(text, {"s3cr3t-one", "other-secret"}) == "a=*** b=*** c=*** d=keep"


def test_scrub_blanks_the_longest_secret_whole() -> None:
    # "tok-1234" is inside "Bearer tok-1234": shortest first would leave "Bearer ***".
    assert scrub("auth: Bearer tok-1234.", ["tok-1234", "Bearer tok-1234"]) == "auth: ***."
    assert scrub("auth: Bearer tok-1234.", ["Bearer tok-1234", "tok-1234"]) == "auth: ***."


def test_scrub_ignores_empty_secrets_and_leaves_clean_text_alone() -> None:
    assert scrub("nothing secret here", {"", "absent"}) == "nothing secret here"
    assert scrub("", {"x"}) == ""


def test_scrub_envelope_blanks_strings_everywhere_and_keeps_the_rest() -> None:
    envelope = ToolResultEnvelope(
        result={"tok-99": ["a tok-99 b", 7, None, True], "n": 1.5},
        content=[{"type": "text", "text": "tok-99"}],
        structured_content=("tok-99",),
        meta={"k": "tok-99"},
        session_id="s-tok-99",
        result_type="input_required",
    )
    assert scrub_envelope(envelope, {"tok-99"}) == ToolResultEnvelope(
        result={"***": ["a *** b", 7, None, True], "n": 1.5},
        content=[{"type": "text", "text": "***"}],
        structured_content=["***"],
        meta={"k": "***"},
        session_id="s-***",
        result_type="input_required",
    )
    clean = ToolResultEnvelope(result={"a": ["b", 7]}, content=[{"type": "text", "text": "c"}])
    assert scrub_envelope(clean, set()) == clean  # nothing to blank: unchanged


# --- exception_text --------------------------------------------------------------------------------
def test_exception_text_is_one_scrubbed_line_with_the_type() -> None:
    exc = ConnectionError("refused\n  Authorization: Bearer tok-5678\n  retry later")
    assert exception_text(exc, {"tok-5678"}) == "ConnectionError: refused Authorization: Bearer *** retry later"


def test_exception_text_without_a_message_is_the_type_name() -> None:
    assert exception_text(TimeoutError()) == "TimeoutError"


def test_exception_text_reports_the_first_leaf_of_nested_groups() -> None:
    leaf = OSError("socket closed for key-abcd")
    group = BaseExceptionGroup("outer", [ExceptionGroup("inner", [leaf, ValueError("second")])])
    assert exception_text(group, ["key-abcd"]) == "OSError: socket closed for ***"


# --- resolve_headers -------------------------------------------------------------------------------
def test_env_header_resolves_and_only_the_value_is_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLGEN_T_WHOLE", "whole-value-123")
    monkeypatch.setenv("TOOLGEN_T_TOKEN", "tok-abc-123")
    config = http({"X-Whole": "env:TOOLGEN_T_WHOLE", "Authorization": "Bearer env:TOOLGEN_T_TOKEN", "Accept": "a/b"})
    headers, found = resolve_headers(config)
    assert headers == {"X-Whole": "whole-value-123", "Authorization": "Bearer tok-abc-123", "Accept": "a/b"}
    assert found == {"whole-value-123", "tok-abc-123"}
    assert config.headers["Authorization"] == "Bearer env:TOOLGEN_T_TOKEN"  # the config keeps the text
    assert resolve_headers(http({"X-Token": "Bearer env:TOOLGEN_T_TOKEN "}))[0] == {"X-Token": "Bearer tok-abc-123"}


def test_literal_sensitive_headers_are_secrets_too() -> None:
    config = http(
        {
            "Authorization": "Bearer literal-token-1",
            "X-API-KEY": "k-12345",
            "Cookie": "session=abcdef",
            "X-Secret-Thing": "s3cr3t",
            "X-Password": "pw-9999",
            "X-Auth-Token": "tt-0000",
            "Accept": "application/json",  # not sensitive: stays out of the secrets
            "X-Key-Short": "abc",  # sensitive name but too short to blank safely
            "X-Key-Four": "k-12",  # four characters: long enough
        }
    )
    headers, found = resolve_headers(config)
    assert headers == dict(config.headers)
    assert found == {
        "Bearer literal-token-1",
        "literal-token-1",
        "k-12345",
        "session=abcdef",
        "s3cr3t",
        "pw-9999",
        "tt-0000",
        "k-12",
    }


@pytest.mark.parametrize("value", [None, ""])
def test_missing_or_empty_variable_names_the_variable_and_header(
    monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is None:
        monkeypatch.delenv("TOOLGEN_T_MISSING", raising=False)
    else:
        monkeypatch.setenv("TOOLGEN_T_MISSING", value)
    with pytest.raises(ToolServerError) as info:
        resolve_headers(http({"X-Token": "Bearer env:TOOLGEN_T_MISSING"}))
    assert str(info.value) == (
        "MCP server 'echo': header 'X-Token' needs environment variable TOOLGEN_T_MISSING, which is not set (or empty)"
    )


# --- end to end: a server that echoes the headers back ---------------------------------------------
def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def echo_url() -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen(
        python_command(str(SERVER), str(port), pythonpath=os.environ.get("PYTHONPATH")),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    with served(proc, port, "echo server") as url:
        yield url


def _texts(value: Any) -> Iterator[str]:
    """Every string inside a JSON-like value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _texts(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _texts(item)


def test_headers_echoed_by_a_server_never_leave_the_provider(
    echo_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    token, api_key = secrets.token_urlsafe(24), "literal-" + secrets.token_hex(8)
    monkeypatch.setenv(TOKEN_VAR, token)
    digest = hashlib.sha256(f"Bearer {token}".encode()).hexdigest()  # proves the token arrived
    config = http({"Authorization": f"Bearer env:{TOKEN_VAR}", "X-Api-Key": api_key}, echo_url)
    blanked = "authorization=Bearer *** x-api-key=***"
    seen: list[Any] = []
    with MCPToolProvider(config) as provider:
        # A failed listing: the server's error text comes back inside our error.
        with pytest.raises(ToolServerError) as info:
            provider.list_tools()
        assert str(info.value) == (
            f"MCP server 'echo': tools/list failed: MCPError: cannot list page 2 for {blanked} sha256={digest}"
        )
        # Before each call the provider prefetches the listing and logs why that failed.
        ok = provider.call_tool("echo_result", {})
        assert (ok.is_error, ok.result) == (False, {"echo": blanked, "sha256": digest})
        assert ok.content == [{"type": "text", "text": f"you sent {blanked} sha256={digest}"}]
        tool_error = provider.call_tool("echo_tool_error", {})
        assert (tool_error.is_error, tool_error.result) == (True, f"you sent {blanked} sha256={digest}")
        rpc_error = provider.call_tool("echo_error", {})
        assert rpc_error.is_error
        assert rpc_error.result == (
            f"MCP server 'echo': tools/call 'echo_error' failed: rejected {blanked} sha256={digest} (MCP error -32602)"
        )
        seen += [info.value.args, str(info.value), repr(provider)]
        seen += [envelope.to_dict() for envelope in (ok, tool_error, rpc_error)]

    # The runtime's own log lines. (The SDK's debug logging of raw wire messages is its own.)
    logged = [record.getMessage() for record in caplog.records if record.name.startswith("mas.")]
    assert any(f"cannot list page 2 for {blanked} sha256={digest}" in line for line in logged), logged
    for text in [*logged, *_texts(seen)]:
        assert token not in text
        assert api_key not in text
    assert os.environ[TOKEN_VAR] == token  # the provider read it, never rewrote it


def test_the_registry_refuses_to_start_without_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLGEN_T_UNSET", raising=False)
    infra = tmp_path / "infra.yaml"
    infra.write_text(
        "apiVersion: toolgen/v1\nkind: ToolServerRegistry\nmetadata:\n  name: t\nspec:\n  servers:\n"
        "    - name: web\n      protocol: mcp\n      transport: streamable-http\n"
        "      url: http://127.0.0.1:9/mcp\n      headers:\n        Authorization: Bearer env:TOOLGEN_T_UNSET\n"
    )
    with pytest.raises(ConfigError) as info:
        RuntimeRegistry.from_sources(infra=[infra])
    assert str(info.value) == (
        f"{infra}:7: spec.servers[0]: provider 'web' cannot list its tools: ToolServerError: MCP server 'web': "
        "header 'Authorization' needs environment variable TOOLGEN_T_UNSET, which is not set (or empty)"
    )
