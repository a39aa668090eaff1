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
import hmac
import json
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

from mas.runtime.code_mode.core import CodeMode, CodeRun
from mas.runtime.contracts.tool_contract import either_set

__all__ = [
    "CODE_TOOL_NAMES",
    "LOOPBACK_HOSTS",
    "SEARCH_QUERY_MAX_CHARS",
    "SERVER_NAME",
    "WHOLE_API_MAX_CHARS",
    "CodeToolReply",
    "HttpSecurity",
    "HttpSecurityError",
    "build_server",
    "call_code_tool",
    "code_mode_tools",
    "http_app",
    "http_security",
    "serve_http",
    "serve_stdio",
]

SERVER_NAME = "toolgen-code-mode"
#: Up to this many characters the whole API goes into run_code's description (about 4,000 tokens).
WHOLE_API_MAX_CHARS = 16_000
_SEARCH_LIMIT_MAX = 50
_NAMES_MAX = 50  # functions get_stubs takes at once
_READ_ONLY = types.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
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
    modules = ", ".join(f"tools.{m} ({len(f)} tool{'' if len(f) == 1 else 's'})" for m, f in mode.modules.items())
    return (
        head
        + api.split("\n# module", 1)[0]
        + f"\nModules: {modules}.\nThe catalog is too big to show here: list_functions gives each function's "
        "name and one line, get_stubs the typed stubs of the functions you name, search_tools the stubs that "
        "match a few words.\n"
    )


def code_mode_tools(mode: CodeMode) -> list[types.Tool]:
    """The code-mode tools as MCP lists them (:data:`CODE_TOOL_NAMES`), ``run_code`` last: names,
    descriptions (``run_code``'s has the API, or the modules and how to discover), input schemas."""
    return [
        types.Tool(
            name="search_tools",
            description=(
                "Find tools for a task: the typed Python stubs (TypedDicts and async functions, one "
                "docstring line each) of the tools whose names, titles and descriptions best match the "
                "query, to use in run_code; get_stubs gives their whole docstrings."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "words describing what the tools should do"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": _SEARCH_LIMIT_MAX, "default": 5},
                    "offset": {"type": "integer", "minimum": 0, "default": 0, "description": "skip the best N"},
                },
                "required": ["query"],
            },
            annotations=_READ_ONLY,
        ),
        types.Tool(
            name="list_functions",
            description=(
                "List the tool modules and, under each, every function's name and one line about it: "
                "the first step through a big catalog (then get_stubs for the ones you need)."
            ),
            input_schema={
                "type": "object",
                "properties": {"module": {"type": "string", "description": "one module only (e.g. sample)"}},
            },
            annotations=_READ_ONLY,
        ),
        types.Tool(
            name="get_stubs",
            description=(
                "The typed Python stubs (TypedDicts, async functions, their full docstrings) of the functions "
                "named: module.function, function, or module for all of its functions."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "names": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": _NAMES_MAX}
                },
                "required": ["names"],
            },
            annotations=_READ_ONLY,
        ),
        types.Tool(
            name="run_code",
            description=_run_description(mode),
            input_schema={
                "type": "object",
                "properties": {
                    "code": {"type": "string", "description": "the Python code to check and run"},
                    "plan": {
                        "type": "boolean",
                        "default": False,
                        "description": "only check the code and list the tool calls it can make (which are "
                        "destructive or not idempotent, which sit in a loop); nothing runs",
                    },
                },
                "required": ["code"],
            },
            output_schema=RUN_OUTPUT_SCHEMA,
            # The code may call any tool of the registry: assume the worst of it.
            annotations=types.ToolAnnotations(
                read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True
            ),
        ),
    ]


