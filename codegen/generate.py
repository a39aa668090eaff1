"""The pipeline: parse sources -> build the intermediate form -> render -> write (or check)."""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from codegen import __version__
from codegen.cache import Cache, Layer, Memo, tool_digests
from codegen.cache import memo as cache_memo
from codegen.drift import Change as DriftChange
from codegen.errors import Degradation, GenerateError
from codegen.infer import RESOURCE_KEY, InferredOutput, infer_outputs, read_samples
from codegen.lock import (
    SURFACE_KEYS,
    Lock,
    LockChange,
    SurfaceByServer,
    describe_lock,
    load_lock,
    lock_drift,
    relock_inferred,
    render_lock,
    skills_drift,
)
from codegen.model import SourceTools
from codegen.schemas import constrains_nothing
from codegen.settings import Settings
from codegen.sources import parse_infra, parse_mcp_json, parse_yaml_tools, read_live, read_locked_sources
from codegen.testkit import DATA_MODULE, cassette_problems, newest_samples
from codegen.versioning import PackageRecord, Release, changelog, next_record, version_module, with_record
from codegen.write import (
    GENERATED_MARKER,
    Change,
    diff_changes,
    plan_changes,
    recover,
    write_package,
)
from mas.runtime.lockfile import canonical_json, tool_hash
from mas.runtime.progress import Progress
from mas.runtime.samples import Sample

__all__ = [
    "BUILD_GC_THRESHOLDS",
    "Coverage",
    "Inputs",
    "Locking",
    "Outcome",
    "collect_sources",
    "coverage_of",
    "few_collections",
    "file_header",
    "header_for",
    "infer_all",
    "package_files",
    "read_inputs",
    "read_all_samples",
    "release_files",
    "render_files",
    "run",
    "shown",
    "write_or_compare",
    "yaml_source",
]


#: The cache entry of a package keeps its warnings under a name no generated file can have.
_DEGRADATIONS = "<degradations>"


@dataclass(frozen=True)
class Coverage:
    """How many tools get a typed result: declared ``outputSchema``, inferred from samples, neither."""

    declared: int
    inferred: int
    untyped: int
    #: Of the untyped, those whose output schema constrains nothing and no samples typed: a mapping.
    mappings: int = 0

    def __str__(self) -> str:
        text = f"declared {self.declared}, inferred {self.inferred}, untyped {self.untyped}"
        if self.mappings:
            text += f" ({self.mappings} with an output schema that constrains nothing: dict[str, Any])"
        return text


@dataclass(frozen=True)
class Outcome:
    changes: tuple[Change, ...]
    lock_changed: bool
    #: What the live listings and the inferred output types change against the lock on disk,
    #: classified; offline, with --check, also what the tool YAML changes against the lock's skills.
    drift: tuple[DriftChange, ...] = ()
    coverage: Coverage | None = None
    degradations: tuple[Degradation, ...] = ()  # printed as warnings by the CLI
    files: tuple[str, ...] = ()  # every file of the package, relative to it
    #: None: no lock was written (no server listed live, nor an offline change of inferred types)
    lock: LockChange | None = None
    #: With ``--check``: each recorded call of a cassette that no longer fits the package, one line
    #: each (``FILE: POINTER: what``; codegen/testkit.py)
    cassettes: tuple[str, ...] = ()

    @property
    def stale(self) -> bool:
        return bool(self.changes) or self.lock_changed or bool(self.cassettes)


@dataclass(frozen=True)
class Locking:
    """What the lock is written from: the listings just read live, or (``--offline``) the lock on
    disk, whose listings stay as they are and whose inferred output types follow the samples."""

    servers: Mapping[str, Sequence[Mapping[str, Any]]]
    skills: Sequence[Mapping[str, Any]] | None
    offline: Lock | None = None
    #: The task dialect of each server that advertises one (recorded in the lock).
    tasks: Mapping[str, str] = field(default_factory=dict)
    #: Each server's resources, templates and prompts (recorded in the lock when it has any).
    surface: SurfaceByServer = field(default_factory=dict)

    def text(self, built: Sequence[str], inferred: Mapping[str, Mapping[str, InferredOutput]]) -> str | None:
        """The lock to write; None when there is nothing to write (offline, inferred types unchanged)."""
        if self.offline is not None:
            return relock_inferred(self.offline, built, inferred)
        return render_lock(self.servers, self.skills, inferred, self.tasks, self.surface)


