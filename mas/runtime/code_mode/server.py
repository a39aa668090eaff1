"""Code mode as an MCP server: ``search_tools(query)`` and ``run_code(code)`` over every source of
a registry, for any MCP client (``mas-runtime serve --code-mode``; docs/code-mode.md "MCP face").

Built on the official SDK's low-level ``Server``, like the repo's sample server. ``run_code``'s
description carries how to write the code and, when the catalog is small enough to be worth
sending whole, the API itself; otherwise the list of modules, and ``search_tools`` gives the stubs
of the tools a task needs. A ``run_code`` whose check fails returns ``isError`` with one line
per diagnostic, which names the argument or key at fault, so the model can repair the code.
"""

from __future__ import annotations

import asyncio
import functools
import json
import threading
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

from mas.runtime.code_mode.core import CodeMode, CodeRun

__all__ = ["SEARCH_QUERY_MAX_CHARS", "SERVER_NAME", "WHOLE_API_MAX_CHARS", "build_server", "serve_http", "serve_stdio"]

SERVER_NAME = "toolgen-code-mode"
#: Up to this many characters the whole API goes into run_code's description (about 4,000 tokens).
WHOLE_API_MAX_CHARS = 16_000
_SEARCH_LIMIT_MAX = 20
#: A search_tools query longer than this is refused (the search runs off the event loop as well).
SEARCH_QUERY_MAX_CHARS = 1_000


def _run_description(mode: CodeMode) -> str:
    api = mode.api()
    head = (
        "Run Python code against the tools below, in a sandbox. The code is type-checked first: "
        "nothing runs and no tool is called when the check fails, and the reply lists each problem "
        "as line:column: code: message. The reply has the last expression's value (JSON) and what "
        "the code printed.\n\n"
    )
    if len(api) <= WHOLE_API_MAX_CHARS:
        return head + api
    modules = ", ".join(f"tools.{m} ({len(f)} tools)" for m, f in mode.modules.items())
    return head + api.split("\n# module", 1)[0] + f"\nModules: {modules}.\nCall search_tools to get the typed stubs.\n"


def _tools(mode: CodeMode) -> list[types.Tool]:
    return [
        types.Tool(
            name="search_tools",
            description=(
                "Find tools for a task: the typed Python stubs (TypedDicts and async functions) of the "
                "tools whose names, titles and descriptions best match the query, to use in run_code."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "words describing what the tools should do"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": _SEARCH_LIMIT_MAX, "default": 5},
                },
                "required": ["query"],
            },
            annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
        ),
        types.Tool(
            name="run_code",
            description=_run_description(mode),
            input_schema={
                "type": "object",
                "properties": {"code": {"type": "string", "description": "the Python code to check and run"}},
                "required": ["code"],
            },
        ),
    ]


def _text(text: str) -> list[types.ContentBlock]:
    return [types.TextContent(type="text", text=text)]


def run_reply(run: CodeRun) -> types.CallToolResult:
    """A run as a tool result: the text the model reads has the value and the printed output (or,
    ``isError``, what stopped the run), each once; ``structuredContent`` has what a program needs
    besides (the calls, the error's kind), never a second copy of the value or the output."""
    calls = [
        {"tool": c.wire_name, "arguments": c.arguments, "seconds": round(c.seconds, 4), "error": c.error}
        for c in run.calls
    ]
    structured: dict[str, Any] = {"ok": run.error is None, "calls": calls, "error": None}
    if run.error is not None:
        if run.error.kind == "check":
            lines = [f"line {d.line}, column {d.column}: {d.code}: {d.message}" for d in run.error.diagnostics]
            text = "The code did not type-check; nothing ran:\n" + "\n".join(lines)
        else:
            text = f"The code stopped ({run.error.kind}): {run.error.message}"
            if run.output:
                text += f"\nIt printed:\n{run.output}"
        structured["error"] = {"kind": run.error.kind, "message": run.error.message}
        return types.CallToolResult(content=_text(text), structured_content=structured, is_error=True)
    value = json.dumps(run.value, ensure_ascii=False)
    text = f"value: {value}" + (f"\noutput:\n{run.output}" if run.output else "")
    return types.CallToolResult(content=_text(text), structured_content=structured)


def build_server(mode: CodeMode, **run_limits: Any) -> Server[Any]:
    """A low-level Server with the two code-mode tools; ``run_limits`` go to every ``mode.run``."""
    listing = _tools(mode)
    # Threads for runs: every run CodeMode lets execute or wait, and one more, so a request past
    # the queue's bound reaches CodeMode and hears "busy" at once instead of waiting for a thread.
    runs = anyio.CapacityLimiter(mode.max_concurrent_runs + mode.max_queued_runs + 1)

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listing)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        args = dict(params.arguments or {})
        if params.name == "search_tools":
            query, limit = args.get("query"), args.get("limit", 5)
            if not isinstance(query, str) or not isinstance(limit, int) or isinstance(limit, bool):
                return types.CallToolResult(content=_text("query must be a string and limit an integer"), is_error=True)
            if len(query) > SEARCH_QUERY_MAX_CHARS:
                return types.CallToolResult(
                    content=_text(f"the query is {len(query):,} characters; at most {SEARCH_QUERY_MAX_CHARS:,}: "
                                  "a few words about what the tools should do"),
                    is_error=True,
                )  # fmt: skip
            # Off the event loop: another client's request is never held up by a search.
            found = await anyio.to_thread.run_sync(mode.search, query, max(1, min(limit, _SEARCH_LIMIT_MAX)))
            return types.CallToolResult(content=_text(found))
        if params.name == "run_code":
            code = args.get("code")
            if not isinstance(code, str):
                return types.CallToolResult(content=_text("code must be a string"), is_error=True)
            # CodeMode.run blocks (the sandbox and the registry are synchronous): off the event loop,
            # in threads of our own (CodeMode bounds how many run and wait). A request the client
            # cancels, or abandons, sets the run's cancel event: its sandbox and calls stop at once.
            cancel = threading.Event()
            try:
                run = await anyio.to_thread.run_sync(
                    functools.partial(mode.run, code, cancel_event=cancel, **run_limits),
                    abandon_on_cancel=True,
                    limiter=runs,
                )
            finally:
                cancel.set()
            return run_reply(run)
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")

    return Server(SERVER_NAME, version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


def serve_stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    asyncio.run(main())


def serve_http(server: Server[Any], host: str, port: int) -> None:
    import uvicorn

    app = server.streamable_http_app(host=host)
    uvicorn.run(app, host=host, port=port, log_level="warning")