#: run_code's structuredContent (the value and the output are in the text, once).
RUN_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ok": {"type": "boolean", "description": "the run completed"},
        "calls": {
            "type": "array",
            "description": "each tool call that was sent, in order",
            "items": {
                "type": "object",
                "properties": {
                    "tool": {"type": "string"},
                    "arguments": {"type": "object"},
                    "seconds": {"type": "number"},
                    "error": {"type": ["string", "null"], "description": "the failure's kind"},
                },
                "required": ["tool", "arguments", "seconds", "error"],
            },
        },
        "plan": {
            "type": "array",
            "description": "with plan=true only: each tool call the code can make (nothing ran)",
            "items": {"type": "object"},
        },
        "error": {
            "type": ["object", "null"],
            "description": "what stopped the run: kind and message",
            "properties": {"kind": {"type": "string"}, "message": {"type": "string"}},
            "required": ["kind", "message"],
        },
    },
    "required": ["ok", "calls", "error"],
}

INSTRUCTIONS = (
    "Code mode: write Python against typed stubs of the tools and send it to run_code; it is "
    "type-checked first (nothing runs when the check fails) and then run in a sandbox whose only way "
    "out is the tools. Use search_tools to find the stubs you need. `await` every tool call; "
    "asyncio.gather runs several side by side. The last expression is the value; keep it small."
)


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _refused(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=_text(message), is_error=True)


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


#: The code-mode tools, by name: what each does is :func:`call_code_tool`'s.
CODE_TOOL_NAMES = ("search_tools", "list_functions", "get_stubs", "run_code")


@dataclass(frozen=True)
class CodeToolReply:
    """What one call of a code-mode tool came to: the tool result a client reads, and for a
    ``run_code`` that ran (not ``plan=true``, not refused) the run itself (its value, output, calls)."""

    result: types.CallToolResult
    run: CodeRun | None = None


async def call_code_tool(
    mode: CodeMode,
    name: str,
    arguments: Mapping[str, Any],
    *,
    cancel_event: Any = None,
    progress_callback: Callable[[int, str], Any] | None = None,
    confirm: Callable[[Any, dict[str, Any]], object] | None = None,
    limiter: anyio.CapacityLimiter | None = None,
    **run_limits: Any,
) -> CodeToolReply:
    """One call of a code-mode tool (:data:`CODE_TOOL_NAMES`): the one dispatch of the MCP face
    (``build_server``) and of the framework adapters (``mas/runtime/frameworks``).

    ``search_tools`` (query, limit, offset), ``list_functions`` (module), ``get_stubs`` (names) and
    ``run_code`` (code; ``plan=true`` checks it and lists its calls, nothing runs). Arguments of the
    wrong type are refused in the result (``isError``), never raised. A ``run_code`` runs off the
    event loop (in ``limiter``'s threads when given) with ``run_limits``, ``progress_callback`` and
    ``confirm`` handed to ``mode.run``; it stops at once when ``cancel_event`` (anything with
    ``is_set()``) is set or when the awaiting task is cancelled. An unknown ``name`` is
    ``MCPError(INVALID_PARAMS)``.
    """
    args = dict(arguments)
    if name == "search_tools":
        query, limit, offset = args.get("query"), args.get("limit", 5), args.get("offset", 0)
        if not isinstance(query, str) or not _integer(limit) or not _integer(offset) or offset < 0:
            return CodeToolReply(_refused("query must be a string, limit and offset integers (offset not negative)"))
        if len(query) > SEARCH_QUERY_MAX_CHARS:
            too_long = f"the query is {len(query):,} characters; at most {SEARCH_QUERY_MAX_CHARS:,}"
            return CodeToolReply(_refused(f"{too_long}: a few words about what the tools should do"))
        # Off the event loop: another client's request is never held up by a search.
        found = await anyio.to_thread.run_sync(mode.search, query, max(1, min(limit, _SEARCH_LIMIT_MAX)), offset)
        return CodeToolReply(types.CallToolResult(content=_text(found)))
    if name == "list_functions":
        module = args.get("module")
        if module is not None and not isinstance(module, str):
            return CodeToolReply(_refused("module must be a string"))
        return CodeToolReply(types.CallToolResult(content=_text(mode.listing(module))))
    if name == "get_stubs":
        names = args.get("names")
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            return CodeToolReply(_refused("names must be a list of strings: module.function, function or module"))
        if len(names) > _NAMES_MAX or any(len(n) > 200 for n in names):
            return CodeToolReply(_refused(f"at most {_NAMES_MAX} names of at most 200 characters"))
        return CodeToolReply(types.CallToolResult(content=_text(mode.stubs(names))))
    if name == "run_code":
        code, planned = args.get("code"), args.get("plan", False)
        if not isinstance(code, str) or not isinstance(planned, bool):
            return CodeToolReply(_run_refused("invalid_arguments", "code must be a string and plan a boolean"))
        if planned:
            return CodeToolReply(await anyio.to_thread.run_sync(_plan_reply, mode, code))
        # CodeMode.run blocks (the sandbox and the registry are synchronous): off the event loop,
        # in threads of our own (CodeMode bounds how many run and wait). A request the caller
        # cancels, or abandons, sets the run's cancel event: its sandbox and calls stop at once.
        own = threading.Event()
        cancel = either_set(own, cancel_event)
        try:
            run = await anyio.to_thread.run_sync(
                functools.partial(
                    mode.run,
                    code,
                    cancel_event=cancel,
                    progress_callback=progress_callback,
                    confirm=confirm,
                    **run_limits,
                ),  # fmt: skip
                abandon_on_cancel=True,
                limiter=limiter,
            )
        finally:
            own.set()
        return CodeToolReply(run_reply(run), run)
    raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}")


