"""Build the intermediate form (``PackageSpec``) from parsed sources."""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from codegen import cache
from codegen.cache import Cache, Memo
from codegen.datamodels import (
    ModelModule,
    generate_models,
    input_group,
    input_groups_for,
    model_code,
)
from codegen.emit.code_mode import build_code_mode, param_constraints, summary_line
from codegen.emit.flavours import SHIM_BASES, TOOLS_EXPORTS
from codegen.errors import Degradation, GenerateError
from codegen.infer import InferredOutput
from codegen.literals import docstring_literal, docstring_text, json_default_literal, str_literal, wire_literal
from codegen.model import (
    LAZY_RUNTIME,
    NOT_GIVEN_SUFFIX,
    ImportSpec,
    ModelModuleSpec,
    NamespaceSpec,
    PackageSpec,
    ParamSpec,
    SourceTools,
    ToolSpec,
)
from codegen.naming import assign_names, class_name, unique
from codegen.schemas import (
    MAPPING_SCHEMA,
    Report,
    SchemaDocument,
    constrains_nothing,
    pointer,
    wrapped_key,
)
from codegen.split import split_models, where_defined
from codegen.surface import SURFACE_ATTRS, build_surface, prompt_wire_names
from codegen.testkit import data_text, testing_data
from mas.runtime.contracts._rules import hint_words, json_equal, json_type
from mas.runtime.contracts.tool_contract import declared_hints, tool_title
from mas.runtime.routing import Named, NameTaken, QualifierClash, routed_names
from mas.runtime.tool_checks import tool_problems
from mas.runtime.tool_filters import header_of

__all__ = ["RESERVED_ATTRS", "ToolPlan", "build_package", "check_tools"]

#: Attributes every generated tools class has; a tool method may not take these names.
RESERVED_ATTRS = frozenset({"results", "with_options"})
_METHOD_INDENT = 8
#: Shim names every wrapper module uses (imported as ``_Name``); the rest as the tools need them.
_SHIM_NAMES = SHIM_BASES | {"AsyncToolTask", "CallOptions", "SupportsAsyncCallTool", "SupportsCallTool", "ToolInfo",
                            "ToolResult", "ToolTask"}  # fmt: skip


@dataclass(frozen=True)
class ToolPlan:
    """A tool with its names decided and its schemas added to the documents, before the models exist."""

    source: SourceTools
    attr: str  # the namespace attribute of its source
    tool: Mapping[str, Any]
    index: int  # its place in the source's listing: JSON pointers start at ``/tools/<index>``
    wire_name: str
    method: str
    input_def: str
    output_def: str | None
    inferred: InferredOutput | None
    input_names: tuple[str, ...]  # every definition its input schema added (``input_def`` first)
    output_names: tuple[str, ...]  # the same for its output schema; empty when untyped

    @property
    def at(self) -> tuple[str | int, ...]:
        """The tool's JSON pointer in its source file."""
        return ("tools", self.index)


def check_tools(source: SourceTools) -> None:
    """Reject what is not a tool list, with the source and a JSON pointer (the runtime's rule)."""
    for at, message in tool_problems(source.tools):
        raise GenerateError(message, source.origin, at)


def build_package(
    sources: Sequence[SourceTools],
    *,
    package: str,
    header: str,
    init_header: str | None = None,
    parallel: bool | None = None,
    inferred: Mapping[str, Mapping[str, InferredOutput]] | None = None,
    samples: Mapping[str, Mapping[str, Any]] | None = None,
    removed: Mapping[tuple[str, str], str] | None = None,
) -> PackageSpec:
    """``header`` heads every file, ``init_header`` (default: ``header``) the package's ``__init__.py``.

    ``inferred`` maps a source name and a wire name to an output type learned from samples
    (``codegen/infer.py``); it stands in for a missing ``outputSchema`` on the same path.
    ``samples``: the newest recorded result of each tool, by source and wire name
    (``testkit.newest_samples``), the test kit's default answers. Inside a cache layer
    (``cache.Layer``) the build reuses what earlier builds of the package computed."""
    builder = _Builder(sources, inferred or {}, removed)
    kit: list[str] = []  # the test kit's data needs no model: made while the model worker runs
    failed: list[Exception] = []

    def make_kit() -> None:
        if kit or failed:  # once, though a build that retries its models waits twice
            return
        try:
            kit.append(data_text(testing_data(sources, builder.wire_names, inferred, samples, builder.removed)))
        except Exception as exc:  # raised after the build: never taken for a model run's failure
            failed.append(exc)

    spec = builder.build(package=package, header=header, parallel=parallel, meanwhile=make_kit)
    make_kit()
    if failed:
        raise failed[0]
    spec = replace(spec, testing_data=kit[0])
    if init_header is not None:
        spec = replace(spec, init_header=init_header)
    return spec


