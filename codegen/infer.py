"""Output types for tools that declare no ``outputSchema``, inferred from recorded results.

For each such tool with samples (``mas/runtime/samples.py``):

- every recorded value is JSON (structured content, or text that is a JSON object or array: the
  shim's ``inferred_candidate``, so inference and decoding read the same value) -> a JSON Schema
  inferred with genson, made lenient: properties seen in every sample are required, the others
  optional, unknown properties allowed, and a property only ever seen as ``null`` is untyped;
- every recorded result is one text block -> the value is that text (``str``);
- anything else (images, several blocks, a mix) -> no inferred type: the tool stays untyped.

Error results say nothing about the output shape and are ignored.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from genson import SchemaBuilder  # type: ignore[import-untyped]

from codegen.errors import GenerateError
from codegen.model import SourceTools
from codegen.shim._runtime import inferred_candidate, normalize_envelope
from mas.runtime.samples import Sample, SamplesError, load_samples

__all__ = [
    "InferredOutput",
    "OutputChange",
    "infer_outputs",
    "infer_schema",
    "inferred_output_changes",
    "read_samples",
]


@dataclass(frozen=True)
class InferredOutput:
    """What the build feeds into the output-model path in place of a declared ``outputSchema``."""

    kind: Literal["model", "text"]
    samples: int  # how many recorded results it was inferred from
    schema: Mapping[str, Any] | None = None  # the inferred JSON Schema (kind "model")


def read_samples(paths: Sequence[Any]) -> list[Sample]:
    samples: list[Sample] = []
    for path in paths:
        try:
            samples += load_samples(path)
        except SamplesError as exc:
            raise GenerateError(exc.message, exc.file, exc.pointer or None) from exc
    return samples


def _lenient(schema: Any) -> Any:
    """genson's schema, loosened where one sample says too little to promise a type."""
    if not isinstance(schema, Mapping):
        return schema
    out = {k: _lenient(v) if k in ("items",) else v for k, v in schema.items() if k != "$schema"}
    if "anyOf" in out:
        out["anyOf"] = [_lenient(v) for v in out["anyOf"]]
    if out.get("type") == "null":  # only ever null: nothing known about the type
        return {}
    if "properties" in out:
        # A key Python would normalize (NFKC: "º" -> "o") cannot be a field name that round-trips;
        # left out of the schema it is still kept, as an extra field.
        kept = {k: v for k, v in out["properties"].items() if unicodedata.normalize("NFKC", k) == k}
        out["properties"] = {k: _lenient(v) for k, v in kept.items()}
        if "required" in out:
            out["required"] = [k for k in out["required"] if k in kept]
    if out.get("type") == "object" or "properties" in out:
        out["additionalProperties"] = True  # unknown fields are kept (extra="allow")
    return out


def infer_schema(values: Iterable[Any]) -> dict[str, Any]:
    """A lenient JSON Schema every value in ``values`` fits (see the module docstring)."""
    builder = SchemaBuilder(schema_uri=None)
    for value in values:
        builder.add_object(value)
    schema: dict[str, Any] = _lenient(builder.to_schema())
    return schema


#: Deeper values stay untyped: their schema would pass the generator's schema depth limit.
MAX_VALUE_DEPTH = 24


def _depth(value: Any) -> int:
    if isinstance(value, Mapping):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _is_one_text_block(envelope: Mapping[str, Any]) -> bool:
    blocks = envelope.get("content")
    return (
        envelope.get("structured_content") is None
        and isinstance(blocks, list)
        and len(blocks) == 1
        and isinstance(blocks[0], Mapping)
        and blocks[0].get("type") == "text"
        and isinstance(blocks[0].get("text"), str)
    )


def infer_output(results: Sequence[Mapping[str, Any]]) -> InferredOutput | None:
    envelopes = [normalize_envelope(r) for r in results]
    envelopes = [e for e in envelopes if not e["is_error"]]
    if not envelopes:
        return None
    values = [inferred_candidate(e) for e in envelopes]
    if all(v is not None and _depth(v) <= MAX_VALUE_DEPTH for v in values):
        return InferredOutput("model", len(values), infer_schema(values))
    if all(_is_one_text_block(e) for e in envelopes):
        return InferredOutput("text", len(envelopes))
    return None


