"""A header secret a server echoes back reaches no exit of the process (issue 17, item 12).

``tests/servers/echo_header_server.py --leaky`` (HTTP on 127.0.0.1) puts the request's headers
into a tool description and a parameter default, a progress message and a malformed reply. The
runs below are real: ``toolgen generate`` writes the lock and the package, ``mas-runtime list
--json`` and ``mas-runtime call -v`` print; every byte written or printed is searched for the
token and for pieces of it. One module blanks them all: ``mas.runtime.redact``.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import free_port, served
from prefork import python_command

from mas.runtime import redact
from mas.runtime.config import MCPServerConfig
from mas.runtime.mcp.provider import MCPToolProvider

REPO = Path(__file__).resolve().parents[2]
SERVER = REPO / "tests" / "servers" / "echo_header_server.py"
TOKEN_VAR = "TOOLGEN_TEST_LEAKY_TOKEN"
TOKEN = "tok-" + secrets.token_hex(16)  # one per run: found anywhere, it leaked
API_KEY = "literal-" + secrets.token_hex(8)


@pytest.fixture(scope="module")
def leaky_url() -> Iterator[str]:
    yield from _serve("--leaky")


@pytest.fixture(scope="module")
def encoded_url() -> Iterator[str]:
    yield from _serve("--encoded")


def _serve(flag: str) -> Iterator[str]:

    port = free_port()
    proc = subprocess.Popen(
        python_command(str(SERVER), str(port), flag, pythonpath=os.environ.get("PYTHONPATH")),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    with served(proc, port, "echo server") as url:
        yield url


def _infra(folder: Path, url: str, key: str = API_KEY) -> Path:
    path = folder / "infra.yaml"
    quoted = "'" + key.replace("'", "''") + "'"
    path.write_text(
        "apiVersion: toolgen/v1\nkind: ToolServerRegistry\nspec:\n  servers:\n"
        f"    - name: leaky\n      protocol: mcp\n      transport: streamable-http\n      url: {url}\n"
        f"      headers:\n        Authorization: Bearer env:{TOKEN_VAR}\n        X-Api-Key: {quoted}\n"
        "      connect_timeout_seconds: 10\n"
    )
    return path


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), TOKEN_VAR: TOKEN}
    return subprocess.run(python_command(*args), cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def _leaks(text: str, secrets: tuple[str, ...] = (TOKEN, API_KEY)) -> list[str]:
    """The token or key, whole or any 8-character piece of either, found in ``text``."""
    found = []
    for secret in secrets:
        pieces = {secret[i : i + 8] for i in range(len(secret) - 7)}
        found += [piece for piece in pieces if piece in text]
    return found


def _decoded_leaks(text: str, secrets: tuple[str, ...]) -> list[str]:
    """:func:`_leaks` in ``text`` as it reads once decoded: every base64 run (standard or URL-safe,
    at each of the 4 alignments), percent-escapes and JSON escapes (twice: JSON inside JSON)."""
    import base64
    from urllib.parse import unquote_plus

    decoded = [unquote_plus(text), text.replace("\\\\", "\\").replace('\\"', '"').replace("\\/", "/")]
    decoded.append(decoded[1].replace("\\\\", "\\").replace('\\"', '"').replace("\\/", "/"))
    for run in re.findall(r"[A-Za-z0-9+/_-]{8,}", text):
        for start in range(4):
            piece = run[start:].translate(str.maketrans("-_", "+/"))
            piece = piece[: len(piece) - len(piece) % 4]
            decoded.append(base64.b64decode(piece).decode("latin-1"))
    return [leak for variant in decoded for leak in _leaks(variant, secrets)]


def _every_file(folder: Path) -> Iterator[tuple[Path, str]]:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            yield path, path.read_bytes().decode("utf-8", errors="replace")


def test_an_echoed_secret_reaches_neither_the_lock_nor_the_package_nor_list_json(
    leaky_url: str, tmp_path: Path
) -> None:
    _infra(tmp_path, leaky_url)
    generate = _run(
        tmp_path, "-m", "codegen", "generate", "--infra", "infra.yaml", "--out", "out", "--package", "pkg",
        "--lock", "toolgen.lock.json",
    )  # fmt: skip
    assert generate.returncode == 0, generate.stderr
    lock = (tmp_path / "toolgen.lock.json").read_text()
    assert "Lists authorization=Bearer *** x-api-key=***." in lock  # the echo arrived, blanked
    written = list(_every_file(tmp_path / "out"))
    assert any("authorization=Bearer ***" in text for _, text in written)  # the description, in a docstring
    for path, text in [(tmp_path / "toolgen.lock.json", lock), *written]:
        assert _leaks(text) == [], path
    assert _leaks(generate.stdout + generate.stderr) == []

    listing = _run(tmp_path, "-m", "mas.runtime", "list", "--infra", "infra.yaml", "--json", "-v")
    assert listing.returncode == 0, listing.stderr
    assert '"default": "authorization=Bearer *** x-api-key=***"' in listing.stdout
    assert _leaks(listing.stdout + listing.stderr) == []


def test_a_malformed_reply_quoting_the_secret_is_blanked_in_the_envelope_and_the_verbose_traceback(
    leaky_url: str, tmp_path: Path
) -> None:
    _infra(tmp_path, leaky_url)
    call = _run(tmp_path, "-m", "mas.runtime", "call", "echo_malformed", "--infra", "infra.yaml", "-v")
    assert call.returncode == 1, call.stderr
    assert "Traceback (most recent call last)" in call.stderr  # the SDK's traceback is shown under -v ...
    # ... quoting the reply, which pydantic cut short inside the token: the piece is blanked too.
    assert "input_value='authorization=Bearer tok...***'" in call.stderr
    assert '"error_kind": "protocol"' in call.stdout
    assert _leaks(call.stdout) == [] and _leaks(call.stderr) == []


def test_progress_messages_reach_the_callback_blanked(leaky_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_VAR, TOKEN)
    config = MCPServerConfig(
        name="leaky", transport="streamable-http", url=leaky_url, connect_timeout_seconds=10,
        headers={"Authorization": f"Bearer env:{TOKEN_VAR}", "X-Api-Key": API_KEY},
    )  # fmt: skip
    messages: list[str | None] = []
    with MCPToolProvider(config) as provider:
        envelope = provider.call_tool(
            "echo_progress", {}, timeout_seconds=10, progress_callback=lambda p, t, m: messages.append(m)
        )
    assert not envelope.is_error, envelope.result
    assert messages == ["working for authorization=Bearer *** x-api-key=***"]
    assert _leaks(str(envelope.to_dict())) == []


def test_an_encoded_echo_of_a_secret_is_blanked_in_listings_results_and_progress(
    encoded_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server echoes the token and a key holding ``"``, ``\\``, ``/``, ``+`` and ``=`` as base64,
    percent-encoded and JSON-escaped, into a description, a progress message and a result."""
    key = 'k"e\\y/+=' + secrets.token_hex(8)
    both = (TOKEN, key)
    _infra(tmp_path, encoded_url, key)
    listing = _run(tmp_path, "-m", "mas.runtime", "list", "--infra", "infra.yaml", "--json")
    assert listing.returncode == 0, listing.stderr
    # base64 of "Bearer <token>", blanked; its last characters also encode bits of the end of the text
    assert re.search(r'"description": "Lists QmVhcmVyIH\*\*\*[A-Za-z0-9]{0,2}=* ', listing.stdout), listing.stdout
    call = _run(tmp_path, "-m", "mas.runtime", "call", "echo_encoded", "--infra", "infra.yaml", "-v")
    assert call.returncode == 0, call.stderr
    assert re.search(r'"text": "QmVhcmVyIH\*\*\*[A-Za-z0-9]{0,2}=* ', call.stdout), call.stdout
    generate = _run(
        tmp_path, "-m", "codegen", "generate", "--infra", "infra.yaml", "--out", "out", "--package", "pkg",
        "--lock", "toolgen.lock.json",
    )  # fmt: skip
    assert generate.returncode == 0, generate.stderr
    written = [text for _, text in _every_file(tmp_path / "out")] + [(tmp_path / "toolgen.lock.json").read_text()]
    monkeypatch.setenv(TOKEN_VAR, TOKEN)
    config = MCPServerConfig(
        name="leaky", transport="streamable-http", url=encoded_url, connect_timeout_seconds=10,
        headers={"Authorization": f"Bearer env:{TOKEN_VAR}", "X-Api-Key": key},
    )  # fmt: skip
    messages: list[str | None] = []
    with MCPToolProvider(config) as provider:
        envelope = provider.call_tool(
            "echo_encoded", {}, timeout_seconds=10, progress_callback=lambda p, t, m: messages.append(m)
        )
    assert not envelope.is_error and len(messages) == 1 and str(messages[0]).startswith("working for QmVhcmVyIH***"), (
        messages
    )
    for text in [listing.stdout, listing.stderr, call.stdout, call.stderr, *written, str(messages), str(envelope)]:
        assert _leaks(text, both) == [] and _decoded_leaks(text, both) == [], text[:2000]


