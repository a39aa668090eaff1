"""``mas-runtime code check|run FILE`` and ``mas-runtime serve --code-mode`` (docs/code-mode.md).

    mas-runtime code check snippet.py --package generated/sample_tools
    mas-runtime code run - --infra infra.yaml --tools tools/ --package sample_tools < snippet.py
    mas-runtime serve --code-mode --infra infra.yaml --tools tools/ --package sample_tools [--http --port 8770]

``check`` prints one ``FILE:LINE:COL: code: message`` line per diagnostic and opens no server
(nothing is sent). ``run`` prints what the code printed, then its value as JSON (``--json``: the
whole run: value, output, calls, error). Exit status: 0 ok, 1 diagnostics or a failed run, 2 bad
usage (no such file or package, a package without code-mode stubs).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import sys
import threading
from collections.abc import Collection, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from mas.runtime.code_mode.core import (
    DEFAULT_MAX_CONCURRENT_RUNS,
    DEFAULT_MAX_MEMORY_BYTES,
    DEFAULT_MAX_OUTPUT_CHARS,
    DEFAULT_MAX_PARALLEL_CALLS,
    DEFAULT_MAX_QUEUE_SECONDS,
    DEFAULT_MAX_QUEUED_RUNS,
    DEFAULT_MAX_TOOL_CALLS,
    DEFAULT_MAX_VALUE_CHARS,
    DEFAULT_TIMEOUT_SECONDS,
    SANDBOX_PACKAGE,
    CodeMode,
    CodeRun,
)
from mas.runtime.contracts.tool_contract import invoke_call_tool
from mas.runtime.progress import Progress

__all__ = ["add_commands", "code_command", "load_package", "serve_command"]

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


class UsageError(Exception):
    """Bad usage: one line, exit 2."""


def add_commands(commands: Any, common: argparse.ArgumentParser, epilog: str) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    package = argparse.ArgumentParser(add_help=False)
    package.add_argument(
        "--package", required=True, metavar="P", help="the generated package: an import name or its folder"
    )
    limits = argparse.ArgumentParser(add_help=False)
    limits.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_SECONDS, metavar="S",
                        help=f"seconds a run may take in all (default {DEFAULT_TIMEOUT_SECONDS:g})")  # fmt: skip
    limits.add_argument("--max-tool-calls", type=int, default=DEFAULT_MAX_TOOL_CALLS, metavar="N",
                        help=f"tool calls a run may make (default {DEFAULT_MAX_TOOL_CALLS})")  # fmt: skip
    limits.add_argument("--max-memory", type=int, default=DEFAULT_MAX_MEMORY_BYTES, metavar="BYTES",
                        help=f"sandbox heap limit (default {DEFAULT_MAX_MEMORY_BYTES})")  # fmt: skip
    limits.add_argument("--max-output", type=int, default=DEFAULT_MAX_OUTPUT_CHARS, metavar="CHARS",
                        help=f"printed output kept; the rest is cut (default {DEFAULT_MAX_OUTPUT_CHARS})")  # fmt: skip
    limits.add_argument("--max-value", type=int, default=DEFAULT_MAX_VALUE_CHARS, metavar="CHARS",
                        help=f"the value's JSON at most (default {DEFAULT_MAX_VALUE_CHARS})")  # fmt: skip
    code = commands.add_parser(
        "code", help="type-check or run agent code against a generated package (code mode)", epilog=epilog,
        formatter_class=fmt,
    )  # fmt: skip
    actions = code.add_subparsers(dest="action", required=True)
    check = actions.add_parser("check", parents=[common, package], help="type-check FILE; sends nothing")
    check.add_argument("file", metavar="FILE", help="the code, or - for standard input")
    run = actions.add_parser("run", parents=[common, package, limits], help="check FILE, then run it in the sandbox")
    run.add_argument("file", metavar="FILE", help="the code, or - for standard input")
    run.add_argument("--json", action="store_true", help="print the whole run as JSON")
    serve = commands.add_parser(
        "serve", parents=[common, package, limits], help="serve code mode over MCP (search_tools, run_code)",
        epilog=epilog, formatter_class=fmt,
    )  # fmt: skip
    serve.add_argument("--code-mode", action="store_true", required=True, help="serve code mode (required)")
    serve.add_argument("--max-concurrent-runs", type=int, default=DEFAULT_MAX_CONCURRENT_RUNS, metavar="N",
                       help=f"runs executing at once (default {DEFAULT_MAX_CONCURRENT_RUNS})")  # fmt: skip
    serve.add_argument("--max-queue-seconds", type=float, default=DEFAULT_MAX_QUEUE_SECONDS, metavar="S",
                       help=f"seconds a run may wait for a turn (default {DEFAULT_MAX_QUEUE_SECONDS:g})")  # fmt: skip
    serve.add_argument("--max-queued-runs", type=int, default=DEFAULT_MAX_QUEUED_RUNS, metavar="N",
                       help=f"runs that may wait for a turn (default {DEFAULT_MAX_QUEUED_RUNS})")  # fmt: skip
    serve.add_argument("--max-parallel-calls", type=int, default=DEFAULT_MAX_PARALLEL_CALLS, metavar="N",
                       help=f"gathered calls in flight per run (default {DEFAULT_MAX_PARALLEL_CALLS})")  # fmt: skip
    serve.add_argument("--confirm-destructive", action="store_true",
                       help="ask the client before each destructive tool a run calls")  # fmt: skip
    serve.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    serve.add_argument("--host", default="127.0.0.1", help="HTTP address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8770, help="HTTP port (default 8770)")
    serve.add_argument("--auth-token", metavar="env:VAR", default=None,
                       help="HTTP: every request must carry this bearer token (required off loopback)")  # fmt: skip
    serve.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                       help="HTTP: a Host header to accept besides --host (repeatable; needed on 0.0.0.0)")  # fmt: skip
    serve.add_argument(
        "--oauth-issuer", metavar="URL", help="HTTP, OAuth resource-server mode: the authorization server"
    )
    serve.add_argument("--oauth-resource", metavar="URL", help="OAuth: this server's URL, the tokens' audience")
    serve.add_argument("--oauth-introspection", metavar="URL",
                       help="OAuth: the RFC 7662 introspection endpoint (https off loopback)")  # fmt: skip
    serve.add_argument("--oauth-scope", action="append", default=[], metavar="SCOPE",
                       help="OAuth: a scope every token must hold (repeatable)")  # fmt: skip
    serve.add_argument("--oauth-client-id", metavar="ID", help="OAuth: the client id introspection is asked as")
    serve.add_argument("--oauth-client-secret", metavar="env:VAR", help="OAuth: its secret, from the environment")


def load_package(spec: str) -> ModuleType:
    """An import name, or the folder of a generated package (its parent goes on ``sys.path``)."""
    folder = Path(spec)
    if (folder / "__init__.py").is_file():
        parent = str(folder.resolve().parent)
        if parent not in sys.path:
            sys.path.insert(0, parent)
        spec = folder.resolve().name
    try:
        return importlib.import_module(spec)
    except ImportError as exc:
        raise UsageError(f"--package {spec}: cannot import it ({exc})") from exc


def _read(file: str) -> tuple[str, str]:
    if file == "-":
        return "<stdin>", sys.stdin.read()
    try:
        return file, Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{file}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from exc


def _mode(provider: Any, spec: str, **shared: Any) -> CodeMode:
    try:
        return CodeMode(provider, package=load_package(spec), **shared)
    except ValueError as exc:  # no stubs, or a limit out of range
        raise UsageError(str(exc)) from exc


class _NoServers:
    """``code check`` sends nothing, so it needs no registry."""

    def call_tool(self, tool_name: str, arguments: dict[str, Any]) -> Any:  # pragma: no cover - never called
        raise RuntimeError("code check sends nothing")


class _Lazy:
    """The registry, opened at the first tool call: code that fails its check starts no server."""

    def __init__(self, opener: Any) -> None:
        self._opener = opener
        self._registry: Any = None
        self._lock = threading.Lock()

    def open(self) -> Any:
        with self._lock:
            if self._registry is None:
                self._registry = self._opener()
            return self._registry

    def call_tool(self, tool_name: str, arguments: dict[str, Any], **options: Any) -> Any:
        return invoke_call_tool(self.open(), tool_name, arguments, **options)

    def close(self) -> None:
        if self._registry is not None:
            self._registry.close()


def sources_imported(text: str, modules: Mapping[str, Mapping[str, str]], tools: Mapping[str, Any]) -> set[str] | None:
    """The sources (infra server names, ``skills``...) whose modules the code imports from
    ``tools`` (``from tools import a, b``, ``import tools.a``); ``None`` when it may reach any
    (``import tools``, ``from tools import *``, or code that does not parse)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[0] != SANDBOX_PACKAGE:
                continue
            if len(parts) > 1:
                imported.add(parts[1])
            elif any(alias.name == "*" for alias in node.names):
                return None
            else:
                imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == SANDBOX_PACKAGE:
                    if len(parts) == 1:
                        return None
                    imported.add(parts[1])
    return {tools[wire].namespace for module in imported for wire in modules.get(module, {}).values()}


