"""A stdio server that breaks the wire rules cannot wedge, hang or flood the provider (issue 17, items 1-5).

Every test talks to ``tests/servers/raw_stdio_server.py``, a real process that writes its own
bytes: invalid UTF-8, answers nested hundreds of levels deep, answers over the size limit, an
answer that stops half way, a progress flood, a 10 MB error message. Every wait is bounded by a
call timeout far below pytest's, so a regression fails instead of hanging.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import stdio_config
from prefork import python_command

from mas.runtime import redact
from mas.runtime.config import MCPServerConfig
from mas.runtime.contracts.tool_contract import ToolResultEnvelope
from mas.runtime.mcp._stdio import json_depth
from mas.runtime.mcp.provider import MCPToolProvider

SERVER = Path(__file__).resolve().parents[1] / "servers" / "raw_stdio_server.py"


def raw(*args: str, **overrides: Any) -> MCPServerConfig:
    return stdio_config("raw", *args, script=SERVER, **{"connect_timeout_seconds": 10.0, **overrides})


def kind(envelope: ToolResultEnvelope) -> str | None:
    return (envelope.metadata or {}).get("error_kind")


def timed(provider: MCPToolProvider, tool: str, arguments: dict[str, Any], timeout: float = 5.0) -> tuple[Any, float]:
    start = time.monotonic()
    envelope = provider.call_tool(tool, arguments, timeout_seconds=timeout)
    return envelope, time.monotonic() - start


# --- item 1: one invalid UTF-8 byte -------------------------------------------------------------
def test_an_invalid_utf8_byte_costs_one_character_not_the_connection() -> None:
    with MCPToolProvider(raw()) as provider:
        latin1, took = timed(provider, "latin1", {})
        assert (latin1.is_error, latin1.result, took < 3) == (False, "caf\ufffd", True), latin1
        after, took = timed(provider, "echo", {"text": "still here"})
        assert (after.is_error, after.result, took < 3) == (False, {"text": "still here"}, True), after


def test_a_latin1_banner_is_one_warning_and_the_server_still_works(caplog: pytest.LogCaptureFixture) -> None:
    with MCPToolProvider(raw("--latin1-banner")) as provider:
        assert [t["name"] for t in provider.list_tools()][:1] == ["echo"]
        assert provider.call_tool("echo", {"text": "é"}, timeout_seconds=5).result == {"text": "é"}
    warned = [r.getMessage() for r in caplog.records if r.name == "mas.runtime.stdio"]
    assert warned == [
        "MCP server 'raw': stdout line 1 is not JSON-RPC, ignored: 'D\ufffdmarrage du serveur (Latin-1, not JSON-RPC)'"
    ]


def test_a_server_that_only_prints_a_banner_times_out_naming_the_banner() -> None:
    with MCPToolProvider(raw("--banner-only", connect_timeout_seconds=2.0)) as provider:
        with pytest.raises(Exception) as info:
            provider.list_tools()
    # One line per process started: the handshake probe's, then the initialize fallback's.
    assert re.fullmatch(
        r"MCP server 'raw': connect \+ initialize timed out after 2\.0 s; the server wrote [12] line\(s\) to stdout "
        r"that are not JSON-RPC, the first: 'D\ufffdmarrage du serveur \(Latin-1, not JSON-RPC\)'",
        str(info.value),
    ), str(info.value)


# --- item 2: deep answers -------------------------------------------------------------------------
def test_deep_answers_are_delivered_up_to_max_json_depth_and_refused_beyond_it_at_once() -> None:
    with MCPToolProvider(raw()) as provider:
        for depth in (150, 240):  # 240: past the SDK parser's own limit (about 200), within ours (256)
            envelope, took = timed(provider, "deep", {"depth": depth})
            assert not envelope.is_error, envelope.result
            assert json_depth(envelope.result) == depth + 1 and took < 3
        refused, took = timed(provider, "deep", {"depth": 300})
        assert (refused.is_error, kind(refused), took < 3) == (True, "protocol", True)
        assert refused.result == (
            "MCP server 'raw': tools/call 'deep' failed: the server's answer is nested 303 levels deep, "
            "more than max_json_depth=256 (MCP error -32700)"
        )
        # The refusal answered that one call; the connection goes on.
        assert provider.call_tool("echo", {"text": "ok"}, timeout_seconds=5).result == {"text": "ok"}


def test_max_json_depth_is_the_infra_setting() -> None:
    with MCPToolProvider(raw(max_json_depth=20)) as provider:
        assert not provider.call_tool("deep", {"depth": 10}, timeout_seconds=5).is_error
        refused = provider.call_tool("deep", {"depth": 30}, timeout_seconds=5)
        assert kind(refused) == "protocol" and "more than max_json_depth=20" in str(refused.result)


def test_json_depth_counts_nesting_without_recursion() -> None:
    assert [json_depth(v) for v in (1, "s", [], {}, [[]], {"a": [1, {"b": None}]})] == [0, 0, 1, 1, 2, 3]
    deep: Any = 0
    for _ in range(5000):  # far past the recursion limit
        deep = [deep]
    assert json_depth(deep) == 5000


# --- item 3: big answers, and an answer cut off by a timeout ------------------------------------------
def thread_cpu_seconds(native_ids: set[int]) -> float:
    """CPU time the given threads of this process have used (Linux ``/proc``, 10 ms ticks)."""
    ticks = 0
    for ident in native_ids:
        fields = Path(f"/proc/self/task/{ident}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="per-thread CPU time is read from Linux /proc")
def test_a_big_answer_is_read_in_linear_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # Secrets earlier tests of this worker resolved are remembered process-wide, and every result
    # is searched for each of their spellings (mas/runtime/redact.py): with 5 of them that search
    # alone took 0.56 s of the 32 MB answer. This test measures the reader: none are remembered here.
    for name, empty in (("_KNOWN", set()), ("_ORDERED", ()), ("_RAW", ())):
        monkeypatch.setattr(redact, name, empty)
    size = 32_000_000
    before = {t.native_id for t in threading.enumerate()}
    with MCPToolProvider(raw(max_result_bytes=40_000_000)) as provider:
        assert provider.call_tool("big", {"size": 1_000_000}, timeout_seconds=30).result == "x" * 1_000_000
        # The CPU time of the threads that read and decode the answer (the provider's own and this
        # one), not the process's: other threads an xdist worker holds, a busy machine and the
        # server writing 32 MB move the process's time and the wall clock, not the reader's work.
        ours = {t.native_id for t in threading.enumerate()} - before | {threading.get_native_id()}
        spent = []
        for _ in range(3):  # the best of three: a collection or a preemption lands on one, not all
            start = thread_cpu_seconds(ours)
            large = provider.call_tool("big", {"size": size}, timeout_seconds=60)
            spent.append(thread_cpu_seconds(ours) - start)
            assert not large.is_error and len(large.result) == size, large.metadata
            if spent[-1] < 0.5:
                break
    # A reader that joins its buffer and each chunk (as mcp 2.3.0's does) spends 3-8 s of CPU on
    # 32 MB; ours spends under 0.1 s.
    assert min(spent) < 0.5, spent


def test_an_answer_over_max_result_bytes_is_a_protocol_error_naming_the_size_and_the_connection_is_replaced() -> None:
    with MCPToolProvider(raw(max_result_bytes=1_000_000)) as provider:
        assert provider.call_tool("echo", {"text": "a"}, timeout_seconds=5).result == {"text": "a"}
        first = provider._keeper._conn
        refused, took = timed(provider, "big", {"size": 3_000_000}, timeout=20)
        assert (refused.is_error, kind(refused), took < 5) == (True, "protocol", True), refused
        text = str(refused.result)
        assert "failed: the server sent a message of " in text
        assert "more than max_result_bytes=1000000; the connection is replaced" in text
        after, took = timed(provider, "echo", {"text": "b"})
        assert (after.result, took < 5) == ({"text": "b"}, True)
        assert provider._keeper._conn is not first


def test_a_call_that_timed_out_mid_answer_does_not_delay_the_next_call() -> None:
    with MCPToolProvider(raw()) as provider:
        provider.call_tool("echo", {"text": "warm"}, timeout_seconds=5)
        first = provider._keeper._conn
        cut, took = timed(provider, "half_then_stall", {"size": 2_000_000}, timeout=1.0)
        assert (kind(cut), took < 3) == ("timeout", True), cut
        after, took = timed(provider, "echo", {"text": "next"})
        assert (after.is_error, after.result, took < 5) == (False, {"text": "next"}, True), after
        assert provider._keeper._conn is not first  # replaced: the old reader sat inside the cut answer


# --- item 4: a progress flood -----------------------------------------------------------------------
def test_a_progress_flood_with_a_slow_callback_still_returns_the_result() -> None:
    seen: list[float] = []

    async def slow(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)
        await asyncio.sleep(0.01)

    async def run() -> tuple[ToolResultEnvelope, float]:
        async with MCPToolProvider(raw(max_progress_lag_seconds=1.0)) as provider:
            # Connected first: the server's start-up (seconds on a loaded machine) is not what is timed.
            assert not (await provider.acall_tool("echo", {"text": "up"}, timeout_seconds=30)).is_error
            start = time.monotonic()
            envelope = await provider.acall_tool("flood", {"seconds": 2}, progress_callback=slow, timeout_seconds=30)
            return envelope, time.monotonic() - start

    envelope, took = asyncio.run(run())
    assert (envelope.is_error, str(envelope.result).startswith("done after ")) == (False, True), envelope
    steps = int(str(envelope.result).split()[2])
    # The call: 2 s of progress, then at most the 1 s lag (and slack for a loaded machine), never
    # the old 15 s drain and failure.
    assert took < 6, took
    assert 0 < len(seen) < steps and seen == sorted(seen)  # stale updates skipped, order kept
    assert seen[-1] >= steps - 200  # the newest updates were shown, not the first 100 only


# --- item 5: a huge error message -------------------------------------------------------------------
def test_a_10_mb_error_message_is_cut_to_max_error_chars() -> None:
    with MCPToolProvider(raw()) as provider:
        assert not provider.call_tool("echo", {"text": "up"}, timeout_seconds=30).is_error  # start-up is not timed
        envelope, took = timed(provider, "huge_error", {"size": 10_000_000}, timeout=20)
    text = str(envelope.result)
    assert (envelope.is_error, kind(envelope), took < 5) == (True, "tool_error", True)
    assert len(text) < 4200
    assert text.startswith("MCP server 'raw': tools/call 'huge_error' failed: EEEE")
    assert text.endswith("more characters cut; max_error_chars=4096)")
    with MCPToolProvider(raw(max_error_chars=100)) as provider:
        short = provider.call_tool("huge_error", {"size": 5000}, timeout_seconds=5)
    assert len(str(short.result)) < 180 and str(short.result).endswith("max_error_chars=100)")


# --- issue 31: what a server may ask during one call (defect 5; concurrent callers) -------------------
def asker(**overrides: Any) -> MCPServerConfig:
    return raw(client_capabilities=("elicitation",), **overrides)


def test_a_flood_of_questions_during_one_call_is_cut_at_max_client_requests() -> None:
    """Defect 5: the questions of one call all reached the caller
    (40,000 added ~550 MB). The first `max_client_requests` reach the caller; the rest are
    refused at once, and the server still finishes the call."""
    with MCPToolProvider(asker(max_client_requests=50)) as provider:
        envelope, asked, rounds = provider.call_tool("ask", {"count": 500}, timeout_seconds=30), 0, 0
        while envelope.result_type == "input_required" and rounds < 100:  # questions arrive as they come
            rounds += 1
            questions = envelope.result["inputRequests"]
            asked += len(questions)
            envelope = provider.call_tool(
                "ask", {"count": 500}, timeout_seconds=30, request_state=envelope.result["requestState"],
                input_responses={key: {"action": "decline"} for key in questions},
            )  # fmt: skip
    assert asked == 50
    assert envelope.structured_content == {"accepted": 0, "declined": 50, "refused": 450}, envelope.to_dict()


def test_max_client_requests_defaults_to_64_and_is_an_infra_key(tmp_path: Path) -> None:
    from mas.runtime.config import ConfigError
    from mas.runtime.infra import load_infra

    assert MCPServerConfig(name="s", transport="stdio", command="x").max_client_requests == 64
    entry = '{"name": "s", "protocol": "mcp", "transport": "stdio", "command": "x", "max_client_requests": %s}'
    path = tmp_path / "infra.yaml"
    path.write_text('{"kind": "ToolServerRegistry", "spec": {"servers": [%s]}}' % (entry % 5), encoding="utf-8")
    assert load_infra(path)[0].max_client_requests == 5
    path.write_text('{"kind": "ToolServerRegistry", "spec": {"servers": [%s]}}' % (entry % 0), encoding="utf-8")
    with pytest.raises(ConfigError, match="max_client_requests"):
        load_infra(path)


def test_a_question_asked_while_several_calls_are_in_flight_reaches_no_caller() -> None:
    """Also seen in issue 31: a server's question went to the first call in flight on its
    connection, so with concurrent callers (a shared code-mode server) one caller's `on_input`
    answered another caller's question. MCP does not say which call asks: with two in flight,
    the question is refused and neither caller sees it.

    Each call is counted in flight from before its request is written until its work ends, so
    the count is right whenever the server can ask (the server asks as soon as the second call
    arrives). The server sends no result before every question of the pair is answered: a
    result that overtook the other call's question would leave one call in flight, and that
    question would rightly go to it (what made this test flaky under load)."""
    with MCPToolProvider(asker()) as provider:
        assert provider.call_tool("echo", {"text": "up"}, timeout_seconds=10).result == {"text": "up"}

        async def two() -> list[Any]:
            # The server asks once both calls have reached it: both are in flight on this connection.
            calls = [provider.acall_tool("ask", {"count": 1, "together": 2}, timeout_seconds=20) for _ in range(2)]
            return list(await asyncio.wait_for(asyncio.gather(*calls), 30))

        envelopes = asyncio.run(two())
        assert [e.structured_content for e in envelopes] == [{"accepted": 0, "declined": 0, "refused": 1}] * 2
        # One call alone is asked as before.
        alone = provider.call_tool("ask", {"count": 1, "together": 3}, timeout_seconds=20)
        assert alone.result_type == "input_required" and len(alone.result["inputRequests"]) == 1


def test_mas_runtime_list_shows_a_servers_escapes_and_line_breaks_as_text(tmp_path: Path) -> None:
    """Issue 31, defect 11: names and titles went to the terminal raw, so a server's escapes
    (erase-line, OSC 52 clipboard, window title) and line breaks forged or hid rows. Each cell is
    now one visible line, escapes shown as `\\x1b`."""
    import json
    import subprocess

    entry = {"name": "raw", "protocol": "mcp", "transport": "stdio", "command": "python",
             "args": [str(SERVER), "--hostile-names"], "connect_timeout_seconds": 20}  # fmt: skip
    infra = tmp_path / "infra.yaml"
    infra.write_text(json.dumps({"kind": "ToolServerRegistry", "spec": {"servers": [entry]}}), encoding="utf-8")
    done = subprocess.run(
        python_command("-m", "mas.runtime", "list", "-q", "--infra", str(infra),
                       pythonpath=os.environ.get("PYTHONPATH")),
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not [c for c in done.stdout if not c.isprintable() and c != "\n"], repr(done.stdout)
    lines = done.stdout.splitlines()
    assert len(lines) == 1 + 9 + 2  # the header, the nine tools, the two hostile ones: one line each
    evil = next(line for line in lines if line.startswith("evil"))
    assert evil.startswith(r"evil\x1b[2K forged") and r"\x1b]52;c;cHduZWQ=\x07clip second row" in evil
    assert r"bell\x07" in done.stdout and r"\x1b]0;window title\x07\u202eesrever" in done.stdout