def test_the_leak_check_sees_every_encoding_the_server_sends() -> None:
    """The check above can fail: each unblanked spelling the server sends is found."""
    import base64
    import json
    from urllib.parse import quote

    key = 'k"e\\y/+=' + secrets.token_hex(8)
    for value in (f"Bearer {TOKEN}", TOKEN, key, f"user:{key}"):
        raw = value.encode()
        for spelled in (base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode().rstrip("=")):
            assert _decoded_leaks(f"x {spelled} y", (TOKEN, key)), spelled
        for spelled in (quote(value, safe=""), json.dumps(value)[1:-1], json.dumps(json.dumps(value))):
            assert _decoded_leaks(f"x {spelled} y", (TOKEN, key)) or _leaks(spelled, (TOKEN, key)), spelled


def test_mas_runtime_internal_error_is_one_blanked_line_and_its_verbose_traceback_is_blanked(
    leaky_url: str, tmp_path: Path
) -> None:
    """A bug (here: a local tool whose result cannot be printed, the error quoting the token the
    registry resolved for its MCP server) is one line, exit 2; ``-v`` prints the traceback blanked."""
    (tmp_path / "brokentool.py").write_text(
        "import os\n"
        "from mas.runtime.contracts.tool_contract import ToolContract\n\n"
        "class Unprintable:\n"
        "    def __str__(self):\n"
        f"        raise RuntimeError('cannot print the answer for ' + os.environ['{TOKEN_VAR}'])\n\n"
        "class Broken(ToolContract):\n"
        "    name = 'broken'\n"
        "    description = 'Returns what cannot be printed.'\n"
        "    parameters = {'type': 'object', 'properties': {}}\n\n"
        "    def execute(self, **kwargs):\n"
        "        return Unprintable()\n"
    )
    _infra(tmp_path, leaky_url)
    args = ("-m", "mas.runtime", "call", "broken", "--infra", "infra.yaml", "--local", "brokentool:Broken")
    plain = _run(tmp_path, *args)
    assert (plain.returncode, plain.stdout) == (2, ""), plain.stderr
    assert plain.stderr.splitlines()[-1:] == [
        "mas-runtime: internal error: RuntimeError: cannot print the answer for *** (-v shows it)"
    ]
    verbose = _run(tmp_path, *args, "-v")
    assert verbose.returncode == 2, verbose.stderr
    assert "Traceback (most recent call last)" in verbose.stderr
    assert "RuntimeError: cannot print the answer for ***\n" in verbose.stderr
    assert _leaks(plain.stderr + verbose.stdout + verbose.stderr) == []


