"""A hand-written JSON-RPC MCP server (stdio, no SDK), so it can misbehave in ways an SDK won't.

It speaks the ``initialize`` handshake and serves ``tools/list`` and ``tools/call``. Options:

* ``--discover empty|invalid|error|close|ignore``: how it answers ``server/discover``: ``{}``
  (what the conformance suite's test server sends), a result of the wrong shape, a -32601
  error, closing stdout and exiting, or never answering. Default: ``error``.
* ``--record FILE``: append one JSON line per request received (method and params), so a test
  sees what the client sent, ``clientInfo`` included.
* ``--typeless``: its tools' ``inputSchema`` is ``{"$schema": ...draft-07...}`` with no
  ``"type"``, as a published GitLab server sends.
* ``--stderr N``: write N lines to stderr at start.
* ``--delay S``: wait S seconds before reading anything, as a server that is slow to start;
  with ``--record`` a ``started`` line (and each request's line) carries the time.
* ``--prefix P``: its tools are named ``P_echo`` and ``P_shout``.
* ``--echo-env VAR``: every call answers ``VAR=<its value>`` (and ``--record`` gets an ``env``
  line at start), so a test sees what the runtime put in the server's environment.
* ``--linger S``: once stdin closes, stay S seconds more before exiting, as a server slow to shut
  down; with ``--record`` an ``eof`` line, and a ``sigterm`` line if SIGTERM ends it first.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from typing import Any

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}
_TYPELESS: dict[str, Any] = {"$schema": "http://json-schema.org/draft-07/schema#"}


def _tools(typeless: bool, prefix: str) -> list[dict[str, Any]]:
    schema = _TYPELESS if typeless else _SCHEMA
    return [
        {"name": f"{prefix}echo", "description": "Echo the text.", "inputSchema": schema},
        {"name": f"{prefix}shout", "description": "Echo the text in capitals.", "inputSchema": schema},
    ]


def _record(path: str | None, entry: dict[str, Any]) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as record:
            record.write(json.dumps({**entry, "time": time.time()}, sort_keys=True) + "\n")


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--discover", default="error", choices=["empty", "invalid", "error", "close", "ignore"])
    parser.add_argument("--record")
    parser.add_argument("--typeless", action="store_true")
    parser.add_argument("--stderr", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--prefix", default="")
    parser.add_argument("--linger", type=float, default=0.0)
    parser.add_argument("--echo-env")
    args = parser.parse_args()
    prefix = f"{args.prefix}_" if args.prefix else ""
    _record(args.record, {"started": True})
    if args.echo_env:
        _record(args.record, {"env": os.environ.get(args.echo_env)})
    time.sleep(args.delay)
    for n in range(args.stderr):
        print(f"raw server: log line {n + 1}", file=sys.stderr, flush=True)
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        method, ident, params = message.get("method"), message.get("id"), message.get("params") or {}
        if method is not None:
            _record(args.record, {"method": method, "params": params})
        if ident is None:  # a notification
            continue
        if method == "server/discover":
            if args.discover == "close":
                return
            if args.discover == "ignore":
                continue
            if args.discover == "error":
                _send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "Method not found"}})
            else:
                result: dict[str, Any] = {} if args.discover == "empty" else {"supportedVersions": "2026-07-28"}
                _send({"jsonrpc": "2.0", "id": ident, "result": result})
        elif method == "initialize":
            result = {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "1"},
            }
            _send({"jsonrpc": "2.0", "id": ident, "result": result})
        elif method == "tools/list":
            _send({"jsonrpc": "2.0", "id": ident, "result": {"tools": _tools(args.typeless, prefix)}})
        elif method == "tools/call":
            text = str((params.get("arguments") or {}).get("text", ""))
            if str(params.get("name")).endswith("shout"):
                text = text.upper()
            if args.echo_env:
                text = f"{args.echo_env}={os.environ.get(args.echo_env, '')}"
            content = [{"type": "text", "text": text}]
            _send({"jsonrpc": "2.0", "id": ident, "result": {"content": content, "isError": False}})
        else:
            _send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"no method {method}"}})
    if args.linger:
        _linger(args.record, args.linger)


def _linger(record: str | None, seconds: float) -> None:
    def stopped(signum: int, frame: object) -> None:
        _record(record, {"sigterm": True})
        sys.exit(0)

    signal.signal(signal.SIGTERM, stopped)
    _record(record, {"eof": True})
    time.sleep(seconds)


if __name__ == "__main__":
    main()