def code_command(args: argparse.Namespace, progress: Progress, open_registry: Any, prog: str) -> int:
    try:
        name, text = _read(args.file)
        if args.action == "check":
            with _mode(_NoServers(), args.package) as mode:
                diagnostics = mode.check(text)
            for d in diagnostics:
                print(f"{name}:{d}")
            return EXIT_FAILED if diagnostics else EXIT_OK
        # Only the servers of the sources the code imports are started (all when that cannot be told).
        servers: dict[str, Collection[str] | None] = {"servers": None}
        registry = _Lazy(lambda: open_registry(args, progress, **servers))
        try:
            with _mode(registry, args.package) as mode:
                if not mode.check(text):  # clean: start the servers now, so no call's time includes it
                    servers["servers"] = sources_imported(text, mode.modules, load_package(args.package).TOOLS)
                    registry.open()
                run = mode.run(
                    text,
                    timeout_seconds=args.timeout,
                    max_tool_calls=args.max_tool_calls,
                    max_memory_bytes=args.max_memory,
                    max_output_chars=args.max_output,
                    max_value_chars=args.max_value,
                )
        finally:
            registry.close()
        return _report(run, name, args.json, prog)
    except UsageError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _report(run: CodeRun, name: str, as_json: bool, prog: str) -> int:
    if as_json:
        error = None if run.error is None else {"kind": run.error.kind, "message": run.error.message}
        calls = [vars(c) for c in run.calls]
        print(json.dumps({"value": run.value, "output": run.output, "calls": calls, "error": error}, default=repr))
        return EXIT_OK if run.error is None else EXIT_FAILED
    sys.stdout.write(run.output)
    if run.error is not None:
        if run.error.kind == "check":
            for d in run.error.diagnostics:
                print(f"{name}:{d}", file=sys.stderr)
        else:
            print(f"{prog}: {name}: {run.error}", file=sys.stderr)
        return EXIT_FAILED
    if run.value is not None:
        print(json.dumps(run.value, ensure_ascii=False, default=repr))
    return EXIT_OK


