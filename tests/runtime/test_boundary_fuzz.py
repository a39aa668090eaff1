"""Property tests for the runtime's boundary (issue 17): line splitting, depth and size limits, secret
blanking and pinning, over inputs nobody chose (strategies in tests/fuzz_strategies.py).

The normal suite runs ``TOOLGEN_FUZZ_EXAMPLES`` (default 80) derandomized examples per property;
``nox -s fuzz`` runs these with its larger count too.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import gzip
import json
import os
import re
import secrets
import zlib
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote, quote_plus, unquote_plus

import httpx2
import mcp_types
import pytest
from fuzz_strategies import chunked, json_values, line_bytes, listings, nested, with_secret
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp.shared.message import SessionMessage
from tiers import examples

from mas.runtime import redact
from mas.runtime.config import ConfigError, MCPServerConfig
from mas.runtime.contracts.tool_contract import build_tool_entry
from mas.runtime.lockfile import tool_hash
from mas.runtime.mcp._http_limits import AnswerRefused, HttpLimits, HttpState, limit_responses
from mas.runtime.mcp._input import InputBridge
from mas.runtime.mcp._stdio import REFUSED, LineBuffer, StdioLimits, StdioState, _Fault, _LineParser, json_depth
from mas.runtime.pinning import ServerPin
from mas.runtime.registry import RuntimeRegistry
from mas.runtime.routing import Named, routed_names

EXAMPLES = int(os.environ.get("TOOLGEN_FUZZ_EXAMPLES", examples(20, 80)))  # 20 in the fast tier
# The suite's 120 s per test is a hang guard sized for 80 examples: `nox -s fuzz` runs 3000, and the
# routing property alone took 114 s of them on a loaded machine (the others failed by timeout).
pytestmark = pytest.mark.timeout(max(120, EXAMPLES))
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
@example(float("nan"))  # nox -s fuzz at 3000: NaN != NaN failed the in-place check (the oracle's bug)
def test_no_string_of_a_blanked_value_holds_the_secret(value: Any) -> None:
    redact.remember([SECRET])
    before = copy.deepcopy(value)
    blanked = redact.blank_json(value)
    assert SECRET not in json.dumps(blanked, ensure_ascii=False)
    assert json.dumps(value) == json.dumps(before)  # the input is never changed in place (NaN == NaN here)
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
    refuse = MCPServerConfig(name="s", transport="stdio", command="x", pin="refuse", lock="dir/lock.json", prefix="ns")
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


# --- over HTTP (mas/runtime/mcp/_http_limits.py): the same limits, on JSON bodies and SSE events ------------
class _Body(httpx2.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


def _pieces(chunks: list[bytes], content_type: str, limits: HttpLimits, encoding: str | None = None) -> list[bytes]:
    """What the response hook's stream hands the SDK, piece by piece (raises AnswerRefused)."""
    request = httpx2.Request("POST", "http://127.0.0.1/mcp", json={"jsonrpc": "2.0", "id": 7, "method": "tools/call"})
    headers = {"content-type": content_type, **({"content-encoding": encoding} if encoding else {})}
    response = httpx2.Response(200, headers=headers, stream=_Body(chunks), request=request)

    async def run() -> list[bytes]:
        await limit_responses(HttpState("fuzz"), limits)(response)
        if encoding in ("gzip", "deflate"):  # decoded by the hook, never again by httpx2
            assert "content-encoding" not in response.headers
        return [piece async for piece in response.aiter_raw()]

    return asyncio.run(run())


def _read(chunks: list[bytes], content_type: str, limits: HttpLimits, encoding: str | None = None) -> bytes:
    return b"".join(_pieces(chunks, content_type, limits, encoding))


@SETTINGS
@given(st.data(), st.lists(line_bytes, max_size=6), st.sampled_from([b"\n", b"\r\n", b"\r"]))
def test_sse_events_come_out_whole_and_in_order_however_the_reads_cut_them(
    data: st.DataObject, payloads: list[bytes], newline: bytes
) -> None:
    events = [
        b"event: message" + newline + b"data: " + payload.replace(b"\r", b"") + newline + newline
        for payload in payloads
    ]
    stream = b"".join(events)
    out = _pieces(data.draw(chunked(stream)), "text/event-stream", HttpLimits(max_message_bytes=10_000))
    # One piece per event, each handed on as soon as its blank line arrived: none waits for the next.
    assert out == [event.replace(b"\r\n", b"\n").replace(b"\r", b"\n") for event in events]