def build_server(mode: CodeMode, *, confirm_destructive: bool = False, **run_limits: Any) -> Server[Any]:
    """A low-level Server with the code-mode tools (:func:`code_mode_tools`, answered by
    :func:`call_code_tool`); ``run_limits`` go to every ``mode.run``.
    ``confirm_destructive``: a destructive tool called from code is sent only when the client's
    user accepts it (an MCP elicitation to the client that sent the code)."""
    listing = code_mode_tools(mode)
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
        loop = asyncio.get_running_loop()
        reply = await call_code_tool(
            mode,
            params.name,
            params.arguments or {},
            progress_callback=_progress_relay(ctx, loop) if params.name == "run_code" else None,
            confirm=_asker(ctx, loop) if confirm_destructive else None,
            limiter=runs,
            **run_limits,
        )
        return reply.result

    return Server(
        SERVER_NAME, version="1.0.0", instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool
    )


#: Seconds a confirmation waits for the client's answer; no answer refuses the call.
CONFIRM_TIMEOUT_SECONDS = 120.0


def _asker(ctx: ServerRequestContext[Any, Any], loop: asyncio.AbstractEventLoop) -> Any:
    """The package's ``confirm=`` rule for one run_code request: ask the client that sent the code
    (an elicitation, related to its request) whether the destructive tool may run; anything but an
    accept, a client that cannot be asked, or no answer in time, refuses it."""

    def confirm(info: Any, arguments: dict[str, Any]) -> bool:
        shown = json.dumps(arguments, ensure_ascii=False)
        shown = shown if len(shown) <= 500 else shown[:497] + "..."
        message = f"The code wants to call the destructive tool {info.name!r} with {shown}. Allow it?"
        ask = ctx.session.elicit_form(message, {"type": "object", "properties": {}}, related_request_id=ctx.request_id)
        try:
            answer = asyncio.run_coroutine_threadsafe(ask, loop).result(CONFIRM_TIMEOUT_SECONDS)
        except Exception:  # no back channel, a refusal, no answer in time: not confirmed
            return False
        return getattr(answer, "action", None) == "accept"

    return confirm