def _routes(registry: Any) -> Any:
    """Whether the registry routes a wire name to a provider (its one routing rule); None (serve
    everything) for a provider without that rule."""
    route = getattr(registry, "_route", None)
    if route is None:
        return None
    from mas.runtime.contracts.tool_contract import ToolResultEnvelope

    return lambda wire: not isinstance(route(wire), ToolResultEnvelope)


def serve_command(args: argparse.Namespace, progress: Progress, open_registry: Any, prog: str) -> int:
    from mas.runtime.code_mode.server import (
        HttpSecurityError,
        build_server,
        http_security,
        oauth_resource,
        serve_http,
        serve_stdio,
    )

    try:
        security = None
        oauth_given = [args.oauth_issuer, args.oauth_resource, args.oauth_introspection, args.oauth_scope,
                       args.oauth_client_id, args.oauth_client_secret]  # fmt: skip
        if args.http:  # refused before any server starts
            try:
                oauth = oauth_resource(args.oauth_issuer, args.oauth_resource, args.oauth_introspection,
                                       args.oauth_scope, args.oauth_client_id, args.oauth_client_secret)  # fmt: skip
                security = http_security(args.host, args.auth_token, args.allowed_host, oauth)
            except HttpSecurityError as exc:
                raise UsageError(str(exc)) from exc
        elif args.auth_token or args.allowed_host or any(oauth_given):
            raise UsageError("--auth-token, --allowed-host and the --oauth-* options are for --http")
        load_package(args.package)
        shared = {
            "max_concurrent_runs": args.max_concurrent_runs,
            "max_queue_seconds": args.max_queue_seconds,
            "max_queued_runs": args.max_queued_runs,
            "max_parallel_calls": args.max_parallel_calls,
        }
        with (
            open_registry(args, progress) as registry,
            _mode(registry, args.package, reachable=_routes(registry), **shared) as mode,
        ):
            for module in mode.left_out:  # serve what can be called
                print(f"{prog}: warning: tools.{module} is left out: no server or tool directory of the "
                      "registry answers its tools", file=sys.stderr)  # fmt: skip
            limits = {"timeout_seconds": args.timeout, "max_tool_calls": args.max_tool_calls,
                      "max_memory_bytes": args.max_memory, "max_output_chars": args.max_output,
                      "max_value_chars": args.max_value}  # fmt: skip
            server = build_server(mode, confirm_destructive=args.confirm_destructive, **limits)
            if security is not None:
                print(f"{prog}: {security.describe(args.host, args.port)}; Ctrl-C stops it", file=sys.stderr)
                serve_http(server, args.host, args.port, security)
            else:
                serve_stdio(server)
        return EXIT_OK
    except UsageError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return EXIT_OK