@SETTINGS
@given(st.data(), st.lists(st.integers(min_value=0, max_value=60), min_size=1, max_size=5), st.booleans())
def test_an_http_message_longer_than_the_limit_is_refused_and_no_other(
    data: st.DataObject, sizes: list[int], sse: bool
) -> None:
    limit = 80
    if sse:
        stream, kind = b"".join(b"data: " + b"x" * size + b"\n\n" for size in sizes), "text/event-stream"
        too_big = any(size + 7 > limit for size in sizes)  # "data: " and the first newline count
    else:
        stream, kind = b"x" * sum(sizes), "application/json"
        too_big = sum(sizes) > limit
    try:
        _read(data.draw(chunked(stream)), kind, HttpLimits(max_message_bytes=limit))
    except AnswerRefused as exc:
        assert too_big and f"more than max_result_bytes={limit}; the connection is replaced" in str(exc)
    else:
        assert not too_big


@SETTINGS
@given(nested(max_depth=400), st.integers(min_value=8, max_value=300), st.booleans())
def test_an_http_answer_is_handed_on_within_max_json_depth_and_refused_for_its_id_beyond(
    value: Any, limit: int, sse: bool
) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "result": {"content": [], "structuredContent": {"v": value}}})
    depth = json_depth(json.loads(body))
    raw = (b"event: message\ndata: " + body.encode() + b"\n\n") if sse else body.encode()
    out = _read([raw], "text/event-stream" if sse else "application/json", HttpLimits(max_json_depth=limit))
    if depth <= limit:
        assert out == raw
        return
    text = out.removeprefix(b"event: message\ndata: ").removesuffix(b"\n\n") if sse else out
    answer = json.loads(text)
    assert (answer["id"], answer["error"]["code"]) == (7, REFUSED)
    assert f"nested {depth} levels deep, more than max_json_depth={limit}" in answer["error"]["message"]


def test_a_gzip_bomb_is_stopped_once_inflated_past_the_limit() -> None:
    bomb = gzip.compress(b"x" * 50_000_000)  # 50 MB in about 50 KB
    with pytest.raises(AnswerRefused, match=r"more than max_result_bytes=1000000; the connection is replaced"):
        _read(
            [bomb[i : i + 4096] for i in range(0, len(bomb), 4096)], "application/json", HttpLimits(1_000_000), "gzip"
        )
    small = json.dumps({"jsonrpc": "2.0", "id": 7, "result": {}}).encode()
    assert _read([gzip.compress(small)], "application/json", HttpLimits(), "gzip") == small
    assert _read([zlib.compress(small)], "application/json", HttpLimits(), "deflate") == small
    with pytest.raises(AnswerRefused, match="content-encoding 'br', which was not offered"):
        _read([small], "application/json", HttpLimits(), "br")


# --- encoded secrets (mas/runtime/redact.py, encodings) --------------------------------------------------
ENCODED_SECRET = 'k"e\\y/+=' + secrets.token_hex(12)
#: No hexadecimal digit: a piece of the secret found after decoding can only come from the secret.
_NOT_HEX = "ghijklmnopqrstuvwxyzGHIJKLMNOPQRSTUVWXYZ :/@\"\\'é%+="
_ENCODERS = {
    "base64": lambda text: base64.b64encode(text.encode()).decode(),
    "base64-unpadded": lambda text: base64.b64encode(text.encode()).decode().rstrip("="),
    "base64url": lambda text: base64.urlsafe_b64encode(text.encode()).decode(),
    "percent": lambda text: quote(text, safe=""),
    "percent-lower": lambda text: re.sub("%[0-9A-F]{2}", lambda m: m.group().lower(), quote(text, safe="")),
    "form": quote_plus,
    "json": lambda text: json.dumps(text)[1:-1],
    "json-unicode": lambda text: json.dumps(text, ensure_ascii=False)[1:-1],
}


