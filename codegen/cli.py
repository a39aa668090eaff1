"""``toolgen generate`` / ``python -m codegen generate``: a thin layer over ``codegen.generate``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from codegen import __version__, diff_cli
from codegen.drift_report import summary_lines
from codegen.errors import GenerateError
from codegen.generate import run, shown
from codegen.settings import load_settings

__all__ = ["main"]

EXIT_OK, EXIT_STALE, EXIT_BAD_INPUT = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toolgen", description="Typed Python tool stubs for the ToolContract.")
    parser.add_argument("--version", action="version", version=f"toolgen {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    gen = commands.add_parser(
        "generate",
        help="generate the typed package",
        description="Generate DIR/NAME/ from tool YAML, live MCP servers and saved tools/list JSON. "
        "Defaults come from [tool.toolgen] in pyproject.toml.",
    )
    gen.add_argument("--tools", action="append", metavar="PATH", help="kind: Tool YAML file or folder (repeatable)")
    gen.add_argument("--infra", action="append", metavar="PATH", help="infra file; servers listed live (repeatable)")
    gen.add_argument("--mcp-json", action="append", metavar="PATH", help="saved tools/list result (repeatable)")
    gen.add_argument("--snapshot", metavar="PATH", help="schema lock file for live listings")
    gen.add_argument("--offline", action="store_true", help="use the snapshot; contact no server")
    gen.add_argument("--out", metavar="DIR", help="output folder (the package is DIR/NAME)")
    gen.add_argument("--package", metavar="NAME", help="package name")
    gen.add_argument("--check", action="store_true", help="write nothing; exit 1 if the output is stale")
    gen.add_argument("--diff", action="store_true", help="with --check: print a unified diff")
    gen.add_argument("--no-cache", action="store_true", help="neither read nor write .toolgen-cache/")
    diff_cli.add_arguments(commands.add_parser("diff", help="classify tool changes", description=diff_cli.DESCRIPTION))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "diff":
        return diff_cli.main(args)
    overrides = {
        "tools": args.tools,
        "infra": args.infra,
        "mcp_json": args.mcp_json,
        "snapshot": args.snapshot,
        "out": args.out,
        "package": args.package,
        "offline": args.offline or None,
        "check": args.check or args.diff or None,
        "diff": args.diff or None,
        "no_cache": args.no_cache,
    }
    try:
        settings = load_settings(Path.cwd(), overrides)
        outcome = run(settings)
    except GenerateError as exc:
        print(f"toolgen: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    target = shown(settings.target)
    if settings.check:
        if not outcome.stale:
            print(f"toolgen: {target} is up to date")
            return EXIT_OK
        print(f"toolgen: {target} is stale; these files would change:")
        for change in outcome.changes:
            print(f"  {change}")
        if outcome.snapshot_changed:
            print(f"  changed  {shown(settings.snapshot)} (snapshot)")
        for line in summary_lines(outcome.drift):  # what the servers changed, classified
            print(f"toolgen: {line}")
        print("toolgen: run `toolgen generate` to update")
        return EXIT_STALE
    for line in summary_lines(outcome.drift):
        print(f"toolgen: {line}")
    print(
        f"toolgen: {target}: {len(outcome.changes)} file(s) written"
        if outcome.changes
        else f"toolgen: {target} unchanged"
    )
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
