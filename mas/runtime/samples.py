"""The samples file (``toolgen.samples.json``): recorded tool results the generator learns types from.

Canonical JSON, committed and reviewable::

    {"version": 1, "samples": [{"source": "<source>", "tool": "<wire name>", "result": {<CallToolResult>}}]}

``source`` is the name the generator gives the source (an infra server's name, ``skills``, or a
``--mcp-json`` file's stem); ``tool`` is the wire name inside it (no infra ``prefix``); ``result``
is the MCP ``CallToolResult`` as on the wire (``content``, ``structuredContent``, ``isError``).
A recorded resource read has ``resource`` (the URI read) in place of ``tool``, and its ``result``
is the ``ReadResourceResult``'s ``contents``: ``{"contents": [{"uri", "mimeType", "text"}, ...]}``.

Written here (the runtime records real traffic; ``toolgen record`` records examples) and read by
the generator, so the format has one definition. Secrets are never written: every string is
scrubbed of the values resolved from ``env:`` headers (and other credential headers) before it is
stored.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mas.runtime import redact
from mas.runtime.config import MCPServerConfig
from mas.runtime.json_file import read_json
from mas.runtime.lockfile import canonical_json
from mas.runtime.mcp.secrets import config_secrets

__all__ = [
    "MAX_SAMPLE_BYTES",
    "MAX_SAMPLES_PER_TOOL",
    "SAMPLES_VERSION",
    "Sample",
    "SampleRecorder",
    "SamplesError",
    "load_samples",
    "merge_samples",
    "provider_secrets",
    "render_samples",
    "scrub_value",
    "wire_result",
]

SAMPLES_VERSION = 1
#: The newest results kept per (source, tool): enough to see optional fields, small to review.
MAX_SAMPLES_PER_TOOL = 20
#: A result larger than this (as canonical JSON) is not kept: a sample is for shape, not bulk data.
MAX_SAMPLE_BYTES = 64 * 1024
_WIRE_KEYS = ("content", "structuredContent", "isError")


class SamplesError(ValueError):
    """A samples file that cannot be used: ``str()`` names the file and the JSON pointer."""

    def __init__(self, message: str, file: str, pointer: str = "") -> None:
        self.message, self.file, self.pointer = message, file, pointer
        super().__init__(f"{file}: {pointer}: {message}" if pointer else f"{file}: {message}")


@dataclass(frozen=True)
class Sample:
    source: str
    tool: str  # "" for a resource read
    result: Mapping[str, Any]
    resource: str = ""  # the URI read, for a resource read

    def key(self) -> str:
        """Identity for dropping duplicates: the whole sample as canonical JSON."""
        return canonical_json(self.to_json())

    def to_json(self) -> dict[str, Any]:
        """The sample as the file holds it (``resource`` in place of ``tool`` for a read)."""
        if self.resource:
            return {"source": self.source, "resource": self.resource, "result": self.result}
        return {"source": self.source, "tool": self.tool, "result": self.result}

    @property
    def group(self) -> tuple[str, str]:
        """What the per-tool bound counts by: the tool, or the URI read."""
        return (self.source, self.tool or f"resource {self.resource}")


def wire_result(raw: Any) -> dict[str, Any]:
    """A tools/call result as the wire's ``CallToolResult``: ``content``, ``structuredContent`` when
    set, ``isError``. Accepts a wire dict, a snake_case envelope dict or a ``ToolResultEnvelope``;
    capture-only keys (``__progress__``, ``_meta``, ...) are left out."""
    data: Mapping[str, Any]
    to_dict = getattr(raw, "to_dict", None)
    data = to_dict() if callable(to_dict) else raw if isinstance(raw, Mapping) else {"result": raw}
    content = data.get("content")
    if not isinstance(content, list):
        result = data.get("result")
        text = result if isinstance(result, str) else canonical_json(result) if result is not None else None
        content = [] if text is None else [{"type": "text", "text": text}]
    structured = data.get("structuredContent", data.get("structured_content"))
    out: dict[str, Any] = {"content": list(content), "isError": bool(data.get("isError", data.get("is_error")))}
    if structured is not None:
        out["structuredContent"] = structured
    return out


def scrub_value(value: Any, secrets: Iterable[str]) -> Any:
    """``value`` with every secret blanked out of every string (keys included), by ``redact``'s rule."""
    return redact.blank_json(value, secrets)


def provider_secrets(providers: Iterable[Any]) -> set[str]:
    """The header secrets of every MCP provider (anything with an ``MCPServerConfig`` ``config``).

    Resolved the way the provider resolves them at connect time; a server whose variable is unset
    contributes nothing (it cannot have sent that value either).
    """
    secrets: set[str] = set()
    for provider in providers:
        config = getattr(provider, "config", None)
        if isinstance(config, MCPServerConfig):
            secrets |= config_secrets(config)
    return secrets


def merge_samples(
    existing: Sequence[Sample],
    new: Iterable[Sample],
    *,
    limit: int = MAX_SAMPLES_PER_TOOL,
    max_bytes: int = MAX_SAMPLE_BYTES,
) -> list[Sample]:
    """``existing`` then ``new``, duplicates dropped (the later copy wins its place), oversized
    results dropped, and only the newest ``limit`` per (source, tool) kept."""
    ordered: dict[str, Sample] = {}
    for sample in [*existing, *new]:
        key = sample.key()
        if len(key.encode("utf-8")) > max_bytes:
            continue
        ordered.pop(key, None)
        ordered[key] = sample
    per_tool: dict[tuple[str, str], list[Sample]] = {}
    for sample in ordered.values():
        per_tool.setdefault(sample.group, []).append(sample)
    return [s for key in sorted(per_tool) for s in per_tool[key][-limit:]]