def _revealed(text: str, secret: str) -> list[str]:
    """8-character pieces of ``secret`` readable in ``text`` once decoded in any of these ways."""
    readings = [text, unquote_plus(text), text.replace('\\"', '"').replace("\\\\", "\\")]
    for run in re.findall(r"[A-Za-z0-9+/_-]{4,}", text):
        for start in range(4):
            piece = run[start:].translate(str.maketrans("-_", "+/"))
            readings.append(base64.b64decode(piece[: len(piece) - len(piece) % 4]).decode("latin-1"))
    pieces = {secret[i : i + 8] for i in range(len(secret) - 7)}
    return sorted({piece for reading in readings for piece in pieces if piece in reading})


@SETTINGS
@given(st.text(_NOT_HEX, max_size=12), st.text(_NOT_HEX, max_size=12), st.sampled_from(sorted(_ENCODERS)))
def test_a_secret_encoded_inside_any_text_is_blanked(prefix: str, suffix: str, encoding: str) -> None:
    redact.remember([ENCODED_SECRET])
    text = _ENCODERS[encoding](prefix + ENCODED_SECRET + suffix)
    assert _revealed(text, ENCODED_SECRET)  # the check can fail: unblanked, the secret is readable
    blanked = redact.blank(text)
    assert redact.MASK in blanked and _revealed(blanked, ENCODED_SECRET) == [], (text, blanked)


# --- routing: no server receives a call addressed to another (issue 31, defect 1) ---------------
class _Lister:
    """A provider that lists the names it was given and answers with its own name and the tool's."""

    def __init__(self, name: str, tools: list[str]) -> None:
        self.name, self.tools = name, tools

    def list_tools(self) -> list[dict[str, Any]]:
        return [build_tool_entry(t, "", {"type": "object"}) for t in self.tools]

    def call_tool(self, tool_name: str, arguments: Any, **options: Any) -> dict[str, Any]:
        return {"status": "success", "result": [self.name, tool_name], "is_error": False}


_PIECES = st.text("ab.", min_size=0, max_size=4)  # few letters and many dots: addresses collide often
_PROVIDERS = st.dictionaries(
    st.text("ab.", min_size=1, max_size=3),
    st.tuples(st.none() | st.text("ab", min_size=1, max_size=2), st.lists(_PIECES, max_size=5, unique=True)),
    min_size=1,
    max_size=4,
)


