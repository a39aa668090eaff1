"""A hostile MCP server over streamable HTTP (127.0.0.1) that writes its own bytes.

Run as ``python raw_http_server.py PORT``. No SDK on this side: a plain ASGI app under uvicorn
answers ``initialize`` (``server/discover`` is refused, so a client falls back to it),
``tools/list`` and ``tools/call``. Every tool answers as ``application/json``, or with
``"sse": true`` among its arguments as ``text/event-stream`` (a progress event first, then the
answer cut into pieces of 64 KiB, as a slow network delivers it):

* ``echo``: a correct answer, ``{"text": ...}`` echoed back;
* ``big``: a text block of ``size`` bytes;
* ``deep``: structured content nested ``depth`` levels deep;
* ``bomb``: ``big``'s answer gzip-compressed (``content-encoding: gzip``): a few KiB on the wire.

A ``GET`` of the protected resource metadata (``/.well-known/oauth-protected-resource...``, what
an OAuth client reads first) answers a gzip bomb: 256 MiB of JSON in about 250 KiB.
"""

from __future__ import annotations

import gzip
import json
import sys
import zlib
from typing import Any

import uvicorn

_ANY: dict[str, Any] = {"type": "object"}
TOOLS = [
    {"name": name, "description": f"Misbehaves: {name}.", "inputSchema": _ANY}
    for name in ("echo", "big", "deep", "bomb")
]
_PIECE = 64 * 1024


def text_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


def answer(ident: Any, method: str, params: dict[str, Any]) -> bytes:
    """The JSON-RPC answer to one request, as bytes."""
    if method == "initialize":
        info = {"name": "raw-http", "version": "1"}
        result = {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": info}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        name, args = params.get("name"), params.get("arguments") or {}
        if name == "echo":
            result = {**text_result(str(args.get("text", ""))), "structuredContent": {"text": args.get("text")}}
        elif name in ("big", "bomb"):
            result = text_result("x" * int(args["size"]))
        elif name == "deep":
            depth = int(args["depth"])
            nested = "[" * depth + "1" + "]" * depth
            body = f'{{"content":[],"structuredContent":{{"v":{nested}}},"isError":false}}'
            return f'{{"jsonrpc":"2.0","id":{json.dumps(ident)},"result":{body}}}'.encode()
        else:
            error = {"code": -32602, "message": f"Unknown tool: {name}"}
            return json.dumps({"jsonrpc": "2.0", "id": ident, "error": error}).encode()
    else:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        return json.dumps({"jsonrpc": "2.0", "id": ident, "error": error}).encode()
    return json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}, separators=(",", ":")).encode()


def metadata_bomb(inflated: int = 256 * 1024 * 1024) -> list[bytes]:
    """Protected resource metadata padded to ``inflated`` bytes, gzip-compressed piece by piece."""
    packer = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: the gzip container
    head = b'{"resource":"http://127.0.0.1/mcp","authorization_servers":["http://127.0.0.1/"],"pad":"'
    pieces, block = [packer.compress(head)], b"a" * (1024 * 1024)
    pieces += [packer.compress(block) for _ in range(inflated // len(block))]
    return [*pieces, packer.compress(b'"}'), packer.flush()]


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    if scope["method"] == "GET" and scope["path"].startswith("/.well-known/oauth-protected-resource"):
        head = [(b"content-type", b"application/json"), (b"content-encoding", b"gzip")]
        await send({"type": "http.response.start", "status": 200, "headers": head})
        for piece in metadata_bomb():
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        return
    if scope["method"] != "POST":  # no GET stream, nothing to delete
        await send({"type": "http.response.start", "status": 405, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    chunks, more = [], True
    while more:
        event = await receive()
        chunks.append(event.get("body", b""))
        more = event.get("more_body", False)
    message = json.loads(b"".join(chunks))
    ident, method = message.get("id"), message.get("method", "")
    if ident is None:  # a notification
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    params = message.get("params") or {}
    args = params.get("arguments") or {}
    body = answer(ident, method, params)
    if method == "tools/call" and args.get("sse"):
        token = (params.get("_meta") or {}).get("progressToken")
        head = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
        await send({"type": "http.response.start", "status": 200, "headers": head})
        if token is not None:
            note = {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": token, "progress": 1},
            }
            await send(
                {
                    "type": "http.response.body",
                    "body": b"event: message\r\ndata: " + json.dumps(note).encode() + b"\r\n\r\n",
                    "more_body": True,
                }
            )
        stream = b"event: message\ndata: " + body + b"\n\n"
        for start in range(0, len(stream), _PIECE):
            await send({"type": "http.response.body", "body": stream[start : start + _PIECE], "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        return
    head = [(b"content-type", b"application/json")]
    if method == "tools/call" and params.get("name") == "bomb":
        body = gzip.compress(body)
        head.append((b"content-encoding", b"gzip"))
    await send({"type": "http.response.start", "status": 200, "headers": head})
    for start in range(0, len(body), _PIECE):
        await send({"type": "http.response.body", "body": body[start : start + _PIECE], "more_body": True})
    await send({"type": "http.response.body", "body": b""})


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
