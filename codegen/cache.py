"""A content-addressed cache of generation results, so reruns and ``--check`` cost a hash.

Four kinds of entry, each keyed by a SHA-256 over everything that can change it:

- ``files``: the whole rendered package, keyed by the canonical sources, the package name and
  the generator's fingerprint. An unchanged catalog is never built again.
- ``models``: the code of one datamodel-code-generator run (the outputs, the code-mode stubs'
  outputs, or one group of tools' inputs), keyed by the prepared schema document it
  was generated from and the definition names of its kind. Descriptions and titles are not in
  that document, so a changed description rebuilds only the wrappers, a changed output schema
  the output runs, and a changed input schema the one group of inputs that holds it.
- ``splits``: how one generated models module is split into per-source modules, keyed by its
  code and the roots each source needs.
- ``memo``: tables of small results of pure steps of a build (a tool's prepared schemas or its
  method's spec, a model module's outline, a stub's blocks, a module's formatted text, a tool's
  formatted parts of ``_tools.py``), each result under the digest of everything it is a
  function of (``Memo``). They make a build after a small edit redo only what the edit reaches.

The cache is one layer around the stages (``Layer``): ``generate`` opens it around a build
(``with Layer(cache, package).around():``), and a stage asks the layer in force for its table
(``memo("parts")``), the cache of model runs (``models_cache()``) or a warmed model worker;
outside a layer a stage simply computes. No stage takes a cache parameter, and none reads the
package's previous files back: every stored result is keyed by the inputs it was made from.

The fingerprint hashes toolgen's own code (every module, template and the shim, and every module
of the runtime package, which the generator builds on: the contract's rules file every package
carries is one), the versions
of datamodel-code-generator, ruff and Python: a generator edited without a version bump still
misses. Entries carry their key and a digest of their content and are written atomically, so a
torn or edited entry is a miss, never a stale file. The folder (``.toolgen-cache/`` beside the
project's pyproject.toml) holds nothing else and may be deleted at any time.

The digest is keyed (HMAC-SHA256) with a secret of the user who runs toolgen, kept outside the
project (``$XDG_CACHE_HOME/toolgen/cache.key``, else ``~/.cache/toolgen/cache.key``, mode 0600).
A cache that arrives from elsewhere (``git add -f``, a CI cache restored across branches) was
keyed by another secret, so every entry is a miss: ``--check`` then compares against what the
inputs generate, never against what a crafted entry says they generate. Without a usable key
(no home folder, a key file another user could change) the cache is off.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from codegen.emit.templates import templates_dir
from codegen.model import SourceTools
from mas.runtime.lockfile import canonical_json

__all__ = [
    "CACHE_DIR_NAME",
    "Cache",
    "Layer",
    "Memo",
    "digests",
    "fingerprint",
    "memo",
    "models_cache",
    "runtime_files",
    "tool_digests",
    "worker",
]

CACHE_DIR_NAME = ".toolgen-cache"
_FORMAT = 3  # bump when an entry's layout changes (2: a keyed digest; 3: of the data as stored)
#: Entries kept per kind; the oldest beyond this are removed when a new one is stored.
#: A memo table larger than MEMO_SHARD_BYTES (its keys and results, counted in characters) is
#: stored in this many entries, by the first hex digit of its keys: an edit that changes a few
#: results rewrites the few entries holding them, not the whole table. At 1,000 tools a build's 7
#: tables hold 19 MB; rewriting them whole cost an edited rerun about 0.1 s. A smaller table stays
#: one entry: 16 of them cost a small build 35 ms more.
MEMO_SHARDS = 16
MEMO_SHARD_BYTES = 1 << 20
# models: a 1,000-tool build stores 65 (63 input groups); memo: room for four packages whose 7
# tables are each split in MEMO_SHARDS entries (a small package's table is one entry)
_KEEP = {"files": 4, "models": 256, "splits": 4, "memo": 32 * MEMO_SHARDS}
_HERE = Path(__file__).resolve().parent
_README = "toolgen's cache: safe to delete; never commit it.\n"


@cache
def fingerprint() -> str:
    """A digest of everything besides the inputs that shapes the output."""
    digest = hashlib.sha256(f"format {_FORMAT}; python {sys.version_info[:2]}".encode())
    for dist in ("datamodel-code-generator", "ruff", "toolgen"):
        try:
            digest.update(f"{dist} {metadata.version(dist)}\n".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{dist} none\n".encode())
    files = sorted(_HERE.rglob("*.py")) + sorted(p for p in templates_dir().rglob("*") if p.is_file())
    for path in [*files, *runtime_files()]:
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def runtime_files() -> list[Path]:
    """Every module of the runtime package: the generator builds on several of them (the contract's
    rules and hint keys, the lock's canonical form, the tool checks, routing, redaction), so any of
    them changing may change the output."""
    runtime = find_spec("mas.runtime")
    if runtime is None or not runtime.submodule_search_locations:
        return []
    return sorted(p for folder in runtime.submodule_search_locations for p in Path(folder).rglob("*.py"))


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8")
        h.update(len(data).to_bytes(8, "big") + data)
    return h.hexdigest()


def _key_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "toolgen" / "cache.key"


def _trusted(info: os.stat_result) -> bool:
    """A key only this user can change: theirs, and writable by nobody else."""
    owner = getattr(os, "getuid", None)
    return (owner is None or info.st_uid == owner()) and not info.st_mode & 0o022


def _read_key(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        key = handle.read(64)
        return key if len(key) == 32 and _trusted(os.fstat(handle.fileno())) else None


@cache
def user_key() -> bytes | None:
    """This user's secret for the cache's digests, created on first use; None: no cache."""
    try:
        path = _key_file()
        key = _read_key(path)
        if key is not None:
            return key
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".cache.key.", dir=path.parent)  # mode 0600
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(secrets.token_bytes(32))
            os.link(tmp, path)  # never replaces a key another run just created
        except FileExistsError:
            pass
        finally:
            Path(tmp).unlink(missing_ok=True)
        return _read_key(path)
    except (OSError, RuntimeError):  # RuntimeError: Path.home() without a home folder
        return None


def _keyed(kind: str, key: str, data_text: str) -> str | None:
    """The digest of an entry's data as stored (its JSON text, so reading an entry never encodes
    its data again), keyed with this user's secret and bound to its kind and key."""
    secret = user_key()
    if secret is None:
        return None
    return hmac.new(secret, _digest(kind, key, data_text).encode(), hashlib.sha256).hexdigest()