@SETTINGS
@given(_PROVIDERS, st.lists(_PIECES, max_size=6))
def test_a_name_addressed_to_a_provider_reaches_that_provider_or_none(
    providers: dict[str, tuple[str | None, list[str]]], calls: list[str]
) -> None:
    try:
        registry = RuntimeRegistry(
            {p: _Lister(p, tools) for p, (_, tools) in providers.items()},
            prefixes={p: prefix for p, (prefix, _) in providers.items() if prefix},
        )
    except ConfigError as exc:  # only names that would give one address two providers are refused
        assert "clash" in str(exc)
        quals = [(p, q) for p, (ns, _) in providers.items() for q in {p, ns} if q]
        assert any(p1 != p2 and q1 == q2 for p1, q1 in quals for p2, q2 in quals) or any(
            q2.startswith(q1 + ".") for _, q1 in quals for _, q2 in quals
        ), providers
        return

    # The oracle, independent of routing.py: which provider (and tool) a name is addressed to.
    def address(name: str) -> tuple[str, str] | None:
        found = {
            (p, name[len(q) + 1 :])
            for p, (ns, _) in providers.items()
            for q in {p, ns}
            if q and name.startswith(q + ".")
        }
        assert len(found) <= 1, (name, found)
        return next(iter(found), None)

    names = [e["name"] for e in registry.list_tools()]
    assert len(names) == len(set(names)) == sum(len(tools) for _, tools in providers.values())
    every = {*names, *calls, *(t for _, tools in providers.values() for t in tools)}
    every |= {f"{q}.{t}" for p, (ns, _) in providers.items() for q in {p, ns} if q for t in every}
    for name in sorted(every):
        envelope = registry.call_tool(name, {})
        target = address(name)
        if envelope.is_error:
            assert envelope.error_kind == "unknown_tool"
            assert name not in names and (target is None or target[1] not in providers[target[0]][1]), name
        elif target is not None:
            assert envelope.result == list(target), (name, envelope.result)  # its addressee, its tool
        else:  # a bare name: listed by exactly one provider, as its own name
            assert name in names and envelope.result[1] == name, (name, envelope.result)
    for provider, (_, tools) in providers.items():  # every tool by its qualified name
        for tool in tools:
            assert registry.call_tool(f"{provider}.{tool}", {}).result == [provider, tool]
    # A package generated from some of these providers sends names that reach, among all of them,
    # the tool they were generated for or nobody (ambiguous, unknown), never another provider's.
    some = list(providers)[: len(providers) // 2 + 1]
    keys = [Named(p, t, providers[p][0] or None) for p in some for t in providers[p][1]]
    wire, _ = routed_names(keys, [(p, providers[p][0] or None) for p in some], package=True)
    for key, name in zip(keys, wire, strict=True):
        envelope = registry.call_tool(name, {})
        assert envelope.is_error or envelope.result == [key.provider, key.tool], (key, name, envelope.result)


# --- request floods: what a server may ask during one call (issue 31, defect 5) -----------------------
@SETTINGS
@given(st.integers(1, 40), st.integers(0, 120), st.integers(1, 3))
def test_a_call_is_asked_at_most_max_client_requests_questions_and_only_when_alone(
    limit: int, count: int, flying: int
) -> None:
    """However many requests a server sends, a call holds at most ``limit`` questions, the rest are
    refused at once; with several calls in flight on the connection, none is asked at all."""
    request = mcp_types.ElicitRequest(
        params=mcp_types.ElicitRequestFormParams(message="m", requested_schema={"type": "object", "properties": {}})
    )

    async def scenario() -> None:
        bridge = InputBridge("s", ["elicitation"], limit)
        conn, loop = object(), asyncio.get_running_loop()
        calls = [bridge.begin(f"call {i}") for i in range(flying)]
        for call in calls:
            call.conn, call.work = conn, loop.create_future()
        asked = [asyncio.ensure_future(bridge.ask(conn, "elicitation/create", request)) for _ in range(count)]
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        refused = [task for task in asked if task.done()]
        assert all(isinstance(task.result(), mcp_types.ErrorData) for task in refused)
        held = sum(len(call.asks) for call in calls)
        assert held == (0 if flying > 1 else min(count, limit)) and len(refused) == count - held
        bridge.close()  # the held ones are refused now: nothing waits for ever
        await asyncio.gather(*asked)

    asyncio.run(scenario())


# --- code mode: what crosses the sandbox is JSON, to a bounded depth (issue 31, item 10) -------------


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


@SETTINGS
@given(nested(max_depth=300))
def test_code_mode_passes_json_within_max_nesting_unchanged_and_refuses_deeper(value: Any) -> None:
    from mas.runtime.code_mode.core import _RECURSIVE, MAX_NESTING, _json_data, _NotJson

    def plain(v: Any) -> bool:  # NaN, infinities and the recursion marker are refused at any depth
        if isinstance(v, float):
            return v == v and v not in (float("inf"), float("-inf"))
        if isinstance(v, list):
            return all(plain(x) for x in v)
        if isinstance(v, dict):
            return all(plain(x) and not (isinstance(x, str) and x in _RECURSIVE) for x in v.values())
        return True

    try:
        out = _json_data(value, "the value")
    except _NotJson:
        assert (
            _depth(value) > MAX_NESTING
            or not plain(value)
            or "[...]" in json.dumps(value)
            or "{...}" in (json.dumps(value))
        )
    else:
        assert _depth(value) <= MAX_NESTING and out == value


@SETTINGS
@given(st.text(max_size=5_000))
def test_a_code_mode_search_takes_any_query(query: str) -> None:
    from mas.runtime.code_mode.core import _Index, _Tool

    tools = [
        _Tool("m", f"f{i}", f"f{i}", f"title {i}", "a description of weather and cities", "", ()) for i in range(50)
    ]
    found = _Index(tools).search(query, 5)
    assert len(found) <= 5
