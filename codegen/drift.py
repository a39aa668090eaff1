"""Classify what changed between two listings of MCP tools, for a caller of the generated package.

Pure functions over MCP tool objects (wire keys): ``diff_listings`` (source -> tools),
``diff_tools``, ``diff_tool``, and the two schema comparisons ``diff_input_schema`` and
``diff_output_schema`` (which takes any two output schemas, declared or inferred). Each result is a
frozen :class:`Change` with a stable ``kind`` per rule; the rules are listed in ``docs/drift.md``.

Direction matters: a caller *sends* parameters, so narrowing what a parameter accepts breaks it;
a caller *receives* output, so any change of an output type breaks the generated return type.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from mas.runtime.contracts._rules import json_equal, pointer_token, pointer_tokens
from mas.runtime.contracts.tool_contract import HINT_KEYS
from mas.runtime.lockfile import canonical_tool

__all__ = [
    "KINDS",
    "SURFACE_IDS",
    "SEVERITIES",
    "Change",
    "Severity",
    "diff_input_schema",
    "diff_listings",
    "diff_output_schema",
    "diff_surface",
    "diff_tool",
    "diff_tools",
]

Severity = Literal["breaking", "review", "compatible"]
#: Most severe first.
SEVERITIES: tuple[Severity, ...] = ("breaking", "review", "compatible")

# MCP annotation hints that a model or a caller's policy reads (destructive, read-only, ...).
_HINTS = {wire: key for key, wire in HINT_KEYS.items()}
# Lower bounds tighten when they grow; upper bounds when they shrink.
_LOWER = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
_UPPER = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
# Keywords each compared by a rule of their own; any other keyword falls to `schema-keyword-changed`.
_HANDLED = {
    "$ref", "$defs", "definitions", "type", "enum", "const", "properties", "required", "items", "prefixItems",
    "additionalProperties", "anyOf", "oneOf", "allOf", "description", "title", "default", "pattern", "format",
    "multipleOf", "uniqueItems", *_LOWER, *_UPPER,
}  # fmt: skip


#: Every rule: its stable ``kind`` id, its severity and what it means (``docs/drift.md`` lists them).
KINDS: dict[str, tuple[Severity, str]] = {
    # tools
    "tool-removed": ("breaking", "a tool is no longer listed"),
    "tool-added": ("compatible", "a new tool is listed"),
    "description-changed": ("review", "the tool's description changed (it reaches the model)"),
    "title-changed": ("review", "the tool's title or annotations.title changed"),
    "hint-changed": ("review", "a hint changed: destructive, read_only, idempotent or open_world"),
    "meta-changed": ("compatible", "_meta changed"),
    "icons-changed": ("compatible", "icons changed"),
    "other-changed": ("compatible", "another field that reaches neither code nor model changed"),
    "task-now-required": ("breaking", "execution.taskSupport became required: the tool runs only as a task, "
                          "and a client that expects an inline answer without polling breaks"),
    "task-support-dropped": ("review", "execution.taskSupport went from optional or required to forbidden: "
                             "callers that start the task themselves get an inline answer"),
    "task-dialect-changed": ("review", "the server's task dialect changed (docs/tasks.md): it started or "
                             "stopped running calls as tasks, or speaks the other dialect"),
    "task-support-changed": ("compatible", "execution.taskSupport changed otherwise (a task became possible, "
                             "or no longer required)"),
    # A deprecation (JSON Schema ``deprecated: true``) breaks no call, but the server says the thing
    # will go, and the package gains a PEP 702 deprecation the callers' checkers report: review
    # (SemVer: marking public API deprecated is a minor release).
    "tool-deprecated": ("review", "the tool's inputSchema became deprecated: true (its methods are "
                        "@deprecated now)"),
    # parameters (inputSchema), at any depth
    "param-added-required": ("breaking", "a parameter was added as required"),
    "param-added-optional": ("compatible", "a parameter was added as optional"),
    "param-removed": ("breaking", "a parameter was removed"),
    "param-now-required": ("breaking", "an optional parameter became required"),
    "param-now-optional": ("compatible", "a required parameter became optional"),
    "type-narrowed": ("breaking", "a parameter accepts fewer JSON types (or gained an item schema)"),
    "type-changed": ("breaking", "a parameter's type changed to one that does not cover the old"),
    "type-widened": ("compatible", "a parameter accepts more JSON types"),
    "enum-value-removed": ("breaking", "a parameter's enum lost a value"),
    "enum-value-added": ("compatible", "a parameter's enum gained a value"),
    "enum-added": ("breaking", "a parameter is now limited to an enum or const"),
    "enum-removed": ("compatible", "a parameter's enum or const was dropped"),
    "bound-tightened": ("breaking", "a minimum/maximum, length, item or property count, multipleOf or "
                        "uniqueItems bound was added or tightened"),
    "bound-loosened": ("compatible", "such a bound was dropped or loosened"),
    "pattern-changed": ("breaking", "a pattern or format was added or changed"),
    "pattern-removed": ("compatible", "a pattern or format was dropped"),
    "additional-properties-closed": ("breaking", "additionalProperties became false (or a schema)"),
    "additional-properties-opened": ("compatible", "additionalProperties was opened"),
    "variant-removed": ("breaking", "an anyOf/oneOf variant was removed"),
    "variant-added": ("compatible", "an anyOf/oneOf variant was added"),
    "constraint-added": ("breaking", "an allOf member was added"),
    "constraint-removed": ("compatible", "an allOf member was removed"),
    "schema-description-changed": ("review", "a parameter's description changed (it reaches the model)"),
    "schema-title-changed": ("review", "a parameter's title changed (it reaches the model)"),
    "default-changed": ("review", "a parameter's default changed: calls that omit it now do something else"),
    "param-deprecated": ("review", "a parameter became deprecated: true (an optional one gets a "
                         "@deprecated overload)"),
    "schema-keyword-changed": ("compatible", "another schema keyword changed ($schema, examples, a "
                               "deprecation withdrawn, ...)"),
    # output (outputSchema), at any depth
    "output-schema-added": ("breaking", "an outputSchema was added: the generated return type changes"),
    "output-schema-removed": ("breaking", "the outputSchema was removed: the generated return type changes"),
    "output-field-removed": ("breaking", "an output field was removed"),
    "output-field-now-optional": ("breaking", "a required output field became optional"),
    "output-field-added": ("compatible", "an output field was added"),
    "output-field-now-required": ("compatible", "an optional output field became required"),
    "output-type-changed": ("breaking", "an output type changed (type, enum appearing or going, variants)"),
    "output-enum-value-added": ("breaking", "an output enum gained a value: the Literal no longer decodes it"),
    "output-enum-value-removed": ("compatible", "an output enum lost a value"),
    "output-constraint-changed": ("compatible", "an output bound, pattern, format or additionalProperties changed"),
    "output-schema-description-changed": ("compatible", "an output description changed (docstrings only)"),
    "output-schema-title-changed": ("compatible", "an output title changed (docstrings only)"),
    "output-default-changed": ("compatible", "an output default changed"),
    "output-field-deprecated": ("review", "an output field became deprecated: true (it may stop coming)"),
    # resources, resource templates and prompts (docs/resources-and-prompts.md); ``tool`` holds the
    # resource's URI, the template's URI template or the prompt's name
    "resource-removed": ("breaking", "a resource is no longer listed: its method is gone"),
    "resource-added": ("compatible", "a new resource is listed"),
    "resource-renamed": ("breaking", "a resource's or template's name changed: its method is renamed"),
    "resource-type-changed": ("breaking", "a resource's or template's MIME type changed: its contents class "
                              "may change"),
    "resource-description-changed": ("review", "a resource's or template's title or description changed"),
    "resource-other-changed": ("compatible", "another field of a resource or template changed (size, "
                               "annotations, _meta)"),
    "template-removed": ("breaking", "a resource template is no longer listed (or its URI template changed)"),
    "template-added": ("compatible", "a new resource template is listed"),
    "template-variable-removed": ("breaking", "a template variable was removed: calls that pass it fail"),
    "template-variable-added-required": ("breaking", "a path variable was added: it is a required argument"),
    "template-variable-added-optional": ("compatible", "a query or fragment variable was added (optional)"),
    "prompt-removed": ("breaking", "a prompt is no longer listed"),
    "prompt-added": ("compatible", "a new prompt is listed"),
    "prompt-argument-added-required": ("breaking", "a prompt argument was added as required"),
    "prompt-argument-added-optional": ("compatible", "a prompt argument was added as optional"),
    "prompt-argument-removed": ("breaking", "a prompt argument was removed"),
    "prompt-argument-now-required": ("breaking", "an optional prompt argument became required"),
    "prompt-argument-now-optional": ("compatible", "a required prompt argument became optional"),
    "prompt-description-changed": ("review", "a prompt's or its arguments' title or description changed "
                                   "(it reaches the model)"),
    "prompt-other-changed": ("compatible", "another field of a prompt changed (icons, _meta)"),
    # completion Literals (a stable closed set types the parameter; docs/resources-and-prompts.md)
    "template-variable-values-removed": ("breaking", "a template variable's Literal lost a value"),
    "template-variable-values-added": ("compatible", "a template variable's Literal gained a value"),
    "template-variable-values-closed": ("breaking", "a template variable became a Literal (was str)"),
    "template-variable-values-opened": ("compatible", "a template variable's Literal became str"),
    "prompt-argument-values-removed": ("breaking", "a prompt argument's Literal lost a value"),
    "prompt-argument-values-added": ("compatible", "a prompt argument's Literal gained a value"),
    "prompt-argument-values-closed": ("breaking", "a prompt argument became a Literal (was str)"),
    "prompt-argument-values-opened": ("compatible", "a prompt argument's Literal became str"),
}  # fmt: skip


@dataclass(frozen=True)
class Change:
    """One classified change. ``pointer`` is a JSON pointer into the tool object (new side, or old
    side when the thing is gone); ``message`` has no source or tool name (see ``describe``)."""

    source: str
    tool: str
    severity: Severity
    kind: str
    pointer: str
    old: Any
    new: Any
    message: str

    def __post_init__(self) -> None:
        # Each kind has one severity: a rule cannot drift from its documented class.
        if KINDS.get(self.kind, (None,))[0] != self.severity:
            raise ValueError(f"kind {self.kind!r} is not a {self.severity} rule")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


# --- listings and tools -------------------------------------------------------------------------
def diff_listings(
    old: Mapping[str, Sequence[Mapping[str, Any]]], new: Mapping[str, Sequence[Mapping[str, Any]]]
) -> tuple[Change, ...]:
    """Every change between two ``{source name: tools}`` maps; a source on one side only is all
    its tools removed or added."""
    changes: list[Change] = []
    for source in sorted(set(old) | set(new)):
        changes += diff_tools(source, old.get(source, ()), new.get(source, ()))
    return tuple(changes)


def _by_name(tools: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    # Compared in the canonical form the lock and the pin hash use (mas/runtime/lockfile.py).
    return {str(t.get("name")): canonical_tool(t) for t in tools if isinstance(t, Mapping)}


def diff_tools(source: str, old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> tuple[Change, ...]:
    old_by, new_by = _by_name(old), _by_name(new)
    changes: list[Change] = []
    for name in sorted(set(old_by) | set(new_by)):
        if name not in new_by:
            changes.append(Change(source, name, "breaking", "tool-removed", "", name, None, "tool removed"))
        elif name not in old_by:
            changes.append(Change(source, name, "compatible", "tool-added", "", None, name, "tool added"))
        else:
            changes += diff_tool(source, old_by[name], new_by[name])
    return tuple(changes)


def diff_tool(source: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[Change, ...]:
    """Changes between two versions of one tool (same name)."""
    tool = str(new.get("name", old.get("name")))
    out: list[Change] = []

    def add(severity: Severity, kind: str, pointer: str, a: Any, b: Any, message: str) -> None:
        out.append(Change(source, tool, severity, kind, pointer, a, b, message))

    for key, what in (("description", "description"), ("title", "title")):
        if old.get(key) != new.get(key):
            add("review", f"{what}-changed", f"/{key}", old.get(key), new.get(key), f"tool {what} changed")
    out += _diff_annotations(source, tool, old.get("annotations"), new.get("annotations"))
    out += _diff_execution(source, tool, old.get("execution"), new.get("execution"))
    out += diff_input_schema(old.get("inputSchema"), new.get("inputSchema"), source=source, tool=tool)
    out += diff_output_schema(old.get("outputSchema"), new.get("outputSchema"), source=source, tool=tool)
    for key in sorted((set(old) | set(new)) - {"name", "description", "title", "annotations", "inputSchema",
                                               "outputSchema", "execution"}):  # fmt: skip
        if not json_equal(old.get(key), new.get(key)):
            kind = {"_meta": "meta-changed", "icons": "icons-changed"}.get(key, "other-changed")
            add("compatible", kind, f"/{pointer_token(key)}", old.get(key), new.get(key), f"{key!r} changed")
    return tuple(out)


def _task_support(execution: Mapping[str, Any]) -> str:
    support = execution.get("taskSupport")
    return support if support in ("optional", "required") else "forbidden"  # absent means forbidden


def _diff_execution(source: str, tool: str, old: Any, new: Any) -> list[Change]:
    """``execution``: ``taskSupport`` by its own rules (docs/tasks.md), the rest as other fields."""
    old_e = old if isinstance(old, Mapping) else {}
    new_e = new if isinstance(new, Mapping) else {}
    out: list[Change] = []
    a, b = _task_support(old_e), _task_support(new_e)
    if a != b:
        pointer = "/execution/taskSupport"
        if b == "required":
            kind, message = "task-now-required", "the tool now runs only as a task"
        elif b == "forbidden":
            kind, message = "task-support-dropped", "the tool no longer runs as a task"
        else:
            kind, message = "task-support-changed", f"task support is now {b!r}"
        out.append(Change(source, tool, KINDS[kind][0], kind, pointer, a, b, message))
    for key in sorted((set(old_e) | set(new_e)) - {"taskSupport"}):
        if not json_equal(old_e.get(key), new_e.get(key)):
            pointer = f"/execution/{pointer_token(key)}"
            message = f"execution {key!r} changed"
            out.append(
                Change(source, tool, "compatible", "other-changed", pointer, old_e.get(key), new_e.get(key), message)
            )
    if not out and not json_equal(old, new):
        # Same meaning, other spelling (`{"taskSupport": "forbidden"}` dropped, or not an object at all).
        out.append(Change(source, tool, "compatible", "other-changed", "/execution", old, new, "'execution' changed"))
    return out


def _diff_annotations(source: str, tool: str, old: Any, new: Any) -> list[Change]:
    old_a = old if isinstance(old, Mapping) else {}
    new_a = new if isinstance(new, Mapping) else {}
    out: list[Change] = []
    for key in sorted(set(old_a) | set(new_a)):
        a, b = old_a.get(key), new_a.get(key)
        if json_equal(a, b):
            continue
        pointer = f"/annotations/{pointer_token(key)}"
        if key in _HINTS:
            out.append(Change(source, tool, "review", "hint-changed", pointer, a, b, f"hint {_HINTS[key]!r} changed"))
        elif key == "title":
            out.append(Change(source, tool, "review", "title-changed", pointer, a, b, "tool title changed"))
        else:
            message = f"annotation {key!r} changed"
            out.append(Change(source, tool, "compatible", "other-changed", pointer, a, b, message))
    return out


# --- schemas ------------------------------------------------------------------------------------
def diff_input_schema(
    old: Any, new: Any, *, source: str = "", tool: str = "", pointer: str = "/inputSchema"
) -> tuple[Change, ...]:
    """Changes between two parameter schemas, as seen by a caller who sends arguments."""
    walk = _Walk(source, tool, "input", old, new, pointer)
    walk.schema(old, new, pointer, pointer, None)
    return tuple(walk.changes)


def diff_output_schema(
    old: Any, new: Any, *, source: str = "", tool: str = "", pointer: str = "/outputSchema"
) -> tuple[Change, ...]:
    """Changes between two output schemas (declared or inferred), as seen by a caller who decodes
    results. An output schema added or removed changes the generated return type."""
    if old is None and new is None:
        return ()
    if old is None or new is None:
        kind, message = ("output-schema-added", "output schema added") if old is None else (
            "output-schema-removed", "output schema removed")  # fmt: skip
        return (Change(source, tool, "breaking", kind, pointer, old, new, message),)
    walk = _Walk(source, tool, "output", old, new, pointer)
    walk.schema(old, new, pointer, pointer, None)
    return tuple(walk.changes)


def _types(schema: Mapping[str, Any]) -> frozenset[str] | None:
    """The JSON types a schema allows by its ``type`` keyword; None when it does not say."""
    value = schema.get("type")
    if isinstance(value, str):
        return frozenset({value})
    if isinstance(value, list):
        return frozenset(str(v) for v in value)
    return None


def _covers(wide: frozenset[str], narrow: frozenset[str]) -> bool:
    # "number" accepts every integer.
    return all(t in wide or (t == "integer" and "number" in wide) for t in narrow)


def _values(schema: Mapping[str, Any]) -> list[Any] | None:
    if "enum" in schema and isinstance(schema["enum"], list):
        return list(schema["enum"])
    if "const" in schema:
        return [schema["const"]]
    return None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _names(value: Any) -> set[str]:
    return {v for v in value if isinstance(v, str)} if isinstance(value, list) else set()


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


_At = Callable[[str], str]  # a keyword -> its JSON pointer in the current pair of schemas


@dataclass
class _Walk:
    """One schema comparison: the two documents (for ``$ref``), the direction and the findings."""

    source: str
    tool: str
    direction: Literal["input", "output"]
    old_root: Any
    new_root: Any
    root_pointer: str
    changes: list[Change] = field(default_factory=list)
    seen: set[tuple[str, str]] = field(default_factory=set)

    # -- helpers ---------------------------------------------------------------------------------
    def add(self, severity: Severity, kind: str, pointer: str, old: Any, new: Any, message: str) -> None:
        self.changes.append(Change(self.source, self.tool, severity, kind, pointer, old, new, message))

    def what(self, label: str | None) -> str:
        noun = "parameter" if self.direction == "input" else "output field"
        if label is not None:
            return f"{noun} {label!r}"
        return "parameters" if self.direction == "input" else "output"

    def resolve(self, root: Any, schema: Any, pointer: str) -> tuple[Any, str]:
        """Follow local ``$ref`` chains (``#/...``) within the document; siblings of ``$ref`` are kept."""
        hops = 0
        while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#"):
            ref = schema["$ref"]
            target: Any = root
            for token in [t for t in pointer_tokens(ref[1:]) if t]:
                if isinstance(target, Mapping) and token in target:
                    target = target[token]
                elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
                    target = target[int(token)]
                else:
                    return schema, pointer  # dangling: compare the $ref text itself
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**target, **siblings} if isinstance(target, Mapping) and siblings else target
            pointer = self.root_pointer + ref[1:]
            hops += 1
            if hops > 64:
                break
        return schema, pointer

    # -- the walk --------------------------------------------------------------------------------
    def schema(self, old: Any, new: Any, old_ptr: str, new_ptr: str, label: str | None) -> None:
        old, old_ptr = self.resolve(self.old_root, old, old_ptr)
        new, new_ptr = self.resolve(self.new_root, new, new_ptr)
        if (old_ptr, new_ptr) in self.seen:  # recursive schemas: each pair once
            return
        self.seen.add((old_ptr, new_ptr))
        if not isinstance(old, Mapping) or not isinstance(new, Mapping):
            if not json_equal(old, new):
                self.add("breaking", self.kind("type-changed"), new_ptr, old, new, f"{self.what(label)} schema changed")
            return

        def at(key: str) -> str:
            """A keyword's pointer: on the new side, or on the old side when it is gone."""
            return f"{new_ptr if key in new else old_ptr}/{pointer_token(key)}"

        self.text(old, new, at, label)
        self.type(old, new, at, label)
        self.enum(old, new, at, label)
        self.bounds(old, new, at, label)
        self.properties(old, new, old_ptr, new_ptr, label)
        self.additional(old, new, old_ptr, new_ptr, at, label)
        self.items(old, new, old_ptr, new_ptr, at, label)
        self.variants(old, new, old_ptr, new_ptr, label)
        for key in sorted((set(old) | set(new)) - _HANDLED):
            if key == "deprecated" and new.get(key) is True and old.get(key) is not True:
                self.deprecated(at(key), old.get(key), label)
            elif not json_equal(old.get(key), new.get(key)):
                where = at(key)
                self.add("compatible", "schema-keyword-changed", where, old.get(key), new.get(key),
                         f"{self.what(label)}: keyword {key!r} changed")  # fmt: skip

    def deprecated(self, where: str, old: Any, label: str | None) -> None:
        """``deprecated: true`` newly on a schema: on the input's root the tool, else a parameter or
        an output field."""
        if self.direction == "input" and where == f"{self.root_pointer}/deprecated":
            self.add("review", "tool-deprecated", where, old, True, "tool deprecated")
        else:
            kind = "param-deprecated" if self.direction == "input" else "output-field-deprecated"
            self.add("review", kind, where, old, True, f"{self.what(label)} deprecated")

    def kind(self, name: str) -> str:
        return name if self.direction == "input" else f"output-{name}"

    def text(self, old: Mapping[str, Any], new: Mapping[str, Any], at: _At, label: str | None) -> None:
        # Parameter text reaches the model with the tool; output text reaches only docstrings.
        severity: Severity = "review" if self.direction == "input" else "compatible"
        for key in ("description", "title"):
            if old.get(key) != new.get(key):
                self.add(severity, self.kind(f"schema-{key}-changed"), at(key), old.get(key), new.get(key),
                         f"{self.what(label)}: {key} changed")  # fmt: skip
        if "default" in old or "default" in new:
            a, b = old.get("default"), new.get("default")
            if not json_equal(a, b) or ("default" in old) != ("default" in new):
                # A new default silently changes what every call that omits the argument does.
                self.add(severity, self.kind("default-changed"), at("default"), a, b,
                         f"{self.what(label)}: default changed")  # fmt: skip

    def type(self, old: Mapping[str, Any], new: Mapping[str, Any], at: _At, label: str | None) -> None:
        a, b = _types(old), _types(new)
        if a == b:
            return
        shown_a = None if a is None else sorted(a)
        shown_b = None if b is None else sorted(b)
        if self.direction == "output":
            self.add("breaking", "output-type-changed", at("type"), shown_a, shown_b,
                     f"{self.what(label)}: type changed")  # fmt: skip
        elif b is None or (a is not None and _covers(b, a)):
            self.add("compatible", "type-widened", at("type"), shown_a, shown_b,
                     f"{self.what(label)}: type widened")  # fmt: skip
        elif a is None or _covers(a, b):
            self.add("breaking", "type-narrowed", at("type"), shown_a, shown_b,
                     f"{self.what(label)}: type narrowed")  # fmt: skip
        else:
            self.add("breaking", "type-changed", at("type"), shown_a, shown_b, f"{self.what(label)}: type changed")

    def enum(self, old: Mapping[str, Any], new: Mapping[str, Any], at: _At, label: str | None) -> None:
        a, b = _values(old), _values(new)
        if a is None and b is None:
            return
        where = at("enum") if "enum" in new or ("enum" in old and "const" not in new) else at("const")
        if a is None or b is None:
            # A closed set of values appears or goes: for input that narrows or widens; for output
            # the generated type turns into or out of a Literal.
            if self.direction == "output":
                self.add("breaking", "output-type-changed", where, a, b, f"{self.what(label)}: enum "
                         + ("added" if a is None else "removed"))  # fmt: skip
            elif a is None:
                message = f"{self.what(label)}: now limited to {len(b or [])} value(s)"
                self.add("breaking", "enum-added", where, a, b, message)
            else:
                self.add("compatible", "enum-removed", where, a, b, f"{self.what(label)}: any value now accepted")
            return
        old_keys, new_keys = {_canon(v): v for v in a}, {_canon(v): v for v in b}
        for key in sorted(set(old_keys) - set(new_keys)):
            severity: Severity = "breaking" if self.direction == "input" else "compatible"
            self.add(severity, self.kind("enum-value-removed"), where, old_keys[key], None,
                     f"{self.what(label)}: enum value {key} removed")  # fmt: skip
        for key in sorted(set(new_keys) - set(old_keys)):
            # For output, a new value no longer decodes into the generated Literal.
            severity = "compatible" if self.direction == "input" else "breaking"
            self.add(severity, self.kind("enum-value-added"), where, None, new_keys[key],
                     f"{self.what(label)}: enum value {key} added")  # fmt: skip

    def bounds(self, old: Mapping[str, Any], new: Mapping[str, Any], at: _At, label: str | None) -> None:
        for key in (*_LOWER, *_UPPER, "multipleOf", "uniqueItems", "pattern", "format"):
            a, b = old.get(key), new.get(key)
            if json_equal(a, b):
                continue
            where, what = at(key), f"{self.what(label)}: {key} {a!r} -> {b!r}"
            if self.direction == "output":
                # Constraints on output do not change the generated type.
                self.add("compatible", "output-constraint-changed", where, a, b, what)
            elif self._tightens(key, a, b):
                kind = "pattern-changed" if key in ("pattern", "format") else "bound-tightened"
                self.add("breaking", kind, where, a, b, what)
            else:
                kind = "pattern-removed" if key in ("pattern", "format") else "bound-loosened"
                self.add("compatible", kind, where, a, b, what)

    @staticmethod
    def _tightens(key: str, old: Any, new: Any) -> bool:
        if new is None:
            return False  # a constraint dropped only widens
        if old is None:
            return key != "uniqueItems" or new is True
        if key in ("pattern", "format", "multipleOf"):
            return True
        if key == "uniqueItems":
            return new is True
        a, b = _number(old), _number(new)
        if a is None or b is None:
            return True
        return b > a if key in _LOWER else b < a

    def properties(self, old: Mapping[str, Any], new: Mapping[str, Any], old_ptr: str, new_ptr: str,
                   label: str | None) -> None:  # fmt: skip
        old_props, new_props = _mapping(old.get("properties")), _mapping(new.get("properties"))
        old_req, new_req = _names(old.get("required")), _names(new.get("required"))
        for name in sorted(set(old_props) | set(new_props) | old_req | new_req):
            child = name if label is None else f"{label}.{name}"
            # A name listed only in `required` has no schema to point at: point at the list.
            a_ptr = f"{old_ptr}/properties/{pointer_token(name)}" if name in old_props else f"{old_ptr}/required"
            b_ptr = f"{new_ptr}/properties/{pointer_token(name)}" if name in new_props else f"{new_ptr}/required"
            # A property is there when it has a schema; a name only in `required` counts as well.
            in_old = name in old_props or (name in old_req and name not in new_props)
            in_new = name in new_props or (name in new_req and name not in old_props)
            if in_old and not in_new:
                self.gone(child, a_ptr, old_props.get(name))
            elif in_new and not in_old:
                self.came(child, b_ptr, new_props.get(name), name in new_req)
            else:
                self.required(child, b_ptr, name in old_req, name in new_req)
                if name in old_props and name in new_props:
                    self.schema(old_props[name], new_props[name], a_ptr, b_ptr, child)

    def gone(self, label: str | None, ptr: str, old: Any) -> None:
        kind = "param-removed" if self.direction == "input" else "output-field-removed"
        self.add("breaking", kind, ptr, old, None, f"{self.what(label)} removed")

    def came(self, label: str | None, ptr: str, new: Any, required: bool) -> None:
        if self.direction == "output":
            self.add("compatible", "output-field-added", ptr, None, new, f"{self.what(label)} added")
        elif required:
            self.add("breaking", "param-added-required", ptr, None, new, f"{self.what(label)} added as required")
        else:
            self.add("compatible", "param-added-optional", ptr, None, new, f"{self.what(label)} added as optional")

    def required(self, label: str | None, ptr: str, was: bool, now: bool) -> None:
        if was == now:
            return
        if self.direction == "input":
            if now:
                self.add("breaking", "param-now-required", ptr, False, True, f"{self.what(label)} is now required")
            else:
                self.add("compatible", "param-now-optional", ptr, True, False, f"{self.what(label)} is now optional")
        elif now:
            self.add("compatible", "output-field-now-required", ptr, False, True, f"{self.what(label)} is now required")
        else:
            self.add("breaking", "output-field-now-optional", ptr, True, False, f"{self.what(label)} is now optional")

    def additional(self, old: Mapping[str, Any], new: Mapping[str, Any], old_ptr: str, new_ptr: str, at: _At,
                   label: str | None) -> None:  # fmt: skip
        a, b = old.get("additionalProperties"), new.get("additionalProperties")
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            child = "*" if label is None else f"{label}.*"
            self.schema(a, b, f"{old_ptr}/additionalProperties", f"{new_ptr}/additionalProperties", child)
            return
        if json_equal(a, b):
            return
        where = at("additionalProperties")
        if self.direction == "output":
            message = f"{self.what(label)}: additionalProperties changed"
            self.add("compatible", "output-constraint-changed", where, a, b, message)
        elif b is False or (isinstance(b, Mapping) and a is not False):
            self.add("breaking", "additional-properties-closed", where, a, b,
                     f"{self.what(label)}: additional properties no longer accepted")  # fmt: skip
        else:
            self.add("compatible", "additional-properties-opened", where, a, b,
                     f"{self.what(label)}: additional properties now accepted")  # fmt: skip

    def items(self, old: Mapping[str, Any], new: Mapping[str, Any], old_ptr: str, new_ptr: str, at: _At,
              label: str | None) -> None:  # fmt: skip
        a, b = old.get("items"), new.get("items")
        if a is None and b is None:
            pass
        elif a is None or b is None:
            # No `items` means any item: adding one narrows input, and changes an output's type.
            severity: Severity = "breaking" if self.direction == "output" or a is None else "compatible"
            narrowed_or_widened = "type-narrowed" if a is None else "type-widened"
            kind = self.kind("type-changed") if self.direction == "output" else narrowed_or_widened
            self.add(severity, kind, at("items"), a, b, f"{self.what(label)}: item schema changed")
        else:
            self.schema(a, b, f"{old_ptr}/items", f"{new_ptr}/items", f"{label or ''}[]")
        a_list, b_list = old.get("prefixItems"), new.get("prefixItems")
        if isinstance(a_list, list) and isinstance(b_list, list) and len(a_list) == len(b_list):
            for i, (x, y) in enumerate(zip(a_list, b_list, strict=True)):
                self.schema(x, y, f"{old_ptr}/prefixItems/{i}", f"{new_ptr}/prefixItems/{i}", f"{label or ''}[{i}]")
        elif not json_equal(a_list, b_list):
            self.add("breaking", self.kind("type-changed"), at("prefixItems"), a_list, b_list,
                     f"{self.what(label)}: tuple items changed")  # fmt: skip

    def variants(self, old: Mapping[str, Any], new: Mapping[str, Any], old_ptr: str, new_ptr: str,
                 label: str | None) -> None:  # fmt: skip
        for key in ("anyOf", "oneOf", "allOf"):
            a, b = old.get(key), new.get(key)
            a_list = a if isinstance(a, list) else []
            b_list = b if isinstance(b, list) else []
            if len(a_list) == len(b_list):
                for i, (x, y) in enumerate(zip(a_list, b_list, strict=True)):
                    self.schema(x, y, f"{old_ptr}/{key}/{i}", f"{new_ptr}/{key}/{i}", label)
                continue
            old_set, new_set = {_canon(v): v for v in a_list}, {_canon(v): v for v in b_list}
            where = f"{new_ptr}/{key}" if b is not None else f"{old_ptr}/{key}"
            removed = [old_set[k] for k in sorted(set(old_set) - set(new_set))]
            added = [new_set[k] for k in sorted(set(new_set) - set(old_set))]
            if self.direction == "output":
                self.add("breaking", "output-type-changed", where, a, b, f"{self.what(label)}: {key} variants changed")
            elif key == "allOf":
                # Every allOf member must hold: one more narrows, one fewer widens.
                if added:
                    self.add("breaking", "constraint-added", where, a, b, f"{self.what(label)}: allOf member added")
                else:
                    self.add(
                        "compatible", "constraint-removed", where, a, b, f"{self.what(label)}: allOf member removed"
                    )
            else:
                if removed:
                    self.add("breaking", "variant-removed", where, removed, None,
                             f"{self.what(label)}: {len(removed)} {key} variant(s) removed")  # fmt: skip
                if added:
                    self.add("compatible", "variant-added", where, None, added,
                             f"{self.what(label)}: {len(added)} {key} variant(s) added")  # fmt: skip


