"""The intermediate form: every name, type and docstring is computed here, before any template runs.

Templates only loop over these and print. Anything that came from a server or a YAML file is held
as data (``wire_name``) or as an already-escaped Python literal (``*_literal``), never as raw code.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from codegen.errors import Degradation
from codegen.literals import wire_literal

SourceKind = Literal["yaml", "mcp-json", "mcp-live"]

#: All ``--tools`` paths form one source, as they form one skills provider in the runtime registry.
YAML_SOURCE_NAME = "skills"


@dataclass(frozen=True)
class SourceTools:
    """One parsed source: a name (becomes the namespace attribute on ``Tools``) and MCP-shaped tools.

    ``tools`` are MCP tool objects (``name``, ``inputSchema``, optional ``outputSchema``, ``title``,
    ``description``, ``annotations``, ``_meta``) whatever the origin, so one build path serves all.
    """

    name: str
    kind: SourceKind
    origin: str  # file path or server name, for error messages
    tools: tuple[Mapping[str, Any], ...]
    #: Prefix the runtime registry puts in front of this source's wire names (infra ``prefix``).
    wire_prefix: str | None = None
    #: Where the source is set up, for errors: the infra entry's ``file:line``; None: ``origin`` says it.
    location: str | None = None
    #: The task dialect the server advertised when listed (docs/tasks.md); None: none, or not a server.
    task_dialect: str | None = None
    #: What the server serves besides tools (docs/resources-and-prompts.md), as MCP wire objects:
    #: listing (``resources``, ``resource_templates``, ``prompts``) -> items; only non-empty ones.
    surface: Mapping[str, tuple[Mapping[str, Any], ...]] = field(default_factory=dict)

    @property
    def where(self) -> str:
        """``origin``, with the place it is configured when that is another file (an infra entry)."""
        return f"{self.origin} ({self.location})" if self.location else self.origin


#: What an optional parameter's annotation ends with: the shim's omission sentinel type (as the
#: wrappers import it), so "not passed" is a value of its own, apart from ``None``.
NOT_GIVEN_SUFFIX = " | _NotGiven"


#: The inferred map's key prefix of a resource's (or template's) learned contents type
#: (``codegen.infer`` writes it, ``codegen.surface`` reads it).
RESOURCE_KEY = "resource "


@dataclass(frozen=True)
class ParamSpec:
    wire_name: str
    py_name: str
    annotation: str  # a type expression, names already qualified (``_i.Filters``)
    required: bool
    default_literal: str | None  # the signature default (the omission sentinel); None when required
    description: str
    #: The schema's default as a Python literal, for the docstring, when it certainly fits the type
    schema_default: str | None = None
    #: The schema marks the parameter ``deprecated: true`` (an optional one gets a PEP 702 overload)
    deprecated: bool = False
    #: The schema's bounds the type does not carry, in words (``1 <= limit <= 50``), for the stubs
    constraints: str = ""
    #: The first of the schema's ``examples`` that is a scalar and fits the type, as a Python
    #: literal: the value of this parameter in the stub's example call
    example: str | None = None

    @property
    def key_literal(self) -> str:
        """The wire key as a literal: exact, every character kept (escaped where needed)."""
        return wire_literal(self.wire_name)

    @property
    def value_annotation(self) -> str:
        """The annotation without the omission sentinel: the type of a value that is sent."""
        return self.annotation.removesuffix(NOT_GIVEN_SUFFIX)


@dataclass(frozen=True)
class ToolSpec:
    """One tool: what its method and its ``ToolInfo`` constant say (the template lays them out)."""

    wire_name: str  # what call_tool receives, prefix included
    method: str
    const_name: str  # module-level ToolInfo constant
    name_literal: str  # the wire name as a literal
    namespace_literal: str  # the source name as a literal
    title_literal: str  # literal or "None"
    description_literal: str
    docstring: str  # a complete, escaped triple-quoted literal
    #: Keyword-only parameters, required first; empty when the tool takes none (or any, below)
    params: tuple[ParamSpec, ...]
    input_ref: str  # the class name as a literal: imported on first use
    output_ref: str  # literal or "None"
    output_is_root: bool
    value_annotation: str  # type of the decoded value
    hints: Mapping[str, bool | None]  # read_only / destructive / idempotent / open_world
    #: Extra ToolInfo keywords and their literals (``("inferred_from", "3")``); empty when declared
    info_extra: tuple[tuple[str, str], ...] = ()
    #: The ``inputSchema`` says nothing of its arguments: the method takes ``**arguments`` and
    #: sends that dict as it is
    any_arguments: bool = False
    #: The PEP 702 message (a literal) when the server marks the tool deprecated; "": it is not
    deprecated_literal: str = ""
    #: The PEP 702 message (a literal) of the overload that takes the deprecated optional parameters
    params_deprecated_literal: str = ""
    #: A tool the server removed, kept a while (``keep_removed_tools``): the envelope literal its
    #: method raises ``ToolNotFoundError`` with, instead of calling; "": a listed tool
    removed_envelope: str = ""
    #: The output's top-level fields the server marks ``deprecated: true``, comma-separated (api.md)
    output_deprecated: str = ""

    @property
    def kept_params(self) -> tuple[ParamSpec, ...]:
        """The parameters of the overload a caller who passes no deprecated parameter matches."""
        return tuple(p for p in self.params if p.required or not p.deprecated)

    @property
    def input_class(self) -> str:
        """The name of the input TypedDict in ``<package>.inputs`` (``input_ref`` without its quotes)."""
        name = ast.literal_eval(self.input_ref)
        return name if isinstance(name, str) else ""


@dataclass(frozen=True)
class SurfaceParamSpec:
    """A keyword-only parameter of a resource template's or a prompt's method."""

    py_name: str
    key_literal: str  # the variable's or argument's name, as a literal
    required: bool
    description: str = ""
    #: The values of its closed completion set, as literals (its type is their ``Literal``); () -> ``str``
    values: tuple[str, ...] = ()

    def declared(self, literal: str = "Literal") -> str:
        """The parameter as a signature declares it (``style: Literal["brief", "detailed"] | None =
        None``), ``literal`` being how the module spells ``typing.Literal``."""
        base = f"{literal}[{', '.join(self.values)}]" if self.values else "str"
        return f"{self.py_name}: {base}" if self.required else f"{self.py_name}: {base} | None = None"


@dataclass(frozen=True)
class SurfaceMethodSpec:
    """One resource, template or prompt: its method (``surface.py.jinja`` lays it out)."""

    method: str
    docstring: str  # a complete, escaped triple-quoted literal
    target_literal: str  # the URI, the URI template or the prompt's wire name, as a literal
    params: tuple[SurfaceParamSpec, ...] = ()
    #: The contents class a resource or template returns (``TextContents``, ...); "" for a prompt
    contents: str = ""
    template: bool = False
    #: The ``TypedDict`` its JSON value was learned as (``_contents.py``); "" when none was
    value_type: str = ""


@dataclass(frozen=True)
class SurfaceSpec:
    """A source's resources, templates and prompts (docs/resources-and-prompts.md)."""

    attr: str  # the namespace attribute of ``Tools`` that gets ``.resources`` / ``.prompts``
    class_prefix: str
    source_literal: str  # the source's name, as a literal (the registry routes reads by it)
    source_doc: str
    resources: tuple[SurfaceMethodSpec, ...]  # resources, then templates
    prompts: tuple[SurfaceMethodSpec, ...]
    #: ``complete``'s Literal arguments: the templates and their variables, the prompts and theirs
    template_literals: tuple[str, ...] = ()
    variable_literals: tuple[str, ...] = ()
    prompt_literals: tuple[str, ...] = ()
    argument_literals: tuple[str, ...] = ()
    #: Learned contents types: (contents class, its TypedDict, recorded reads, the schema as canonical JSON)
    learned: tuple[tuple[str, str, int, str], ...] = ()