def _entry_text(key: str, digest: str, data_text: str) -> str:
    """An entry file: a JSON object whose ``data`` is ``data_text`` verbatim, the last member."""
    return f'{{"key": {json.dumps(key)}, "hmac": {json.dumps(digest)}, "data": {data_text}}}'


def _entry_data(key: str, text: str) -> tuple[str, str] | None:
    """The digest and the data text of an entry file for ``key``; None when it is not laid out so."""
    head, middle = f'{{"key": {json.dumps(key)}, "hmac": "', '", "data": '
    start = len(head) + 64
    if not (text.startswith(head) and text.endswith("}") and text[start : start + len(middle)] == middle):
        return None
    return text[len(head) : start], text[start + len(middle) : -1]


def _canonical(data: Any) -> str:
    """Inputs as one text; ``default=repr`` keeps YAML values JSON lacks (dates) distinct."""
    return canonical_json(data, default=repr)


def tool_digests(sources: Sequence[SourceTools]) -> dict[int, str | None]:
    """Each tool's ``Memo.key``, by ``id`` of the tool: taken once per run, it names the tool in the
    files' key, the header's memo and the build's memos. None for a tool JSON cannot spell exactly
    (a YAML date): those keys take the tool's text instead (a list, never a hex digest)."""
    return {id(tool): Memo.key(tool) for source in sources for tool in source.tools}