def render_samples(samples: Sequence[Sample]) -> str:
    """Canonical text: keys sorted, samples grouped by (source, tool), oldest first within a tool."""
    grouped = merge_samples(samples, (), limit=len(samples) or 1, max_bytes=2**62)
    payload = {
        "version": SAMPLES_VERSION,
        "samples": [s.to_json() for s in grouped],
    }
    return json.dumps(payload, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def load_samples(path: Path) -> list[Sample]:
    """Read and check a samples file; :class:`SamplesError` names the file and the JSON pointer."""
    where = str(path)
    data = read_json(path, SamplesError)
    if not isinstance(data, Mapping):
        raise SamplesError("must be an object with 'version' and 'samples'", where)
    if data.get("version") != SAMPLES_VERSION:
        raise SamplesError(f"version must be {SAMPLES_VERSION}", where, "/version")
    items = data.get("samples")
    if not isinstance(items, list):
        raise SamplesError("must be an array", where, "/samples")
    samples = []
    for i, item in enumerate(items):
        at = f"/samples/{i}"
        if not isinstance(item, Mapping):
            raise SamplesError("a sample must be an object", where, at)
        read = "resource" in item and "tool" not in item  # a recorded resource read
        for key in ("source", "resource" if read else "tool"):
            if not isinstance(item.get(key), str) or not item[key]:
                raise SamplesError(f"{key} must be a non-empty string", where, f"{at}/{key}")
        result = item.get("result")
        if not isinstance(result, Mapping):
            what = "a ReadResourceResult's contents" if read else "a CallToolResult"
            raise SamplesError(f"result must be an object ({what})", where, f"{at}/result")
        if "content" in result and not isinstance(result["content"], list):
            raise SamplesError("content must be an array", where, f"{at}/result/content")
        if read and not isinstance(result.get("contents"), list):
            raise SamplesError("contents must be an array", where, f"{at}/result/contents")
        if read:
            samples.append(Sample(item["source"], "", dict(result), item["resource"]))
        else:
            samples.append(Sample(item["source"], item["tool"], dict(result)))
    return samples


def write_samples(path: Path, samples: Sequence[Sample]) -> None:
    """Replace the file atomically (a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(render_samples(samples))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class SampleRecorder:
    """Collects results of real calls and appends them to a samples file.

    Give one to ``RuntimeRegistry(recorder=...)``: every successful call is kept with probability
    ``rate`` (1.0 = all), scrubbed of secrets, and written on :meth:`flush` (the registry flushes
    when it closes). Recording never affects a call: a failure to record is swallowed.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        rate: float = 1.0,
        limit: int = MAX_SAMPLES_PER_TOOL,
        max_bytes: int = MAX_SAMPLE_BYTES,
        seed: int | None = None,
    ) -> None:
        if not 0.0 <= rate <= 1.0:
            raise ValueError("rate must be between 0 and 1")
        self.path = Path(path)
        self.rate = rate
        self.limit = limit
        self.max_bytes = max_bytes
        self._random = random.Random(seed)
        self._secrets: set[str] = set()
        self._pending: list[Sample] = []
        self._lock = threading.Lock()

    def add_secrets(self, secrets: Iterable[str]) -> None:
        with self._lock:
            self._secrets.update(s for s in secrets if s)

    def observe(self, source: str, tool: str, raw: Any) -> None:
        """Maybe keep one call's result (errors are not kept: they say nothing about the shape)."""
        try:
            # A JSON round trip: a copy the caller cannot change later, and proof it is JSON at all.
            result = json.loads(json.dumps(wire_result(raw), ensure_ascii=False, allow_nan=False))
            if result["isError"]:
                return
            with self._lock:
                if self.rate < 1.0 and self._random.random() >= self.rate:
                    return
                self._pending.append(Sample(source, tool, scrub_value(result, self._secrets)))
        except Exception:  # recording is best effort; the call's result is what matters
            return

    def observe_read(self, source: str, uri: str, raw: Any) -> None:
        """Maybe keep one resource read (its ``contents``; failures are not kept)."""
        try:
            if getattr(raw, "is_error", False) or not isinstance(getattr(raw, "result", None), Mapping):
                return
            contents = raw.result.get("contents")
            if not isinstance(contents, list):
                return
            result = json.loads(json.dumps({"contents": contents}, ensure_ascii=False, allow_nan=False))
            with self._lock:
                if self.rate < 1.0 and self._random.random() >= self.rate:
                    return
                self._pending.append(Sample(source, "", scrub_value(result, self._secrets), uri))
        except Exception:  # recording is best effort; the read's result is what matters
            return

    @property
    def pending(self) -> int:
        return len(self._pending)

    def flush(self) -> int:
        """Merge what was observed into the file; returns how many samples were pending."""
        with self._lock:
            pending, self._pending = self._pending, []
            if not pending:
                return 0
            existing = load_samples(self.path) if self.path.exists() else []
            merged = merge_samples(existing, pending, limit=self.limit, max_bytes=self.max_bytes)
            write_samples(self.path, merged)
            return len(pending)