#: The types ``surface.py`` re-exports from the surface runtime (``codegen/shim/_surface_runtime.py``).
SURFACE_TYPES = ("BlobContents", "JsonContents", "PromptMessage", "PromptResult", "ResourceContent",
                 "ResourceContents", "TextContents")  # fmt: skip


@dataclass(frozen=True)
class NamespaceSpec:
    attr: str  # attribute on the top-level Tools, always (one source too: call sites never move)
    class_prefix: str  # "Sample" -> SampleTools, SampleToolsResults, AsyncSampleTools, ...
    tools: tuple[ToolSpec, ...]
    #: The source's name quoted as in a docstring (``'sample'``), escaped for a triple-quoted string
    source_doc: str = ""
    #: Its resources and prompts, when its server serves any (``.resources`` / ``.prompts``)
    surface: SurfaceSpec | None = None

    @property
    def callable_tools(self) -> tuple[ToolSpec, ...]:
        """The tools a call can reach: all but the removed ones kept a while (``keep_removed_tools``),
        whose methods only raise; they stay out of ``TOOLS``, the code-mode API and the test kit."""
        return tuple(t for t in self.tools if not t.removed_envelope)


@dataclass(frozen=True)
class ImportSpec:
    module: str
    names: tuple[str, ...]

    @property
    def line(self) -> str:
        return f"from {self.module} import {', '.join(self.names)}"


#: The module of the ``outputs`` package that holds the models several tools share.
SHARED_MODULE = "_shared"


@dataclass(frozen=True)
class ModelModuleSpec:
    """One module of the ``outputs`` package: its name, the names it defines, its code (no header)."""

    name: str
    names: tuple[str, ...]
    code: str


