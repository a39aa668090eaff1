"""Load ``kind: Tool`` YAML documents with line numbers; every problem is a one-line ConfigError.

The format is described in ``docs/tool.md`` and ``contracts/tool.schema.yaml``. Loading has no
side effects (handlers are not imported) so the code generator can reuse it.
"""

from __future__ import annotations

import copy
import difflib
import functools
import importlib.resources
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, ValidationError, best_match, relevance

from mas.runtime.config import ConfigError, SourceLocation
from mas.runtime.contracts._rules import json_type
from mas.runtime.contracts.tool_contract import ADVERTISE_KEYS, build_tool_entry

__all__ = [
    "MAX_ALIAS_EXPANSION",
    "AliasExpansionError",
    "LineLoader",
    "LineMap",
    "ToolDefinition",
    "dotted",
    "expand_paths",
    "load_schema",
    "load_tool_documents",
    "load_yaml_documents",
    "validate_document",
]

JsonPath = tuple[str | int, ...]


def dotted(path: Sequence[str | int]) -> str:
    """``("spec", "servers", 0, "url")`` -> ``spec.servers[0].url``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(document)"


class LineMap:
    """1-based line of every mapping key and sequence item of one YAML document."""

    def __init__(self, lines: Mapping[JsonPath, int], root_line: int) -> None:
        self._lines = dict(lines)
        self.root_line = root_line

    def line(self, path: Sequence[str | int]) -> int:
        """Line of ``path``, or of its deepest known parent (a missing key points at its parent)."""
        parts = tuple(path)
        while parts:
            if parts in self._lines:
                return self._lines[parts]
            parts = parts[:-1]
        return self.root_line

    def __repr__(self) -> str:
        return f"LineMap({len(self._lines)} paths, root_line={self.root_line})"


class _DuplicateKey(Exception):
    def __init__(self, path: JsonPath, line: int, first_line: int) -> None:
        super().__init__(path, line, first_line)
        self.path, self.line, self.first_line = path, line, first_line


#: How many nodes the aliases of one YAML document may add when expanded (each alias counts the
#: whole tree it stands for). Far above any real tool or infra file, far below a "billion laughs"
#: file: nine anchors of nine aliases (715 bytes) would expand to 387 million nodes.
MAX_ALIAS_EXPANSION = 100_000


class AliasExpansionError(yaml.YAMLError):
    """An alias that expands too far or into itself; ``problem_mark`` is where the alias is."""

    def __init__(self, mark: yaml.Mark, problem: str) -> None:
        super().__init__(problem)
        self.problem_mark, self.problem = mark, problem


class LineLoader(yaml.SafeLoader):
    """A SafeLoader that also records the line of each mapping key and sequence item, and refuses
    aliases that expand beyond ``MAX_ALIAS_EXPANSION`` nodes, or into themselves, while composing:
    the shared objects PyYAML builds cost nothing to load, but every later walk (validation,
    hashing, a JSON dump) expands them."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._sizes: dict[int, int] = {}  # id(node) -> nodes it expands to; set once it is complete
        self._expanded = 0  # nodes the aliases of this document added so far

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            node = super().compose_node(parent, index)
            size = self._sizes.get(id(node))
            if size is None:  # the anchor's own node is still open: the alias is inside it
                raise AliasExpansionError(mark, "YAML alias refers to a node that contains it (a recursive alias)")
            self._expanded += size
            if self._expanded > MAX_ALIAS_EXPANSION:
                raise AliasExpansionError(
                    mark,
                    f"YAML aliases expand to more than {MAX_ALIAS_EXPANSION} nodes; write the values out "
                    "or use fewer aliases",
                )
            return node
        node = super().compose_node(parent, index)
        children: list[yaml.Node] = []
        if isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        self._sizes[id(node)] = 1 + sum(self._sizes.get(id(child), 1) for child in children)
        return node

    def documents_with_lines(self) -> Iterator[tuple[Any, LineMap]]:
        while self.check_node():
            self._expanded, self._sizes = 0, {}
            node = self.get_node()
            if node is None:
                continue
            lines: dict[JsonPath, int] = {}
            self._record(node, (), lines, set())
            data = self.construct_document(node)
            if data is not None:  # an empty document (a trailing ``---``) is not a document
                yield data, LineMap(lines, node.start_mark.line + 1)

    def _record(self, node: yaml.Node, path: JsonPath, lines: dict[JsonPath, int], seen: set[int]) -> None:
        # Walk each node once: an alias then costs nothing, and its paths fall back to the line of
        # the key that holds the alias (recursive and expanding aliases were refused in compose_node).
        if id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first_seen: dict[Any, int] = {}
            for key_node, value_node in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True) if isinstance(key_node, yaml.ScalarNode) else None
                if not isinstance(key, str | int):
                    continue
                line = key_node.start_mark.line + 1
                if key in first_seen:  # SafeLoader would silently keep the last one
                    raise _DuplicateKey((*path, key), line, first_seen[key])
                first_seen[key] = line
                lines[(*path, key)] = line
                self._record(value_node, (*path, key), lines, seen)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                lines[(*path, index)] = item.start_mark.line + 1
                self._record(item, (*path, index), lines, seen)


