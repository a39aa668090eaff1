"""Output types for tools that declare no ``outputSchema``, inferred from recorded results.

For each such tool with samples (``mas/runtime/samples.py``):

- every recorded value is JSON (structured content, or text that is a JSON object or array: the
  shim's ``inferred_candidate``, so inference and decoding read the same value) -> a JSON Schema
  inferred with genson, made lenient: properties seen in every sample are required, the others
  optional, unknown properties allowed, and a property only ever seen as ``null`` is untyped;
- every recorded result is one text block -> the value is that text (``str``);
- anything else (images, several blocks, a mix) -> no inferred type: the tool stays untyped.

Error results say nothing about the output shape and are ignored.

Recorded resource reads (``toolgen record``'s ``resource:`` examples, the runtime's recorder) teach
the JSON resources and templates (``application/json``, ``*+json``) their contents' type by the
same rule (:func:`learn_json`: every read JSON, no deeper than ``MAX_VALUE_DEPTH``, then genson,
lenient): a listed resource learns from the reads of its URI, a template from the reads its
template fits (a URI a listed resource has is that resource's). They sit in the same map as the
tools' inferred outputs, under ``resource <uri>`` / ``resource <uriTemplate>`` (``RESOURCE_KEY``),
so the lock records them and drift compares them by the same rules.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from genson import SchemaBuilder  # type: ignore[import-untyped]

from codegen.drift import CONTENTS_POINTER, Change, diff_output_schema
from codegen.errors import GenerateError
from codegen.model import RESOURCE_KEY, SourceTools
from codegen.schemas import WRAP_MARKER, constrains_nothing
from mas.runtime.samples import Sample, SamplesError, load_samples

__all__ = [
    "INFERRED_POINTER",
    "RESOURCE_KEY",
    "infer_contents",
    "learn_json",
    "InferredOutput",
    "infer_outputs",
    "infer_schema",
    "inferred_changes",
    "first_inferences",
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
        # genson lists variants in the order the samples showed them; sorted, the same samples in
        # another order infer the same schema (and report no drift).
        out["anyOf"] = sorted((_lenient(v) for v in out["anyOf"]), key=lambda v: json.dumps(v, sort_keys=True))
    if out.get("type") == "null":  # only ever null: nothing known about the type
        return {}
    if "properties" in out:
        # A key Python would normalize (NFKC: "º" -> "o") cannot be a field name that round-trips;
        # left out of the schema it is still kept, as an extra field.
        kept = {k: v for k, v in out["properties"].items() if unicodedata.normalize("NFKC", k) == k}
        out["properties"] = {k: _lenient(v) for k, v in kept.items()}
        if "required" in out:
            out["required"] = [k for k in out["required"] if k in kept]
            if not out["required"]:  # as genson writes it when nothing is required: one spelling
                del out["required"]
        if not out["properties"]:  # as genson writes an object seen only as {}: one spelling
            del out["properties"]
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


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests objects or arrays more than ``limit`` levels deep. A loop, not a
    recursion: a recorded result nested thousands of levels is untyped, never a RecursionError."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, Mapping) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth >= limit:
            return True
        stack += ((child, depth + 1) for child in children)
    return False


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


def _is_wrapped(envelope: Mapping[str, Any]) -> bool:
    """A result in the shape FastMCP gives a plain value: structured content ``{"result": value}``."""
    structured = envelope.get("structured_content")
    return isinstance(structured, Mapping) and list(structured) == ["result"]


def learn_json(values: Sequence[Any]) -> dict[str, Any] | None:
    """The one rule for a learned JSON type: every value JSON (not None) and no deeper than
    ``MAX_VALUE_DEPTH`` -> the lenient schema they all fit; else None (no type is learned)."""
    if values and all(v is not None and not _deeper_than(v, MAX_VALUE_DEPTH) for v in values):
        return infer_schema(values)
    return None


def _read_value(result: Mapping[str, Any]) -> Any:
    """A recorded read's JSON value (its items' text joined, as ``JsonContents.value`` reads it); None if not JSON."""
    contents = result.get("contents")
    items = [c.get("text") for c in contents if isinstance(c, Mapping)] if isinstance(contents, list) else []
    texts = [t for t in items if isinstance(t, str)]
    if not texts or len(texts) != len(items):
        return None
    try:
        return json.loads("".join(texts))
    except ValueError:
        return None


def infer_contents(source: SourceTools, samples: Sequence[Sample]) -> dict[str, InferredOutput]:
    """Learned contents types of ``source``'s JSON resources and templates, from its recorded reads."""
    from codegen.surface import contents_class
    from mas.runtime.contracts.uri_template import TemplateError, matches

    reads: dict[str, list[Any]] = {}
    for sample in samples:
        if sample.source == source.name and sample.resource:
            reads.setdefault(sample.resource, []).append(_read_value(sample.result))
    if not reads:
        return {}
    out: dict[str, InferredOutput] = {}
    listed = {str(r.get("uri")): r for r in source.surface.get("resources", ()) if isinstance(r, Mapping)}
    for uri, item in sorted(listed.items()):
        values = reads.get(uri)
        if values and contents_class(item.get("mimeType")) == "JsonContents":
            if (schema := learn_json(values)) is not None:
                out[RESOURCE_KEY + uri] = InferredOutput("model", len(values), schema)
    for item in source.surface.get("resource_templates", ()):
        template = str(item.get("uriTemplate"))
        if not isinstance(item, Mapping) or contents_class(item.get("mimeType")) != "JsonContents":
            continue
        try:
            fitting = [v for uri in sorted(reads) if uri not in listed and matches(template, uri) for v in reads[uri]]
        except TemplateError:
            continue
        if fitting and (schema := learn_json(fitting)) is not None:
            out[RESOURCE_KEY + template] = InferredOutput("model", len(fitting), schema)
    return out


