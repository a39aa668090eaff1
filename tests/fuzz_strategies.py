"""hypothesis strategies for random tools/list results: inputs nobody chose.

Names, descriptions and property keys come from the whole of Unicode (surrogates excluded, as JSON
text cannot carry them alone), mixed with text that would run code if it ever became code (it
creates the canary file) and with the characters that once broke the generator (U+2028, form feed,
NEL, quotes, backslashes). Schemas nest with every keyword of the coverage table
(docs/schema-coverage.md), ``$defs``/``$ref`` (recursive too, dangling and external), enums,
consts, defaults of the wrong type and boolean schemas.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

__all__ = ["CANARY_NAME", "chunked", "line_bytes", "listings", "nested", "with_secret"]

#: The file a payload would create if any text ever ran as code (relative to the working folder).
CANARY_NAME = "toolgen_fuzz_canary"

_PAYLOADS = (
    f'"""\n__import__("pathlib").Path("{CANARY_NAME}").touch()\n"""',
    f"'); __import__('pathlib').Path('{CANARY_NAME}').touch() #",
    f'"\n__import__("pathlib").Path("{CANARY_NAME}").touch()\n#',
    f"\\\n__import__('pathlib').Path('{CANARY_NAME}').touch()\n\\",
    f"# {{__import__('pathlib').Path('{CANARY_NAME}').touch()}}",
    f"\u2028__import__('pathlib').Path('{CANARY_NAME}').touch()\u2029",
)
_AWKWARD = "\u2028\u2029\x85\x0b\x0c\r\n\t\x00\u202e\ufeff\\\"'#{}[]()_-. $/~"
_WORDS = ("a_b", "a__b", "getItem_", "get_item", "class", "self", "results", "str", "None", "_", "1x", "Model",
          "Field", "Any", "input", "t_input", "TInput", "model_config", "x-y", "x.y", "Input", "Output",
          # Keys that shadow what a model module imports or pydantic reserves (issue 17, item 9).
          "Annotated", "Annotated_", "Literal", "int", "BaseModel", "model_dump", "field_model_dump",
          "model_validate")  # fmt: skip

_chars = st.characters(exclude_categories=("Cs",))
texts = st.one_of(
    st.text(_chars, max_size=8),
    st.text(st.sampled_from(_AWKWARD + "ab"), max_size=6),
    st.sampled_from(_WORDS),
    st.sampled_from(_PAYLOADS),
)
names = texts.filter(bool)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    texts,
)
json_values = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3), max_leaves=6
)
_types = ("string", "integer", "number", "boolean", "null", "array", "object")
_formats = ("date-time", "date", "time", "email", "uri", "uuid", "ipv4", "hostname", "duration", "binary", "nonsense")


def _keywords(schema: st.SearchStrategy[Any], refs: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    """One schema object: a random subset of keywords, values mostly well-formed, some not."""
    props = st.dictionaries(texts, schema, max_size=4)
    options: dict[str, st.SearchStrategy[Any]] = {
        "type": st.sampled_from(_types)
        | st.lists(st.sampled_from(_types), min_size=1, max_size=3, unique=True)
        | st.sampled_from((5, "bogus")),
        "enum": st.lists(_scalars, min_size=1, max_size=4),
        "const": json_values,
        "default": json_values,
        "title": texts,
        "description": texts,
        "examples": st.lists(json_values, max_size=2),
        "$comment": texts,
        "deprecated": st.booleans(),
        "readOnly": st.booleans(),
        "writeOnly": st.booleans(),
        "format": st.sampled_from(_formats),
        "pattern": texts | st.sampled_from(("^[a-z]+$", "\\p{L}", "(", "\\d{2,}", "[[:alpha:]]")),
        "minLength": st.integers(0, 5),
        "maxLength": st.integers(0, 50),
        "minimum": st.integers(-5, 5) | st.floats(-1e300, 1e300),
        "maximum": st.integers(0, 100),
        "exclusiveMinimum": st.integers(-5, 5) | st.booleans(),
        "exclusiveMaximum": st.integers(10, 100),
        "multipleOf": st.sampled_from((1, 2, 0.5, 0.1)),
        "properties": props,
        "required": st.lists(texts, max_size=3),
        "additionalProperties": st.booleans() | schema,
        "patternProperties": st.dictionaries(st.sampled_from(("^x", "[", "^[a-z]+$")), schema, max_size=2),
        "propertyNames": schema,
        "minProperties": st.integers(0, 3),
        "maxProperties": st.integers(0, 9),
        "dependentRequired": st.dictionaries(texts, st.lists(texts, max_size=2), max_size=2),
        "dependentSchemas": st.dictionaries(texts, schema, max_size=2),
        "items": schema | st.lists(schema, max_size=2),
        "prefixItems": st.lists(schema, max_size=2),
        "additionalItems": schema,
        "contains": schema,
        "minContains": st.integers(0, 2),
        "minItems": st.integers(0, 3),
        "maxItems": st.integers(0, 9),
        "uniqueItems": st.booleans(),
        "unevaluatedProperties": st.booleans() | schema,
        "unevaluatedItems": st.booleans() | schema,
        "anyOf": st.lists(schema, min_size=1, max_size=3),
        "oneOf": st.lists(schema, min_size=1, max_size=3),
        "allOf": st.lists(schema, min_size=1, max_size=3),
        "not": schema,
        "if": schema,
        "then": schema,
        "else": schema,
        "contentMediaType": st.just("application/json"),
        "contentEncoding": st.just("base64"),
        "nullable": st.booleans(),
        "$ref": refs,
        "$dynamicRef": st.just("#meta"),
        "definitions": st.dictionaries(texts, schema, max_size=2),
        "dependencies": st.dictionaries(texts, st.lists(texts, max_size=2) | schema, max_size=2),
        "$anchor": texts,
        "$id": st.sampled_from(("https://example.com/s.json", "urn:x", "#frag")),
        "x-vendor": json_values,
    }
    return st.lists(st.sampled_from(sorted(options)), max_size=4, unique=True).flatmap(
        lambda keys: st.fixed_dictionaries({k: options[k] for k in keys})
    )


def _schemas(def_names: list[str]) -> st.SearchStrategy[Any]:
    local = [f"#/$defs/{n.replace('~', '~0').replace('/', '~1')}" for n in def_names]
    refs = st.sampled_from(
        [*local, "#", "#/$defs/Missing", "#/properties", "http://127.0.0.1:9/x.json", "other.json#/a", "#anchor"]
    )
    leaf = st.booleans() | st.fixed_dictionaries({"type": st.sampled_from(_types)}) | st.just({})
    return st.recursive(leaf, lambda inner: _keywords(inner, refs) | inner, max_leaves=10)


@st.composite
def _tool(draw: st.DrawFn, name: str) -> dict[str, Any]:
    def_names = draw(st.lists(texts, max_size=3, unique=True))
    schema = _schemas(def_names)
    input_schema: dict[str, Any] = {"type": "object", "properties": draw(st.dictionaries(texts, schema, max_size=5))}
    keys = list(input_schema["properties"])
    if keys:
        input_schema["required"] = draw(st.lists(st.sampled_from(keys), unique=True))
    if def_names:
        input_schema["$defs"] = {n: draw(schema) for n in def_names}
    input_schema |= draw(_keywords(schema, st.nothing()).map(lambda d: {k: v for k, v in d.items() if k in _EXTRA}))
    defs = input_schema.get("$defs", {})
    if draw(st.integers(0, 19)) == 0:  # no "type" and nothing else, as a published GitLab server sends
        input_schema = {"$schema": "http://json-schema.org/draft-07/schema#"}
    tool: dict[str, Any] = {"name": name, "inputSchema": input_schema}
    if draw(st.booleans()):
        # A copy: hypothesis may hand out one object in several places (``st.just({})``), and adding
        # ``$defs`` to a schema that is itself one of those definitions would make a cycle no JSON
        # listing can hold (found by a 1,500-example run: json.dumps raised "Circular reference").
        output = copy.deepcopy(draw(schema | _keywords(schema, st.nothing()).map(lambda d: {"type": "object", **d})))
        if isinstance(output, dict) and def_names and draw(st.booleans()):
            output["$defs"] = copy.deepcopy(defs)
        tool["outputSchema"] = output
    for key in ("title", "description"):
        if draw(st.booleans()):
            tool[key] = draw(texts)
    if draw(st.booleans()):
        tool["annotations"] = draw(
            st.fixed_dictionaries({}, optional={"readOnlyHint": st.booleans(), "title": texts, "x": json_values})
        )
    return tool


_EXTRA = ("additionalProperties", "patternProperties", "description", "title", "anyOf", "allOf", "not", "default")


@st.composite
def listings(draw: st.DrawFn) -> dict[str, Any]:
    """``{"tools": [...]}`` with unique non-empty names (the only things a listing must get right)."""
    tool_names = draw(st.lists(names, min_size=1, max_size=4, unique=True))
    return {"tools": [draw(_tool(n)) for n in tool_names]}


# --- the runtime's boundary (issue 17): wire bytes, secrets --------------------------------------
#: Bytes a server may put on one stdout line: anything but the newline, invalid UTF-8 included.
line_bytes = st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")) | st.sampled_from(
    [b"caf\xe9", b"\xff\xfe", b'{"jsonrpc": "2.0"}', b"", b"\r", b"\x00"]
)


@st.composite
def chunked(draw: st.DrawFn, data: bytes) -> list[bytes]:
    """``data`` cut at random places, as pipe reads deliver it."""
    cuts = sorted(draw(st.lists(st.integers(min_value=0, max_value=len(data)), max_size=8)))
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


@st.composite
def nested(draw: st.DrawFn, max_depth: int = 400) -> Any:
    """A JSON value wrapped in lists and objects to a random depth (far past parsers' limits)."""
    value = draw(json_values)
    for _ in range(draw(st.integers(min_value=0, max_value=max_depth))):
        value = [value] if draw(st.booleans()) else {"k": value}
    return value


@st.composite
def with_secret(draw: st.DrawFn, secret: str) -> Any:
    """A JSON value with ``secret`` planted in some of its strings and keys (whole, or glued to text)."""

    def plant(text: str) -> str:
        return draw(st.sampled_from([text, secret, f"{text}{secret}", f"{secret}{text}{secret}"]))

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return plant(value)
        if isinstance(value, list):
            return [walk(item) for item in value]
        if isinstance(value, dict):
            return {plant(key): walk(item) for key, item in value.items()}
        return value

    return walk(draw(json_values))