def collect_sources(settings: Settings, progress: Progress | None = None) -> tuple[list[SourceTools], Locking | None]:
    """Every source, and what the lock is written from when the build has servers."""
    sources: list[SourceTools] = []
    if settings.tools:
        sources.append(parse_yaml_tools(settings.tools))
    sources += [parse_mcp_json(path, name) for name, path in settings.named_mcp_json]
    locking = None
    if settings.infra:
        configs = parse_infra(settings.infra)
        if settings.offline:
            lock = load_lock(settings.lock)
            live = read_locked_sources(configs, lock)
            locking = Locking(lock.servers, lock.skills, offline=lock)
        else:
            live = read_live(configs, settings.lock, progress)
            skills = yaml_source(sources)
            dialects = {s.name: s.task_dialect for s in live if s.task_dialect is not None}
            surface = {s.name: s.surface for s in live if s.surface}
            locking = Locking(
                {s.name: s.tools for s in live},
                skills.tools if skills is not None else None,
                tasks=dialects,
                surface=surface,
            )
        sources += live
    if not sources:
        raise GenerateError("nothing to generate: give --tools, --infra or --mcp-json, or set them in [tool.toolgen]")
    seen: dict[str, SourceTools] = {}
    for source in sources:
        first = seen.setdefault(source.name, source)
        if first is not source:
            raise GenerateError(
                f"two sources are named {source.name!r} ({first.where} and {source.where}); rename a server, "
                "or name an --mcp-json source (--mcp-json NAME=PATH)",
                source.location or source.origin,
            )
    return sources, locking


def yaml_source(sources: Sequence[SourceTools]) -> SourceTools | None:
    """The source parsed from the ``kind: Tool`` YAML (``--tools``), if there is one."""
    return next((s for s in sources if s.kind == "yaml"), None)


def infer_all(
    sources: Sequence[SourceTools], settings: Settings, samples: Sequence[Sample] | None = None
) -> dict[str, dict[str, InferredOutput]]:
    """Output types learned from the samples files (``samples``, when read already), by source
    name and wire name."""
    if samples is None:
        samples = read_all_samples(settings)
    return {s.name: found for s in sources if (found := infer_outputs(s, samples))} if samples else {}


def read_all_samples(settings: Settings) -> list[Sample]:
    """The samples of every samples file to read (a configured or default file not recorded yet: none)."""
    paths = settings.samples_to_read
    return read_samples(paths) if paths else []


def coverage_of(sources: Sequence[SourceTools], inferred: Mapping[str, Mapping[str, InferredOutput]]) -> Coverage:
    total = sum(len(s.tools) for s in sources)
    generic = [(s.name, t.get("name")) for s in sources for t in s.tools if constrains_nothing(t.get("outputSchema"))]
    declared = sum(1 for s in sources for t in s.tools if "outputSchema" in t) - len(generic)
    # Tools only: a resource's learned contents (codegen.infer.RESOURCE_KEY) is no tool's result.
    learned = sum(1 for found in inferred.values() for key in found if not key.startswith(RESOURCE_KEY))
    mappings = sum(1 for source, name in generic if name not in inferred.get(source, {}))
    return Coverage(declared, learned, total - declared - learned, mappings)


def _canonical_digest(tool: Mapping[str, Any], memo: Memo | None, digest: str | None = None) -> str:
    """The lock's per-tool hash (``tool_hash``, without its ``sha256:`` prefix), kept in ``memo``
    under the tool as given (``digest``: its ``Memo.key``): a rerun walks only the schemas of the
    tools that changed."""
    key = Memo.key("canonical", digest or tool) if memo is not None else None
    found = memo.get(key) if memo is not None else None
    if not isinstance(found, str):
        found = tool_hash(tool).removeprefix("sha256:")  # the lock's per-tool hash
        if memo is not None:
            memo.put(key, found)
    return found


def _described(
    source: SourceTools,
    inferred: Mapping[str, InferredOutput] | None,
    memo: Memo | None,
    digests: Mapping[int, str | None],
) -> dict[str, Any]:
    tools = [[str(t.get("name")), _canonical_digest(t, memo, digests.get(id(t)))] for t in source.tools]
    described: dict[str, Any] = {
        "name": source.name,
        "kind": source.kind,
        "prefix": source.wire_prefix,
        "tools": sorted(tools),
    }
    if inferred:  # inferred outputs are inputs too; a source without any hashes as before
        described["inferred"] = {name: dict(vars(found)) for name, found in inferred.items()}
    if source.surface:  # resources, templates, prompts: the same, a source without any as before
        # In the lock's order (sorted), so a live listing and the lock hash alike.
        described["surface"] = {
            key: sorted(items, key=lambda item: str(item.get(SURFACE_KEYS[key])))
            for key, items in source.surface.items()
        }
    return described


