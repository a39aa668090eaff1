"""The intermediate form of a source's resources, resource templates and prompts.

A server that serves any gets, under its namespace, ``tools.<source>.resources`` (one method per
listed resource, one keyword-only method per template, ``complete(...)``) and
``tools.<source>.prompts`` (one method per prompt, ``complete(...)``); ``surface.py.jinja`` lays
them out and ``codegen/shim/_surface_runtime.py`` runs them. Guide: docs/resources-and-prompts.md.

Decided here, once:

* A listed resource is a method without arguments (not a constant plus ``read(uri)``): an IDE
  completes it, a type checker flags a misspelt one, and it returns the contents class of its
  MIME type; a constant would type the URI but not what reading it returns.
* The contents class comes from the declared MIME type (:func:`contents_class`): JSON
  (``application/json``, ``*+json``) -> ``JsonContents`` (parsed), text (``text/*``, XML, YAML,
  JavaScript) -> ``TextContents``, any other -> ``BlobContents`` (bytes), none -> ``ResourceContents``.
* A template variable is required (``str``) when it fills the path (``{var}``, ``{+var}``,
  ``{.var}``, ``{/var}``), optional (``str | None = None``, left out when None) in a query, a
  fragment or path parameters (``{?var}``, ``{&var}``, ``{#var}``, ``{;var}``). A template that does
  not parse is left out, with a warning.
* A prompt's required arguments are required keyword-only ``str`` parameters, the others
  ``str | None = None``; prompts are called by the registry's name for them (``mas/runtime/routing.py``).
* Items are sorted (resources by URI, templates by URI template, prompts by name) before names
  are given: a live listing and the lock give the same package.
* A template variable or prompt argument is a ``Literal`` of the values ``completion/complete``
  offers when they are a closed, stable set (:func:`closed_set`, :func:`completion_items`): the
  answer to an empty prefix says ``hasMore`` false, its ``total`` (when sent) is the number of
  values, it holds 1 to ``MAX_COMPLETION_VALUES`` distinct printable values of at most
  ``MAX_COMPLETION_CHARS`` characters; the answer to a one-letter prefix (the first value's first
  letter) is exactly the values that start with it (case-sensitive or not); and, when the lock
  recorded a set for it before, that set is the same. A set that changed is recorded with
  ``stable: false`` and the parameter is ``str`` until a later generation sees it again. Anything
  else (an open set, no completion support, a failed request, a set that depends on another
  argument's value and is empty without it) keeps ``str``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from codegen.errors import Degradation
from codegen.literals import clean_text, docstring_literal, docstring_text, wire_literal
from codegen.model import RESOURCE_KEY, SourceTools, SurfaceMethodSpec, SurfaceParamSpec, SurfaceSpec
from codegen.naming import assign_names, class_name, to_identifier, unique
from mas.runtime.contracts.uri_template import TemplateError, parse
from mas.runtime.routing import Named, NameTaken, qualified, routed_names

__all__ = [
    "MAX_COMPLETION_CHARS",
    "MAX_COMPLETION_PROBES",
    "MAX_COMPLETION_VALUES",
    "SURFACE_ATTRS",
    "build_surface",
    "closed_set",
    "completion_items",
    "contents_class",
    "prompt_wire_names",
]

#: The attributes a namespace with a surface gets; its tools' methods may not take these names.
SURFACE_ATTRS = frozenset({"resources", "prompts"})
#: Names the generated resources and prompts classes use themselves.
_RESERVED = frozenset({"complete", "subscribe"})
_REQUIRED_OPERATORS = ("", "+", ".", "/")
_TEXT_TYPES = frozenset({"application/xml", "application/javascript", "application/yaml", "application/x-yaml",
                         "application/toml", "application/sql", "application/graphql"})  # fmt: skip
_METHOD_INDENT = 8
#: A completion set typed as a ``Literal`` holds at most this many values, each at most this long.
MAX_COMPLETION_VALUES = 64
MAX_COMPLETION_CHARS = 100
#: Template variables and prompt arguments asked about per server, at most (two requests each).
MAX_COMPLETION_PROBES = 32

#: ``complete(ref, argument, value)``: the provider's operation, answering an envelope.
Complete = Callable[[Mapping[str, Any], str, str], Any]


def _offered(answer: Any) -> tuple[list[str], Any, bool] | None:
    """An answer's values, total and hasMore; None when it failed or is not a completion."""
    if getattr(answer, "is_error", True):
        return None
    result = getattr(answer, "result", None)
    completion = result.get("completion") if isinstance(result, Mapping) else None
    values = completion.get("values") if isinstance(completion, Mapping) else None
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        return None
    assert isinstance(completion, Mapping)
    return list(values), completion.get("total"), completion.get("hasMore") is True


