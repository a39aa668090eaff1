"""``toolgen`` / ``python -m codegen``: one entry point, a thin layer over ``codegen.generate``.

Layout, for whoever adds an option or a subcommand: ``_common()`` is the parent parser every
subcommand takes (``-q``, ``-v``); each subcommand has an ``_add_<name>()`` that declares its
options and a ``<name>_command(args, progress)`` that runs it; ``COMMANDS`` maps names to both.
Results go to stdout; progress and notes to stderr (``-q`` silences them); an error is one line
on stderr, ``toolgen: error: ...``.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TypeAlias

from codegen import __version__, diff_cli, record
from codegen.drift_report import summary_lines
from codegen.errors import GenerateError, one_line
from codegen.generate import Outcome, run, shown
from codegen.settings import Settings, load_settings
from mas.runtime.logs import routed_logging
from mas.runtime.progress import Progress
from mas.runtime.redact import blank, blanked_output

__all__ = ["COMMANDS", "PROG", "main"]

PROG = "toolgen"
EXIT_OK, EXIT_STALE, EXIT_BAD_INPUT = 0, 1, 2
_DEFAULTS = Settings()

_GENERATE_EPILOG = f"""\
Settings: an option not given comes from [tool.toolgen] in the nearest pyproject.toml (paths there
are relative to that file), else from the default shown. The sources --tools, --infra and
--mcp-json are one group: naming any of them replaces all the configured sources.