def load_yaml_documents(path: str | Path) -> list[tuple[Any, LineMap]]:
    """Every non-empty document of a (multi-document) YAML file with its line map."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read file: {exc.strerror or exc}", SourceLocation(file)) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError("file is not UTF-8 text", SourceLocation(file)) from exc
    loader = LineLoader(text)
    try:
        return list(loader.documents_with_lines())
    except _DuplicateKey as exc:
        where = SourceLocation(file, exc.line, dotted(exc.path))
        raise ConfigError(f"duplicate key (first set on line {exc.first_line})", where) from None
    except AliasExpansionError as exc:
        raise ConfigError(exc.problem, SourceLocation(file, exc.problem_mark.line + 1)) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        if mark is not None and mark.index >= len(text) and exc.context_mark is not None:
            mark = exc.context_mark  # "unexpected end of file": the unclosed construct is the useful line
        line = None if mark is None else mark.line + 1
        problem = str(exc.problem or "invalid YAML")
        if exc.context and exc.context_mark is not None and exc.context_mark.line + 1 != line:
            problem += f" ({exc.context} that starts on line {exc.context_mark.line + 1})"
        elif exc.context:
            problem += f" ({exc.context})"
        raise ConfigError(f"YAML syntax error: {problem}", SourceLocation(file, line)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"YAML error: {exc}", SourceLocation(file)) from None
    finally:
        loader.dispose()


@functools.cache
def load_schema(package: str, resource: str) -> dict[str, Any]:
    """A schema shipped inside the package (so it is found in an installed wheel too)."""
    text = importlib.resources.files(package).joinpath(resource).read_text(encoding="utf-8")
    schema: dict[str, Any] = yaml.safe_load(text)
    return schema


def _describe(error: ValidationError) -> tuple[JsonPath, str]:
    """The field path and a short message for one schema violation."""
    path: JsonPath = tuple(error.absolute_path)
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    if "x-error" in schema and error.validator in ("required", "anyOf", "not", "pattern"):
        return path, str(schema["x-error"])
    value: Any = error.instance
    expected: Any = error.validator_value
    if error.validator == "additionalProperties" and isinstance(value, Mapping):
        allowed = sorted(schema.get("properties", {}))
        unknown = sorted(str(k) for k in value if k not in allowed)
        close = _did_you_mean(error)
        if close:
            return (*path, unknown[0]), f"unknown key {unknown[0]!r} (did you mean {close!r}?)"
        hint = f" (allowed: {', '.join(allowed)})" if allowed else ""
        return (*path, unknown[0]), f"unknown key{hint}"
    if error.validator == "required" and isinstance(value, Mapping):
        missing = [k for k in expected if k not in value]
        return (*path, missing[0]), "required key is missing"
    if error.validator in ("anyOf", "oneOf"):
        kinds = [c.validator_value for c in error.context or () if c.validator == "type" and not c.relative_path]
        if len(kinds) == len(error.context or ()):  # every branch wants another type: say which
            return path, f"expected {' or '.join(map(str, kinds))}, got {json_type(value)}"
    if error.validator == "type":
        return (
            path,
            f"expected {expected if isinstance(expected, str) else ' or '.join(expected)}, got {json_type(value)}",
        )
    if error.validator == "const":
        return path, f"must be {expected!r}, not {value!r}"
    if error.validator == "enum":
        return path, f"must be one of {', '.join(map(str, expected))}, not {value!r}"
    if error.validator == "pattern":
        return path, f"{value!r} does not match {expected}"
    if error.validator == "exclusiveMinimum":
        return path, f"must be greater than {expected}, not {value!r}"
    if error.validator == "minLength" and expected == 1:
        return path, "must not be empty"
    return path, error.message


def _did_you_mean(error: ValidationError) -> str | None:
    """For an unknown key, the allowed key it most likely misspells (``parameter`` -> ``parameters``)."""
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    if error.validator != "additionalProperties" or not isinstance(error.instance, Mapping):
        return None
    allowed = [str(k) for k in schema.get("properties", {}) if k not in error.instance]
    unknown = sorted(str(k) for k in error.instance if k not in schema.get("properties", {}))
    close = difflib.get_close_matches(unknown[0], allowed, n=1, cutoff=0.75) if unknown else []
    return close[0] if close else None


def _pick(errors: Iterable[ValidationError], lines: LineMap) -> ValidationError | None:
    """The first problem in file order; among ties the most relevant one. A misspelt key comes
    first: it explains the "required key is missing" that it also causes."""
    errors = list(errors)
    if not errors:
        return None
    misspelt = [e for e in errors if _did_you_mean(e)]
    if misspelt:
        return min(misspelt, key=lambda e: lines.line(_describe(e)[0]))
    first = min(lines.line(_describe(e)[0]) for e in errors)
    best = max((e for e in errors if lines.line(_describe(e)[0]) == first), key=relevance)
    schema = best.schema if isinstance(best.schema, Mapping) else {}
    if best.validator in ("anyOf", "oneOf") and best.context and "x-error" not in schema:
        # Branches whose type does not even match were not what the author meant; when exactly one
        # branch is left, its own first problem is the useful message.
        branches: dict[Any, list[ValidationError]] = {}
        for sub in best.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        plausible = [
            subs for subs in branches.values() if not any(s.validator == "type" and not s.relative_path for s in subs)
        ]
        if len(plausible) == 1:
            return _pick(plausible[0], lines)
    elif best.context and "x-error" not in schema:
        return best_match([best]) or best
    return best


def validate_document(doc: Any, lines: LineMap, schema: Mapping[str, Any], file: str) -> None:
    """Check ``kind`` first (clearest message), then the whole schema; raise the first problem."""
    if not isinstance(doc, Mapping):
        raise ConfigError(f"a document must be a mapping, got {json_type(doc)}", SourceLocation(file, lines.root_line))
    kind = schema.get("properties", {}).get("kind", {}).get("const")
    if kind is not None and doc.get("kind") != kind:
        got = "missing" if "kind" not in doc else f"got {doc['kind']!r}"
        raise ConfigError(f"must be {kind!r}, {got}", SourceLocation(file, lines.line(("kind",)), "kind"))
    error = _pick(Draft202012Validator(schema).iter_errors(doc), lines)
    if error is not None:
        path, message = _describe(error)
        raise ConfigError(message, SourceLocation(file, lines.line(path), dotted(path)))


def _check_json_schema(value: Any, path: JsonPath, lines: LineMap, file: str) -> None:
    """A schema field must itself be a valid JSON Schema; point at the offending line."""
    cls = jsonschema.validators.validator_for(value, default=Draft202012Validator)
    try:
        cls.check_schema(value)
    except SchemaError as exc:
        where = (*path, *exc.absolute_path)
        message = f"invalid JSON Schema: {exc.message}"
        if exc.validator == "anyOf" and where[-1] == "type":
            message = f"invalid JSON Schema: {exc.instance!r} is not a JSON Schema type"
        raise ConfigError(message, SourceLocation(file, lines.line(where), dotted(where))) from None


@dataclass(frozen=True)
class ToolDefinition:
    """One validated ``kind: Tool`` document.

    ``advertise`` holds only the optional ``spec`` keys that are set (see ``ADVERTISE_KEYS``);
    ``location`` points at ``metadata.name`` and ``handler_location`` at ``spec.handler``.
    """

    name: str
    description: str
    parameters: Mapping[str, Any] = field(hash=False)
    advertise: Mapping[str, Any] = field(hash=False)
    handler: str | None
    location: SourceLocation
    handler_location: SourceLocation | None = field(default=None, compare=False)

    def to_entry(self) -> dict[str, Any]:
        """The ``list_tools`` entry (a fresh copy: callers may mutate it)."""
        return build_tool_entry(
            self.name, self.description, copy.deepcopy(dict(self.parameters)), **copy.deepcopy(dict(self.advertise))
        )


def _definition(doc: Mapping[str, Any], lines: LineMap, file: str) -> ToolDefinition:
    validate_document(doc, lines, load_schema("mas.runtime.contracts", "tool.schema.yaml"), file)
    spec = doc["spec"]
    _check_json_schema(spec["parameters"], ("spec", "parameters"), lines, file)
    if "output_schema" in spec:
        _check_json_schema(spec["output_schema"], ("spec", "output_schema"), lines, file)
    handler = spec.get("handler")
    return ToolDefinition(
        name=doc["metadata"]["name"],
        description=spec["description"],
        parameters=spec["parameters"],
        advertise={key: spec[key] for key in ADVERTISE_KEYS if spec.get(key) is not None},
        handler=handler,
        location=SourceLocation(file, lines.line(("metadata", "name")), "metadata.name"),
        handler_location=None
        if handler is None
        else SourceLocation(file, lines.line(("spec", "handler")), "spec.handler"),
    )


def expand_paths(paths: Iterable[str | Path], *, what: str = "tool") -> list[Path]:
    """Files as given; folders become their ``*.yaml``/``*.yml`` files, recursively and sorted."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = [p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()]
            out.extend(sorted(found, key=lambda p: p.relative_to(path).as_posix()))
        elif path.is_file():
            out.append(path)
        else:
            raise ConfigError(f"{what} path does not exist", SourceLocation(str(raw)))
    return out


def load_tool_documents(paths: Iterable[str | Path]) -> list[ToolDefinition]:
    """All ``kind: Tool`` documents under ``paths``, in file order; duplicate names are an error."""
    definitions: list[ToolDefinition] = []
    seen: dict[str, ToolDefinition] = {}
    for path in expand_paths(paths):
        for doc, lines in load_yaml_documents(path):
            definition = _definition(doc, lines, str(path))
            if definition.name in seen:
                first = seen[definition.name].location
                raise ConfigError(
                    f"duplicate tool name {definition.name!r} (also defined at {first.file}:{first.line})",
                    definition.location,
                )
            seen[definition.name] = definition
            definitions.append(definition)
    return definitions