def closed_set(complete: Complete, ref: Mapping[str, Any], argument: str) -> list[str] | None:
    """The values ``argument`` takes when the server offers a closed set for it (the module
    docstring's rule, one generation's half), sorted; None otherwise. Two requests at most."""
    first = _offered(complete(ref, argument, ""))
    if first is None:
        return None
    values, total, more = first
    ordered = sorted(set(values))
    if more or len(ordered) != len(values) or not 1 <= len(values) <= MAX_COMPLETION_VALUES:
        return None
    if total is not None and total != len(values):
        return None
    if any(not v or len(v) > MAX_COMPLETION_CHARS or clean_text(v) != v or not v.isprintable() for v in values):
        return None
    prefix = ordered[0][0]
    second = _offered(complete(ref, argument, prefix))
    if second is None or second[2]:
        return None
    found = set(second[0])
    exact = {v for v in ordered if v.startswith(prefix)}
    folded = {v for v in ordered if v.casefold().startswith(prefix.casefold())}
    return ordered if found in (exact, folded) else None


def _targets(surface: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[tuple[dict[str, str], str]]:
    """Every (ref, argument) a completion can be asked for: template variables, prompt arguments."""
    found: list[tuple[dict[str, str], str]] = []
    for item in _sorted(surface.get("resource_templates", ()), "uriTemplate"):
        text = str(item.get("uriTemplate"))
        try:
            parsed = parse(text)
        except TemplateError:
            continue
        names = dict.fromkeys(n for part in parsed.parts if not isinstance(part, str) for n, _, _ in part.variables)
        found += [({"type": "ref/resource", "uri": text}, name) for name in names]
    for item in _sorted(surface.get("prompts", ()), "name"):
        for arg in item.get("arguments") or ():
            if isinstance(arg, Mapping) and isinstance(arg.get("name"), str):
                found.append(({"type": "ref/prompt", "name": str(item.get("name"))}, arg["name"]))
    return found


def completion_id(ref: Mapping[str, Any], argument: str) -> str:
    """The lock's key of one completion set: ``ref/prompt review_city style``."""
    return f"{ref.get('type')} {ref.get('name') or ref.get('uri')} {argument}"


def completion_items(
    complete: Complete,
    surface: Mapping[str, Sequence[Mapping[str, Any]]],
    locked: Sequence[Mapping[str, Any]] = (),
) -> tuple[dict[str, Any], ...]:
    """The lock's ``completions``: each closed set (:func:`closed_set`) of the server's template
    variables and prompt arguments, ``stable`` when ``locked`` (the lock's items) had the same set
    or none for it. The first ``MAX_COMPLETION_PROBES`` (ref, argument) pairs are asked."""
    before = {str(i.get("id")): i.get("values") for i in locked if isinstance(i, Mapping)}
    items = []
    for ref, argument in _targets(surface)[:MAX_COMPLETION_PROBES]:
        values = closed_set(complete, ref, argument)
        if values is not None:
            ident = completion_id(ref, argument)
            stable = before.get(ident, values) == values
            items.append({"id": ident, "ref": ref, "argument": argument, "values": values, "stable": stable})
    return tuple(items)


def _literals(source: SourceTools) -> dict[str, tuple[str, ...]]:
    """completion id -> the ``Literal``'s values as literals, for the stable sets the lock holds."""
    out: dict[str, tuple[str, ...]] = {}
    for item in source.surface.get("completions", ()):
        values = item.get("values")
        if item.get("stable") is True and isinstance(values, list) and all(isinstance(v, str) for v in values):
            out[str(item.get("id"))] = tuple(wire_literal(v) for v in sorted(values))
    return out


def contents_class(mime_type: Any) -> str:
    """The contents class a resource of ``mime_type`` is read into."""
    if not isinstance(mime_type, str) or not mime_type.strip():
        return "ResourceContents"
    base = mime_type.split(";", 1)[0].strip().lower()
    if base == "application/json" or base.endswith("+json"):
        return "JsonContents"
    if base.startswith("text/") or base in _TEXT_TYPES or base.endswith("+xml"):
        return "TextContents"
    return "BlobContents"


def prompt_wire_names(sources: Sequence[SourceTools]) -> dict[tuple[str, str], str]:
    """(source, prompt) -> the name the registry lists the prompt by (the tools' naming rule)."""
    keys = [Named(s.name, str(p.get("name")), s.wire_prefix) for s in sources for p in s.surface.get("prompts", ())]
    try:
        names, _ = routed_names(keys)
    except NameTaken:  # as the registry: every prompt by its qualified name
        names = [qualified(k.provider, k.tool) for k in keys]
    return {(k.provider, k.tool): name for k, name in zip(keys, names, strict=True)}


def _sorted(items: Sequence[Mapping[str, Any]], key: str) -> list[Mapping[str, Any]]:
    return sorted(items, key=lambda item: str(item.get(key)))


def _docstring(lines: list[str]) -> str:
    return docstring_literal("\n".join(lines), _METHOD_INDENT)


def _described(item: Mapping[str, Any], first: str) -> list[str]:
    title, description = item.get("title"), item.get("description")
    summary = str(title or item.get("name") or first).strip() or first
    lines = [summary]
    if isinstance(description, str) and description.strip() and description.strip() != summary:
        lines += ["", description.strip()]
    return lines


def _learned(
    learned: Mapping[str, Any],
    key: str,
    contents: str,
    method: str,
    prefix: str,
    found: list[tuple[str, str, int, str]],
) -> tuple[str, str]:
    """(contents class, value type) of a JSON resource: a learned one (recorded reads; ``found``
    gets it) or ``contents`` as it was."""
    from mas.runtime.lockfile import canonical_json

    inferred = learned.get(RESOURCE_KEY + key)
    if contents != "JsonContents" or inferred is None or inferred.schema is None:
        return contents, ""
    stem = f"{prefix}{class_name(method)}"
    found.append((f"{stem}Contents", f"{stem}Value", inferred.samples, canonical_json(inferred.schema)))
    return f"{stem}Contents", f"{stem}Value"


def build_surface(
    source: SourceTools,
    attr: str,
    prompt_names: Mapping[tuple[str, str], str],
    degradations: list[Degradation],
    learned: Mapping[str, Any] | None = None,
) -> SurfaceSpec | None:
    """The source's surface, or None when its server serves no resources, templates or prompts.
    ``learned``: the source's inferred map (``codegen.infer``), whose ``resource ...`` entries type
    JSON contents learned from recorded reads."""
    if not source.surface:
        return None
    literals = _literals(source)
    found: list[tuple[str, str, int, str]] = []
    learn: _Learn = functools.partial(_learned, learned or {}, prefix=class_name(attr), found=found)
    used: set[str] = set(_RESERVED)  # resources and templates share one class: one set of names
    resources = [_resource(item, used, learn) for item in _sorted(source.surface.get("resources", ()), "uri")]
    variables: set[str] = set()
    kept_templates: list[str] = []
    for index, item in enumerate(_sorted(source.surface.get("resource_templates", ()), "uriTemplate")):
        text = str(item.get("uriTemplate"))
        try:
            parsed = parse(text)
        except TemplateError as exc:
            what = f"resource template {text!r} does not parse ({exc}); left out of the package"
            degradations.append(Degradation(source.origin, text, f"/resource_templates/{index}", "template", what))
            continue
        spec, required = _template(item, parsed, literals, used, learn)
        resources.append(spec)
        variables.update(required)
        kept_templates.append(text)
    prompts: list[SurfaceMethodSpec] = []
    arguments: set[str] = set()
    used = set(_RESERVED)
    for item in _sorted(source.surface.get("prompts", ()), "name"):
        spec, names = _prompt(item, (source.name, prompt_names), literals, used)
        prompts.append(spec)
        arguments.update(names)
    if not resources and not prompts:
        return None
    return SurfaceSpec(
        attr=attr,
        class_prefix=class_name(attr),
        source_literal=wire_literal(source.name),
        source_doc=docstring_text(repr(source.name)),
        resources=tuple(resources),
        prompts=tuple(prompts),
        template_literals=tuple(wire_literal(t) for t in kept_templates),
        variable_literals=tuple(wire_literal(v) for v in sorted(variables)),
        prompt_literals=tuple(p.target_literal for p in prompts),
        argument_literals=tuple(wire_literal(a) for a in sorted(arguments)),
        learned=tuple(found),
    )


#: ``_learned`` with a source's map, prefix and findings given: (key, contents class, method) ->
#: (contents class, value type).
_Learn = Callable[[str, str, str], tuple[str, str]]


def _resource(item: Mapping[str, Any], used: set[str], learn: _Learn) -> SurfaceMethodSpec:
    """A fixed resource's method."""
    uri = str(item.get("uri"))
    method = unique(to_identifier(str(item.get("name") or uri), prefix="resource", reserved=_RESERVED), used)
    mime = item.get("mimeType")
    lines = [*_described(item, uri), "", f"URI: {uri!r}" + (f" ({mime})." if isinstance(mime, str) else ".")]
    contents, value = learn(uri, contents_class(mime), method)
    return SurfaceMethodSpec(method, _docstring(lines), wire_literal(uri), (), contents, value_type=value)


def _template(
    item: Mapping[str, Any], parsed: Any, literals: Mapping[str, tuple[str, ...]], used: set[str], learn: _Learn
) -> tuple[SurfaceMethodSpec, dict[str, bool]]:
    """A resource template's method (its variables keyword-only, the required ones first), and
    its variables, each with whether it is required."""
    text = str(item.get("uriTemplate"))
    required: dict[str, bool] = {}
    for part in parsed.parts:
        if not isinstance(part, str):
            for name, _, _ in part.variables:
                required[name] = required.get(name, False) or part.operator in _REQUIRED_OPERATORS
    py_names = assign_names(required, prefix="var", reserved={"self"}, builtins_ok=True)
    ref = {"type": "ref/resource", "uri": text}
    params = tuple(
        SurfaceParamSpec(py_names[name], wire_literal(name), required[name],
                         values=literals.get(completion_id(ref, name), ()))
        for name in sorted(required, key=lambda n: (not required[n], list(required).index(n)))
    )  # fmt: skip
    method = unique(to_identifier(str(item.get("name") or text), prefix="resource", reserved=_RESERVED), used)
    mime = item.get("mimeType")
    lines = [
        *_described(item, text),
        "",
        f"URI template: {text!r}" + (f" ({mime})." if isinstance(mime, str) else "."),
    ]
    contents, value = learn(text, contents_class(mime), method)
    return SurfaceMethodSpec(method, _docstring(lines), wire_literal(text), params, contents, True, value), required


def _prompt(
    item: Mapping[str, Any],
    naming: tuple[str, Mapping[tuple[str, str], str]],
    literals: Mapping[str, tuple[str, ...]],
    used: set[str],
) -> tuple[SurfaceMethodSpec, list[str]]:
    """A prompt's method (required arguments first), and its arguments' wire names. ``naming``:
    the source's name and the registry's name of each (source, prompt)."""
    name = str(item.get("name"))
    args = [a for a in item.get("arguments") or () if isinstance(a, Mapping) and isinstance(a.get("name"), str)]
    py_names = assign_names([a["name"] for a in args], prefix="arg", reserved={"self"}, builtins_ok=True)
    ordered = sorted(args, key=lambda a: not a.get("required"))  # required first, each group as listed
    ref = {"type": "ref/prompt", "name": name}
    params = tuple(
        SurfaceParamSpec(py_names[a["name"]], wire_literal(a["name"]), bool(a.get("required")),
                         docstring_text(str(a.get("description") or "")),
                         literals.get(completion_id(ref, a["name"]), ()))
        for a in ordered
    )  # fmt: skip
    lines = _described(item, name)
    documented = [(p, a) for p, a in zip(params, ordered, strict=True) if a.get("description")]
    if documented:
        lines += ["", "Args:"] + [f"    {p.py_name}: {' '.join(str(a['description']).split())}" for p, a in documented]
    lines += ["", f"Prompt: {name!r}."]
    method = unique(to_identifier(name, prefix="prompt", reserved=_RESERVED), used)
    source, prompt_names = naming
    wire = prompt_names.get((source, name), name)
    return SurfaceMethodSpec(method, _docstring(lines), wire_literal(wire), params), [a["name"] for a in args]