Exit status: {EXIT_OK} written (or up to date with --check), {EXIT_STALE} stale (--check, --diff),
{EXIT_BAD_INPUT} bad input (one line on stderr naming the file and field).
"""

Command = Callable[[argparse.Namespace, Progress], int]
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def _common() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-q", "--quiet", action="store_true", help="no progress or notes on stderr")
    common.add_argument(
        "-v", "--verbose", action="store_true", help="more detail: every file, every lock change, library logs in full"
    )
    return common


def _add_generate(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    gen = commands.add_parser(
        "generate",
        parents=[common],
        help="generate the typed package",
        description="Generate OUT/PACKAGE/ from tool YAML, live MCP servers and saved tools/list JSON.",
        epilog=_GENERATE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    gen.add_argument("--tools", action="append", metavar="PATH", help="kind: Tool YAML file or folder (repeatable)")
    gen.add_argument("--infra", action="append", metavar="PATH", help="infra file; servers listed live (repeatable)")
    gen.add_argument(
        "--mcp-json",
        action="append",
        metavar="[NAME=]PATH",
        help="saved tools/list result (repeatable); NAME= names its source (default: the file's stem)",
    )
    # --snapshot: the lock's older name, kept as an alias because scripts and CI jobs still pass it.
    gen.add_argument(
        "--lock", "--snapshot", dest="lock", metavar="PATH",
        help=f"the lock file of live listings (default: {_DEFAULTS.lock}); --snapshot is the older name",
    )  # fmt: skip
    gen.add_argument("--offline", action="store_true", help="take live listings from the lock; contact no server")
    gen.add_argument("--out", metavar="DIR", help=f"output folder; the package is DIR/NAME (default: {_DEFAULTS.out})")
    gen.add_argument("--package", metavar="NAME", help=f"package name (default: {_DEFAULTS.package})")
    gen.add_argument("--check", action="store_true", help="write nothing; exit 1 and list the files if stale")
    gen.add_argument("--diff", action="store_true", help="like --check, and print a unified diff")
    gen.add_argument("--strict-schemas", action="store_true", help="a schema typed as Any is an error, not a warning")
    gen.add_argument(
        "--samples",
        action="append",
        metavar="FILE",
        help=f"recorded results to infer types from (default: {_DEFAULTS.samples[0]}, when it exists)",
    )
    gen.add_argument(
        "--cassette",
        action="append",
        metavar="PATH",
        help="a test kit cassette, or a folder of them, that --check checks against the package (repeatable)",
    )
    gen.add_argument("--no-cache", action="store_true", help="neither read nor write .toolgen-cache/")
    diff_cli.add_impact_arguments(gen)  # with --check: also which call sites of your code the change breaks


def generate_command(args: argparse.Namespace, progress: Progress) -> int:
    overrides = {
        "tools": args.tools,
        "infra": args.infra,
        "mcp_json": args.mcp_json,
        "lock": args.lock,
        "out": args.out,
        "package": args.package,
        "offline": args.offline or None,
        "check": args.check or args.diff or None,
        "diff": args.diff or None,
        "strict_schemas": args.strict_schemas or None,
        "samples": args.samples,
        "cassettes": args.cassette,
        "no_cache": args.no_cache,
    }
    settings = load_settings(Path.cwd(), overrides)
    if args.impact and not settings.check:
        raise GenerateError("--impact goes with --check (or use `toolgen diff --impact`)")
    if settings.config_file is None and args.out is None and args.package is None:
        progress.note(
            f"no [tool.toolgen] in a pyproject.toml here or above: writing to {shown(settings.target)}/ "
            "(the defaults; set --out and --package to choose)"
        )
    elif settings.config_file is not None:
        progress.detail(f"settings from {shown(settings.config_file)} [tool.toolgen]")
    outcome = run(settings, progress=progress)
    for degradation in outcome.degradations:
        print(f"{PROG}: warning: {degradation}", file=sys.stderr)
    if settings.check:
        code = _report_check(settings, outcome)
        if args.impact:  # the live change against your code (docs/drift.md, "Upgrading")
            from codegen.impact import impact

            broke = impact(replace(settings, check=False, diff=False), args.impact, args.checker, sys.stdout)[0]
            return broke or code
        return code
    _report_lock(outcome)
    _report_package(settings, outcome, progress)
    print(f"{PROG}: typed results: {outcome.coverage}")
    return EXIT_OK


def _report_lock(outcome: Outcome) -> None:
    for line in summary_lines(outcome.drift):  # what the servers changed against the lock, classified
        print(f"{PROG}: {line}")
    lock = outcome.lock
    if lock is None:
        return
    what = "created" if not lock.existed else "updated" if lock.changed else "unchanged"
    locked = ", ".join(f"{name} ({count} tool(s))" for name, count in lock.sources.items())
    print(f"{PROG}: {shown(lock.path)}: {what}; locked {locked}")


def _report_package(settings: Settings, outcome: Outcome, progress: Progress) -> None:
    removed = sum(1 for c in outcome.changes if c.kind == "removed")
    written = len(outcome.changes) - removed
    unchanged = len(outcome.files) - written
    print(f"{PROG}: {shown(settings.target)}: {written} written, {unchanged} unchanged, {removed} removed")
    for change in outcome.changes:
        print(f"  {change}")
    changed = {c.path for c in outcome.changes}
    for name in outcome.files:
        if name not in changed:
            progress.detail(f"unchanged {name}")


def _report_check(settings: Settings, outcome: Outcome) -> int:
    target = shown(settings.target)
    if not outcome.stale:
        print(f"{PROG}: {target} is up to date")
        return EXIT_OK
    if outcome.changes or outcome.lock_changed:
        print(f"{PROG}: {target} is stale; these files would change:")
    for change in outcome.changes:
        print(f"  {change}")
    if outcome.lock_changed:
        print(f"  changed  {shown(settings.lock)} (lock)")
    for line in summary_lines(outcome.drift):  # what the servers changed, classified
        print(f"{PROG}: {line}")
    for line in outcome.cassettes:  # recorded calls that no longer fit the package (the test kit's)
        print(f"{PROG}: cassette {line}")
    if outcome.changes or outcome.lock_changed:
        print(f"{PROG}: run `{PROG} generate` to update")
    else:
        print(f"{PROG}: record the cassettes again (the package's testing.Recorder) or edit them")
    return EXIT_STALE


def _add_diff(commands: Subcommands, common: argparse.ArgumentParser) -> None:
    diff_cli.add_arguments(
        commands.add_parser("diff", parents=[common], help="classify tool changes", description=diff_cli.DESCRIPTION)
    )


def diff_command(args: argparse.Namespace, progress: Progress) -> int:
    return diff_cli.main(args)


def _add_record(commands: Subcommands, common: argparse.ArgumentParser) -> None:
    record.add_parser(commands, parents=[common])


def record_command(args: argparse.Namespace, progress: Progress) -> int:
    return record.main(args)


COMMANDS: dict[str, tuple[Callable[[Subcommands, argparse.ArgumentParser], None], Command]] = {
    "generate": (_add_generate, generate_command),
    "diff": (_add_diff, diff_command),
    "record": (_add_record, record_command),
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Typed Python tool stubs for the ToolContract.",
        epilog=f"`{PROG} generate --help` shows the options, their defaults and the exit status.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    common = _common()
    for add, _ in COMMANDS.values():
        add(commands, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        with (
            blanked_output(),  # whatever the command prints, no resolved secret (docs/security.md)
            routed_logging(PROG, verbose=args.verbose),
            Progress(PROG, quiet=args.quiet, verbose=args.verbose) as p,
        ):
            return COMMANDS[args.command][1](args, p)
    except GenerateError as exc:
        print(f"{PROG}: error: {blank(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:  # a bug of ours: still one line (the fuzz tests fail on any); -v shows it
        if args.verbose:
            # Printed here, blanked: re-raising would let Python print the traceback after
            # blanked_output() ended, with any secret the exception quotes (docs/security.md).
            print(blank(traceback.format_exc()), end="", file=sys.stderr)
            return EXIT_BAD_INPUT
        print(
            f"{PROG}: internal error: {blank(one_line(f'{type(exc).__name__}: {exc}'))} (-v shows it)", file=sys.stderr
        )
        return EXIT_BAD_INPUT


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