def header_for(
    sources: Sequence[SourceTools],
    package: str,
    inferred: Mapping[str, Mapping[str, InferredOutput]] | None = None,
    digests: Mapping[int, str | None] | None = None,
) -> str:
    """``__init__.py``'s header: generator version and a hash of the inputs (never a path, never a time):
    of the package name, each source's name, kind and prefix, each tool's canonical form (by its
    digest) and the inferred output types. ``digests``: ``tool_digests``, when the caller has them."""
    digests = digests or {}
    memo = cache_memo("canonical")  # the cache layer's, when there is one
    described = [_described(s, (inferred or {}).get(s.name), memo, digests) for s in sources]
    # Compact and sorted: the same digest for the same inputs, from json's C encoder (an indented
    # dump would take the pure-Python one, seconds at 1,000 tools).
    payload = canonical_json({"package": package, "sources": sorted(described, key=lambda s: str(s["name"]))})
    digest = hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]
    return f"# {GENERATED_MARKER} {__version__} from inputs sha256:{digest}. Do not edit.\n{_REGENERATE}"


_REGENERATE = "# Regenerate with `toolgen generate` (or `python -m codegen generate`)."


def file_header() -> str:
    """Every file's header but ``__init__.py``'s, which alone names the inputs' hash (``header_for``):
    a file an edit does not reach keeps its bytes, so a rerun rewrites only what the edit changed."""
    return f"# {GENERATED_MARKER} {__version__}; the inputs' hash is in __init__.py. Do not edit.\n{_REGENERATE}"


