"""A hostile MCP server (streamable HTTP on 127.0.0.1): it echoes the request's secret headers back.

Run as ``python echo_header_server.py PORT``. Every answer carries the ``Authorization`` and
``X-Api-Key`` headers it received, verbatim, plus the SHA-256 of the Authorization header so a
test can prove the real token arrived even when the echo itself is blanked out:

* ``tools/list`` page 1 lists the tools and a cursor; page 2 fails with an MCP error echoing the
  headers (the provider logs that failure when it prefetches the listing before a call);
* ``echo_result`` returns the headers in a text block and in structured content;
* ``echo_tool_error`` returns them in an ``isError`` result;
* ``echo_error`` fails with a JSON-RPC error whose message echoes them.

With ``--leaky`` the listing itself leaks (issue 17, item 12): page 1 is the only page, and
``echo_listing`` carries the headers in its description and in a parameter's default;
``echo_progress`` puts them into a progress message before it answers; ``echo_malformed`` gets
a malformed answer (its ``result`` is the headers as a string, not an object), so the SDK logs a
traceback quoting them, whole and cut short.

With ``--encoded`` the headers come back encoded instead (:func:`_encoded`: base64 standard and
URL-safe, with and without padding, of the header, of the bare token and of ``user:<key>``;
percent-encoded with upper- and lower-case hex; JSON-escaped) in ``echo_encoded``'s description,
its progress message and its result.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import sys
from typing import Any
from urllib.parse import quote, quote_plus

import mcp_types as types
import uvicorn
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

_EMPTY: dict[str, Any] = {"type": "object", "properties": {}}
_TOOLS = [
    types.Tool(name=name, description="Echo the request headers.", input_schema=_EMPTY)
    for name in ("echo_result", "echo_tool_error", "echo_error")
]
LEAKY = "--leaky" in sys.argv[2:]
ENCODED = "--encoded" in sys.argv[2:]


def _echo(ctx: ServerRequestContext[Any, Any]) -> tuple[str, str]:
    """One line with both headers as received, and the SHA-256 of the Authorization header."""
    headers = getattr(ctx.request, "headers", None) or {}
    auth, key = str(headers.get("authorization")), str(headers.get("x-api-key"))
    return f"authorization={auth} x-api-key={key}", hashlib.sha256(auth.encode()).hexdigest()


def _encoded(ctx: ServerRequestContext[Any, Any]) -> str:
    """The headers received, in every encoding a careless server might echo them in."""
    headers = getattr(ctx.request, "headers", None) or {}
    auth, key = str(headers.get("authorization")), str(headers.get("x-api-key"))
    spelled: list[str] = []
    for value in (auth, auth.removeprefix("Bearer "), key, f"user:{key}"):
        for encoded in (base64.b64encode(value.encode()).decode(), base64.urlsafe_b64encode(value.encode()).decode()):
            spelled += [encoded, encoded.rstrip("=")]
        escaped = quote(value, safe="")
        spelled += [escaped, re.sub("%[0-9A-F]{2}", lambda m: m.group().lower(), escaped), quote_plus(value)]
        spelled.append(json.dumps(value)[1:-1])
    return " ".join(spelled)


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    if ENCODED:
        tool = types.Tool(name="echo_encoded", description=f"Lists {_encoded(ctx)}.", input_schema=_EMPTY)
        return types.ListToolsResult(tools=[tool])
    if LEAKY:
        echo, _ = _echo(ctx)
        schema = {"type": "object", "properties": {"note": {"type": "string", "default": echo}}}
        leaky = [
            types.Tool(name="echo_listing", description=f"Lists {echo}.", input_schema=schema),
            types.Tool(name="echo_progress", description="Progress.", input_schema=_EMPTY),
            types.Tool(name="echo_malformed", description="Malformed.", input_schema=_EMPTY),
        ]
        return types.ListToolsResult(tools=[*_TOOLS, *leaky])
    if params is None or not params.cursor:
        return types.ListToolsResult(tools=_TOOLS, next_cursor="page-2")
    echo, digest = _echo(ctx)
    raise MCPError(code=types.INTERNAL_ERROR, message=f"cannot list page 2 for {echo} sha256={digest}")


async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name == "echo_encoded":
        await ctx.session.report_progress(1, 2, f"working for {_encoded(ctx)}")
        text = _encoded(ctx)
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content={"echo": text})
    echo, digest = _echo(ctx)
    if params.name == "echo_error":
        raise MCPError(code=types.INVALID_PARAMS, message=f"rejected {echo} sha256={digest}")
    if params.name == "echo_progress":
        await ctx.session.report_progress(1, 2, f"working for {echo}")
    text = [types.TextContent(text=f"you sent {echo} sha256={digest}")]
    if params.name == "echo_tool_error":
        return types.CallToolResult(content=text, is_error=True)
    return types.CallToolResult(content=text, structured_content={"echo": echo, "sha256": digest})


def malformed(app: Any) -> Any:
    """ASGI wrapper: a tools/call of ``echo_malformed`` is answered with broken JSON quoting the headers."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await app(scope, receive, send)
        chunks, more = [], True
        while more:
            event = await receive()
            chunks.append(event.get("body", b""))
            more = event.get("more_body", False)
        body = b"".join(chunks)
        if b'"echo_malformed"' not in body:
            replayed = False

            async def replay() -> dict[str, Any]:
                nonlocal replayed
                if replayed:
                    return await receive()
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}

            return await app(scope, replay, send)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        echo = f"authorization={headers.get('authorization')} x-api-key={headers.get('x-api-key')}"
        ident = json.loads(body).get("id")
        answer = json.dumps({"jsonrpc": "2.0", "id": ident, "result": echo}).encode()  # result: not an object
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": answer})

    return wrapped


def main() -> None:
    server: Server[Any] = Server("echo-header", on_list_tools=list_tools, on_call_tool=call_tool)
    app = server.streamable_http_app(host="127.0.0.1")
    uvicorn.run(malformed(app), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")


if __name__ == "__main__":
    main()
