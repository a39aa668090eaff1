"""``toolgen diff``: classify what changed between the lock and the servers, two files, or YAML.

Three forms (``docs/drift.md``):

* ``toolgen diff``: the lock against the live servers of the configuration;
* ``toolgen diff OLD NEW``: two files, each a lock or a saved ``tools/list`` result;
* ``toolgen diff --tools DIR``: the lock's skills against tool YAML.

Besides the listings, each form compares the output types inferred from samples, where both sides
have them: the lock's against what the samples files infer now, or two locks' with each other.

Exit codes: 0 no change; 1 changes, none at or above ``--fail-on``; 3 at least one at or above
``--fail-on``; 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from codegen.drift import Change, diff_listings, diff_surface
from codegen.drift_report import FAIL_LEVELS, at_or_above, render_json, render_table
from codegen.errors import GenerateError
from codegen.generate import infer_all
from codegen.impact import CHECKERS, SavedListings, impact
from codegen.infer import inferred_changes
from codegen.lock import Lock, drift_between, is_lock, load_lock, lock_from_data
from codegen.model import YAML_SOURCE_NAME, SourceTools
from codegen.settings import Settings, load_settings
from codegen.sources import parse_infra, parse_mcp_json, parse_yaml_tools, read_live
from mas.runtime.json_file import read_json

__all__ = [
    "DESCRIPTION",
    "EXIT_BAD_INPUT",
    "EXIT_CHANGED",
    "EXIT_FAILING",
    "EXIT_SAME",
    "add_arguments",
    "add_impact_arguments",
    "compare",
    "main",
]

EXIT_SAME, EXIT_CHANGED, EXIT_BAD_INPUT, EXIT_FAILING = 0, 1, 2, 3

Listing = Mapping[str, Sequence[Mapping[str, Any]]]
DESCRIPTION = (
    "Classify what changed in each tool (breaking, review, compatible): the lock against the live "
    "servers, OLD against NEW (each a lock or a saved tools/list JSON), or --tools YAML against the "
    "lock's skills. Exit 0 no change, 1 changes below --fail-on, 3 at or above it, 2 bad input."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", metavar="OLD NEW", help="two files, each a lock or a tools/list JSON")
    parser.add_argument("--tools", action="append", metavar="PATH", help="compare tool YAML with the lock's skills")
    parser.add_argument("--infra", action="append", metavar="PATH", help="infra file whose servers are listed live")
    # --snapshot: the lock's older name, kept as an alias because scripts and CI jobs still pass it.
    parser.add_argument(
        "--lock", "--snapshot", dest="lock", metavar="PATH",
        help="the lock file (default from [tool.toolgen]; --snapshot is the older name)",
    )  # fmt: skip
    parser.add_argument("--server", metavar="NAME", help="the lock's server a bare tools/list file stands for")
    parser.add_argument(
        "--samples", action="append", metavar="FILE", help="samples file to infer output types from (repeatable)"
    )
    parser.add_argument("--json", action="store_true", help='print {"changes": [...]} instead of a table')
    parser.add_argument(
        "--fail-on", choices=sorted(FAIL_LEVELS), default="breaking", help="lowest severity that exits 3"
    )
    add_impact_arguments(parser)


def add_impact_arguments(parser: argparse.ArgumentParser) -> None:
    """``--impact PATH...`` and ``--checker``: shared by ``diff`` and ``generate --check``."""
    parser.add_argument(
        "--impact",
        nargs="+",
        metavar="PATH",
        help="type-check your code at PATH against the new package and the current one; report only the call "
        "sites the change breaks (exit 3), else exit 0",
    )
    parser.add_argument(
        "--checker",
        choices=sorted(CHECKERS),
        help="the type checker for --impact (default: what the project configures)",
    )


def _read_file(path: Path) -> tuple[Lock | None, Sequence[Mapping[str, Any]] | None]:
    """A lock or a bare tools/list result (its tools)."""
    data = read_json(path, GenerateError)
    if is_lock(data):
        return lock_from_data(data, path), None
    return None, parse_mcp_json(path).tools


def _name_for(tools_path: Path, other: Listing | None, server: str | None) -> str:
    if server is not None:
        return server
    if other is not None and len(other) == 1:
        return next(iter(other))
    if other is not None:
        names = ", ".join(sorted(other))
        raise GenerateError(f"the lock has several servers ({names}); say which one with --server", str(tools_path))
    return tools_path.stem


def _compare_files(old_path: Path, new_path: Path, server: str | None) -> tuple[Change, ...]:
    old_lock, old_tools = _read_file(old_path)
    new_lock, new_tools = _read_file(new_path)
    if old_lock is not None and new_lock is not None and server is None:
        return drift_between(old_lock, new_lock)  # listings and inferred output types
    old = old_lock.listings() if old_lock is not None else None
    new = new_lock.listings() if new_lock is not None else None
    if old_tools is not None and new_tools is not None:
        # Two saved listings of one server: name it after the newer file.
        name = server or new_path.stem
        return diff_listings({name: old_tools}, {name: new_tools})
    if old_tools is not None:
        old = {_name_for(old_path, new, server): old_tools}
    if new_tools is not None:
        new = {_name_for(new_path, old, server): new_tools}
    assert old is not None and new is not None
    if server is not None:
        old, new = {server: old.get(server, ())}, {server: new.get(server, ())}
    changes = diff_listings(old, new)
    if (
        old_lock is not None
        and new_lock is not None
        and old_lock.inferred is not None
        and new_lock.inferred is not None
    ):
        # Two locks narrowed to one server (--server): their inferred types of that server.
        changes += inferred_changes(old, old_lock.inferred, new, new_lock.inferred)
    return changes


def _with_inferred(lock: Lock, old: Listing, now: Sequence[SourceTools], settings: Settings) -> tuple[Change, ...]:
    """The listings' changes (lock ``old`` against ``now``), and their inferred output types': the
    lock's against what the samples files infer now (none when the lock is of format 1 or 2)."""
    new = {s.name: s.tools for s in now}
    changes = diff_listings(old, new)
    if lock.inferred is not None:
        recorded = {name: lock.inferred.get(name, {}) for name in new}
        changes += inferred_changes(old, recorded, new, infer_all(now, settings))
    return changes


