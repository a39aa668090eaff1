"""Build the intermediate form (``PackageSpec``) from parsed sources."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from codegen.cache import Cache
from codegen.classes import build_classes, settle
from codegen.code_mode import build_code_mode, stub_output_models, summary_line
from codegen.datamodels import ModelModule, generate_models, model_code
from codegen.errors import Degradation, GenerateError
from codegen.infer import InferredOutput
from codegen.layout import annotation_text, fits_line, subscript_lines
from codegen.literals import docstring_literal, json_default_literal, str_literal, wire_literal
from codegen.model import (
    NOT_GIVEN_SUFFIX,
    ClassSpec,
    ImportSpec,
    MethodSpec,
    ModelModuleSpec,
    NamespaceSpec,
    PackageSpec,
    ParamSpec,
    SourceTools,
    ToolSpec,
)
from codegen.naming import assign_names, class_name, unique
from codegen.schemas import Report, SchemaDocument, json_type, pointer, wrapped_key
from codegen.split import import_lines, split_models, where_defined
from mas.runtime.contracts.tool_contract import HINT_KEYS
from mas.runtime.routing import Named, NameTaken, routed_names
from mas.runtime.tool_checks import tool_problems
from mas.runtime.tool_filters import header_of

__all__ = ["RESERVED_ATTRS", "build_package", "check_tools"]

#: Attributes every generated tools class has; a tool method may not take these names.
RESERVED_ATTRS = frozenset({"results", "with_options"})
_JSON_TYPES = {bool: "boolean", str: "string", int: "integer", float: "number", type(None): "null"}
_METHOD_INDENT = 8


@dataclass(frozen=True)
class _Plan:
    """A tool with its names decided, before the models exist."""

    source: SourceTools
    tool: Mapping[str, Any]
    index: int
    wire_name: str
    method: str
    input_def: str
    output_def: str | None
    inferred: InferredOutput | None = None


def check_tools(source: SourceTools) -> None:
    """Reject what is not a tool list, with the source and a JSON pointer (the runtime's rule)."""
    for at, message in tool_problems(source.tools):
        raise GenerateError(message, source.origin, at)


def build_package(
    sources: Sequence[SourceTools],
    *,
    package: str,
    header: str,
    parallel: bool | None = None,
    inferred: Mapping[str, Mapping[str, InferredOutput]] | None = None,
    cache: Cache | None = None,
) -> PackageSpec:
    """``inferred`` maps a source name and a wire name to an output type learned from samples
    (``codegen/infer.py``); it stands in for a missing ``outputSchema`` on the same path."""
    for source in sources:
        check_tools(source)
    wire_names = _wire_names(sources)
    # Always one attribute per source, even for a single source: adding or removing a source then
    # never moves the other sources' methods (stable call sites; docs/generator.md "Calling tools").
    ns_attrs = assign_names([s.name for s in sources], prefix="ns", reserved=RESERVED_ATTRS)

    used_defs: set[str] = set()
    degradations: list[Degradation] = []
    inputs, outputs = SchemaDocument(), SchemaDocument()
    plans: list[tuple[SourceTools, list[_Plan]]] = []
    groups: list[tuple[int, int, tuple[str, ...], tuple[str, ...], Report]] = []  # each tool's definitions
    for source in sorted(sources, key=lambda s: ns_attrs[s.name]):
        by_name = {t["name"]: (i, t) for i, t in enumerate(source.tools)}
        methods = assign_names(by_name, prefix="tool", reserved=RESERVED_ATTRS)
        ns_plans = []
        for wire in sorted(by_name):
            index, tool = by_name[wire]
            method = methods[wire]
            base = class_name(f"{ns_attrs[source.name]}_{method}")
            where = source.origin
            report = _reporter(degradations, source, wire)
            if "type" not in tool["inputSchema"]:  # MCP requires "object"; the SDK refuses such a listing
                what = (
                    " and no properties; the method takes any keyword arguments (**arguments: Any)"
                    " and sends them as given"
                    if _typeless_input(tool["inputSchema"])
                    else "; typed as an object from its properties"
                )
                report(("tools", index, "inputSchema"), "input-without-type", f'inputSchema has no "type"{what}')
            input_def = unique(base + "Input", used_defs)
            input_names = inputs.add(
                input_def,
                tool["inputSchema"],
                where=where,
                used=used_defs,
                base=("tools", index, "inputSchema"),
                report=report,
            )
            output_def: str | None = None
            output_names: tuple[str, ...] = ()
            learned = None if "outputSchema" in tool else (inferred or {}).get(source.name, {}).get(wire)
            if _typed_output(tool, report):
                output_def = unique(base + "Output", used_defs)
                output_names = outputs.add(
                    output_def,
                    tool["outputSchema"],
                    where=where,
                    used=used_defs,
                    base=("tools", index, "outputSchema"),
                    report=report,
                )
            elif learned is not None and learned.schema is not None:
                output_def = unique(base + "Output", used_defs)
                output_names = outputs.add(
                    output_def, learned.schema, where=f"{where} (inferred from samples of {wire!r})", used=used_defs
                )
            full_wire = wire_names[(source.name, wire)]
            ns_plans.append(_Plan(source, tool, index, full_wire, method, input_def, output_def, learned))
            groups.append((len(plans), len(ns_plans) - 1, input_names, output_names, report))
        plans.append((source, ns_plans))

    try:
        in_models, out_models = generate_models(inputs.document(), outputs.document(), parallel=parallel, cache=cache)
    except GenerateError:  # some schema datamodel-code-generator cannot take: find it, type it as Any
        _untype_failures(groups, plans, inputs, outputs)
        in_models, out_models = generate_models(inputs.document(), outputs.document(), parallel=parallel, cache=cache)
    needed: dict[str, tuple[str, str]] = {}
    used_consts: set[str] = set()
    namespaces = []
    for source, ns_plans in plans:
        attr = ns_attrs[source.name]
        prefix = class_name(attr)
        ns_literal = str_literal(source.name)
        tools = tuple(_tool_spec(p, attr, ns_literal, in_models, out_models, needed, used_consts) for p in ns_plans)
        namespaces.append(
            NamespaceSpec(
                attr=attr,
                class_prefix=prefix,
                tools=tools,
            )
        )
    classes = build_classes(namespaces, source_names=[s.name for s, _ in plans])
    code_mode = build_code_mode(
        namespaces,
        {(ns_attrs[p.source.name], p.method): _summary(p.tool) for _, ns_plans in plans for p in ns_plans},
        in_models,
        stub_output_models(outputs.document(), cache),
    )
    const_decls = tuple(_const_decl(t) for ns in namespaces for t in ns.tools)
    by_module: dict[str, set[str]] = {}
    for local, (module, original) in needed.items():
        by_module.setdefault(module, set()).add(original if original == local else f"{original} as {local}")
    imports = tuple(ImportSpec(m, tuple(sorted(names))) for m, names in sorted(by_module.items()))
    roots = [p.output_def for _, ns_plans in plans for p in ns_plans if p.output_def is not None]
    output_modules = _split_outputs(out_models.code, roots, cache)
    return PackageSpec(
        name=package,
        header=header,
        namespaces=tuple(namespaces),
        classes=classes,
        const_decls=const_decls,
        runtime_imports=_runtime_imports(classes, const_decls),
        tools_imports=imports,
        inputs_code=in_models.code,
        outputs_code=out_models.code,
        output_modules=output_modules,
        outputs_imports=tuple(
            line
            for m in output_modules
            for line in import_lines(f".{m.name}", [f"{n} as {n}" for n in m.names], indent="    ")
        ),
        outputs_where=tuple(sorted((str_literal(n), str_literal(m)) for n, m in where_defined(output_modules).items())),
        exports=_exports(),
        degradations=tuple(sorted(set(degradations))),
        code_mode=code_mode,
    )


def _summary(tool: Mapping[str, Any]) -> str:
    """A tool's one code-mode docstring line, from its title (or description) and hints."""
    annotations = tool.get("annotations") or {}
    hints = {key: annotations.get(mcp) is True for key, mcp in HINT_KEYS.items()}
    title = next((t for t in (tool.get("title"), annotations.get("title")) if isinstance(t, str) and t), None)
    return summary_line(title, str(tool.get("description") or ""), hints)


def _split_outputs(code: str, roots: Sequence[str], cache: Cache | None) -> tuple[ModelModuleSpec, ...]:
    """``split_models``, from the cache when this exact model code was split before (a rerun after
    a description edit reuses the model code, and the split is most of what is left)."""
    key = Cache.split_key(code, roots) if cache else ""
    cached = cache.get_split(key) if cache else None
    if cached is not None:
        return tuple(ModelModuleSpec(name, names, text) for name, names, text in cached)
    modules = split_models(code, roots)
    if cache:
        cache.put_split(key, [(m.name, m.names, m.code) for m in modules])
    return modules


def _untype_failures(
    groups: Sequence[tuple[int, int, tuple[str, ...], tuple[str, ...], Report]],
    plans: list[tuple[SourceTools, list[_Plan]]],
    inputs: SchemaDocument,
    outputs: SchemaDocument,
) -> None:
    """Run the model generator on each tool's definitions alone (they refer to nothing outside);
    a tool whose input fails gets an empty TypedDict (every parameter ``Any``), one whose output
    fails an untyped result. Costs one run per tool, only when the batched run failed."""
    for ns, i, input_names, output_names, report in groups:
        for kind, doc, names in (("inputs", inputs, input_names), ("outputs", outputs, output_names)):
            if not names:
                continue
            try:
                model_code({"$defs": {n: doc.definitions[n] for n in names}}, kind=kind)
            except GenerateError as exc:
                key = "inputSchema" if kind == "inputs" else "outputSchema"
                what = f"the model generator cannot type this schema ({exc.message[:120]}); typed as Any"
                report(("tools", 0, key), "untyped-schema", what)
                doc.replace(names, {"type": "object"} if kind == "inputs" else None)
                if kind == "outputs":
                    source, ns_plans = plans[ns]
                    ns_plans[i] = replace(ns_plans[i], output_def=None)


def _reporter(into: list[Degradation], source: SourceTools, tool: str) -> Report:
    """Degradations of one tool; pointers are relative to the tool object (``/inputSchema/...``)."""

    def report(at: tuple[str | int, ...], kind: str, what: str) -> None:
        into.append(Degradation(source.origin, tool, pointer(at[2:]), kind, what))

    return report


def _typeless_input(schema: Mapping[str, Any]) -> bool:
    """An ``inputSchema`` that says nothing of its arguments: no ``type`` and no ``properties``
    (``{"$schema": "...draft-07..."}`` alone, as a published GitLab server sends). JSON Schema
    reads it as "anything"; a method without parameters could send nothing, so the method takes
    ``**arguments`` instead. One with properties is typed from them, like an object. Either is
    warned of (``input-without-type``)."""
    return "type" not in schema and not schema.get("properties")


def _typed_output(tool: Mapping[str, Any], report: Report) -> bool:
    """Whether the tool's ``outputSchema`` becomes a model. Since 2026-07-28 it may be any JSON
    Schema: an object schema becomes a model, any other (an array, a primitive, a union) a
    ``RootModel`` whose root the method returns. One that is not a schema object at all leaves the
    result untyped (``ToolOutput``) with a warning."""
    if "outputSchema" not in tool:
        return False
    schema = tool["outputSchema"]
    if isinstance(schema, Mapping):
        return True
    what = f"outputSchema is not a schema object ({json_type(schema)}); the result is untyped (ToolOutput)"
    report(("tools", 0, "outputSchema"), "output-schema", what)
    return False


def _wire_names(sources: Sequence[SourceTools]) -> dict[tuple[str, str], str]:
    """The name each tool is called by, by the registry's own rule (``mas/runtime/routing.py``): a
    tool name two sources share is sent as ``source.tool``, which the registry routes to that
    source's provider (a server, ``skills``, or the provider named like an ``--mcp-json`` source)."""
    keys = [Named(s.name, t["name"], s.wire_prefix) for s in sources for t in s.tools]
    try:
        names, _ = routed_names(keys)
    except NameTaken as exc:
        key = keys[exc.index]
        source = next(s for s in sources if s.name == key.provider)
        index = next(i for i, t in enumerate(source.tools) if t["name"] == key.tool)
        raise GenerateError(
            f"tool {exc.shared!r} of {source.where} is shared with another source, and its qualified name "
            f"{exc.taken!r} is another tool's name; set a namespace on one of the servers in the infra file",
            source.location or source.origin,
            None if source.kind == "mcp-live" else f"/tools/{index}/name",  # a live listing is no file
        ) from exc
    return {(k.provider, k.tool): name for k, name in zip(keys, names, strict=True)}


def _exports() -> tuple[str, ...]:
    names = {
        "AsyncTools", "AsyncToolsResults", "CallOptions", "NOT_GIVEN", "NotGiven", "TOOLS", "ToolCallError",
        "ToolError", "ToolInfo",
        "ToolOutput", "ToolOutputValidationError", "ToolResult", "Tools", "ToolsResults",
        # typed failures (one per error kind) and input rounds
        "ElicitationRequest", "InputRequest", "RootsRequest", "SamplingRequest", "ToolArgumentsError",
        "ToolCancelledError", "ToolInputRequiredError", "ToolNotFoundError", "ToolProtocolError",
        "ToolTimeoutError", "ToolUnavailableError",
        # the error tree's parents (any failed call; the transient ones) and the envelope
        "ToolFailedError", "ToolTransientError", "ToolEnvelope",
    }  # fmt: skip
    return tuple(sorted(names))


def _tool_spec(
    plan: _Plan,
    attr: str,
    ns_literal: str,
    in_models: ModelModule,
    out_models: ModelModule,
    needed: dict[str, tuple[str, str]],
    used_consts: set[str],
) -> ToolSpec:
    tool = plan.tool
    schema = tool["inputSchema"]
    props: Mapping[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    fields = in_models.fields.get(plan.input_def, {})
    py_names = assign_names(props, prefix="arg", reserved={"self"}, builtins_ok=True)
    params = []
    for wire in sorted(props):  # sorted like the models: property order is not drift
        node = fields.get(wire)
        annotation = annotation_text(in_models.qualify(node, needed)) if node is not None else _any(needed)
        params.append(_param(wire, py_names[wire], annotation, wire in required, props[wire]))
    params.sort(key=lambda p: not p.required)  # keyword-only: order is for reading, required first

    info_items: tuple[str, ...] = ()
    if plan.output_def is not None:
        output_model = f"_o.{plan.output_def}"
        root = out_models.roots.get(plan.output_def)
        is_root = root is not None
        value_annotation = annotation_text(out_models.qualify(root, needed)) if root is not None else output_model
        if plan.output_def not in out_models.defined:
            raise GenerateError(f"no model was generated for {plan.output_def}", plan.source.origin)
        declared = tool.get("outputSchema") if plan.inferred is None else plan.inferred.schema
        key = wrapped_key(declared)
        field = out_models.fields.get(plan.output_def, {}).get(key) if key is not None and not is_root else None
        if field is not None:  # FastMCP's wrapped plain value: the method returns the value itself
            value_annotation = annotation_text(out_models.qualify(field, needed))
            info_items = (f"output_key={str_literal(key)}",)
    else:
        output_model, is_root, value_annotation = None, False, "_ToolOutput"
    if plan.inferred is not None:
        # An inferred type is a guess: a result of another shape decodes as ToolOutput (the shim's
        # decode_inferred), and the annotation says so; text never fails, so it stays plain str.
        is_text = plan.inferred.kind == "text"
        value_annotation = "str" if is_text else f"{value_annotation} | _ToolOutput"
        info_items = (f"inferred_from={plan.inferred.samples}", f"output_is_text={is_text}", *info_items)
    if plan.input_def not in in_models.defined:
        raise GenerateError(f"no model was generated for {plan.input_def}", plan.source.origin)

    annotations = tool.get("annotations") or {}
    hints = {
        key: annotations.get(mcp) if isinstance(annotations.get(mcp), bool) else None for key, mcp in HINT_KEYS.items()
    }
    title = next((t for t in (tool.get("title"), annotations.get("title")) if isinstance(t, str) and t), None)
    description = tool.get("description") or ""
    # Lower case: strict pyright treats upper-case names as constants, which may not be declared apart.
    const = unique(f"{attr}__{plan.method}", used_consts)
    head = f"_info_{const} = _ToolInfo("
    # black wraps the value in parentheses when the head is too long and wrapping lets every item
    # line fit (found by the fuzz test); when some item is too long either way it keeps the head.
    items = (  # the ToolInfo arguments whose length varies, as "key=value"
        f"name={wire_literal(plan.wire_name)}",
        f'method="{plan.method}"',
        f"namespace={ns_literal}",
        f"title={str_literal(title)}",
        f"description={str_literal(description)}",
        f"input_ref={wire_literal(plan.input_def)}",
        f"output_ref={wire_literal(plan.output_def) if plan.output_def else None}",
        *info_items,
    )
    wrapped = not fits_line(head) and all(fits_line(f"{' ' * 8}{item},") for item in items)
    return ToolSpec(
        wire_name=plan.wire_name,
        method=plan.method,
        const_name=f"_info_{const}",
        name_literal=wire_literal(plan.wire_name),
        namespace_literal=ns_literal,
        title_literal=str_literal(title),
        description_literal=str_literal(description),
        docstring=docstring_literal(
            _docstring(plan.wire_name, title, description, params, hints, plan.inferred), _METHOD_INDENT
        ),
        params=tuple(params),
        output_model=output_model,
        input_ref=wire_literal(plan.input_def),
        output_ref=wire_literal(plan.output_def) if plan.output_def else "None",
        output_is_root=is_root,
        value_annotation=value_annotation,
        hints=hints,
        info_items=info_items,
        info_open=(f"_info_{const} = (", "    _ToolInfo(") if wrapped else (head,),
        info_indent="        " if wrapped else "    ",
        info_close=("    )", ")") if wrapped else (")",),
        params_decl=(
            ("self", "*", *(_param_decl(p) for p in params))
            if params
            else ("self", f"**{_ANY_ARGUMENTS}: _Any")
            if _typeless_input(schema)
            else ("self",)
        ),
        argument_items=(
            tuple(f"{wire_literal(p.wire_name)}: {p.py_name}" for p in params)
            if params or not _typeless_input(schema)
            else _ANY_ARGUMENTS
        ),
        omit_items=tuple(f"{wire_literal(p.wire_name)}: {p.omit_literal}" for p in params if not p.required),
    )


#: The omission sentinel (the shim's ``NOT_GIVEN``), as the wrappers import it.
_NOT_GIVEN = "_NOT_GIVEN"

#: The ``**`` parameter of a method whose ``inputSchema`` says nothing of its arguments.
_ANY_ARGUMENTS = "arguments"

_RUNTIME_NAMES = ("AsyncToolsBase", "CallOptions", "NOT_GIVEN", "NotGiven", "SupportsAsyncCallTool",
                  "SupportsCallTool", "ToolInfo", "ToolOutput", "ToolResult", "ToolsBase")  # fmt: skip


def _runtime_imports(classes: Sequence[ClassSpec], decls: Sequence[MethodSpec]) -> tuple[str, ...]:
    """The shim names the laid-out code uses; an unused import fails strict pyright."""
    text = "\n".join(
        [c.base for c in classes] + [line for c in classes for m in c.members for line in m.lines]
        + [line for d in decls for line in d.lines]
    )  # fmt: skip
    used = {"ToolInfo"}  # the TOOLS manifest's type, always printed
    used.update(n for n in _RUNTIME_NAMES if _uses_word(text, f"_{n}"))
    return tuple(sorted(used))


def _uses_word(text: str, word: str) -> bool:
    """``re.search(rf"\\b{word}\\b", text)`` for a word of word characters, by ``str.find``: a
    regex scan of a 1,000-tool module took most of a cached rerun."""
    start = text.find(word)
    while start != -1:
        end = start + len(word)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        start = text.find(word, start + 1)
    return False


def _const_decl(tool: ToolSpec) -> MethodSpec:
    """Declared apart from its value, so the value's lines stay short whatever the type's length."""
    laid = subscript_lines(f"{tool.const_name}: _ToolInfo[", tool.value_annotation)
    return settle(MethodSpec(tool.const_name, laid.lines, laid.fits), in_class=False)


def _param_decl(p: ParamSpec) -> str:
    return f"{p.py_name}: {p.annotation}" if p.required else f"{p.py_name}: {p.annotation} = {p.default_literal}"


def _any(needed: dict[str, tuple[str, str]]) -> str:
    needed["Any"] = ("typing", "Any")
    return "Any"


def _param(wire: str, py_name: str, annotation: str, required: bool, prop: Any) -> ParamSpec:
    """A required parameter is typed as its schema says (``None`` allowed only where null is); an
    optional one adds the omission sentinel and defaults to it, so "not passed" (not sent, the
    server's default applies) and ``None`` (sent as ``null``) are two different things. The
    schema default is documented, not copied into the signature: it is the server's to apply."""
    description = str(prop.get("description", "")) if isinstance(prop, Mapping) else ""
    header = header_of(prop)
    if header is not None:  # x-mcp-header (2026-07-28): a valid one, or the tool would have been dropped
        description = f"{description.rstrip()} (also sent as the HTTP header {header})".lstrip()
    if required:
        return ParamSpec(wire, py_name, annotation, True, None, None, str(description))
    return ParamSpec(
        wire,
        py_name,
        annotation + NOT_GIVEN_SUFFIX,
        False,
        _NOT_GIVEN,
        _NOT_GIVEN,
        str(description),
        _usable_default(prop),
    )


def _usable_default(prop: Any) -> str | None:
    """The schema default as a literal, only when it certainly fits the parameter's type."""
    if not isinstance(prop, Mapping) or "default" not in prop:
        return None
    value = prop["default"]
    literal = json_default_literal(value)
    if literal is None:
        return None
    if "enum" in prop:
        return literal if isinstance(prop["enum"], list) and _strict_in(value, prop["enum"]) else None
    if "const" in prop:
        return literal if _strict_in(value, [prop["const"]]) else None
    types = prop.get("type")
    allowed = {types} if isinstance(types, str) else set(types) if isinstance(types, list) else set()
    kind = _JSON_TYPES[type(value)]
    if kind in allowed or (kind == "integer" and "number" in allowed):
        return literal
    return None


def _strict_in(value: Any, options: list[Any]) -> bool:
    return any(type(value) is type(o) and value == o for o in options)


def _docstring(
    wire: str,
    title: str | None,
    description: str,
    params: list[ParamSpec],
    hints: Mapping[str, bool | None],
    inferred: InferredOutput | None = None,
) -> str:
    lines = []
    summary = title or (description.strip().splitlines() or [f"Call the {wire!r} tool."])[0]
    lines.append(summary.strip())
    rest = description.strip() if title else "\n".join(description.strip().splitlines()[1:]).strip()
    if rest:
        lines += ["", rest]
    documented = [p for p in params if p.description.strip() or p.schema_default is not None]
    if documented:
        lines += ["", "Args:"]
        lines += [f"    {p.py_name}: {_param_words(p)}" for p in documented]
    words = _hint_words(hints)
    if words:
        lines += ["", f"Hints: {words}."]
    if inferred is not None:
        lines += ["", _inferred_words(inferred)]
    lines += ["", f"Wire name: {wire!r}."]
    return "\n".join(lines)


def _param_words(p: ParamSpec) -> str:
    words = " ".join(p.description.split())
    if p.schema_default is None:
        return words
    default = f"(server default: {p.schema_default})"
    return f"{words} {default}" if words else default


def _hint_words(hints: Mapping[str, bool | None]) -> str:
    words = []
    pairs = {"read_only": ("read-only", "may modify its environment"),
             "destructive": ("may be destructive", "not destructive"),
             "idempotent": ("idempotent", "not idempotent"),
             "open_world": ("open-world (reaches outside systems)", "closed-world")}  # fmt: skip
    for key, (yes, no) in pairs.items():
        value = hints.get(key)
        if value is not None:
            words.append(yes if value else no)
    return ", ".join(words)


def _inferred_words(inferred: InferredOutput) -> str:
    count = f"{inferred.samples} recorded result{'s' if inferred.samples != 1 else ''}"
    if inferred.kind == "text":
        return f"Returns: the result's text (the tool declares no output schema; inferred from {count})."
    return (
        f"Returns: a type inferred from {count} (the tool declares no output schema),\n"
        "or a ToolOutput when a result does not fit it."
    )
