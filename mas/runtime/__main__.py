"""``mas-runtime`` (same as ``python -m mas.runtime``): inspect and try the tools a RuntimeRegistry sees.

    mas-runtime list --tools library-samples/tools [--infra FILE] [--local pkg.mod:Class]
    mas-runtime call unit_convert '{"value": 5, "from_unit": "km", "to_unit": "mi"}' --tools ...
    mas-runtime code check|run FILE --package P [--infra FILE] [--tools DIR]   (code mode)
    mas-runtime serve --code-mode --package P [--infra FILE] [--tools DIR] [--http --port N]

Exit status: 0 ok, 1 the tool returned an error envelope, 2 bad configuration or usage.
Both launch styles run this ``main`` with the same program name, options and handler look-up
(``mas.runtime.skills``: sys.path, then the working folder, then the YAML file's folder).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Collection, Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from mas.runtime.code_mode import _cli as _code_cli
from mas.runtime.config import ConfigError, MCPServerConfig, positive_seconds
from mas.runtime.contracts._rules import one_line
from mas.runtime.contracts.tool_contract import entry_hints
from mas.runtime.logs import routed_logging
from mas.runtime.progress import Progress
from mas.runtime.redact import blank, blanked_output
from mas.runtime.registry import ProviderFactory, RuntimeRegistry
from mas.runtime.tool_checks import tool_problems

__all__ = ["format_table", "main"]

PROG = "mas-runtime"
_COLUMNS = ("NAME", "PROVIDER", "TITLE", "HINTS", "REQUIRED")
EXIT_OK, EXIT_TOOL_ERROR, EXIT_BAD_INPUT = 0, 1, 2
#: `call --timeout` default: a server that never answers must not hang the command.
CALL_TIMEOUT = 60.0
_EPILOG = """\
exit status: 0 ok, 1 the tool returned an error result (call), diagnostics or a failed run
(code), 2 bad configuration or usage.
Handler modules named in tool YAML are imported from sys.path, else from the working folder,
else from the YAML file's folder."""


def _version() -> str:
    try:
        return version("toolgen")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree that was never installed
        return "unknown"


def _hints(entry: Mapping[str, Any]) -> str:
    on = [key.replace("_", "-") for key, said in entry_hints(entry).items() if said is True]
    return ", ".join(on)


def _row(entry: Mapping[str, Any], provider: str) -> tuple[str, ...]:
    required = (entry.get("parameters") or {}).get("required") or []
    cells = (entry["name"], provider, entry.get("title") or "", _hints(entry), ", ".join(map(str, required)))
    return tuple(cell or "-" for cell in cells)