def infer_output(results: Sequence[Mapping[str, Any]]) -> InferredOutput | None:
    # The shim's own reading of a result (imported here: a run without samples never loads the shim).
    from codegen.shim._runtime import inferred_candidate, normalize_envelope

    envelopes = [normalize_envelope(r) for r in results]
    envelopes = [e for e in envelopes if not e["is_error"]]
    if not envelopes:
        return None
    values = [inferred_candidate(e) for e in envelopes]
    if (schema := learn_json(values)) is not None:
        if all(_is_wrapped(e) for e in envelopes):  # FastMCP's plain value: the method returns it
            schema = {**schema, WRAP_MARKER: True}
        return InferredOutput("model", len(values), schema)
    if all(_is_one_text_block(e) for e in envelopes):
        return InferredOutput("text", len(envelopes))
    return None


def _undeclared_output(tool: Mapping[str, Any]) -> bool:
    """No output schema, or one that constrains nothing (``{"type": "object"}``): the type is learned."""
    return "outputSchema" not in tool or constrains_nothing(tool["outputSchema"])


def infer_outputs(source: SourceTools, samples: Sequence[Sample]) -> dict[str, InferredOutput]:
    """Inferred outputs of ``source``'s tools that declare no ``outputSchema``, by wire name."""
    by_tool: dict[str, list[Mapping[str, Any]]] = {}
    for sample in samples:
        if sample.source == source.name and sample.tool:
            by_tool.setdefault(sample.tool, []).append(sample.result)
    out: dict[str, InferredOutput] = {}
    for tool in source.tools:
        name = tool.get("name") if isinstance(tool, Mapping) else None
        if isinstance(name, str) and _undeclared_output(tool) and name in by_tool:
            inferred = infer_output(by_tool[name])
            if inferred is not None:
                out[name] = inferred
    if source.surface:  # the JSON resources' contents, learned from recorded reads
        out.update(infer_contents(source, samples))
    return out


# --------------------------------------------------------------------------------------------
# Drift: how inferred outputs changed, by the rules for declared outputs (codegen/drift.py)
# --------------------------------------------------------------------------------------------

#: Where an inferred output's changes point: it stands where a declared ``outputSchema`` would.
INFERRED_POINTER = "/inferredOutputSchema"