# --- resources, resource templates and prompts ---------------------------------------------------
#: What a server serves besides tools: listing -> the key each item is known by.
SURFACE_IDS = {"resources": "uri", "resource_templates": "uriTemplate", "prompts": "name"}
#: Where a change of a resource's contents type learned from recorded reads points (codegen/infer.py).
CONTENTS_POINTER = "/inferredContentsSchema"
_WORDS = {
    "resources": ("resource", "resource"),
    "resource_templates": ("template", "resource"),
    "prompts": ("prompt", "prompt"),
}


def diff_surface(
    source: str, old: Mapping[str, Sequence[Mapping[str, Any]]], new: Mapping[str, Sequence[Mapping[str, Any]]]
) -> tuple[Change, ...]:
    """Every change between two ``{listing: items}`` maps of one server (``SURFACE_IDS``'s listings)."""
    out: list[Change] = []
    for listing, key in SURFACE_IDS.items():
        word, family = _WORDS[listing]
        old_by = {str(i.get(key)): i for i in old.get(listing, ()) if isinstance(i, Mapping)}
        new_by = {str(i.get(key)): i for i in new.get(listing, ()) if isinstance(i, Mapping)}
        for ident in sorted(set(old_by) | set(new_by)):
            if ident not in new_by:
                out.append(Change(source, ident, "breaking", f"{word}-removed", "", ident, None, f"{word} removed"))
            elif ident not in old_by:
                out.append(Change(source, ident, "compatible", f"{word}-added", "", None, ident, f"{word} added"))
            elif family == "prompt":
                out += _diff_prompt(source, ident, old_by[ident], new_by[ident])
            else:
                out += _diff_resource(source, ident, word, old_by[ident], new_by[ident])
    return tuple(out) + _diff_completions(source, old, new)