@dataclass(frozen=True)
class CodeModeModule:
    """One code-mode sandbox module (``tools.<name>``): its stub text, and function -> wire name."""

    name: str  # the module name in the sandbox (naming rule 7)
    attr: str  # the namespace attribute of Tools whose methods its functions are
    stub: str  # the .pyi text, without the header
    functions: tuple[tuple[str, str], ...]
    #: Its resources, templates and prompts: ("resources.guide", how the value is handed over)
    #: (``text``, ``json``, ``blob``, ``prompt``); empty for a server that serves none
    surface: tuple[tuple[str, str], ...] = ()


#: Shim names that are pydantic classes: the wrappers name them in annotations only, so they are
#: imported for type checkers only and importing a package builds no pydantic class.
LAZY_RUNTIME = frozenset({"ToolOutput"})


@dataclass(frozen=True)
class PackageSpec:
    name: str
    header: str  # every file's first lines: comments, each starting with "#"
    namespaces: tuple[NamespaceSpec, ...]
    tools_imports: tuple[ImportSpec, ...]  # typing imports the wrapper annotations need
    inputs_code: str  # datamodel-code-generator output (TypedDicts)
    exports: tuple[str, ...]  # ``__all__``: every public name, sorted
    #: The public names ``__init__.py`` imports from ``_runtime`` and from ``_tools``, in import order.
    runtime_exports: tuple[str, ...]
    tools_exports: tuple[str, ...]
    #: The output models, as the modules of the ``outputs`` package (one per tool + shared).
    output_modules: tuple[ModelModuleSpec, ...] = ()
    #: ``outputs/__init__.py``'s map: model name -> its module, both as literals.
    outputs_where: tuple[tuple[str, str], ...] = ()
    degradations: tuple[Degradation, ...] = ()  # schema spots typed as Any; the CLI warns of each
    runtime_imports: tuple[str, ...] = ()  # shim names the wrappers use (imported as ``_Name``)
    code_mode: tuple[CodeModeModule, ...] = ()  # the sandbox API (codegen/emit/code_mode.py)
    #: ``_contents.py``: the TypedDicts of resources' contents learned from recorded reads ("" when none)
    contents_code: str = ""
    #: ``__init__.py``'s header, when it differs (it names the inputs' hash); "": ``header``
    init_header: str = ""
    #: The test kit's data (``codegen/testkit.py``): each tool's listing, output schema and newest
    #: sample, as its canonical JSON text (``testkit.data_text``; megabytes at 1,000 tools, spelled
    #: once while the model worker runs); None: no tools
    testing_data: str | None = None

    @property
    def surface_exports(self) -> tuple[str, ...]:
        """``surface.py``'s public names: the contents and prompt types, and every generated class."""
        names = set(SURFACE_TYPES) | {name for s in self.surfaces for c, v, _, _ in s.learned for name in (c, v)}
        for s in self.surfaces:
            for prefix in ("", "Async"):
                if s.resources:
                    names.add(f"{prefix}{s.class_prefix}Resources")
                if s.prompts:
                    names.add(f"{prefix}{s.class_prefix}Prompts")
        return tuple(sorted(names))

    @property
    def learned_values(self) -> tuple[str, ...]:
        """The TypedDicts ``surface.py`` imports from ``_contents.py`` (learned contents types)."""
        return tuple(sorted(v for s in self.surfaces for _, v, _, _ in s.learned))

    @property
    def surfaces(self) -> tuple[SurfaceSpec, ...]:
        """The sources with resources or prompts: ``surface.py`` exists only when there is one."""
        return tuple(ns.surface for ns in self.namespaces if ns.surface is not None)

    @property
    def package_header(self) -> str:
        return self.init_header or self.header

    @property
    def all_tools(self) -> tuple[ToolSpec, ...]:
        return tuple(t for ns in self.namespaces for t in ns.tools)

    @property
    def callable_tools(self) -> tuple[ToolSpec, ...]:
        """``all_tools`` but the removed ones kept a while (``NamespaceSpec.callable_tools``)."""
        return tuple(t for ns in self.namespaces for t in ns.callable_tools)

    # The model modules the annotations name are imported for type checkers only (at run time
    # ToolInfo imports them on first use), and not at all when no annotation names one.
    @property
    def imports_inputs(self) -> bool:
        return any("_i." in p.annotation for t in self.all_tools for p in t.params)

    @property
    def imports_outputs(self) -> bool:
        return any("_o." in t.value_annotation for t in self.all_tools)

    @property
    def runtime_imports_at_run_time(self) -> tuple[str, ...]:
        """The shim names imported when the module runs: all but the pydantic classes."""
        return tuple(name for name in self.runtime_imports if name not in LAZY_RUNTIME)

    @property
    def runtime_imports_for_type_checkers(self) -> tuple[str, ...]:
        """The shim's pydantic classes the annotations name: imported for type checkers only."""
        return tuple(name for name in self.runtime_imports if name in LAZY_RUNTIME)
