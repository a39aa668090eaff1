"""A hostile MCP server on stdio that writes its own bytes, so it can break the rules exactly.

No SDK on this side: the handshake is answered by hand (``server/discover`` is refused, so the
client falls back to ``initialize``), then each tool misbehaves in one way:

* ``echo``: a correct answer, ``{"text": ...}`` echoed back;
* ``latin1``: an answer whose text holds the raw byte 0xE9 (``caf\\xe9``, not UTF-8);
* ``deep``: structured content nested ``depth`` levels deep;
* ``big``: a text block of ``size`` bytes (written in one go);
* ``half_then_stall``: ``size`` bytes of an answer, then nothing for a minute, then the rest;
* ``flood``: progress notifications for ``seconds`` (one per millisecond), then a result;
* ``huge_error``: a JSON-RPC error whose message is ``size`` characters long;
* ``never``: never answers.
* ``ask``: once ``together`` calls of ``ask`` have arrived (default 1; at most 15 s), sends the
  client ``count`` ``elicitation/create`` requests at once (the 2025-11-25 way, during the
  call), waits up to 30 s for all their answers and for ``together`` calls to have had theirs
  (so every question of calls asked together goes out before any of them ends, however the
  threads are scheduled), then answers ``{"accepted": A, "declined": D, "refused": R}``
  (R: error responses).

``--hostile-names`` also lists tools whose name and title carry terminal escapes (erase-line,
carriage return, an OSC 52 clipboard write, a window title) and line breaks.

``--latin1-banner`` prints a Latin-1 line (not UTF-8, not JSON-RPC) before anything else;
``--banner-only`` prints it and then never speaks JSON-RPC. Calls run in threads, one write
lock keeps lines whole.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

OUT = sys.stdout.buffer
LOCK = threading.Lock()
_ANY: dict[str, Any] = {"type": "object"}
TOOLS = [
    {"name": name, "description": f"Misbehaves: {name}.", "inputSchema": _ANY}
    for name in ("echo", "latin1", "deep", "big", "half_then_stall", "flood", "huge_error", "never", "ask")
]


#: Answers to this server's own requests, by request id (``ask``).
ANSWERS: dict[str, dict[str, Any]] = {}
ANSWERED = threading.Condition()
#: The ``ask`` calls received so far, and those whose questions are all answered (``together``).
ARRIVED: list[Any] = []
ANSWERED_CALLS: list[Any] = []


HOSTILE = [
    {"name": "evil\x1b[2K\rforged", "title": "\x1b]52;c;cHduZWQ=\x07clip\nsecond row", "inputSchema": _ANY},
    {"name": "bell\x07", "title": "\x1b]0;window title\x07\u202eesrever", "inputSchema": _ANY},
]


def send_bytes(data: bytes) -> None:
    with LOCK:
        OUT.write(data)
        OUT.flush()


def send(message: dict[str, Any]) -> None:
    send_bytes(json.dumps(message, separators=(",", ":")).encode() + b"\n")


def result(ident: Any, value: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "id": ident, "result": value})


def text_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


def call(ident: Any, params: dict[str, Any]) -> None:
    name, args = params.get("name"), params.get("arguments") or {}
    if name == "echo":
        result(ident, {**text_result(str(args.get("text", ""))), "structuredContent": {"text": args.get("text")}})
    elif name == "latin1":
        head = json.dumps({"jsonrpc": "2.0", "id": ident}, separators=(",", ":"))[:-1]
        send_bytes(head.encode() + b',"result":{"content":[{"type":"text","text":"caf\xe9"}],"isError":false}}\n')
    elif name == "deep":
        depth = int(args["depth"])
        nested = "[" * depth + "1" + "]" * depth
        body = f'{{"content":[],"structuredContent":{{"v":{nested}}},"isError":false}}'
        send_bytes(f'{{"jsonrpc":"2.0","id":{json.dumps(ident)},"result":{body}}}\n'.encode())
    elif name == "big":
        result(ident, text_result("x" * int(args["size"])))
    elif name == "half_then_stall":
        line = json.dumps({"jsonrpc": "2.0", "id": ident, "result": text_result("y" * int(args["size"]))}).encode()
        send_bytes(line[: len(line) // 2])
        time.sleep(60)
        send_bytes(line[len(line) // 2 :] + b"\n")
    elif name == "flood":
        token = (params.get("_meta") or {}).get("progressToken")
        end, n = time.monotonic() + float(args["seconds"]), 0
        while time.monotonic() < end:
            n += 1
            if token is not None:
                message = {"progressToken": token, "progress": n, "message": f"step {n}"}
                send({"jsonrpc": "2.0", "method": "notifications/progress", "params": message})
            time.sleep(0.001)
        result(ident, text_result(f"done after {n} steps"))
    elif name == "huge_error":
        send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32603, "message": "E" * int(args["size"])}})
    elif name == "never":
        return
    elif name == "ask":
        with ANSWERED:
            ARRIVED.append(ident)
            ANSWERED.notify_all()
            ANSWERED.wait_for(lambda: len(ARRIVED) >= int(args.get("together", 1)), timeout=15)
        ids = [f"ask-{ident}-{n}" for n in range(int(args["count"]))]
        form = {"message": "Your name?", "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}}}
        for request_id in ids:
            send({"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create", "params": form})
        with ANSWERED:
            ANSWERED.wait_for(lambda: all(i in ANSWERS for i in ids), timeout=30)
            got = [ANSWERS.get(i, {}) for i in ids]
            ANSWERED_CALLS.append(ident)
            ANSWERED.notify_all()
            # No call ends before the others asked with it have had their answers: a result sent
            # early could reach the client before another's question and leave one call in flight.
            ANSWERED.wait_for(lambda: len(ANSWERED_CALLS) >= int(args.get("together", 1)), timeout=30)
        actions = [(a.get("result") or {}).get("action") for a in got]
        counts = {"accepted": actions.count("accept"), "declined": actions.count("decline"),
                  "refused": sum("error" in a for a in got)}  # fmt: skip
        result(ident, {**text_result(json.dumps(counts)), "structuredContent": counts})
    else:
        send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32602, "message": f"Unknown tool: {name}"}})


def main() -> None:
    if "--latin1-banner" in sys.argv or "--banner-only" in sys.argv:
        send_bytes("Démarrage du serveur (Latin-1, not JSON-RPC)\n".encode("latin-1"))
    if "--banner-only" in sys.argv:
        sys.stdin.buffer.read()
        return
    for raw in sys.stdin.buffer:
        message = json.loads(raw)
        method, ident = message.get("method"), message.get("id")
        if method is None and ident is not None:  # an answer to one of our requests (``ask``)
            with ANSWERED:
                ANSWERS[str(ident)] = message
                ANSWERED.notify_all()
            continue
        if ident is None:
            continue  # notifications: initialized, cancelled
        if method == "initialize":
            info = {"name": "raw", "version": "1"}
            version = message["params"]["protocolVersion"]
            result(ident, {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info})
        elif method == "tools/list":
            result(ident, {"tools": TOOLS + (HOSTILE if "--hostile-names" in sys.argv else [])})
        elif method == "tools/call":
            threading.Thread(target=call, args=(ident, message.get("params") or {}), daemon=True).start()
        elif method == "ping":
            result(ident, {})
        else:  # server/discover among them: this server speaks only the initialize handshake
            send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    main()