def _shard(key: str) -> int:
    """The entry of its table a result is kept in: by the key's first hex digit (keys are digests)."""
    first = key[:1]
    return int(first, 16) % MEMO_SHARDS if first and first in "0123456789abcdef" else 0


def _memo_entry(table: str, scope: str, shard: int) -> str:
    return _digest("memo", fingerprint(), table, scope, str(shard))


class Cache:
    """The cache in ``root``; ``Cache(None)`` is a cache that never hits and stores nothing."""

    def __init__(self, root: Path | None) -> None:
        self.root = root

    # Keys -------------------------------------------------------------------------------------

    @staticmethod
    def files_key(
        sources: Sequence[SourceTools],
        package: str,
        inferred: Mapping[str, Mapping[str, Any]] | None = None,
        digests: Mapping[int, str | None] | None = None,
        samples: Mapping[str, Mapping[str, Any]] | None = None,
        removed: Mapping[tuple[str, str], str] | None = None,
    ) -> str:
        """Every input of the files: the sources as given (each tool by its digest, ``tool_digests``),
        the output types inferred from samples and the newest sample of each tool (the test kit's data)."""
        digests = tool_digests(sources) if digests is None else digests
        described = [
            [s.name, s.kind, s.origin, s.wire_prefix, [digests[id(t)] or _canonical([t]) for t in s.tools]]
            # Resources, templates and prompts (codegen/surface.py) too; a source without any as before.
            + ([_canonical({k: list(v) for k, v in s.surface.items()})] if s.surface else [])
            for s in sources
        ]
        learned = {
            source: {tool: vars(found) for tool, found in by_tool.items()}
            for source, by_tool in (inferred or {}).items()
        }
        parts = [_canonical(described), _canonical(learned)]
        if samples:  # a build without samples keys as before
            parts.append(_canonical(samples))
        if removed:  # removed tools kept as deprecated methods (docs/drift.md, "Upgrading")
            parts.append(_canonical(sorted([*key, message] for key, message in removed.items())))
        return _digest("files", fingerprint(), package, *parts)

    @staticmethod
    def models_key(document: str, names: str, kind: str) -> str:
        """The key of one model run: ``document`` and ``names`` spelled by ``spell`` (each spelled
        once per build however many runs share it, ``datamodels._job_keys``)."""
        return _digest("models", fingerprint(), kind, document, names)

    @staticmethod
    def spell(data: Any) -> str:
        """Inputs as the one text a key is made of."""
        return _canonical(data)

    @staticmethod
    def split_key(code: str, roots: Sequence[str]) -> str:
        return _digest("split", fingerprint(), code, _canonical(list(roots)))

    # Entries ----------------------------------------------------------------------------------

    def get_files(self, key: str) -> dict[str, str] | None:
        data = self._read("files", key)
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            return None
        return {str(k): v for k, v in data.items()}

    def put_files(self, key: str, files: Mapping[str, str]) -> None:
        self._write("files", key, dict(files))

    def get_models(self, key: str) -> str | None:
        data = self._read("models", key)
        return data if isinstance(data, str) else None

    def put_models(self, key: str, code: str) -> None:
        self._write("models", key, code)

    def get_split(self, key: str) -> list[tuple[str, tuple[str, ...], str]] | None:
        """The outputs package's modules as ``(name, defined names, code)``."""
        data = self._read("splits", key)
        if not isinstance(data, list):
            return None
        modules = []
        for entry in data:
            if not (
                isinstance(entry, list)
                and len(entry) == 3
                and isinstance(entry[0], str)
                and isinstance(entry[1], list)
                and all(isinstance(n, str) for n in entry[1])
                and isinstance(entry[2], str)
            ):
                return None
            modules.append((entry[0], tuple(entry[1]), entry[2]))
        return modules

    def put_split(self, key: str, modules: Sequence[tuple[str, Sequence[str], str]]) -> None:
        self._write("splits", key, [[name, list(names), code] for name, names, code in modules])

    def has_memo(self, table: str, scope: str) -> bool:
        """Whether the memo table ``table`` of ``scope`` was stored by this generator (unread)."""
        return self.root is not None and self._path("memo", _memo_entry(table, scope, 0)).is_file()

    def memo(self, table: str, scope: str) -> Memo:
        """The memo table ``table`` of the package ``scope`` (each package's build keeps its own)."""
        return Memo(self, table, scope)

    # Storage ----------------------------------------------------------------------------------

    def _path(self, kind: str, key: str) -> Path:
        assert self.root is not None
        return self.root / kind / f"{key}.json"

    def _read(self, kind: str, key: str) -> object:
        if self.root is None:
            return None
        try:
            entry = _entry_data(key, self._path(kind, key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if entry is None:
            return None
        given, data_text = entry
        expected = _keyed(kind, key, data_text)
        if expected is None or not hmac.compare_digest(given, expected):
            return None  # torn, edited, or keyed by someone else: a miss, never a stale file
        try:
            data: object = json.loads(data_text)
        except ValueError:
            return None
        try:
            os.utime(self._path(kind, key))  # recently used entries are kept longest
        except OSError:
            pass
        return data

    def _write(self, kind: str, key: str, data: object, *, prune: bool = True) -> None:
        """Store an entry; a cache that cannot be written is only a slower run, never an error.
        ``prune``: drop the oldest entries of its kind past their count (``prune``) now."""
        if self.root is None:
            return
        folder = self.root / kind
        try:
            folder.mkdir(parents=True, exist_ok=True)
            readme = self.root / "README"
            if not readme.exists():
                readme.write_text(_README, encoding="utf-8")
            ignore = self.root / ".gitignore"
            if not ignore.exists():
                ignore.write_text("*\n", encoding="utf-8")  # never committed, whatever the project ignores
            data_text = json.dumps(data, ensure_ascii=False)
            digest = _keyed(kind, key, data_text)
            if digest is None:
                return
            text = _entry_text(key, digest, data_text)
            fd, tmp = tempfile.mkstemp(prefix=".entry-", dir=folder)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(text)
                os.replace(tmp, self._path(kind, key))
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            if prune:
                self.prune(kind)
        except OSError:
            return

    def prune(self, kind: str) -> None:
        """Drop the least recently used entries of ``kind`` past the number kept (``_KEEP``)."""
        if self.root is None:
            return
        try:
            entries = sorted((self.root / kind).glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
            for old in entries[_KEEP[kind] :]:
                old.unlink(missing_ok=True)
        except OSError:
            return


class Memo:
    """One table of results of a pure step, each stored under ``Memo.key`` of everything the step
    reads: a hit is the step's result, by construction, so a cached build writes what a cold one does.

    The table is up to ``MEMO_SHARDS`` cache entries (each read once; ``save`` writes those whose
    results changed): one while it is small, else one per first hex digit of the key. It keeps
    only the results the last build used, so it never grows past one build. Each result is kept
    as its JSON text and parsed afresh on every ``get``, so no later step can change what is
    stored; a value or key JSON cannot spell exactly (a YAML date, a NaN) is never stored, and the
    step simply runs.
    """

    def __init__(self, cache: Cache | None, table: str, scope: str) -> None:
        self._cache = cache if cache is not None and cache.root is not None else None
        self._entries = [_memo_entry(table, scope, n) for n in range(MEMO_SHARDS)] if self._cache else []
        self._old: dict[str, str] = {}
        #: Each entry as read; None where there was none to read
        self._stored: list[dict[str, str] | None] = [self._load(entry) for entry in self._entries]
        for found in self._stored:
            self._old.update(found or {})
        self._new: dict[str, str] = {}

    def _load(self, entry: str) -> dict[str, str] | None:
        found = self._cache._read("memo", entry) if self._cache is not None else None
        if isinstance(found, dict) and all(isinstance(v, str) for v in found.values()):
            return found
        return None

    @staticmethod
    def key(*parts: Any) -> str | None:
        """The digest of ``parts`` (strict JSON: None when a part has no exact JSON spelling)."""
        try:
            text = canonical_json(parts, allow_nan=False)
        except (TypeError, ValueError):
            return None
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def get(self, key: str | None) -> Any:
        """The stored result (a fresh copy), or None."""
        if key is None or key not in self._old:
            return None
        text = self._new[key] = self._old[key]
        return json.loads(text)

    def put(self, key: str | None, value: Any) -> None:
        if key is None or self._cache is None:
            return
        try:  # stored only when JSON gives back exactly this value, and it can be written as UTF-8
            text = json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
            text.encode("utf-8")
            if json.loads(text) != value:
                return
        except (TypeError, ValueError):  # UnicodeEncodeError (a lone surrogate) is a ValueError
            return
        self._new[key] = text

    def save(self) -> None:
        if self._cache is None:
            return
        shards: list[dict[str, str]] = [{} for _ in self._entries]
        sharded = sum(len(key) + len(text) for key, text in self._new.items()) > MEMO_SHARD_BYTES
        for key, text in self._new.items():
            shards[_shard(key) if sharded else 0][key] = text
        written = False
        for n, (entry, stored, new) in enumerate(zip(self._entries, self._stored, shards, strict=True)):
            # The first entry is always there (``has_memo``); another is written when it holds
            # results, or held some before (then empty, so no result outlives the build that used it).
            if stored != new and (n == 0 or stored is not None or new):
                self._cache._write("memo", entry, new, prune=False)
                written = True
        if written:
            self._cache.prune("memo")


class Layer:
    """The cache around one build of one package: the stages inside ``around()`` find their memo
    tables, the model runs' cache, the tools' digests and a warmed model worker here, by the
    module functions ``memo``, ``models_cache``, ``digests`` and ``worker``. A build that succeeds
    stores the tables it used; one that raises stores none (its results may be partial).
    ``worker``: a ``datamodels.ModelWorker`` warmed up for this build, or None."""

    def __init__(
        self,
        cache: Cache,
        package: str,
        digests: Mapping[int, str | None] | None = None,
        worker: object | None = None,
    ) -> None:
        self.cache, self.package, self.digests, self.worker = cache, package, digests, worker
        self._tables: dict[str, Memo] = {}

    def table(self, name: str) -> Memo:
        """The memo table ``name`` of this package, read once per build."""
        if name not in self._tables:
            self._tables[name] = Memo(self.cache, name, self.package)
        return self._tables[name]

    @contextmanager
    def around(self) -> Iterator[Layer]:
        token = _LAYER.set(self)
        try:
            yield self
            for table in self._tables.values():
                table.save()
        finally:
            _LAYER.reset(token)


#: The layer in force (None: no cache, every stage computes).
_LAYER: ContextVar[Layer | None] = ContextVar("toolgen_cache_layer", default=None)


def memo(table: str) -> Memo | None:
    """The layer's memo table ``table``; None outside a layer."""
    layer = _LAYER.get()
    return layer.table(table) if layer is not None else None


def models_cache() -> Cache | None:
    """The cache of model runs and splits; None outside a layer (or with the cache off)."""
    layer = _LAYER.get()
    return layer.cache if layer is not None and layer.cache.root is not None else None


def digests(sources: Sequence[SourceTools]) -> Mapping[int, str | None]:
    """Each tool's ``Memo.key`` (``tool_digests``): the layer's, taken once per run, else now."""
    layer = _LAYER.get()
    if layer is not None and layer.digests is not None:
        return layer.digests
    return tool_digests(sources)


def worker() -> object | None:
    """The model worker started for this build (a rerun), if any (``datamodels.ModelWorker``;
    typed loosely here, so the cache never imports the model generator's module)."""
    layer = _LAYER.get()
    return layer.worker if layer is not None else None
