"""JSON Schema preparation: one combined ``$defs`` document for every tool of a build.

Each tool's input and output schema becomes one named definition; the definitions a schema
carries are hoisted beside it under prefixed names and its ``$ref``s rewritten to match, so one
batched datamodel-code-generator call sees every model at once.

Keys are sorted at every level, property maps included: a server that reorders its schema does
not change the generated code, so drift means a real change.

Text that only documents (``title``, ``description``, ``examples``, ``$comment``) is dropped here:
it reaches the generated code only through the docstrings we escape ourselves. So are defaults.

What cannot be typed degrades here instead of stopping the build: an external ``$ref`` (never
fetched), a ``$ref`` that resolves to nothing, a value where a schema belongs, a keyword of the wrong
shape. The spot becomes the empty schema (``Any``) and ``report`` records it; the wire is untouched.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from codegen.cache import Memo
from codegen.errors import GenerateError
from codegen.naming import class_name, unique
from mas.runtime.contracts._rules import json_type, pointer, pointer_tokens, unescape_token
from mas.runtime.lockfile import SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_VALUES

__all__ = [
    "MAX_DEPTH",
    "MAPPING_SCHEMA",
    "WRAP_MARKER",
    "Report",
    "SchemaDocument",
    "pointer",
    "prepare_schema",
    "constrains_nothing",
    "wrapped_key",
]

#: ``report(at, kind, what)``: a spot at JSON pointer parts ``at`` was degraded.
Report = Callable[[tuple[str | int, ...], str, str], None]
Rewrite = Callable[[str, tuple[str | int, ...]], str | None]

MAX_DEPTH = 64

# The schema walk's tables, shared with the canonical form of the lock and of drift (one place).
_SCHEMA_MAPS, _SCHEMA_VALUES, _SCHEMA_LISTS = SCHEMA_MAPS, SCHEMA_VALUES, SCHEMA_LISTS
_DOC_ONLY = ("title", "description", "examples", "$comment", "$id", "$schema", "$anchor", "deprecated")
# Defaults are left to the server: a default that does not fit its type would become a model
# field that fails type checking. (Signature defaults are read from the original schema.)
_DROPPED = (*_DOC_ONLY, "default")
_DEF_KEYS = ("$defs", "definitions")
# Formats pydantic types only with an extra package (email-validator): the model module would fail
# to import without it, so these strings stay ``str``.
_EXTRA_PACKAGE_FORMATS = ("email", "idn-email")


class SchemaDocument:
    """Collects named definitions for one datamodel-code-generator run."""

    def __init__(self) -> None:
        self.definitions: dict[str, Any] = {}

    def add(
        self,
        name: str,
        schema: Any,
        *,
        where: str,
        used: set[str],
        base: tuple[str | int, ...] = (),
        report: Report | None = None,
        memo: Memo | None = None,
        digest: str | None = None,
    ) -> tuple[str, ...]:
        """Add ``schema`` as definition ``name`` (already unique), hoisting its own definitions;
        returns the names of every definition added (``name`` first).

        ``base`` is the schema's own JSON pointer in its file, so errors point into the file;
        ``report`` hears of every degraded spot (without it, they degrade silently); ``memo``
        keeps the prepared schemas and the reports under ``digest`` (``Memo.key`` of what holds
        ``schema``, taken once per tool), so a rebuild walks only the schemas it has not seen.
        """
        note: Report = report or (lambda at, kind, what: None)
        local: dict[str, str] = {}
        if isinstance(schema, Mapping):
            for key in _DEF_KEYS:
                defs = schema.get(key)
                if isinstance(defs, Mapping):
                    for def_name in sorted(defs):
                        local[f"#/{key}/{def_name}"] = _unique(name + _pascal(str(def_name)), used)
        # A function of these alone: a schema added before with the same names is not walked again.
        known = memo is not None and digest is not None
        memo_key = Memo.key("add", digest, name, where, base, sorted(local.items())) if known else None
        found = memo.get(memo_key) if memo is not None else None
        if found is None:
            heard: list[list[Any]] = []

            def hear(at: tuple[str | int, ...], kind: str, what: str) -> None:
                heard.append([list(at), kind, what])

            found = {"definitions": self._prepared(name, schema, where, base, local, hear), "reports": heard}
            if memo is not None:
                memo.put(memo_key, found)
        for target, prepared in found["definitions"]:
            self.definitions[target] = prepared
        for at, kind, what in found["reports"]:
            note(tuple(at), kind, what)
        return (name, *sorted(set(local.values())))

    @staticmethod
    def _prepared(
        name: str, schema: Any, where: str, base: tuple[str | int, ...], local: Mapping[str, str], note: Report
    ) -> list[list[Any]]:
        """``[definition name, prepared schema]`` for the schema's own definitions, then itself."""
        out: list[list[Any]] = []

        def rewrite(ref: str, at: tuple[str | int, ...]) -> str | None:
            if ref == "#" + pointer(at[len(base) : -1]):
                # A schema that is only a reference to itself ({"$ref": "#"} at the root): a cycle
                # with nothing in it, of which datamodel-code-generator makes no class at all.
                note(at, "unsupported-ref", f"$ref {ref!r} refers to the schema it is in; typed as Any")
                return None
            if not ref.startswith("#"):
                note(at, "external-ref", f"external $ref {ref!r} is not fetched; typed as Any")
                return None
            if ref != "#" and not ref.startswith("#/"):
                note(at, "unsupported-ref", f"$ref {ref!r} (an anchor) is not followed; typed as Any")
                return None
            if not _resolves(schema, ref):  # else datamodel-code-generator would quietly make it Any
                note(at, "dangling-ref", f"$ref {ref!r} points at nothing in this schema; typed as Any")
                return None
            if ref == "#":
                return f"#/$defs/{name}"
            for prefix in sorted(local, key=len, reverse=True):
                if ref == prefix or ref.startswith(prefix + "/"):
                    return f"#/$defs/{local[prefix]}" + ref[len(prefix) :]
            return f"#/$defs/{name}/" + ref[2:]  # a pointer into the root schema itself

        if isinstance(schema, Mapping):
            for key in _DEF_KEYS:
                defs = schema.get(key)
                if isinstance(defs, Mapping):
                    for def_name in sorted(defs):
                        target = local[f"#/{key}/{def_name}"]
                        out.append(
                            [
                                target,
                                prepare_schema(
                                    defs[def_name],
                                    where=where,
                                    rewrite=rewrite,
                                    at=(*base, key, def_name),
                                    floor=len(base),
                                    report=note,
                                ),
                            ]
                        )
        root = prepare_schema(
            schema, where=where, rewrite=rewrite, at=base, drop=_DEF_KEYS, floor=len(base), report=note
        )
        out.append([name, root])
        return out

    def replace(self, names: tuple[str, ...], schema: Any | None) -> None:
        """Drop definitions ``names``; with ``schema``, the first becomes that schema instead."""
        for n in names:
            self.definitions.pop(n, None)
        if schema is not None:
            self.definitions[names[0]] = schema

    def document(self, definitions: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The document of every definition, or of ``definitions`` (some of them: one group)."""
        defs = self.definitions if definitions is None else definitions
        return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}


def prepare_schema(
    schema: Any,
    *,
    where: str,
    rewrite: Rewrite | None = None,
    at: tuple[str | int, ...] = (),
    drop: tuple[str, ...] = (),
    floor: int = 0,
    report: Report | None = None,
) -> Any:
    """Copy ``schema`` without documentation text, with refs rewritten; bounded depth."""
    if len(at) - floor > MAX_DEPTH * 2:
        raise GenerateError(f"schema nested deeper than {MAX_DEPTH} levels", where, pointer(at))
    note: Report = report or (lambda at, kind, what: None)
    if isinstance(schema, bool):
        return schema
    if not isinstance(schema, Mapping):
        note(at, "not-a-schema", f"a schema must be an object or a boolean, got {json_type(schema)}; typed as Any")
        return {}

    def sub(value: Any, *parts: str | int) -> Any:
        return prepare_schema(value, where=where, rewrite=rewrite, at=(*at, *parts), floor=floor, report=note)

    out: dict[str, Any] = {}
    for key in sorted(schema):
        value = schema[key]
        if key in _DROPPED or key in drop:
            continue
        if key == "format" and value in _EXTRA_PACKAGE_FORMATS:  # str it stays: exact, and importable
            continue
        if key == "const" and isinstance(value, float):  # Literal[0.5] is not a valid type
            out.setdefault("type", "number")
            continue
        if key in ("$dynamicRef", "$recursiveRef"):
            note((*at, key), "unsupported-ref", f"{key} {value!r} is not followed; ignored")
            continue
        if key == "$ref":
            if not isinstance(value, str):
                note((*at, key), "bad-keyword", f"$ref must be a string, got {json_type(value)}; ignored")
                continue
            target = rewrite(value, (*at, key)) if rewrite else value
            if target is not None:
                out[key] = target
        elif key == "pattern":
            if not isinstance(value, str) or not usable_pattern(value):
                note((*at, key), "bad-pattern", f"pattern {value!r} is not a usable regular expression; ignored")
                continue
            out[key] = value
        elif key in _SCHEMA_MAPS:
            if not isinstance(value, Mapping):
                note((*at, key), "bad-keyword", f"{key} must be an object, got {json_type(value)}; ignored")
                continue
            kept = sorted(value, key=str)
            if key == "patternProperties":
                for bad in [k for k in kept if not usable_pattern(str(k))]:
                    note(
                        (*at, key, str(bad)),
                        "bad-pattern",
                        f"pattern {bad!r} is not a usable regular expression; ignored",
                    )
                    kept.remove(bad)
            out[key] = {str(k): sub(value[k], key, str(k)) for k in kept}
        elif key in _SCHEMA_VALUES and not isinstance(value, list):
            out[key] = sub(value, key)
        elif key in _SCHEMA_LISTS or (key == "items" and isinstance(value, list)):
            if not isinstance(value, list) or (key != "items" and key != "prefixItems" and not value):
                note((*at, key), "bad-keyword", f"{key} must be a non-empty array, got {json_type(value)}; ignored")
                continue
            out[key] = [sub(v, key, i) for i, v in enumerate(value)]
        else:
            out[key] = value
    return _typed_constraints(out)


# Constraints that apply to one JSON type only. JSON Schema ignores them for other types; pydantic
# applies them whatever the value (``max_length`` on a model raises TypeError), so they are kept
# only where the schema says the value has that type. The server still validates the rest.
_CONSTRAINTS = {
    "string": ("minLength", "maxLength", "pattern", "format"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "integer": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "array": ("minItems", "maxItems", "uniqueItems"),
    "object": ("minProperties", "maxProperties"),
}


def _typed_constraints(schema: dict[str, Any]) -> dict[str, Any]:
    declared = schema.get("type")
    types = {declared} if isinstance(declared, str) else set(declared) if isinstance(declared, list) else set()
    keep = {k for t in types if isinstance(t, str) for k in _CONSTRAINTS.get(t, ())}
    if len(types) > 1:  # pydantic would apply a string's maxLength to the array branch too
        keep = set() if len({_CONSTRAINTS.get(t) for t in types if t != "null"}) > 1 else keep
    drop = [k for ks in _CONSTRAINTS.values() for k in ks if k in schema and k not in keep]
    return {k: v for k, v in schema.items() if k not in drop}


@functools.lru_cache(maxsize=1024)
def usable_pattern(pattern: str) -> bool:
    """Whether pydantic (which validates the generated models) compiles ``pattern``: its regex engine
    is not Python's, nor quite JSON Schema's, so the one that will run it is asked."""
    from pydantic_core import SchemaError, SchemaValidator, core_schema

    try:
        SchemaValidator(core_schema.str_schema(pattern=pattern))
    except SchemaError:
        return False
    return True


def _resolves(schema: Any, ref: str) -> bool:
    """Whether a local ``#/a/b`` pointer names something inside ``schema``."""
    node = schema
    for key in pointer_tokens(ref[1:]) if ref.startswith("#/") else []:
        if isinstance(node, Mapping) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return False
    return ref == "#" or ref.startswith("#/")


def _pascal(text: str) -> str:
    return class_name(unescape_token(text))


def _unique(candidate: str, used: set[str]) -> str:
    return unique(candidate, used)


#: FastMCP marks the output schema of a tool whose function returns a plain value (``str``,
#: ``int``, a list...) this way; its structured content is then ``{"result": value}``.
WRAP_MARKER = "x-fastmcp-wrap-result"
_WRAP_KEY = "result"


#: The keys an output schema may have and still constrain nothing (the rest only document it).
_UNCONSTRAINING = frozenset({"type", "additionalProperties", "title", "description", "$schema"})
#: What an output schema that constrains nothing is typed as when no samples tell more: a mapping.
MAPPING_SCHEMA: Mapping[str, Any] = {"type": "object", "additionalProperties": {}}


def constrains_nothing(schema: Any) -> bool:
    """Whether an output schema says no more than "an object": ``{"type": "object"}``, with
    ``additionalProperties`` absent, ``true`` or ``{}``, and nothing else but documentation
    (fastmcp's ``{"type": "object", "additionalProperties": true}``, for a function typed ``dict``).
    Such a schema is undeclared for typing: the type is learned from samples, else a mapping."""
    if not isinstance(schema, Mapping) or schema.get("type") != "object" or not set(schema) <= _UNCONSTRAINING:
        return False
    extra = schema.get("additionalProperties", True)
    return extra is True or (isinstance(extra, Mapping) and not extra)


#: The only keys the mcp SDK's own wrapper schema has (``$defs`` when the value's type has models).
_SDK_WRAP_KEYS = frozenset({"type", "properties", "required", "title", "$defs"})


def wrapped_key(schema: Any, tool_name: str | None = None) -> str | None:
    """``"result"`` when ``schema`` wraps a plain value, else None. Two conventions:

    * fastmcp's: an object schema marked ``"x-fastmcp-wrap-result": true`` whose only property is
      ``result`` (declared and inferred schemas alike: ``codegen/infer.py`` marks a result recorded
      in that shape);
    * the mcp Python SDK's own (FastMCP in 1.x, MCPServer in 2.x), which has no marker: the model it
      wraps a plain return value in, named after the function. Recognised only when the schema is
      exactly ``{"type": "object", "properties": {"result": ...}, "required": ["result"],
      "title": "<tool name>Output"}`` (plus ``$defs``), with nothing else: a server's own one-field
      object has another title, another key (``description``, ``additionalProperties``...) or
      ``result`` not required, and stays an object. ``tool_name`` is the tool's wire name: a tool
      renamed away from its function's name is not recognised (its value stays one field).
    """
    if not isinstance(schema, Mapping):
        return None
    properties = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(properties, Mapping) or list(properties) != [_WRAP_KEY]:
        return None
    if schema.get(WRAP_MARKER) is True:
        return _WRAP_KEY
    sdk = (
        tool_name is not None
        and set(schema) <= _SDK_WRAP_KEYS
        and schema.get("required") == [_WRAP_KEY]
        and schema.get("title") == f"{tool_name}Output"
    )
    return _WRAP_KEY if sdk else None
