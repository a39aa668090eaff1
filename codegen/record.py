"""``toolgen record``: call tools with example arguments through the real registry and keep the results.

The examples file is YAML, a list of calls and resource reads::

    - tool: sample.list_cities      # the name the registry exposes (the server's prefix included)
      arguments: {country: FR}      # optional; {} when left out
    - resource: sample://weather/Paris   # a resource read (a template's URI filled in)
      server: sample                # optional: which server reads it (the registry's routing otherwise)

Every call goes through ``RuntimeRegistry`` with a ``SampleRecorder`` at rate 1, so what is kept
is exactly what the runtime's recording option would keep (same wire form, same secret scrubbing,
same bounds). Error results are reported and not kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codegen.errors import GenerateError
from codegen.settings import DEFAULT_SAMPLES
from mas.runtime.config import positive_seconds

__all__ = ["DEFAULT_SAMPLES", "Example", "RecordOutcome", "load_examples", "record"]

#: Seconds each example call may take (``--timeout``): a server that never answers must not hang record.
CALL_TIMEOUT = 60.0


@dataclass(frozen=True)
class Example:
    tool: str  # "" for a resource read
    arguments: Mapping[str, Any]
    resource: str = ""  # the URI to read
    server: str | None = None  # the server that reads it (``read_resource``'s ``server=``)


@dataclass(frozen=True)
class RecordOutcome:
    recorded: int
    failed: tuple[str, ...]  # one line per call that returned an error
    calls: int = 0  # how many calls were made


def load_examples(path: Path) -> list[Example]:
    import yaml  # here, not at the top: every `toolgen` start imports this module

    from mas.runtime.yaml_source import LineLoader

    try:
        loader = LineLoader(path.read_text(encoding="utf-8"))  # SafeLoader that refuses alias bombs
        try:
            data = loader.get_single_data()
        finally:
            loader.dispose()
    except OSError as exc:
        raise GenerateError(f"cannot read: {exc.strerror}", str(path)) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise GenerateError(f"not YAML: {getattr(exc, 'problem', None) or exc}", where) from exc
    if not isinstance(data, list):
        raise GenerateError("must be a list of {tool, arguments} entries", str(path))
    examples = []
    for i, item in enumerate(data):
        if not isinstance(item, Mapping):
            raise GenerateError("an example must be a mapping", str(path), f"/{i}")
        if "resource" in item and "tool" not in item:
            examples.append(_read_example(item, path, i))
            continue
        tool, arguments = item.get("tool"), item.get("arguments", {})
        if not isinstance(tool, str) or not tool:
            raise GenerateError("tool must be a non-empty string", str(path), f"/{i}/tool")
        if not isinstance(arguments, Mapping):
            raise GenerateError("arguments must be a mapping", str(path), f"/{i}/arguments")
        unknown = sorted(set(item) - {"tool", "arguments"})
        if unknown:
            raise GenerateError(f"unknown key {unknown[0]!r} (known: arguments, tool)", str(path), f"/{i}")
        examples.append(Example(tool, dict(arguments)))
    return examples


def _read_example(item: Mapping[str, Any], path: Path, i: int) -> Example:
    uri, server = item.get("resource"), item.get("server")
    if not isinstance(uri, str) or not uri:
        raise GenerateError("resource must be a non-empty string (a URI)", str(path), f"/{i}/resource")
    if server is not None and (not isinstance(server, str) or not server):
        raise GenerateError("server must be a non-empty string", str(path), f"/{i}/server")
    unknown = sorted(set(item) - {"resource", "server"})
    if unknown:
        raise GenerateError(f"unknown key {unknown[0]!r} (known: resource, server)", str(path), f"/{i}")
    return Example("", {}, uri, server)


def record(
    examples: Sequence[Example],
    *,
    samples: Path,
    infra: Sequence[Path] = (),
    tools: Sequence[Path] = (),
    timeout: float = CALL_TIMEOUT,
) -> RecordOutcome:
    """Call every example through a registry built from ``infra``/``tools``; append to ``samples``.

    Each call gives up after ``timeout`` seconds (a timeout error result, reported and not kept).
    """
    from mas.runtime.config import ConfigError
    from mas.runtime.registry import RuntimeRegistry
    from mas.runtime.samples import SampleRecorder, SamplesError

    recorder = SampleRecorder(samples)
    failed: list[str] = []
    try:
        registry = RuntimeRegistry.from_sources(infra=infra, tools=tools, recorder=recorder)
    except ConfigError as exc:
        raise GenerateError(str(exc)) from exc
    try:
        with registry:
            for example in examples:
                if example.resource:  # the registry samples the read (SampleRecorder.observe_read)
                    envelope = registry.read_resource(example.resource, server=example.server, timeout_seconds=timeout)
                else:
                    envelope = registry.call_tool(example.tool, dict(example.arguments), timeout_seconds=timeout)
                if envelope.is_error:
                    failed.append(f"{example.tool or example.resource}: {' '.join(envelope.text.split())}")
            recorded = recorder.pending
    except SamplesError as exc:
        raise GenerateError(exc.message, exc.file, exc.pointer or None) from exc
    return RecordOutcome(recorded, tuple(failed), len(examples))


def add_parser(commands: Any, parents: Sequence[Any] = ()) -> None:
    """The ``record`` subcommand's options (``commands`` is the CLI's subparsers object)."""
    rec = commands.add_parser(
        "record",
        parents=list(parents),
        help="call tools with example arguments and keep their results as samples",
        description="Call each example through the runtime registry and append the results to the samples "
        "file that `toolgen generate` infers result types from. Defaults come from [tool.toolgen]. "
        "Exit status: 0 every call recorded, 1 a call returned an error (listed; the others are recorded), "
        "2 bad input.",
    )
    rec.add_argument("--examples", required=True, metavar="FILE", help="YAML list of {tool, arguments}")
    rec.add_argument(
        "--samples",
        metavar="FILE",
        help=f"samples file to append to (default: the first configured, else {DEFAULT_SAMPLES})",
    )
    rec.add_argument("--infra", action="append", metavar="PATH", help="infra file (repeatable)")
    rec.add_argument("--tools", action="append", metavar="PATH", help="kind: Tool YAML file or folder (repeatable)")
    rec.add_argument(
        "--timeout",
        type=positive_seconds,
        default=CALL_TIMEOUT,
        metavar="SECONDS",
        help=f"give up on each call after this long (default: {CALL_TIMEOUT:g})",
    )


def main(args: Any) -> int:
    """Run ``toolgen record``: 0 every call recorded, 1 some call returned an error (the others are
    recorded), 2 bad input (generate's)."""
    import sys

    from codegen.generate import shown
    from codegen.settings import load_settings

    try:
        settings = load_settings(Path.cwd(), {"infra": args.infra, "tools": args.tools})
        # The first configured samples file, else the default one every command reads.
        target = Path(args.samples) if args.samples else (settings.samples or (DEFAULT_SAMPLES,))[0]
        outcome = record(
            load_examples(Path(args.examples)),
            samples=target,
            infra=settings.infra,
            tools=settings.tools,
            timeout=getattr(args, "timeout", CALL_TIMEOUT),
        )
    except GenerateError as exc:
        print(f"toolgen: error: {exc}", file=sys.stderr)
        return 2
    for line in outcome.failed:
        print(f"toolgen: not recorded (error result): {line}", file=sys.stderr)
    print(f"toolgen: {shown(target)}: {outcome.recorded} result(s) recorded")
    if outcome.failed:  # a call that fails records nothing: CI must see a broken examples file
        print(f"toolgen: {len(outcome.failed)} of {outcome.calls} call(s) returned an error", file=sys.stderr)
        return 1
    return 0