def format_table(rows: Sequence[Sequence[str]], header: Sequence[str] = _COLUMNS) -> str:
    """A plain left-aligned text table; columns are separated by two spaces. Every cell is one
    visible line (``one_line``): a server's names and titles may carry terminal escapes (a window
    title, OSC 52 clipboard writes, erase-line) and line breaks that would forge or hide rows."""
    rows = [tuple(one_line(str(cell)) for cell in row) for row in rows]
    widths = [max(len(str(r[i])) for r in (header, *rows)) for i in range(len(header))]
    lines = [
        "  ".join(str(cell).ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in (header, *rows)
    ]
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog=PROG, description="Inspect a tool runtime registry.", epilog=_EPILOG, formatter_class=fmt
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    common = argparse.ArgumentParser(add_help=False)  # every command: sources, -q, -v
    common.add_argument("--infra", action="append", default=[], metavar="FILE", help="infra YAML (repeatable)")
    common.add_argument("--tools", action="append", default=[], metavar="PATH", help="tool YAML file or folder")
    common.add_argument("--local", action="append", default=[], metavar="pkg.mod:Class", help="ToolContract class")
    common.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    common.add_argument("-v", "--verbose", action="store_true", help="more detail on stderr")
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser(
        "list", parents=[common], help="print the tools as a table", epilog=_EPILOG, formatter_class=fmt
    )
    listing.add_argument("--json", action="store_true", help="print the list_tools entries as JSON instead")
    listing.add_argument(
        "--surface",
        action="store_true",
        help="with --json: print one object, {tools, resources, resource_templates, prompts}, instead of "
        "the array of tools (which --json alone keeps printing, for the scripts that read it)",
    )
    call = commands.add_parser(
        "call",
        parents=[common],
        help="call one tool and print the result envelope",
        epilog=_EPILOG,
        formatter_class=fmt,
    )
    call.add_argument("tool", help="tool name as listed")
    call.add_argument("arguments", nargs="?", default="{}", help="arguments as a JSON object (default: {})")
    call.add_argument(
        "--timeout",
        type=positive_seconds,
        metavar="SECONDS",
        help="give up on the call after this long, with a timeout error (default: the tool's own "
        f"timeout_seconds, else {CALL_TIMEOUT:g})",
    )
    _code_cli.add_commands(commands, common, _EPILOG)  # code check|run, serve --code-mode
    return parser


def _reporting_factory(progress: Progress) -> ProviderFactory:
    """MCP providers whose listing shows progress (connecting, page N, done)."""
    from mas.runtime.mcp.provider import MCPToolProvider

    class ReportedProvider(MCPToolProvider):
        def list_tools(self) -> list[dict[str, Any]]:
            with progress.server(self.name) as task:
                self.on_page = task.page
                entries = super().list_tools()
                task.done(len(entries))
            return entries

    def build(config: MCPServerConfig) -> MCPToolProvider:
        return ReportedProvider(config)

    return build


def _open(args: argparse.Namespace, progress: Progress, servers: Collection[str] | None = None) -> RuntimeRegistry:
    """The registry of the command's sources; ``servers``: start only these infra servers."""
    factory = _reporting_factory(progress) if args.infra else None
    progress.detail(f"sources: infra={args.infra} tools={args.tools} local={args.local}")
    return RuntimeRegistry.from_sources(
        infra=args.infra, tools=args.tools, local=args.local, mcp_factory=factory, servers=servers
    )


def list_command(args: argparse.Namespace, progress: Progress) -> int:
    with _open(args, progress) as registry:
        entries = registry.list_tools()
        for at, message in tool_problems(entries):  # the rule toolgen generate applies
            owner = registry.owner_of(str(entries[int(at.split("/")[2])].get("name"))) or "?"
            print(f"{PROG}: error: provider {owner!r}: {at}: {message}", file=sys.stderr)
            return EXIT_BAD_INPUT
        if args.json and args.surface:
            whole = {
                "tools": entries,
                "resources": registry.list_resources(),
                "resource_templates": registry.list_resource_templates(),
                "prompts": registry.list_prompts(),
            }
            print(blank(json.dumps(whole, indent=2, sort_keys=True)))
        elif args.json:
            print(blank(json.dumps(entries, indent=2, sort_keys=True)))
        else:
            print(blank(format_table([_row(e, registry.owner_of(e["name"]) or "?") for e in entries])))
            surface = _surface_tables(registry)
            if surface:
                print(blank(surface))
        return EXIT_OK


def _surface_tables(registry: RuntimeRegistry) -> str:
    """The servers' resources, templates and prompts as tables, after the tools (docs:
    resources-and-prompts.md); nothing at all when no server has any."""
    parts: list[str] = []
    resources = [(r.get("uri"), r["server"], r.get("mimeType"), r.get("title") or r.get("name"))
                 for r in registry.list_resources()]  # fmt: skip
    templates = [(t.get("uriTemplate"), t["server"], t.get("mimeType"), t.get("title") or t.get("name"))
                 for t in registry.list_resource_templates()]  # fmt: skip
    prompts = [(p["name"], p["server"], p.get("title") or "", ", ".join(
        str(a.get("name")) + ("" if a.get("required") else "?") for a in p.get("arguments") or ()
    )) for p in registry.list_prompts()]  # fmt: skip
    for rows, header in (
        (resources, ("RESOURCE", "PROVIDER", "MIME TYPE", "NAME")),
        (templates, ("TEMPLATE", "PROVIDER", "MIME TYPE", "NAME")),
        (prompts, ("PROMPT", "PROVIDER", "TITLE", "ARGUMENTS (? optional)")),
    ):
        if rows:
            parts.append(format_table([tuple(str(c or "-") for c in row) for row in rows], header))
    return "\n" + "\n\n".join(parts) if parts else ""


def _call_timeout(args: argparse.Namespace, registry: RuntimeRegistry) -> float:
    """--timeout, else the tool's declared timeout_seconds, else CALL_TIMEOUT: never unbounded."""
    if args.timeout is not None:
        return float(args.timeout)
    declared = next((e.get("timeout_seconds") for e in registry.list_tools() if e.get("name") == args.tool), None)
    return float(declared) if isinstance(declared, int | float) and declared > 0 else CALL_TIMEOUT


def call_command(args: argparse.Namespace, progress: Progress) -> int:
    try:
        arguments = json.loads(args.arguments)
    except json.JSONDecodeError as exc:
        print(f"{PROG}: error: arguments: not valid JSON: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    with _open(args, progress) as registry:
        envelope = registry.call_tool(args.tool, arguments, timeout_seconds=_call_timeout(args, registry))
        print(blank(json.dumps(envelope.to_dict(), indent=2, sort_keys=True, default=str)))
        return EXIT_TOOL_ERROR if envelope.is_error else EXIT_OK


def code_command(args: argparse.Namespace, progress: Progress) -> int:
    return _code_cli.code_command(args, progress, _open, PROG)


def serve_command(args: argparse.Namespace, progress: Progress) -> int:
    return _code_cli.serve_command(args, progress, _open, PROG)


COMMANDS = {"list": list_command, "call": call_command, "code": code_command, "serve": serve_command}


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse exits on --help and on usage errors
        return exc.code if isinstance(exc.code, int) else EXIT_BAD_INPUT
    try:
        with (
            blanked_output(),  # whatever the command prints, no resolved secret (docs/security.md)
            routed_logging(PROG, verbose=args.verbose),
            Progress(PROG, quiet=args.quiet, verbose=args.verbose) as p,
        ):
            return COMMANDS[args.command](args, p)
    except ConfigError as exc:
        print(f"{PROG}: error: {blank(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # `... | head`: stop quietly, and keep Python from failing on the final flush
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as exc:  # a bug of ours (or a library's): one blanked line; -v shows the traceback
        if args.verbose:
            # Printed here, blanked: re-raising would let Python print it after blanked_output()
            # ended, with any secret the exception quotes (docs/security.md).
            print(blank(traceback.format_exc()), end="", file=sys.stderr)
            return EXIT_BAD_INPUT
        print(
            f"{PROG}: internal error: {blank(one_line(f'{type(exc).__name__}: {exc}'))} (-v shows it)", file=sys.stderr
        )
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