def _plan_reply(mode: CodeMode, code: str) -> types.CallToolResult:
    """run_code(plan=true): the check's diagnostics, or the calls the code can make; nothing runs."""
    diagnostics = mode.check(code)
    if diagnostics:
        lines = [f"line {d.line}, column {d.column}: {d.code}: {d.message}" for d in diagnostics]
        return _run_refused("check", "The code did not type-check:\n" + "\n".join(lines))
    calls = mode.plan(code)
    planned = [
        {"line": c.line, "function": c.function, "tool": c.wire_name, "read_only": c.read_only,
         "destructive": c.destructive, "idempotent": c.idempotent, "in_loop": c.in_loop}
        for c in calls
    ]  # fmt: skip
    structured = {"ok": True, "calls": [], "error": None, "plan": planned}
    if not calls:
        text = "The code checks clean and calls no tool; nothing ran."
        return types.CallToolResult(content=_text(text), structured_content=structured)
    risky = [c for c in calls if c.risky]
    head = f"The code checks clean; nothing ran. It can call {len(calls)} tool(s) at {len(calls)} place(s)"
    head += f", {len(risky)} of them destructive or not idempotent" if risky else ""
    lines = [f"{'! ' if c.risky and c.in_loop else '  '}{c}" for c in calls]
    note = ("\n! marks a destructive or not idempotent call inside a loop: it may run many times."
            if any(c.risky and c.in_loop for c in calls) else "")  # fmt: skip
    text = head + ":\n" + "\n".join(lines) + note
    return types.CallToolResult(content=_text(text), structured_content=structured)


def _run_refused(kind: str, message: str) -> types.CallToolResult:
    """A run_code that did not run, in the shape of its output schema."""
    structured = {"ok": False, "calls": [], "error": {"kind": kind, "message": message}}
    return types.CallToolResult(content=_text(message), structured_content=structured, is_error=True)


def _progress_relay(ctx: ServerRequestContext[Any, Any], loop: asyncio.AbstractEventLoop) -> Any:
    """The run's progress callback: each update of an inner tool call goes to the client as MCP
    progress of this run_code request (a count that only grows, the tool's message), from whatever
    thread the call runs in; none when the request carried no progress token."""
    meta: Any = ctx.meta or {}
    if meta.get("progress_token", meta.get("progressToken")) is None:
        return None

    def relay(count: int, message: str) -> None:
        report = ctx.session.report_progress(float(count), None, message)
        asyncio.run_coroutine_threadsafe(report, loop)

    return relay


def serve_stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    asyncio.run(main())


#: Hosts that count as loopback for ``--host`` (the SDK's own list): any other address, a
#: wildcard or a name, is served only with a bearer token and a list of allowed Host headers.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
_WILDCARDS = ("0.0.0.0", "::", "")  # noqa: S104 - names to recognise, not to bind


class HttpSecurityError(ValueError):
    """An HTTP setting that would serve code execution unprotected: one line, to the operator."""


@dataclass(frozen=True)
class HttpSecurity:
    """How ``serve --code-mode --http`` is guarded: the bearer token every request must carry
    (None: loopback without one), where it came from (``env:VAR``, for messages; never the
    token), and the Host headers (``host:*`` patterns) and origins the DNS-rebinding check allows."""

    token: str | None
    token_source: str | None
    allowed_hosts: tuple[str, ...]
    allowed_origins: tuple[str, ...]
    oauth: OAuthResource | None = None

    def describe(self, host: str, port: int) -> str:
        """The line said at start: the address and each protection."""
        where = f"code mode on http://{host}:{port}/mcp"
        auth = (f"every request needs the bearer token from {self.token_source}" if self.token
                else f"every request needs an OAuth access token for {self.oauth.resource}, checked at "
                     f"{self.oauth.introspection}" if self.oauth
                else "no authentication (loopback only)")  # fmt: skip
        hosts = ", ".join(h.removesuffix(":*") for h in self.allowed_hosts)
        return f"{where}; {auth}; DNS-rebinding protection on, Host must be one of: {hosts}"


@dataclass(frozen=True)
class OAuthResource:
    """Resource-server mode: every request carries an OAuth access token that the authorization
    server ``issuer`` issued for ``resource`` (this server's URL), checked by RFC 7662 introspection
    at ``introspection`` (as the client ``client_id`` with the secret from ``client_secret_source``,
    when given) and holding every scope of ``scopes``. The SDK serves the RFC 9728 metadata."""

    issuer: str
    resource: str
    introspection: str
    scopes: tuple[str, ...] = ()
    client_id: str | None = None
    client_secret_source: str | None = None