def compare(args: argparse.Namespace, cwd: Path) -> tuple[Change, ...]:
    """The changes the arguments ask for. Raises GenerateError on bad input."""
    if args.files:
        if len(args.files) != 2:
            raise GenerateError("give two files, OLD and NEW (or none to compare the lock with the live servers)")
        # As given (relative to the working folder): messages then show no machine path.
        return _compare_files(Path(args.files[0]), Path(args.files[1]), args.server)
    overrides = {"tools": args.tools, "infra": args.infra, "lock": args.lock, "samples": args.samples}
    settings = load_settings(cwd, overrides)
    if not settings.lock.is_file():
        raise GenerateError("no lock file; run `toolgen generate` to create it", str(settings.lock))
    lock = load_lock(settings.lock)
    if args.tools:
        skills = parse_yaml_tools(settings.tools)
        return _with_inferred(lock, {YAML_SOURCE_NAME: lock.skills or ()}, [skills], settings)
    if not settings.infra:
        raise GenerateError("no servers configured: give --infra, or set `infra` in [tool.toolgen]")
    live = read_live(parse_infra(settings.infra), settings.lock)
    # Only the configured servers: a lock may also hold servers another infra file lists.
    changes = _with_inferred(lock, {s.name: lock.servers.get(s.name, ()) for s in live}, live, settings)
    for source in live:  # resources, templates and prompts (docs/resources-and-prompts.md)
        changes += diff_surface(source.name, lock.surface.get(source.name, {}), source.surface)
    return changes


def _impact(args: argparse.Namespace, stdout: TextIO) -> int:
    if args.tools:
        raise GenerateError("--impact compares servers: the live ones with the lock, two locks, or two saved listings")
    overrides = {"infra": args.infra, "lock": args.lock, "samples": args.samples}
    settings = load_settings(Path.cwd(), overrides)
    if args.files:  # two saved tools/list results of one source, or two locks
        if len(args.files) != 2:
            raise GenerateError("give two files, OLD and NEW (or none to compare the lock with the live servers)")
        old, new = Path(args.files[0]), Path(args.files[1])
        locks = [is_lock(read_json(path, GenerateError)) for path in (old, new)]
        if locks[0] != locks[1]:
            raise GenerateError(
                "--impact with OLD NEW takes two locks or two saved tools/list results, not one of each",
                str(new if locks[1] else old),
            )
        if locks[0] and not settings.infra:  # the servers' names and prefixes come from the configuration
            raise GenerateError("no servers configured: give --infra, or set `infra` in [tool.toolgen]")
        changes = _compare_files(old, new, args.server)
        saved = SavedListings(old, new, None if locks[0] else args.server or new.stem, changes)
        return impact(settings, args.impact, args.checker, stdout, saved=saved)[0]
    if not settings.infra:
        raise GenerateError("no servers configured: give --infra, or set `infra` in [tool.toolgen]")
    return impact(settings, args.impact, args.checker, stdout)[0]


def main(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    stdout, stderr = out or sys.stdout, err or sys.stderr  # looked up per call: tests capture them
    try:
        if getattr(args, "impact", None):
            return _impact(args, stdout)
        changes = compare(args, Path.cwd())
    except GenerateError as exc:
        print(f"toolgen: error: {exc}", file=stderr)
        return EXIT_BAD_INPUT
    if args.json:
        render_json(changes, stdout)
    else:
        render_table(changes, stdout)
    if not changes:
        return EXIT_SAME
    return EXIT_FAILING if at_or_above(changes, args.fail_on) else EXIT_CHANGED