def _literal_sets(listings: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[tuple[str, str, str], list[str]]:
    """(ref type, prompt name or template, argument) -> the values of each stable closed set."""
    out: dict[tuple[str, str, str], list[str]] = {}
    for item in listings.get("completions", ()):
        ref, values = item.get("ref"), item.get("values")
        if isinstance(ref, Mapping) and item.get("stable") is True and isinstance(values, list):
            target = str(ref.get("name") or ref.get("uri"))
            out[(str(ref.get("type")), target, str(item.get("argument")))] = [str(v) for v in values]
    return out


def _diff_completions(
    source: str, old: Mapping[str, Sequence[Mapping[str, Any]]], new: Mapping[str, Sequence[Mapping[str, Any]]]
) -> tuple[Change, ...]:
    """How each parameter's completion ``Literal`` changed (a stable closed set; else ``str``)."""
    before, after = _literal_sets(old), _literal_sets(new)
    out: list[Change] = []
    for key in sorted(set(before) | set(after)):
        kind_ref, target, argument = key
        prompt = kind_ref == "ref/prompt"
        stem, what = ("prompt-argument", "prompt argument") if prompt else ("template-variable", "template variable")
        a, b = before.get(key), after.get(key)
        found: list[tuple[str, Any, Any, str]] = []
        if a is None and b is not None:
            found.append(("closed", None, b, f"{what} {argument!r} is now Literal{b}"))
        elif a is not None and b is None:
            found.append(("opened", a, None, f"{what} {argument!r} is now str (was Literal{a})"))
        elif a is not None and b is not None:
            gone, new_values = sorted(set(a) - set(b)), sorted(set(b) - set(a))
            if gone:
                found.append(("removed", gone, None, f"{what} {argument!r}: value(s) {gone} removed from its Literal"))
            if new_values:
                found.append(("added", None, new_values, f"{what} {argument!r}: value(s) {new_values} added"))
        for suffix, was, now, message in found:
            kind = f"{stem}-values-{suffix}"
            out.append(Change(source, target, KINDS[kind][0], kind, f"/completions/{pointer_token(argument)}", was, now,
                              message))  # fmt: skip
    return tuple(out)


def _diff_resource(source: str, ident: str, word: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    out: list[Change] = []

    def add(kind: str, key: str, message: str) -> None:
        out.append(
            Change(source, ident, KINDS[kind][0], kind, f"/{pointer_token(key)}", old.get(key), new.get(key), message)
        )

    if word == "template":
        out += _diff_template_variables(source, ident, old, new)
    for key in sorted((set(old) | set(new)) - {"uri", "uriTemplate"}):
        if json_equal(old.get(key), new.get(key)):
            continue
        if key == "name":
            add("resource-renamed", key, f"{word} name changed (its method is renamed)")
        elif key == "mimeType":
            add("resource-type-changed", key, f"{word} MIME type changed")
        elif key in ("title", "description"):
            add("resource-description-changed", key, f"{word} {key} changed")
        else:
            add("resource-other-changed", key, f"{word} {key!r} changed")
    return out


def _template_variables(template: Any) -> dict[str, bool]:
    """Variable -> required (a path variable), by the generator's rule (codegen/surface.py)."""
    from mas.runtime.contracts.uri_template import TemplateError, parse

    try:
        parsed = parse(str(template))
    except TemplateError:
        return {}
    found: dict[str, bool] = {}
    for part in parsed.parts:
        if not isinstance(part, str):
            for name, _, _ in part.variables:
                found[name] = found.get(name, False) or part.operator in ("", "+", ".", "/")
    return found


def _diff_template_variables(source: str, ident: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    # The same URI template has the same variables; this runs for a template kept under another key.
    a, b = _template_variables(old.get("uriTemplate")), _template_variables(new.get("uriTemplate"))
    out: list[Change] = []
    for name in sorted(set(a) - set(b)):
        out.append(Change(source, ident, "breaking", "template-variable-removed", "/uriTemplate", name, None,
                          f"template variable {name!r} removed"))  # fmt: skip
    for name in sorted(set(b) - set(a)):
        kind = "template-variable-added-required" if b[name] else "template-variable-added-optional"
        out.append(Change(source, ident, KINDS[kind][0], kind, "/uriTemplate", None, name,
                          f"template variable {name!r} added"))  # fmt: skip
    return out


def _diff_prompt(source: str, ident: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    out: list[Change] = []

    def add(kind: str, pointer: str, a: Any, b: Any, message: str) -> None:
        out.append(Change(source, ident, KINDS[kind][0], kind, pointer, a, b, message))

    def arguments(prompt: Mapping[str, Any]) -> dict[str, tuple[int, Mapping[str, Any]]]:
        items = prompt.get("arguments") or []
        return {str(a.get("name")): (i, a) for i, a in enumerate(items) if isinstance(a, Mapping)}

    old_args, new_args = arguments(old), arguments(new)
    for name in sorted(set(old_args) | set(new_args)):
        if name not in new_args:
            at, arg = old_args[name]
            add("prompt-argument-removed", f"/arguments/{at}", arg, None, f"prompt argument {name!r} removed")
            continue
        at, arg = new_args[name]
        required = bool(arg.get("required"))
        if name not in old_args:
            kind = "prompt-argument-added-required" if required else "prompt-argument-added-optional"
            add(kind, f"/arguments/{at}", None, arg, f"prompt argument {name!r} added")
            continue
        before = old_args[name][1]
        if bool(before.get("required")) != required:
            kind = "prompt-argument-now-required" if required else "prompt-argument-now-optional"
            add(kind, f"/arguments/{at}/required", before.get("required"), arg.get("required"),
                f"prompt argument {name!r} is now {'required' if required else 'optional'}")  # fmt: skip
        for key in ("title", "description"):
            if not json_equal(before.get(key), arg.get(key)):
                add("prompt-description-changed", f"/arguments/{at}/{key}", before.get(key), arg.get(key),
                    f"prompt argument {name!r} {key} changed")  # fmt: skip
    for key in sorted((set(old) | set(new)) - {"name", "arguments"}):
        if json_equal(old.get(key), new.get(key)):
            continue
        kind = "prompt-description-changed" if key in ("title", "description") else "prompt-other-changed"
        add(kind, f"/{pointer_token(key)}", old.get(key), new.get(key), f"prompt {key} changed")
    return out