#: Seconds an introspection request may take, and the bytes of its answer read at most.
INTROSPECTION_TIMEOUT = 5.0
_INTROSPECTION_MAX_BYTES = 64 * 1024


class IntrospectionVerifier:
    """The SDK's ``TokenVerifier`` by RFC 7662 introspection: a token is good only when the
    authorization server says it is ``active``, it has not expired, and its audience (``aud``) names
    the resource (the SDK then refuses a token issued for another resource, and one without the
    required scopes). Any failure (no answer in time, not 200, an answer too long or not JSON) is a
    refusal; nothing is cached."""

    def __init__(self, oauth: OAuthResource, client_secret: str | None) -> None:
        self.oauth = oauth
        self.secret = client_secret

    async def verify_token(self, token: str) -> Any:
        import time as _time

        import httpx2
        from mcp.server.auth.provider import AccessToken

        auth = (self.oauth.client_id, self.secret or "") if self.oauth.client_id else None
        form = {"token": token, "token_type_hint": "access_token"}
        try:
            async with (
                httpx2.AsyncClient(timeout=INTROSPECTION_TIMEOUT, follow_redirects=False) as http,
                http.stream(
                    "POST", self.oauth.introspection, data=form, auth=auth, headers={"accept": "application/json"}
                ) as reply,  # fmt: skip
            ):
                if reply.status_code != 200:
                    return None
                body = b""
                async for chunk in reply.aiter_bytes():
                    body += chunk
                    if len(body) > _INTROSPECTION_MAX_BYTES:
                        return None
            data = json.loads(body)
        except (httpx2.HTTPError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("active") is not True:
            return None
        expires = data.get("exp")
        if isinstance(expires, bool) or not isinstance(expires, int | float | type(None)):
            return None
        if expires is not None and expires <= _time.time():
            return None
        aud = data.get("aud")
        audiences = (
            [aud] if isinstance(aud, str) else [a for a in aud if isinstance(a, str)] if isinstance(aud, list) else []
        )
        if self.oauth.resource not in audiences:
            return None
        scope = data.get("scope")
        return AccessToken(
            token=token,
            client_id=str(data.get("client_id") or ""),
            scopes=scope.split() if isinstance(scope, str) else [],
            expires_at=int(expires) if expires is not None else None,
            resource=self.oauth.resource,
            subject=data["sub"] if isinstance(data.get("sub"), str) else None,
        )


def oauth_resource(
    issuer: str | None,
    resource: str | None,
    introspection: str | None,
    scopes: Sequence[str] = (),
    client_id: str | None = None,
    client_secret: str | None = None,
) -> OAuthResource | None:
    """The resource-server settings from the ``--oauth-*`` options (None when none is given);
    ``HttpSecurityError`` when one is missing, a URL is not http(s), or the introspection endpoint
    would get the tokens in clear off loopback (it must be https unless on 127.0.0.1/localhost/::1)."""
    from urllib.parse import urlsplit

    given = {"--oauth-issuer": issuer, "--oauth-resource": resource, "--oauth-introspection": introspection}
    if not any(given.values()) and not scopes and not client_id and not client_secret:
        return None
    missing = [name for name, value in given.items() if not value]
    if missing:
        raise HttpSecurityError(f"OAuth resource-server mode needs {', '.join(missing)}")
    for name, value in given.items():
        parts = urlsplit(str(value))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise HttpSecurityError(f"{name} {value!r} is not an http(s) URL")
    where = urlsplit(str(introspection))
    if where.scheme != "https" and where.hostname not in LOOPBACK_HOSTS:
        raise HttpSecurityError("--oauth-introspection must be https off loopback: it is sent every access token")
    if client_secret is not None and (not client_secret.startswith("env:") or not client_id):
        raise HttpSecurityError("--oauth-client-secret takes env:VAR, with --oauth-client-id")
    return OAuthResource(str(issuer), str(resource), str(introspection), tuple(scopes), client_id, client_secret)


def http_security(
    host: str, auth_token: str | None, allowed_hosts: Sequence[str] = (), oauth: OAuthResource | None = None
) -> HttpSecurity:
    """The guard for serving on ``host``. Off loopback a bearer token is required (``auth_token``
    is ``env:VAR``: the variable must be set, 16 characters at least); on a wildcard address the
    names clients use must be listed (``allowed_hosts``), since the Host header is what keeps a web
    page's DNS rebinding out. ``HttpSecurityError`` says what is missing."""
    from mas.runtime import redact

    loopback = host in LOOPBACK_HOSTS
    token = None
    if auth_token is not None:
        if not auth_token.startswith("env:") or not auth_token[4:]:
            raise HttpSecurityError("--auth-token takes env:VAR, the environment variable that holds the token")
        token = os.environ.get(auth_token[4:], "")
        if len(token) < 16:
            raise HttpSecurityError(f"--auth-token {auth_token}: the variable is unset or shorter than 16 characters")
        redact.remember([token])
    if token is not None and oauth is not None:
        raise HttpSecurityError("--auth-token and the --oauth-* options are two ways to guard; choose one")
    if oauth is not None and oauth.client_secret_source is not None:
        secret = os.environ.get(oauth.client_secret_source[4:], "")
        if not secret:
            raise HttpSecurityError(f"--oauth-client-secret {oauth.client_secret_source}: the variable is unset")
        redact.remember([secret])
    if token is None and oauth is None and not loopback:
        raise HttpSecurityError(
            f"--host {host} is not loopback: serving code execution there needs --auth-token env:VAR "
            "(a bearer token every request must carry) or OAuth resource-server mode (--oauth-*)"
        )
    names = [h for h in LOOPBACK_HOSTS if loopback] + list(allowed_hosts)
    if not loopback and host not in _WILDCARDS:
        names.insert(0, host)
    if not names:
        raise HttpSecurityError(
            f"--host {host} listens on every address: name the hosts clients use with --allowed-host NAME"
        )
    patterns = tuple(f"[{n}]:*" if ":" in n else f"{n}:*" for n in dict.fromkeys(names))
    origins = tuple(f"{scheme}://{p}" for p in patterns for scheme in ("http", "https"))
    return HttpSecurity(token, auth_token if token else None, patterns, origins, oauth)


class _BearerAuth:
    """ASGI guard: an HTTP request without ``Authorization: Bearer <token>`` gets 401 (the token
    compared in constant time); anything else passes to the app."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            scheme, _, value = given.partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(value.strip(), self.token):
                body = b'{"error": "unauthorized", "error_description": "a bearer token is required"}'
                headers = [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                           (b"content-length", str(len(body)).encode())]  # fmt: skip
                await send({"type": "http.response.start", "status": 401, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def http_app(server: Server[Any], host: str, security: HttpSecurity) -> Any:
    """The streamable HTTP app, with the SDK's DNS-rebinding check on (whatever the host) and,
    when a token is set, the bearer guard in front of it."""
    from mcp.server.transport_security import TransportSecuritySettings

    settings = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(security.allowed_hosts),
        allowed_origins=list(security.allowed_origins),
    )
    if security.oauth is not None:
        from mcp.server.auth.settings import AuthSettings

        oauth = security.oauth
        secret = os.environ.get(oauth.client_secret_source[4:]) if oauth.client_secret_source else None
        auth = AuthSettings(issuer_url=oauth.issuer, resource_server_url=oauth.resource,  # type: ignore[arg-type]
                            required_scopes=list(oauth.scopes) or None, validate_token_resource=True)  # fmt: skip
        return server.streamable_http_app(
            host=host, transport_security=settings, auth=auth, token_verifier=IntrospectionVerifier(oauth, secret)
        )
    app = server.streamable_http_app(host=host, transport_security=settings)
    return _BearerAuth(app, security.token) if security.token else app


def serve_http(server: Server[Any], host: str, port: int, security: HttpSecurity | None = None) -> None:
    import uvicorn

    app = http_app(server, host, security or http_security(host, None))
    uvicorn.run(app, host=host, port=port, log_level="warning")