class _Builder:
    """One build: the schema documents, the names taken so far and the warnings, owned in one place.

    ``plan`` decides every tool's names and adds its schemas; the models are generated in one
    batch; ``tool_spec`` then reads each tool's types out of them.
    """

    def __init__(
        self,
        sources: Sequence[SourceTools],
        inferred: Mapping[str, Mapping[str, InferredOutput]],
        removed: Mapping[tuple[str, str], str] | None = None,
    ) -> None:
        #: (source, wire name) -> the message of a removed tool kept as a method that raises
        self.removed = dict(removed or {})
        for source in sources:
            check_tools(source)
        self.sources = sources
        self.inferred = inferred
        self.wire_names = _wire_names(sources)
        # Always one attribute per source, even for a single source: adding or removing a source then
        # never moves the other sources' methods (stable call sites; docs/generator.md "Calling tools").
        self.ns_attrs = assign_names([s.name for s in sources], prefix="ns", reserved=RESERVED_ATTRS)
        self.inputs, self.outputs = SchemaDocument(), SchemaDocument()
        self.used_defs: set[str] = set()  # definition names, across both documents
        self.used_consts: set[str] = set()
        self.degradations: list[Degradation] = []
        #: Typing names the annotations use: local name -> (module, name there)
        self.needed: dict[str, tuple[str, str]] = {}
        #: Shim names the wrappers use beyond those every module uses (an unused import fails pyright)
        self.shim_names: set[str] = set()
        #: What earlier builds of this package computed, by step (the cache layer's tables, or
        #: none outside a layer: codegen/cache.py, ``Layer``)
        self.outlines = cache.memo("outlines")
        self.stubs = cache.memo("stubs")
        self.specs = cache.memo("specs")
        self.schemas = cache.memo("schemas")
        #: id of a tool -> Memo.key of it (None: no JSON spelling)
        self.digests = cache.digests(sources)

    def build(
        self, *, package: str, header: str, parallel: bool | None, meanwhile: Callable[[], object] | None = None
    ) -> PackageSpec:
        plans = []
        for source in self._ordered():
            by_name = {t["name"]: (i, t) for i, t in enumerate(source.tools)}
            # A namespace with resources or prompts has those two attributes too (codegen/surface.py).
            reserved = RESERVED_ATTRS | SURFACE_ATTRS if source.surface else RESERVED_ATTRS
            methods = assign_names(by_name, prefix="tool", reserved=reserved)
            plans += [self.plan(source, *by_name[wire], methods[wire]) for wire in sorted(by_name)]
        try:
            in_models, out_models, stub_models = self._models(plans, parallel, meanwhile)
        except GenerateError:  # some schema datamodel-code-generator cannot take: find it, type it as Any
            plans = [self.untype_failures(p) for p in plans]
            in_models, out_models, stub_models = self._models(plans, parallel, meanwhile)
        namespaces = []
        prompt_names = prompt_wire_names(self.sources)
        for source in self._ordered():
            attr = self.ns_attrs[source.name]
            tools = tuple(self.known_spec(p, in_models, out_models) for p in plans if p.source is source)
            learned = self.inferred.get(source.name, {})
            surface = build_surface(source, attr, prompt_names, self.degradations, learned) if source.surface else None
            namespaces.append(
                NamespaceSpec(attr, class_name(attr), tools, docstring_text(repr(source.name)), surface=surface)
            )
        contents_code = _contents_code(namespaces)
        code_mode = build_code_mode(
            namespaces,
            {(p.attr, p.method): _summary(p.tool) for p in plans},
            in_models,
            stub_models,
            self.stubs,
            contents_code=contents_code,
        )
        by_module: dict[str, set[str]] = {}
        for local, (module, original) in self.needed.items():
            by_module.setdefault(module, set()).add(original if original == local else f"{original} as {local}")
        imports = tuple(ImportSpec(m, tuple(sorted(names))) for m, names in sorted(by_module.items()))
        roots = [p.output_def for p in plans if p.output_def is not None]
        output_modules = _split_outputs(out_models.code, roots, out_models.tree)
        return PackageSpec(
            name=package,
            header=header,
            namespaces=tuple(namespaces),
            runtime_imports=tuple(sorted(_SHIM_NAMES | self.shim_names)),
            tools_imports=imports,
            inputs_code=in_models.code,
            output_modules=output_modules,
            outputs_where=_where(output_modules),
            exports=_exports(),
            runtime_exports=_import_order(_RUNTIME_EXPORTS),
            tools_exports=_import_order(_TOOLS_EXPORTS),
            degradations=tuple(sorted(set(self.degradations))),
            code_mode=code_mode,
            contents_code=contents_code,
        )

    def _ordered(self) -> list[SourceTools]:
        return sorted(self.sources, key=lambda s: self.ns_attrs[s.name])

    def _models(
        self, plans: Sequence[ToolPlan], parallel: bool | None, meanwhile: Callable[[], object] | None = None
    ) -> tuple[ModelModule, ModelModule, ModelModule | None]:
        """The models, the inputs in groups of tools (``datamodels.input_group``) so that an edited
        input schema regenerates its group only. Each group keeps the documents' order."""
        count = input_groups_for(len(plans))
        group_of = {name: input_group(p.input_def, count) for p in plans for name in p.input_names}
        groups: list[dict[str, Any]] = [{} for _ in range(count)]
        for name, schema in self.inputs.definitions.items():
            groups[group_of[name]][name] = schema
        documents = [self.inputs.document(defs) for defs in groups if defs]
        return generate_models(
            documents,
            self.outputs.document(),
            parallel=parallel,
            outlines=self.outlines,
            meanwhile=meanwhile,
        )

    def report(self, source: SourceTools, wire: str, index: int) -> Report:
        """Degradations of one tool, with pointers relative to the tool object (``/inputSchema/...``)."""
        tool_at = ("tools", index)

        def report(at: tuple[str | int, ...], kind: str, what: str) -> None:
            relative = at[len(tool_at) :] if at[: len(tool_at)] == tool_at else at
            self.degradations.append(Degradation(source.origin, wire, pointer(relative), kind, what))

        return report

    def plan(self, source: SourceTools, index: int, tool: Mapping[str, Any], method: str) -> ToolPlan:
        """Name one tool's definitions and add its schemas to the documents."""
        wire = tool["name"]
        attr = self.ns_attrs[source.name]
        base = class_name(f"{attr}_{method}")
        report = self.report(source, wire, index)
        at = ("tools", index)
        if "type" not in tool["inputSchema"]:  # MCP requires "object"; the SDK refuses such a listing
            what = (
                " and no properties; the method takes any keyword arguments (**arguments: Any) and sends them as given"
                if _typeless_input(tool["inputSchema"])
                else "; typed as an object from its properties"
            )
            report((*at, "inputSchema"), "input-without-type", f'inputSchema has no "type"{what}')
        input_def = unique(base + "Input", self.used_defs)
        digest = self.digests[id(tool)]  # the memos' keys name the tool by it
        input_names = self.inputs.add(
            input_def,
            tool["inputSchema"],
            where=source.origin,
            used=self.used_defs,
            base=(*at, "inputSchema"),
            report=report,
            memo=self.schemas,
            digest=Memo.key(digest, "inputSchema") if digest else None,
        )
        output_def: str | None = None
        output_names: tuple[str, ...] = ()
        # An output schema that constrains nothing ({"type": "object"}) is undeclared for typing:
        # learned from samples when there are some, else a mapping (docs/generator.md).
        generic = constrains_nothing(tool.get("outputSchema"))
        declared = "outputSchema" in tool and not generic
        learned = None if declared else self.inferred.get(source.name, {}).get(wire)
        if generic and (learned is None or learned.schema is None):
            learned = None
            output_def = unique(base + "Output", self.used_defs)
            output_names = self.outputs.add(
                output_def, MAPPING_SCHEMA, where=source.origin, used=self.used_defs, memo=self.schemas,
                digest=Memo.key(MAPPING_SCHEMA),
            )  # fmt: skip
        elif declared and _typed_output(tool, (*at, "outputSchema"), report):
            output_def = unique(base + "Output", self.used_defs)
            output_names = self.outputs.add(
                output_def,
                tool["outputSchema"],
                where=source.origin,
                used=self.used_defs,
                base=(*at, "outputSchema"),
                report=report,
                memo=self.schemas,
                digest=Memo.key(digest, "outputSchema") if digest else None,
            )
        elif learned is not None and learned.schema is not None:
            output_def = unique(base + "Output", self.used_defs)
            where = f"{source.origin} (inferred from samples of {wire!r})"
            output_names = self.outputs.add(
                output_def,
                learned.schema,
                where=where,
                used=self.used_defs,
                memo=self.schemas,
                digest=Memo.key(learned.schema),
            )
        full_wire = self.wire_names[(source.name, wire)]
        return ToolPlan(
            source, attr, tool, index, full_wire, method, input_def, output_def, learned, input_names, output_names
        )

    def untype_failures(self, plan: ToolPlan) -> ToolPlan:
        """Run the model generator on one tool's definitions alone (they refer to nothing outside);
        an input that fails becomes an empty TypedDict (every parameter ``Any``), an output that
        fails an untyped result. Costs one run per tool, only when the batched run failed."""
        report = self.report(plan.source, plan.tool["name"], plan.index)
        documents = (("inputs", self.inputs, plan.input_names), ("outputs", self.outputs, plan.output_names))
        for kind, doc, names in documents:
            if not names:
                continue
            try:
                model_code({"$defs": {n: doc.definitions[n] for n in names}}, kind=kind)
            except GenerateError as exc:
                key = "inputSchema" if kind == "inputs" else "outputSchema"
                what = f"the model generator cannot type this schema ({exc.message[:120]}); typed as Any"
                report((*plan.at, key), "untyped-schema", what)
                doc.replace(names, {"type": "object"} if kind == "inputs" else None)
                if kind == "outputs":
                    plan = replace(plan, output_def=None, output_names=())
        return plan

    def known_spec(self, plan: ToolPlan, in_models: ModelModule, out_models: ModelModule) -> ToolSpec:
        """``tool_spec``, from the memo when the tool, its names and the model chunks it reads are
        the ones an earlier build saw (what it adds to the imports is kept with it). The
        constant's name depends on the tools before it, so it is given here, in order."""
        output = out_models.chunk_of(plan.output_def).digest if plan.output_def in out_models.defined else None
        inferred = dict(vars(plan.inferred)) if plan.inferred is not None else None
        names = [plan.source.name, plan.attr, plan.method, plan.wire_name, plan.input_def, plan.output_def,
                 self.removed.get((plan.source.name, plan.wire_name))]  # fmt: skip
        chunk = in_models.chunk_of(plan.input_def).digest if plan.input_def in in_models.defined else None
        digest = self.digests.get(id(plan.tool))
        key = Memo.key("spec", digest, names, inferred, chunk, output) if digest and self.specs else None
        found = self.specs.get(key) if self.specs is not None else None
        if found is None:
            needed, shim_names = self.needed, self.shim_names
            self.needed, self.shim_names = {}, set()
            try:
                spec = self.tool_spec(plan, in_models, out_models)
                found = {
                    "spec": _spec_json(spec),
                    "needed": sorted([local, *where] for local, where in self.needed.items()),
                    "shim": sorted(self.shim_names),
                }
            finally:
                self.needed, self.shim_names = needed, shim_names
            if self.specs is not None:
                self.specs.put(key, found)
        self.needed.update((local, (module, name)) for local, module, name in found["needed"])
        self.shim_names.update(found["shim"])
        # Lower case: strict pyright treats upper-case names as constants, which may not be declared apart.
        const = unique(f"{plan.attr}__{plan.method}", self.used_consts)
        return replace(_spec_from(found["spec"]), const_name=f"_info_{const}")

    def tool_spec(self, plan: ToolPlan, in_models: ModelModule, out_models: ModelModule) -> ToolSpec:
        """What the template prints for one tool: its parameters, its result type, its docs
        (all but the ``ToolInfo`` constant's name, which ``known_spec`` gives)."""
        tool = plan.tool
        schema = tool["inputSchema"]
        props: Mapping[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        fields = in_models.fields_of(plan.input_def)
        py_names = assign_names(props, prefix="arg", reserved={"self"}, builtins_ok=True)
        params = []
        for wire in sorted(props):  # sorted like the models: property order is not drift
            node = fields.get(wire)
            annotation = in_models.qualify(node, self.needed) if node is not None else self._any()
            params.append(_param(wire, py_names[wire], annotation, wire in required, props[wire]))
        params.sort(key=lambda p: not p.required)  # keyword-only: order is for reading, required first
        if any(not p.required for p in params):
            self.shim_names.update(("NOT_GIVEN", "NotGiven"))
        if plan.input_def not in in_models.defined:
            raise GenerateError(f"no model was generated for {plan.input_def}", plan.source.origin)

        value_annotation, is_root, extra = self._result_type(plan, out_models)
        hints = declared_hints(tool)
        title = tool_title(tool)
        description = tool.get("description") or ""
        support = (tool.get("execution") or {}).get("taskSupport") if isinstance(tool.get("execution"), dict) else None
        gone = self.removed.get((plan.source.name, plan.wire_name))
        deprecated = schema.get("deprecated") is True or gone is not None  # JSON Schema's, on the tool's input
        if gone is not None:
            self.shim_names.add("ToolNotFoundError")
        retired = [p for p in params if p.deprecated and not p.required]
        if deprecated or retired:
            self.needed["_deprecated"] = ("typing_extensions", "deprecated")
        if retired and not deprecated:
            self.needed["_overload"] = ("typing", "overload")
        docstring = _docstring(
            plan.wire_name,
            title,
            description,
            params,
            hints,
            plan.inferred,
            support,
            _deprecation_words(deprecated, gone),
        )
        return ToolSpec(
            wire_name=plan.wire_name,
            method=plan.method,
            const_name="",
            name_literal=wire_literal(plan.wire_name),
            namespace_literal=str_literal(plan.source.name),
            title_literal=str_literal(title),
            description_literal=str_literal(description),
            docstring=docstring_literal(docstring, _METHOD_INDENT),
            params=tuple(params),
            input_ref=wire_literal(plan.input_def),
            output_ref=wire_literal(plan.output_def) if plan.output_def else "None",
            output_is_root=is_root,
            value_annotation=value_annotation,
            hints=hints,
            info_extra=extra,
            any_arguments=not params and _typeless_input(schema),
            deprecated_literal=str_literal(gone or f"tool {plan.wire_name!r} is deprecated by its server")
            if deprecated
            else "",
            removed_envelope=_removed_envelope(gone) if gone is not None else "",
            params_deprecated_literal=str_literal(_retired_words(plan.wire_name, retired))
            if retired and not deprecated
            else "",
            output_deprecated=", ".join(_deprecated_fields(tool.get("outputSchema"))),
        )

    def _result_type(self, plan: ToolPlan, out_models: ModelModule) -> tuple[str, bool, tuple[tuple[str, str], ...]]:
        """The decoded value's type, whether its model is a root model, and the extra ToolInfo
        keywords that say how the result decodes (an inferred type, a wrapped plain value)."""
        extra: tuple[tuple[str, str], ...] = ()
        if plan.output_def is None:
            # An untyped result is a ToolOutput, unless every recorded result was text (below): then
            # the module must not import ToolOutput for it (strict pyright: an unused import).
            annotation, is_root = "_ToolOutput", False
        else:
            if plan.output_def not in out_models.defined:
                raise GenerateError(f"no model was generated for {plan.output_def}", plan.source.origin)
            root = out_models.root_of(plan.output_def)
            is_root = root is not None
            annotation = out_models.qualify(root, self.needed) if root is not None else f"_o.{plan.output_def}"
            declared = plan.tool.get("outputSchema") if plan.inferred is None else plan.inferred.schema
            key = wrapped_key(declared, str(plan.tool.get("name")) if plan.inferred is None else None)
            field = out_models.fields_of(plan.output_def).get(key) if key is not None and not is_root else None
            if field is not None:  # a wrapped plain value (fastmcp, the mcp SDK): the method returns the value
                annotation = out_models.qualify(field, self.needed)
                extra = (("output_key", str_literal(key)),)
        if plan.inferred is not None:
            # An inferred type is a guess: a result of another shape decodes as ToolOutput (the shim's
            # decode_inferred), and the annotation says so; text never fails, so it stays plain str.
            is_text = plan.inferred.kind == "text"
            annotation = "str" if is_text else f"{annotation} | _ToolOutput"
            extra = (("inferred_from", str(plan.inferred.samples)), ("output_is_text", str(is_text)), *extra)
        if "_ToolOutput" in annotation:
            self.shim_names.add("ToolOutput")
        return annotation, is_root, extra

    def _any(self) -> str:
        self.needed["Any"] = ("typing", "Any")
        return "Any"


def _spec_json(spec: ToolSpec) -> dict[str, Any]:
    """A ``ToolSpec`` as JSON the memo keeps (``_spec_from`` reads it back equal)."""
    out = {f.name: getattr(spec, f.name) for f in fields(ToolSpec)}
    out["params"] = [[getattr(p, f.name) for f in fields(ParamSpec)] for p in spec.params]
    out["hints"] = [[key, value] for key, value in spec.hints.items()]
    out["info_extra"] = [list(pair) for pair in spec.info_extra]
    return out


def _spec_from(data: Mapping[str, Any]) -> ToolSpec:
    return ToolSpec(
        **{
            **data,
            "params": tuple(ParamSpec(*p) for p in data["params"]),
            "hints": dict(data["hints"]),
            "info_extra": tuple((key, value) for key, value in data["info_extra"]),
        }
    )


def _contents_code(namespaces: Sequence[NamespaceSpec]) -> str:
    """``_contents.py``'s code: the TypedDicts of every resource's contents learned from recorded
    reads (one datamodel-code-generator run, as for the inputs); "" when none was learned."""
    import json

    defs = {value: json.loads(schema) for ns in namespaces if ns.surface for _, value, _, schema in ns.surface.learned}
    return model_code({"$defs": dict(sorted(defs.items()))}, kind="inputs") if defs else ""


def _summary(tool: Mapping[str, Any]) -> str:
    """A tool's one code-mode docstring line, from its title (or description) and hints."""
    return summary_line(tool_title(tool), str(tool.get("description") or ""), declared_hints(tool), full=True)


def _where(modules: Sequence[ModelModuleSpec]) -> tuple[tuple[str, str], ...]:
    """Model name -> the module that defines it, both as literals, for ``outputs/__init__.py``."""
    return tuple(sorted((str_literal(name), str_literal(module)) for name, module in where_defined(modules).items()))


def _split_outputs(code: str, roots: Sequence[str], tree: ast.Module | None = None) -> tuple[ModelModuleSpec, ...]:
    """``split_models``, from the cache layer when this exact model code was split before (a rerun
    after a description edit reuses the model code, and the split is most of what is left)."""
    store = cache.models_cache()
    key = Cache.split_key(code, roots) if store else ""
    cached = store.get_split(key) if store else None
    if cached is not None:
        return tuple(ModelModuleSpec(name, names, text) for name, names, text in cached)
    modules = split_models(code, roots, tree=tree)
    if store:
        store.put_split(key, [(m.name, m.names, m.code) for m in modules])
    return modules


def _typeless_input(schema: Mapping[str, Any]) -> bool:
    """An ``inputSchema`` that says nothing of its arguments: no ``type`` and no ``properties``
    (``{"$schema": "...draft-07..."}`` alone, as a published GitLab server sends). JSON Schema
    reads it as "anything"; a method without parameters could send nothing, so the method takes
    ``**arguments`` instead. One with properties is typed from them, like an object. Either is
    warned of (``input-without-type``)."""
    return "type" not in schema and not schema.get("properties")


def _typed_output(tool: Mapping[str, Any], at: tuple[str | int, ...], report: Report) -> bool:
    """Whether the tool's ``outputSchema`` becomes a model. Since 2026-07-28 it may be any JSON
    Schema: an object schema becomes a model, any other (an array, a primitive, a union) a
    ``RootModel`` whose root the method returns. One that is not a schema object at all leaves the
    result untyped (``ToolOutput``) with a warning."""
    if "outputSchema" not in tool:
        return False
    schema = tool["outputSchema"]
    if isinstance(schema, Mapping):
        return True
    what = f"outputSchema is not a schema object (got {json_type(schema)}); the result is untyped (ToolOutput)"
    report(at, "output-schema", what)
    return False


def _wire_names(sources: Sequence[SourceTools]) -> dict[tuple[str, str], str]:
    """The name each tool is called by, by the registry's own rule (``mas/runtime/routing.py``): a
    tool name two sources share, or one with a dot (a server added at run time could make it its
    address), is sent as ``source.tool``, which the registry routes to that source's provider only
    (a server, ``skills``, or the provider named like an ``--mcp-json`` source)."""
    keys = [Named(s.name, t["name"], s.wire_prefix) for s in sources for t in s.tools]
    try:
        names, _ = routed_names(keys, [(s.name, s.wire_prefix) for s in sources], package=True)
    except QualifierClash as exc:
        source = next(s for s in sources if s.name == exc.second)
        raise GenerateError(f"source names and prefixes clash: {exc}", source.location or source.origin) from exc
    except NameTaken as exc:
        key = keys[exc.index]
        source = next(s for s in sources if s.name == key.provider)
        index = [i for i, t in enumerate(source.tools) if t["name"] == key.tool][-1]
        raise GenerateError(
            f"tool {key.tool!r} is listed twice by {source.where}",
            source.location or source.origin,
            None if source.kind == "mcp-live" else f"/tools/{index}/name",  # a live listing is no file
        ) from exc
    return {(k.provider, k.tool): name for k, name in zip(keys, names, strict=True)}


#: A package's public names, by the module of the package that defines them: one list, which
#: ``__init__.py.jinja`` imports and names in ``__all__`` (the lazy pydantic ones only for type checkers).
_RUNTIME_EXPORTS = (
    "AsyncToolTask", "CallOptions", "NOT_GIVEN", "NotGiven", "TaskStatus", "ToolError", "ToolInfo", "ToolResult",
    "ToolTask", "ToolOutputValidationError",
    # typed failures (one per error kind) and input rounds
    "ElicitationRequest", "InputRequest", "RootsRequest", "SamplingRequest", "ToolArgumentsError", "ToolCallError",
    "ToolCancelledError", "ToolInputRequiredError", "ToolNotFoundError", "ToolProtocolError",
    "ToolTimeoutError", "ToolUnavailableError",
    # the error tree's parents (any failed call; the transient ones) and the envelope
    "ToolFailedError", "ToolTransientError", "ToolEnvelope",
)  # fmt: skip
_TOOLS_EXPORTS = TOOLS_EXPORTS


def _import_order(names: tuple[str, ...] | frozenset[str]) -> tuple[str, ...]:
    """As isort (and ruff's ``I`` rules) order one ``from`` import: constants, classes, functions."""
    return tuple(sorted(names, key=lambda n: (0 if n.isupper() else 1 if n[:1].isupper() else 2, n)))


def _exports() -> tuple[str, ...]:
    return tuple(sorted({*_RUNTIME_EXPORTS, *_TOOLS_EXPORTS, *LAZY_RUNTIME}))


#: The omission sentinel (the shim's ``NOT_GIVEN``), as the wrappers import it.
_NOT_GIVEN = "_NOT_GIVEN"


def _param(wire: str, py_name: str, annotation: str, required: bool, prop: Any) -> ParamSpec:
    """A required parameter is typed as its schema says (``None`` allowed only where null is); an
    optional one adds the omission sentinel and defaults to it, so "not passed" (not sent, the
    server's default applies) and ``None`` (sent as ``null``) are two different things. The
    schema default is documented, not copied into the signature: it is the server's to apply."""
    description = str(prop.get("description", "")) if isinstance(prop, Mapping) else ""
    header = header_of(prop)
    if header is not None:  # x-mcp-header (2026-07-28): a valid one, or the tool would have been dropped
        description = f"{description.rstrip()} (also sent as the HTTP header {header})".lstrip()
    deprecated = isinstance(prop, Mapping) and prop.get("deprecated") is True
    if deprecated:
        description = f"{description.rstrip()} (deprecated by the server)".lstrip()
    bounds = param_constraints(py_name, prop)
    example = _example(prop)
    if required:
        return ParamSpec(
            wire, py_name, annotation, True, None, str(description), deprecated=deprecated, constraints=bounds,
            example=example,
        )  # fmt: skip
    return ParamSpec(
        wire,
        py_name,
        annotation + NOT_GIVEN_SUFFIX,
        False,
        _NOT_GIVEN,
        str(description),
        _usable_default(prop),
        deprecated,
        bounds,
        example,
    )


def _deprecation_words(deprecated: bool, gone: str | None) -> str | None:
    """The docstring's line for a deprecated tool, or a removed one kept a while."""
    if gone is not None:
        return f"Removed: {gone}; calling it raises ToolNotFoundError (kept by keep_removed_tools)."
    return "Deprecated: the server marks this tool deprecated (``deprecated: true``)." if deprecated else None


def _deprecated_fields(schema: Any) -> list[str]:
    """The top-level output fields marked ``deprecated: true``, sorted."""
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(props, Mapping):
        return []
    return sorted(str(k) for k, prop in props.items() if isinstance(prop, Mapping) and prop.get("deprecated") is True)


def _removed_envelope(message: str) -> str:
    """The envelope a kept removed tool's method raises ``ToolNotFoundError`` with, as a literal."""
    text = str_literal(message)
    return (f'{{"status": "error", "result": None, "content": [{{"type": "text", "text": {text}}}], '
            '"metadata": {"error_kind": "unknown_tool", "reason": "removed"}}')  # fmt: skip


def _retired_words(wire: str, retired: Sequence[ParamSpec]) -> str:
    names = ", ".join(repr(p.wire_name) for p in retired)
    return f"parameter {names} of tool {wire!r} is deprecated by its server" if len(retired) == 1 else (
        f"parameters {names} of tool {wire!r} are deprecated by their server")  # fmt: skip


def _usable_default(prop: Any) -> str | None:
    """The schema default as a literal, only when it certainly fits the parameter's type."""
    if not isinstance(prop, Mapping) or "default" not in prop:
        return None
    return _fitting_literal(prop, prop["default"])


def _example(prop: Any) -> str | None:
    """The first of the schema's ``examples`` (a list, JSON Schema 2019-09 on) that is a scalar
    literal fitting the parameter's type, as the default must, and one line of plain text when it is
    a string; None when there is none."""
    examples = prop.get("examples") if isinstance(prop, Mapping) else None
    if not isinstance(examples, list):
        return None
    # One line of plain text: a value with a line break or a backslash would read as escapes.
    plain = [v for v in examples if not (isinstance(v, str) and ("\n" in v or "\\" in v or "\r" in v))]
    return next((found for value in plain if (found := _fitting_literal(prop, value)) is not None), None)


def _fitting_literal(prop: Mapping[str, Any], value: Any) -> str | None:
    """``value`` as a literal when it certainly fits the parameter's schema (enum, const, type)."""
    literal = json_default_literal(value)
    if literal is None:
        return None
    if "enum" in prop:
        return literal if isinstance(prop["enum"], list) and _strict_in(value, prop["enum"]) else None
    if "const" in prop:
        return literal if _strict_in(value, [prop["const"]]) else None
    types = prop.get("type")
    allowed = {types} if isinstance(types, str) else set(types) if isinstance(types, list) else set()
    kind = json_type(value)
    if kind in allowed or (kind == "integer" and "number" in allowed):
        return literal
    return None


def _strict_in(value: Any, options: list[Any]) -> bool:
    return any(json_equal(value, o) for o in options)


def _docstring(
    wire: str,
    title: str | None,
    description: str,
    params: list[ParamSpec],
    hints: Mapping[str, bool | None],
    inferred: InferredOutput | None = None,
    task_support: object = None,
    deprecated: str | None = None,
) -> str:
    lines = []
    # A Python server's description is often its function's docstring, indented as in its source:
    # cleandoc dedents it as Python's help does (the first line apart).
    described = inspect.cleandoc(description).splitlines() if description.strip() else []
    summary = title or (described or [f"Call the {wire!r} tool."])[0]
    lines.append(summary.strip())
    rest = described if title else described[1:]
    while rest and not rest[0].strip():
        rest = rest[1:]
    documented = [p for p in params if p.description.strip() or p.schema_default is not None]
    rest, documented = _into_own_args(rest, documented)
    if rest:
        lines += ["", *rest]
    if documented:
        lines += ["", "Args:"]
        lines += [f"    {p.py_name}: {_param_words(p)}" for p in documented]
    words = ", ".join(hint_words(hints))
    if words:
        lines += ["", f"Hints: {words}."]
    if inferred is not None:
        lines += ["", _inferred_words(inferred)]
    if task_support in ("required", "optional"):
        how = "runs only as a task; this method waits for it" if task_support == "required" else "may run as a task"
        lines += ["", f"Task: the tool {how} (``.tasks`` starts it and returns a ToolTask at once)."]
    if deprecated:
        lines += ["", deprecated]
    lines += ["", f"Wire name: {wire!r}."]
    return "\n".join(lines)


_ARGS_HEADERS = frozenset({"Args:", "Arguments:"})
_ARG_NAME = re.compile(r"\s*\**([A-Za-z_][A-Za-z0-9_]*)")


def _into_own_args(rest: list[str], documented: list[ParamSpec]) -> tuple[list[str], list[ParamSpec]]:
    """A description with an ``Args:`` section of its own (a Python server's docstring) keeps it
    as the one section: the parameters it does not name are added at its end, in its indent, and
    none is left for a second ``Args:``. Without one, the description and ``documented`` are as given."""
    start = next((i for i, line in enumerate(rest) if line.strip() in _ARGS_HEADERS), None)
    if start is None or not documented:
        return rest, documented
    depth = len(rest[start]) - len(rest[start].lstrip())
    end = start + 1  # past the section's last line: its lines are blank or indented deeper
    for i in range(start + 1, len(rest)):
        line = rest[i]
        if line.strip() and len(line) - len(line.lstrip()) <= depth:
            break
        if line.strip():
            end = i + 1
    entries = [line for line in rest[start + 1 : end] if line.strip()]
    indent = min((len(line) - len(line.lstrip()) for line in entries), default=depth + 4)
    named = {
        m.group(1) for line in entries if len(line) - len(line.lstrip()) == indent and (m := _ARG_NAME.match(line))
    }
    added = [f"{' ' * indent}{p.py_name}: {_param_words(p)}" for p in documented
             if p.py_name not in named and p.wire_name not in named]  # fmt: skip
    return [*rest[:end], *added, *rest[end:]], []


def _param_words(p: ParamSpec) -> str:
    words = " ".join(p.description.split())
    if p.schema_default is None:
        return words
    default = f"(server default: {p.schema_default})"
    return f"{words} {default}" if words else default


def _inferred_words(inferred: InferredOutput) -> str:
    count = f"{inferred.samples} recorded result{'s' if inferred.samples != 1 else ''}"
    if inferred.kind == "text":
        return f"Returns: the result's text (the tool declares no output schema; inferred from {count})."
    return (
        f"Returns: a type inferred from {count} (the tool declares no output schema),\n"
        "or a ToolOutput when a result does not fit it."
    )
