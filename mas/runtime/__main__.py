"""``python -m mas.runtime``: inspect and try the tools a RuntimeRegistry sees.

    python -m mas.runtime list --tools library-samples/tools [--infra FILE] [--local pkg.mod:Class]
    python -m mas.runtime call unit_convert '{"value": 5, "from_unit": "km", "to_unit": "mi"}' --tools ...

Exit status: 0 ok, 1 the tool returned an error envelope, 2 bad configuration or usage.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from mas.runtime._logs import routed_logging
from mas.runtime.config import ConfigError
from mas.runtime.contracts.tool_contract import HINT_KEYS
from mas.runtime.registry import RuntimeRegistry
from mas.runtime.tool_checks import tool_problems

__all__ = ["format_table", "main"]

_COLUMNS = ("NAME", "PROVIDER", "TITLE", "HINTS", "REQUIRED")


def _hints(entry: Mapping[str, Any]) -> str:
    annotations = entry.get("annotations") or {}
    on = [key.replace("_", "-") for key, hint in HINT_KEYS.items() if entry.get(key, annotations.get(hint)) is True]
    return ", ".join(on)


def _row(entry: Mapping[str, Any], provider: str) -> tuple[str, ...]:
    required = (entry.get("parameters") or {}).get("required") or []
    cells = (entry["name"], provider, entry.get("title") or "", _hints(entry), ", ".join(map(str, required)))
    return tuple(cell or "-" for cell in cells)


def format_table(rows: Sequence[Sequence[str]], header: Sequence[str] = _COLUMNS) -> str:
    """A plain left-aligned text table; columns are separated by two spaces."""
    widths = [max(len(str(r[i])) for r in (header, *rows)) for i in range(len(header))]
    lines = [
        "  ".join(str(cell).ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in (header, *rows)
    ]
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m mas.runtime", description="Inspect a tool runtime registry.")
    sources = argparse.ArgumentParser(add_help=False)
    sources.add_argument("--infra", action="append", default=[], metavar="FILE", help="infra YAML (repeatable)")
    sources.add_argument("--tools", action="append", default=[], metavar="PATH", help="tool YAML file or folder")
    sources.add_argument("--local", action="append", default=[], metavar="pkg.mod:Class", help="ToolContract class")
    sources.add_argument("-v", "--verbose", action="store_true", help="show library logging in full (tracebacks)")
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", parents=[sources], help="print the tools as a table")
    listing.add_argument("--json", action="store_true", help="print the list_tools entries as JSON instead")
    call = commands.add_parser("call", parents=[sources], help="call one tool and print the result envelope")
    call.add_argument("tool", help="tool name as listed")
    call.add_argument("arguments", nargs="?", default="{}", help="arguments as a JSON object (default {})")
    return parser


def _run(args: argparse.Namespace) -> int:
    with RuntimeRegistry.from_sources(infra=args.infra, tools=args.tools, local=args.local) as registry:
        if args.command == "list":
            entries = registry.list_tools()
            for at, message in tool_problems(entries):  # the rule toolgen generate applies
                owner = registry.owner_of(str(entries[int(at.split("/")[2])].get("name"))) or "?"
                print(f"python -m mas.runtime: error: provider {owner!r}: {at}: {message}", file=sys.stderr)
                return 2
            if args.json:
                print(json.dumps(entries, indent=2, sort_keys=True))
            else:
                print(format_table([_row(e, registry.owner_of(e["name"]) or "?") for e in entries]))
            return 0
        try:
            arguments = json.loads(args.arguments)
        except json.JSONDecodeError as exc:
            print(f"arguments: not valid JSON: {exc}", file=sys.stderr)
            return 2
        envelope = registry.call_tool(args.tool, arguments)
        print(json.dumps(envelope.to_dict(), indent=2, sort_keys=True, default=str))
        return 1 if envelope.is_error else 0


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse exits on --help and on usage errors
        return exc.code if isinstance(exc.code, int) else 2
    try:
        with routed_logging("python -m mas.runtime", verbose=args.verbose):
            return _run(args)
    except ConfigError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except BrokenPipeError:  # `... | head`: stop quietly, and keep Python from failing on the final flush
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