def shown(path: Path) -> str:
    """Paths relative to the working folder in messages: no machine paths in logs."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


#: The collector's thresholds while a package is built (the defaults are 700, 10, 10).
BUILD_GC_THRESHOLDS = (100_000, 50, 1_000)


@contextmanager
def few_collections() -> Iterator[None]:
    """Run the cyclic garbage collector rarely while a package is built.

    A build allocates millions of small objects (the model generator's parse graph, syntax trees)
    while keeping most of what it made alive, and each collection the default thresholds trigger
    walks that whole live heap again: a third of a cold run at 1,000 tools (22 s against 15.7 s,
    for about 6% more peak memory). The caller's thresholds come back afterwards, so a program
    that calls ``run`` keeps its own policy; a forked model worker inherits these.
    """
    before = gc.get_threshold()
    gc.set_threshold(*BUILD_GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def render_files(
    sources: Sequence[SourceTools],
    package: str,
    cache: Cache,
    inferred: Mapping[str, Mapping[str, InferredOutput]] | None = None,
    samples: Mapping[str, Mapping[str, Any]] | None = None,
    removed: Mapping[tuple[str, str], str] | None = None,
) -> tuple[dict[str, str], tuple[Degradation, ...]]:
    """The package's files and the schema spots typed as ``Any``: from the cache when these exact
    inputs were rendered before by this exact generator, else built and rendered inside the cache
    layer (reusing what the cache holds of earlier builds, never the files on disk) and then stored.
    ``samples``: the newest recorded result of each tool (``testkit.newest_samples``), the test kit's."""
    # The key covers every input the header digests (and the generator's version), so the header
    # (a canonical walk of every schema, ~0.1 s at 1,000 tools) is computed only on a miss.
    digests = tool_digests(sources)  # one walk of each tool names it in every key below
    key = cache.files_key(sources, package, inferred, digests, samples, removed)
    cached = cache.get_files(key)
    if cached is not None and _DEGRADATIONS in cached:
        files = dict(cached)
        found = json.loads(files.pop(_DEGRADATIONS))
        return files, tuple(Degradation(**d) for d in found)
    # Imported here: a cached run never loads datamodel-code-generator or Jinja2.
    from codegen.build import build_package
    from codegen.datamodels import ModelWorker
    from codegen.emit.render import render_package

    with few_collections():
        # The model worker forks now and imports the model generator while this process plans:
        # for a cold build of a large catalog, which it then shares on two cores, and for a rerun
        # of a package built before (an edit), whose missed runs it makes.
        rerun = cache.has_memo("specs", package)
        worker = ModelWorker.start(sum(len(s.tools) for s in sources), rerun=rerun)
        try:
            # The cache is one layer around the stages: each finds its memo tables, the model
            # runs and the worker there (codegen/cache.py, ``Layer``); they are stored when all succeed.
            with Layer(cache, package, digests, worker).around():
                header = header_for(sources, package, inferred, digests)
                pkg = build_package(
                    sources,
                    package=package,
                    header=file_header(),
                    init_header=header,
                    inferred=inferred,
                    samples=samples,
                    removed=removed,
                )
                files = render_package(pkg)
        finally:
            if worker is not None:
                worker.close()
    # The warnings travel with the files, so a cached run warns exactly as the cold one did.
    found_json = json.dumps([dataclasses.asdict(d) for d in pkg.degradations], sort_keys=True)
    cache.put_files(key, {**files, _DEGRADATIONS: found_json})
    return files, pkg.degradations


def _released(
    settings: Settings, locking: Locking | None, text: str | None
) -> tuple[str | None, PackageRecord | None, tuple[DriftChange, ...]]:
    """The lock text to write with the package's record in it, that record, and the drift it was
    bumped by (the new lock against the one on disk). No lock written: the record on disk."""
    if locking is None:
        return None, None, ()
    old = locking.offline or (load_lock(settings.lock) if settings.lock.is_file() else None)
    previous = old.package if old is not None else None
    if text is None:
        return None, previous, ()
    start = PackageRecord(settings.start_version, (Release(settings.start_version),))
    unchanged = with_record(text, previous or start)
    if old is None or settings.lock.read_text(encoding="utf-8") == unchanged:
        return unchanged, previous or start, ()
    drift = lock_drift(settings.lock, text, old)
    record = next_record(
        previous,
        drift,
        start=settings.start_version,
        keep_zero_major=settings.keep_zero_major,
        keep_removed=settings.keep_removed_tools,
        old_listings=old.listings(),
    )
    return with_record(text, record), record, drift


def with_kept(
    sources: Sequence[SourceTools], record: PackageRecord | None
) -> tuple[list[SourceTools], dict[tuple[str, str], str]]:
    """The sources with the removed tools the record keeps (``keep_removed_tools``) listed again,
    and for each of those (source, wire name) what its method says when called."""
    if record is None or not record.kept:
        return list(sources), {}
    out, removed = [], {}
    for source in sources:
        kept = record.kept.get(source.name, {})
        listed = {str(t.get("name")) for t in source.tools}
        extra = [k.tool for name, k in sorted(kept.items()) if name not in listed]
        if extra:
            source = dataclasses.replace(source, tools=(*source.tools, *extra))
            prefix = source.wire_prefix or ""
            removed.update(
                {(source.name, prefix + str(t["name"])): record.removal(source.name, str(t["name"])) for t in extra}
            )
        out.append(source)
    return out, removed


def release_files(settings: Settings, record: PackageRecord | None) -> dict[str, str]:
    """The package's ``_version.py`` and ``CHANGELOG.md``, from the lock's record (none: the
    start version): outside the files' cache entry, since the record is not among its inputs."""
    version = record.version if record is not None else settings.start_version
    return {
        "CHANGELOG.md": changelog(record, settings.package, start=settings.start_version),
        "_version.py": version_module(file_header(), version),
    }


@dataclass(frozen=True)
class Inputs:
    """What a package is built from, read once: the sources as listed and as built (with the
    removed tools the record keeps), the inferred output types, the newest sample of each tool,
    and the lock to write with the package's record and the drift it was bumped by."""

    sources: list[SourceTools]
    built: list[SourceTools]
    removed: dict[tuple[str, str], str]
    inferred: dict[str, dict[str, InferredOutput]]
    newest: dict[str, dict[str, Any]]
    #: None: no lock to write (no server listed live, nor an offline change of inferred types)
    lock_text: str | None
    record: PackageRecord | None
    drift: tuple[DriftChange, ...]


def read_inputs(settings: Settings, progress: Progress | None = None) -> Inputs:
    """Stage 1: the sources, samples, inferred types and the lock with its release record."""
    sources, locking = collect_sources(settings, progress)
    if progress is not None:
        progress.detail(f"building {sum(len(s.tools) for s in sources)} tool(s) from {len(sources)} source(s)")
    samples = read_all_samples(settings)
    inferred = infer_all(sources, settings, samples)
    lock_text = locking.text([s.name for s in sources], inferred) if locking is not None else None
    lock_text, record, drift = _released(settings, locking, lock_text)
    built, removed = with_kept(sources, record)  # removed tools kept a while: deprecated, raising
    newest = newest_samples(sources, samples)
    return Inputs(sources, built, removed, inferred, newest, lock_text, record, drift)


def package_files(settings: Settings, inputs: Inputs) -> tuple[dict[str, str], tuple[Degradation, ...]]:
    """Stage 2: every file of the package (the rendered ones and the release files), and the schema
    spots typed as ``Any``. Raises GenerateError on those with ``--strict-schemas``."""
    files, degradations = render_files(
        inputs.built,
        settings.package,
        Cache(settings.cache),
        inputs.inferred,
        inputs.newest,
        inputs.removed,
    )
    if settings.strict_schemas and degradations:
        first, more = degradations[0], len(degradations) - 1
        raise GenerateError(f"{first} (--strict-schemas; {more} more)" if more else f"{first} (--strict-schemas)")
    files.update(release_files(settings, inputs.record))
    return files, degradations


def write_or_compare(settings: Settings, files: Mapping[str, str], lock_text: str | None, out: TextIO) -> list[Change]:
    """Stage 3: with ``--check`` the changes a write would make (and their diff on ``out`` with
    ``--diff``), else the package and its lock written as one journaled pair."""
    for folder in (settings.target.parent, *settings.target.parent.parents):
        if folder.exists() and not folder.is_dir():
            raise GenerateError("is a file, not a folder (--out names the folder the package goes in)", str(folder))
    try:
        if settings.check:
            changes = plan_changes(settings.target, files)
            if settings.diff:
                out.write(diff_changes(settings.target, files, changes))
            return changes
        lock_pair = (settings.lock, lock_text) if lock_text is not None else None
        return write_package(settings.target, files, lock=lock_pair)
    except OSError as exc:  # an --out that is a file, a folder we may not write: one line, exit 2
        where = exc.filename if isinstance(exc.filename, str) else str(settings.target)
        raise GenerateError(f"cannot write the package: {exc.strerror or exc}", shown(Path(where))) from exc


def _lock_state(settings: Settings, inputs: Inputs) -> tuple[bool, tuple[DriftChange, ...], LockChange | None]:
    """Read before anything is written: whether the lock on disk differs from the one to write, the
    drift (offline, with --check, the tool YAML's against the lock's skills added), and the lock's change."""
    text, drift = inputs.lock_text, inputs.drift
    changed = text is not None and (not settings.lock.is_file() or settings.lock.read_text(encoding="utf-8") != text)
    skills = yaml_source(inputs.sources)
    if settings.check and settings.offline and skills is not None:  # no live listing: the YAML against the lock
        drift += skills_drift(settings.lock, skills.tools)  # with the inferred types' drift
    return changed, drift, describe_lock(settings.lock, text) if text is not None else None


def run(settings: Settings, out: TextIO = sys.stdout, progress: Progress | None = None) -> Outcome:
    """Generate, or with ``settings.check`` only compare. Raises GenerateError on bad input, before
    anything is written. The stages: ``read_inputs``, ``package_files``, ``write_or_compare``."""
    # A run killed mid-write left a journal: finish it first, so the lock read below and the
    # package compared or replaced are one pair again (codegen/write.py).
    if recover(settings.target, settings.lock) and progress is not None:
        progress.note(f"finished the write of {shown(settings.target)} that an interrupted run had committed")
    inputs = read_inputs(settings, progress)
    files, degradations = package_files(settings, inputs)
    lock_changed, drift, lock = _lock_state(settings, inputs)
    changes = write_or_compare(settings, files, inputs.lock_text, out)
    cassettes: tuple[str, ...] = ()
    if settings.check and settings.cassettes:
        cassettes = cassette_problems(settings.cassettes, files[DATA_MODULE], shown)
    return Outcome(
        tuple(changes),
        lock_changed,
        drift,
        coverage=coverage_of(inputs.sources, inputs.inferred),
        degradations=degradations,
        files=tuple(sorted(files)),
        lock=lock,
        cassettes=cassettes,
    )