def _as_schema(inferred: InferredOutput | None) -> Mapping[str, Any] | None:
    """The output schema the generated return type stands for (a text tool returns ``str``)."""
    if inferred is None:
        return None
    return inferred.schema if inferred.kind == "model" else {"type": "string"}


#: The message of a tool's first inferred type: breaking by the rules (the method returned
#: ToolOutput and now returns the type), but expected once after ``toolgen record``, and said so.
FIRST_INFERENCE = "inferred output type added (first recorded results: the method returns it instead of ToolOutput)"


def _tagged(change: Change) -> Change:
    # Every output message starts "output ..." (codegen/drift.py): say this one was inferred.
    if change.kind == "output-schema-added":
        return replace(change, message=FIRST_INFERENCE)
    return replace(change, message=f"inferred {change.message}")


def first_inferences(changes: Sequence[Change]) -> int:
    """How many of ``changes`` are tools' first inferred types."""
    return sum(c.kind == "output-schema-added" and c.pointer in (INFERRED_POINTER, CONTENTS_POINTER) for c in changes)


def inferred_output_changes(
    old: Mapping[str, InferredOutput], new: Mapping[str, InferredOutput], *, source: str = ""
) -> tuple[Change, ...]:
    """How each tool's inferred output changed (``old``/``new`` map wire names to ``infer_outputs``
    results), classified exactly like a declared ``outputSchema`` change: a field gone, no longer
    always present or of another type is breaking; a field added is compatible. Pointers start
    with ``INFERRED_POINTER`` and messages with ``inferred output``."""
    changes: list[Change] = []
    for tool in sorted(set(old) | set(new)):
        read = tool.startswith(RESOURCE_KEY)  # a resource's contents: named by its URI or template
        name, pointer = (tool.removeprefix(RESOURCE_KEY), CONTENTS_POINTER) if read else (tool, INFERRED_POINTER)
        found = diff_output_schema(_as_schema(old.get(tool)), _as_schema(new.get(tool)), source=source, tool=name,
                                   pointer=pointer)  # fmt: skip
        changes += (_contents_tagged(c) if read else _tagged(c) for c in found)
    return tuple(changes)


#: The message of a resource's first learned contents type (breaking by the rules, expected once).
FIRST_CONTENTS = "learned contents type added (first recorded reads: the read returns it instead of plain JSON)"


def _contents_tagged(change: Change) -> Change:
    if change.kind == "output-schema-added":
        return replace(change, message=FIRST_CONTENTS)
    return replace(change, message=f"learned contents: {change.message.removeprefix('output ')}")


Listings = Mapping[str, Sequence[Mapping[str, Any]]]
Inferred = Mapping[str, Mapping[str, InferredOutput]]


def _undeclared(tools: Sequence[Mapping[str, Any]]) -> set[str]:
    return {str(t.get("name")) for t in tools if isinstance(t, Mapping) and _undeclared_output(t)}


def inferred_changes(
    old_listings: Listings, old: Inferred, new_listings: Listings, new: Inferred
) -> tuple[Change, ...]:
    """Inferred-output changes (``old``/``new``: source -> wire name -> output) of the tools listed
    on both sides and declaring no ``outputSchema`` on either. A tool added, removed, or gaining or
    losing a declared schema is already one change of the listings (``diff_listings``): comparing
    its inferred output too would report it twice."""
    changes: list[Change] = []
    for source in sorted(set(old) | set(new)):
        kept = _undeclared(old_listings.get(source, ())) & _undeclared(new_listings.get(source, ()))
        # Resources' learned contents: compared whenever either side has one (by the same rules).
        kept |= {k for k in (*old.get(source, {}), *new.get(source, {})) if k.startswith(RESOURCE_KEY)}
        a = {tool: found for tool, found in old.get(source, {}).items() if tool in kept}
        b = {tool: found for tool, found in new.get(source, {}).items() if tool in kept}
        changes += inferred_output_changes(a, b, source=source)
    return tuple(changes)