# --- the blanking rule itself -------------------------------------------------------------------------
def test_a_remembered_secret_is_blanked_in_every_later_output_of_the_process() -> None:
    secret = "s-" + secrets.token_hex(10)
    assert redact.blank(f"x {secret} y") == f"x {secret} y"
    redact.remember([secret, ""])
    assert redact.blank(f"x {secret} y") == "x *** y"
    value: Any = {secret: [secret, 1, None, {"k": f"a{secret}b"}], "n": (secret,)}
    assert redact.blank_json(value) == {"***": ["***", 1, None, {"k": "a***b"}], "n": ["***"]}
    assert "" not in redact.known()


def test_pieces_of_a_secret_cut_short_with_dots_are_blanked() -> None:
    secret = "piece-" + secrets.token_hex(12)
    redact.remember([secret])
    # pydantic shows long values as head...tail: the cut may fall inside the secret.
    assert redact.blank(f"input_value='{{'a': ...{secret[-20:]}'}}") == "input_value='{'a': ...***'}"
    assert redact.blank(f"input_value='{secret[:15]}...xyz'") == "input_value='***...xyz'"
    assert redact.blank(f"short ...{secret[-4:]}") == f"short ...{secret[-4:]}"  # under MIN_PIECE: kept


def test_blank_json_walks_values_deeper_than_the_recursion_limit() -> None:
    secret = "deep-" + secrets.token_hex(8)
    redact.remember([secret])
    value: Any = secret
    for _ in range(3000):
        value = [value]
    out = redact.blank_json(value)
    for _ in range(3000):
        out = out[0]
    assert out == "***"


def test_the_cli_log_formatter_blanks_whole_records_tracebacks_included() -> None:
    import logging

    secret = "log-" + secrets.token_hex(8)
    redact.remember([secret])
    formatter = redact.BlankingFormatter(logging.Formatter("%(message)s"))
    try:
        raise ValueError(f"bad reply {secret}")
    except ValueError:
        record = logging.LogRecord("mcp", logging.ERROR, __file__, 1, "parse failed: %s", (secret,), sys.exc_info())
    text = formatter.format(record)
    assert "Traceback" in text and secret not in text and text.count("***") == 2


def test_the_clis_print_through_streams_that_blank_secrets(capsys: pytest.CaptureFixture[str]) -> None:
    secret = "out-" + secrets.token_hex(8)
    redact.remember([secret])
    with redact.blanked_output():
        print(f"stdout {secret}")
        print(f"stderr {secret}", file=sys.stderr)
        sys.stdout.writelines([f"a{secret}\n"])
        assert sys.stdout.isatty() is False  # everything else is the real stream's
    print(f"after {secret}")  # restored: the wrapper lives only as long as the command
    out, err = capsys.readouterr()
    assert out == f"stdout ***\na***\nafter {secret}\n" and err == "stderr ***\n"


def test_a_remembered_secret_inside_another_is_blanked_whole_longest_first() -> None:
    token = "tk-" + secrets.token_hex(8)
    redact.remember([token, f"Bearer {token}"])  # "Bearer ..." sorts before "tk-..." by text, not by length
    assert redact.blank(f"auth: Bearer {token}.") == "auth: ***."


def test_the_shortest_blanked_piece_is_min_piece_characters() -> None:
    secret = "mp-" + secrets.token_hex(10)
    redact.remember([secret])
    size = redact.MIN_PIECE
    assert redact.blank(f"a ...{secret[-size:]}") == "a ...***"
    assert redact.blank(f"{secret[:size]}... b") == "***... b"
    assert redact.blank(f"a ...{secret[-(size - 1) :]}") == f"a ...{secret[-(size - 1) :]}"
