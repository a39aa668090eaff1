"""Property tests for the runtime's boundary (issue 17): line splitting, depth and size limits, secret
blanking and pinning, over inputs nobody chose (strategies in tests/fuzz_strategies.py).

The normal suite runs ``TOOLGEN_FUZZ_EXAMPLES`` (default 80) derandomized examples per property;
``nox -s fuzz`` runs these with its larger count too.
"""

from __future__ import annotations

import copy
import json
import os
import secrets
from typing import Any

import pytest
from fuzz_strategies import chunked, json_values, line_bytes, listings, nested, with_secret
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.shared.message import SessionMessage

from mas.runtime import redact
from mas.runtime._stdio import REFUSED, LineBuffer, StdioLimits, StdioState, _Fault, _LineParser, json_depth
from mas.runtime.config import MCPServerConfig
from mas.runtime.lockfile import tool_hash
from mas.runtime.pinning import ServerPin

EXAMPLES = int(os.environ.get("TOOLGEN_FUZZ_EXAMPLES", "80"))
SETTINGS = settings(
    max_examples=EXAMPLES, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
SECRET = "fz-" + secrets.token_hex(12)


@SETTINGS
@given(st.data(), st.lists(line_bytes, max_size=8), line_bytes)
def test_lines_come_out_whole_and_in_order_however_the_reads_cut_them(
    data: st.DataObject, lines: list[bytes], tail: bytes
) -> None:
    stream = b"".join(line + b"\n" for line in lines) + tail
    buffer = LineBuffer(limit=1000)
    out: list[bytes] = []
    for chunk in data.draw(chunked(stream)):
        out += buffer.feed(chunk)
    assert out == lines
    assert buffer.partial == len(tail)


@SETTINGS
@given(st.data(), st.lists(st.integers(min_value=0, max_value=60), min_size=1, max_size=6))
def test_a_line_longer_than_the_limit_is_refused_and_no_other(data: st.DataObject, sizes: list[int]) -> None:
    limit = 30
    stream = b"".join(b"x" * size + b"\n" for size in sizes)
    buffer = LineBuffer(limit)
    try:
        for chunk in data.draw(chunked(stream)):
            buffer.feed(chunk)
    except _Fault as exc:
        assert any(size > limit for size in sizes)
        assert f"more than max_result_bytes={limit}" in str(exc)
    else:
        assert all(size <= limit for size in sizes)


@SETTINGS
@given(nested(max_depth=400), st.integers(min_value=8, max_value=300))
def test_an_answer_is_delivered_within_max_json_depth_and_refused_for_its_id_beyond(value: Any, limit: int) -> None:
    line = json.dumps({"jsonrpc": "2.0", "id": 7, "result": {"content": [], "structuredContent": {"v": value}}})
    parser = _LineParser(StdioState("fuzz"), StdioLimits(max_json_depth=limit))
    out = parser.parse(line.encode())
    depth = json_depth(json.loads(line))
    assert isinstance(out, SessionMessage)  # never an exception that would leave the call waiting
    message: Any = out.message
    if depth > limit:
        assert (message.id, message.error.code) == (7, REFUSED)
        assert f"nested {depth} levels deep, more than max_json_depth={limit}" in message.error.message
    else:
        assert message.id == 7
        assert json.dumps(message.result["structuredContent"]) == json.dumps({"v": value})  # NaN == NaN here


@SETTINGS
@given(with_secret(SECRET))
def test_no_string_of_a_blanked_value_holds_the_secret(value: Any) -> None:
    redact.remember([SECRET])
    before = copy.deepcopy(value)
    blanked = redact.blank_json(value)
    assert SECRET not in json.dumps(blanked, ensure_ascii=False)
    assert value == before  # the input is never changed in place
    assert json_depth(blanked) == json_depth(value)


@SETTINGS
@given(json_values)
def test_a_value_without_secrets_comes_back_equal(value: Any) -> None:
    redact.remember([SECRET])
    if SECRET in json.dumps(value, ensure_ascii=False):
        return
    out = redact.blank_json(value)
    assert json.dumps(out, sort_keys=True) == json.dumps(value, sort_keys=True)


@settings(SETTINGS, max_examples=max(10, EXAMPLES // 8))  # whole listings: hashing them is the slow part
@given(listings(), st.data())
def test_a_pin_flags_exactly_the_tools_whose_hash_changed(listing: dict[str, Any], data: st.DataObject) -> None:
    tools = listing["tools"]
    config = MCPServerConfig(name="s", transport="stdio", command="x", pin="refuse", lock="lock.json")
    pin = ServerPin(config, {t["name"]: t for t in tools}, {t["name"]: tool_hash(t) for t in tools})
    pin.check(tools)
    assert pin.mismatches == {}
    changed = data.draw(st.sets(st.sampled_from([t["name"] for t in tools])))
    live = [{**t, "description": f"{t.get('description')}!"} if t["name"] in changed else t for t in tools]
    live.append({"name": "\x00new", "inputSchema": {"type": "object"}})
    pin.check(live)
    assert set(pin.mismatches) == {*changed, "\x00new"}
    for name in changed:
        assert pin.mismatches[name].pointer == "/description"
        refused = pin.refusal(name)
        assert refused is not None and (refused.metadata or {}).get("reason") == "pinned"


@pytest.mark.parametrize("depth", [0, 1, 199, 200, 256, 257, 499])
def test_the_depth_limit_is_exact_at_its_edges(depth: int) -> None:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "structuredContent": {"v": value}}})
    out = _LineParser(StdioState("edge"), StdioLimits(max_json_depth=256)).parse(line.encode())
    message: Any = out.message if isinstance(out, SessionMessage) else None
    refused = getattr(message, "error", None) is not None
    assert refused == (depth + 3 > 256), (depth, message)


def test_a_message_over_the_limit_is_refused_with_its_size_as_soon_as_the_limit_is_passed() -> None:
    with pytest.raises(_Fault) as ended:
        LineBuffer(10).feed(b"ok\n" + b"x" * 11 + b"\n")
    assert str(ended.value) == (
        "the server sent a message of 11 bytes, more than max_result_bytes=10; the connection is replaced"
    )
    buffer = LineBuffer(10)
    assert buffer.feed(b"x" * 10) == [] and buffer.partial == 10  # at the limit: still waiting
    with pytest.raises(_Fault) as growing:
        buffer.feed(b"x")  # no newline yet: refused without waiting for the rest
    assert str(growing.value) == (
        "the server sent a message of 11 bytes and counting, more than max_result_bytes=10; the connection is replaced"
    )


def test_a_call_whose_listing_failed_is_refused_under_refuse_and_warned_under_warn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    refuse = MCPServerConfig(
        name="s", transport="stdio", command="x", pin="refuse", lock="dir/lock.json", namespace="ns"
    )
    refused = ServerPin(refuse, {}, {}).unverified("get", "tools/list timed out")
    assert refused is not None and refused.is_error
    assert refused.result == (
        "tool 'ns.get' (server 's') refused: cannot compare it with the lock lock.json (pin: refuse): "
        "tools/list timed out"
    )
    assert refused.metadata == {
        "reason": "pinned", "tool": "ns.get", "server": "s", "pointer": "", "lock": "lock.json",
        "error_kind": "unavailable",
    }  # fmt: skip
    warn = MCPServerConfig(name="s", transport="stdio", command="x", pin="warn", lock="lock.json")
    assert ServerPin(warn, {}, {}).unverified("get", "down") is None
    assert [r.getMessage() for r in caplog.records if r.name == "mas.runtime.pinning"] == [
        "tool 'get' (server 's'): cannot compare with the lock: down; calling anyway"
    ]