def infer_outputs(source: SourceTools, samples: Sequence[Sample]) -> dict[str, InferredOutput]:
    """Inferred outputs of ``source``'s tools that declare no ``outputSchema``, by wire name."""
    by_tool: dict[str, list[Mapping[str, Any]]] = {}
    for sample in samples:
        if sample.source == source.name:
            by_tool.setdefault(sample.tool, []).append(sample.result)
    out: dict[str, InferredOutput] = {}
    for tool in source.tools:
        name = tool.get("name") if isinstance(tool, Mapping) else None
        if isinstance(name, str) and "outputSchema" not in tool and name in by_tool:
            inferred = infer_output(by_tool[name])
            if inferred is not None:
                out[name] = inferred
    return out


# --------------------------------------------------------------------------------------------
# Drift: how an inferred output changed between two sets of samples
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OutputChange:
    tool: str
    pointer: str  # JSON pointer into the value ("" = the whole value)
    what: str
    severity: Literal["breaking", "compatible"]

    def __str__(self) -> str:
        return f"{self.severity}: {self.tool} output {self.pointer or '/'}: {self.what}"


def _types(schema: Mapping[str, Any]) -> frozenset[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return frozenset({kind})
    if isinstance(kind, list):
        return frozenset(str(k) for k in kind)
    if "anyOf" in schema:
        return frozenset(t for s in schema["anyOf"] if isinstance(s, Mapping) for t in _types(s))
    return frozenset()  # untyped: anything


def _compare(tool: str, at: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[OutputChange]:
    old_types, new_types = _types(old), _types(new)
    if old_types and (not new_types or new_types - old_types - ({"integer"} if "number" in old_types else set())):
        # A value the old type rejects is now possible (an integer where a number was is not one).
        return [OutputChange(tool, at, f"type {sorted(old_types)} -> {sorted(new_types) or 'any'}", "breaking")]
    changes: list[OutputChange] = []
    old_props, new_props = old.get("properties") or {}, new.get("properties") or {}
    old_req, new_req = set(old.get("required") or ()), set(new.get("required") or ())
    for key in sorted(set(old_props) | set(new_props)):
        where = f"{at}/{key.replace('~', '~0').replace('/', '~1')}"
        if key not in new_props:
            changes.append(OutputChange(tool, where, "field gone", "breaking"))
        elif key not in old_props:
            changes.append(OutputChange(tool, where, "field added", "compatible"))
        else:
            if key in old_req and key not in new_req:
                changes.append(OutputChange(tool, where, "field no longer always present", "breaking"))
            changes += _compare(tool, where, old_props[key], new_props[key])
    if isinstance(old.get("items"), Mapping) and isinstance(new.get("items"), Mapping):
        changes += _compare(tool, f"{at}/items", old["items"], new["items"])
    return changes


def inferred_output_changes(old: Mapping[str, InferredOutput], new: Mapping[str, InferredOutput]) -> list[OutputChange]:
    """How each tool's inferred output changed, with the severities used for declared outputs:
    a field gone, no longer always present, or of another type is breaking; a field added is
    compatible. ``old``/``new`` map wire names to inferred outputs (``infer_outputs``)."""
    changes: list[OutputChange] = []
    for tool in sorted(set(old) | set(new)):
        before, after = old.get(tool), new.get(tool)
        if before is None or after is None:
            if before is not None:
                changes.append(OutputChange(tool, "", "no longer typed", "breaking"))
            elif after is not None:
                changes.append(OutputChange(tool, "", f"typed as inferred {after.kind}", "compatible"))
            continue
        if before.kind != after.kind:
            changes.append(OutputChange(tool, "", f"{before.kind} -> {after.kind}", "breaking"))
        elif before.schema is not None and after.schema is not None:
            changes += _compare(tool, "", before.schema, after.schema)
    return changes
