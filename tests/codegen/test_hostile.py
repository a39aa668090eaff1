"""Hostile tools/list input never becomes code.

A tools/list result is untrusted text from a server. The one built here tries to break out of every
place the generator prints it: string literals, docstrings, comments, identifiers, TypedDict keys,
``Literal[...]`` values, defaults and ``$defs`` names, with triple quotes, trailing backslashes,
newlines followed by code, ``#``, ``__import__``, bidi overrides (U+202E) and NUL. It also has names
that are keywords, builtins or the generated classes' own attributes, names that collide after
sanitising, recursive schemas, and (in separate files) a schema nested 200 levels deep, refused
with exit 2 and one line, and external or dangling ``$ref``s, which degrade to ``Any`` with one
warning line and exit 0 (never fetched: no network access).

The same payloads also go through ``kind: Tool`` YAML. Each package is generated, imported,
type-checked (mypy --strict, pyright strict) and called once per module.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import importlib
import inspect
import json
import keyword
import socket
import subprocess
import sys
import tokenize
import unicodedata
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from gen_helpers import RecordingProvider as Recorder
from gen_helpers import checked_modules, import_fresh, mypy_strict
from pyright_batch import Batch, pyright_workspace

from codegen.cli import main as toolgen
from codegen.emit.render import runtime_sources

pytestmark = pytest.mark.slow  # generates, imports and type-checks two packages once per module

PACKAGE = "hostile_tools"
YAML_PACKAGE = "hostile_yaml_tools"
BOTH = (PACKAGE, YAML_PACKAGE)
SLOPPY = "sloppy_tools"
SENTINEL = "TOOLGEN_HOSTILE_PWNED"
GENERATED_MODULES = ("__init__.py", "_tools.py", "inputs.py", "outputs")  # outputs: every module in the folder
_BAD_CHARACTERS = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})  # control, format (bidi), separators


def payloads(marker: Path) -> list[str]:
    """Text that would run code (creating ``marker`` or setting a builtin) if it ever became code."""
    code = (
        f"import os; os.system('touch {marker}'); "
        f"__import__('builtins').__dict__.__setitem__({SENTINEL!r}, 1); open({str(marker)!r}, 'w')"
    )
    return [
        f'"""\n{code}\n"""',
        f"'''\n{code}\n'''",
        f'"\n{code}\n#',
        f"'); {code} #",
        f"\\\n{code}\n\\",
        f"# {code}",
        f"\u202e{code}\u202c",
        f"nul\x00{code}",
        "x\\",
    ]


def _obj(properties: dict[str, Any], required: list[str] | None = None, **more: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, **more}
    if required:
        schema["required"] = required
    return schema


_STR = {"type": "string"}
EVIL_TOOL = 'evil"""\nimport os; os.system("touch pwned")\n#'
LONG_TOOL = "long_" + "a" * 1000
BIDI_TOOL = "bidi\u202egnp.exe"
NUL_TOOL = "nul\x00name"
EVIL_DEF = 'Evil"""\nimport os'
# Every tool name and the method name the documented rules give it (docs/generator.md, "Names"):
# snake_case, ASCII only, prefix for a leading digit or "_", trailing "_" for keywords, builtins and
# the class's own attributes, then _2, _3... in sorted wire-name order.
METHODS = {
    "weather.get": "weather_get_3",
    "weather-get": "weather_get_2",
    "weather_get": "weather_get_4",
    "Weather.Get": "weather_get",
    "_call": "tool_call",
    "tool_call": "tool_call_2",
    "TOOLS": "tools",
    "Tools": "tools_2",
    "class": "class_",
    "def": "def_",
    "None": "none",
    "self": "self",
    "results": "results_",
    "with_options": "with_options_",
    "__init__": "tool__init__",
    "import": "import_",
    "print": "print_",
    "str": "str_",
    "match": "match_",
    "_rt": "tool_rt",
    "_i": "tool_i",
    "_o": "tool_o",
    "1st": "tool_1st",
    "météo": "m_t_o",
    "日本語": "tool_65e5_672c_8a9e",
    LONG_TOOL: LONG_TOOL,
    EVIL_TOOL: "evil____import_os__os_system__touch_pwned____",
    BIDI_TOOL: "bidi_gnp_exe",
    NUL_TOOL: "nul_name",
    "props": "props",
    "defs": "defs",
    "shadow": "shadow",
}
# Argument names that collide after sanitising: first in sorted wire order keeps the name.
PROPS_PARAMS = {"a-b": "a_b", "a_b": "a_b_2", "class": "class_", "self": "self_", "None": "none", "lambda": "lambda_"}
SHADOW_NAMES = [
    "str", "int", "list", "bool", "float", "Literal", "Any", "NotRequired", "TypedDict", "BaseModel", "Field",
    "Annotated", "RootModel", "model_config", "model_dump", "schema", "json", "copy", "dict", "__class__",
    "_private", "model_fields", "True", "from", "_rt", "_i", "_o", "provider", "options", "arguments",
    "_call", "cls", "annotations", "__future__", "_MappingProxyType", "TOOLS",
]  # fmt: skip


def hostile_listing(marker: Path) -> dict[str, Any]:
    texts = payloads(marker)
    tools: list[dict[str, Any]] = []
    for name in METHODS:
        tools.append({"name": name, "inputSchema": _obj({})})
    for tool in tools:
        if tool["name"].lower().startswith("weather"):
            tool["inputSchema"] = _obj({"q": _STR}, ["q"])
    by_name = {t["name"]: t for t in tools}
    by_name[EVIL_TOOL].update(title=texts[0], description=texts[2] + texts[4])
    by_name[BIDI_TOOL].update(title=texts[6], description=texts[7] + texts[8])
    by_name["class"].update(description=texts[1], annotations={"title": texts[3], "readOnlyHint": True})
    by_name[NUL_TOOL].update(title=texts[5])

    # Property names, enum values, defaults, titles and descriptions that try to escape.
    props: dict[str, Any] = {name: {"type": "string", "title": text} for name, text in zip(texts, texts, strict=True)}
    props |= {name: dict(_STR) for name in PROPS_PARAMS}
    props["lit"] = {"type": "string", "enum": texts, "title": texts[0], "description": texts[1]}
    props |= {f"default_{i}": {"type": "string", "default": text} for i, text in enumerate(texts)}
    props["deflit"] = {"type": "string", "enum": ['"', "\\", "'''"], "default": "\\"}
    by_name["props"].update(
        description=texts[3],
        inputSchema=_obj(props, ["a-b", "class", texts[0]], title=texts[1], description=texts[2]),
        outputSchema=_obj(props, ["a-b", texts[0]], title=texts[1]),
    )

    # Recursive schemas: "$ref": "#" and a $defs entry (with a hostile name) that refers to itself.
    ref = "#/$defs/" + EVIL_DEF.replace("~", "~0").replace("/", "~1")
    node = _obj({"children": {"type": "array", "items": {"$ref": ref}}, "v": {"type": "integer"}}, title=texts[0])
    by_name["defs"].update(
        inputSchema=_obj({"node": {"$ref": ref}, "again": {"$ref": "#"}}, ["node"], **{"$defs": {EVIL_DEF: node}}),
        outputSchema=_obj({"node": {"$ref": ref}, "again": {"$ref": "#"}}, ["node"], **{"$defs": {EVIL_DEF: node}}),
    )

    # Names that shadow what the generated modules use (typing, pydantic, builtins, module globals).
    shadow = {name: {"type": "string", "default": "d"} for name in SHADOW_NAMES}
    shadow |= {"zz_list": {"type": "array", "items": _STR}, "zz_int": {"type": "integer"}}
    # A required field named Annotated before one that needs Annotated[..., Field(alias=...)].
    shadow |= {"Annotated": {"type": "integer"}, "z-z": {"type": "integer"}}
    by_name["shadow"].update(
        inputSchema=_obj(shadow, ["zz_int"]), outputSchema=_obj(shadow, ["zz_int", "Annotated", "z-z"])
    )
    return {"tools": tools}


# The same payloads through ``kind: Tool`` YAML (names there must match ^[A-Za-z0-9_.-]{1,128}$).
YAML_METHODS = {"weather.get": "weather_get_2", "weather-get": "weather_get", "class": "class_", "_call": "tool_call"}


def _called(source: str, wire: str) -> str:
    """The name a package sends for a tool: a dotted name goes with its source's name in front, so
    no other source can claim it (docs/tool-server-registry.md, issue 31); the registry strips it."""
    return f"{source}.{wire}" if "." in wire else wire


def hostile_yaml(marker: Path) -> str:
    texts = payloads(marker)
    props: dict[str, Any] = {text: {"type": "string", "description": text, "title": text} for text in texts}
    props |= {"a-b": dict(_STR), "a_b": dict(_STR), "lit": {"type": "string", "enum": texts}}
    docs = [
        {
            "apiVersion": "toolgen/v1",
            "kind": "Tool",
            "metadata": {"name": name, "description": texts[0]},
            "spec": {
                "title": texts[1],
                "description": texts[2] + texts[4],
                "parameters": _obj(props, ["a-b", texts[5]]),
                "output_schema": _obj(props),
                "handler": "os:system",  # named, never imported while generating
            },
        }
        for name in YAML_METHODS
    ]
    return yaml.safe_dump_all(docs)


# --- generation -----------------------------------------------------------------------------------


def _run_toolgen(cwd: Path, args: list[str]) -> int:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(cwd)  # no pyproject.toml above a temporary folder: only the flags count
        return toolgen(["generate", *args])


@pyright_workspace(include=BOTH)
def checked(root: Path) -> None:
    listing = hostile_listing(root / "pwned")
    (root / "hostile.json").write_text(json.dumps(listing, indent=1), encoding="utf-8")
    assert _run_toolgen(root, ["--out", ".", "--package", PACKAGE, "--mcp-json", "hostile.json"]) == 0
    (root / "yaml-tools").mkdir()
    (root / "yaml-tools" / "hostile.yaml").write_text(hostile_yaml(root / "pwned"), encoding="utf-8")
    assert _run_toolgen(root, ["--out", ".", "--package", YAML_PACKAGE, "--tools", "yaml-tools"]) == 0


@pytest.fixture(scope="module")
def workspace(pyright_batch: Batch) -> Path:
    return pyright_batch.built(checked)[0]


@pytest.fixture(scope="module")
def listing(workspace: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((workspace / "hostile.json").read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="module")
def imported(workspace: Path) -> Iterator[tuple[ModuleType, list[str]]]:
    """The package imported in this process, and the warnings importing it raised."""
    sys.path.insert(0, str(workspace))
    try:
        importlib.invalidate_caches()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module = importlib.import_module(PACKAGE)
            outputs = [f"outputs.{p.stem}" for p in (workspace / PACKAGE / "outputs").glob("*.py")]
            for name in ("_tools", "inputs", "outputs", *sorted(outputs)):
                importlib.import_module(f"{PACKAGE}.{name}")
        yield module, [f"{w.category.__name__}: {str(w.message).splitlines()[0]}" for w in caught]
    finally:
        sys.path.remove(str(workspace))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def package(imported: tuple[ModuleType, list[str]]) -> ModuleType:
    return imported[0]


@pytest.fixture(scope="module")
def yaml_package(workspace: Path) -> Iterator[ModuleType]:
    sys.path.insert(0, str(workspace))
    try:
        importlib.invalidate_caches()
        yield importlib.import_module(YAML_PACKAGE)
    finally:
        sys.path.remove(str(workspace))
        for name in [m for m in sys.modules if m == YAML_PACKAGE or m.startswith(YAML_PACKAGE + ".")]:
            del sys.modules[name]


def _files(workspace: Path, name: str, pkg: str = PACKAGE) -> list[Path]:
    """The file ``name``, or every module of the folder ``name`` (the per-tool output models)."""
    path = workspace / pkg / name
    return sorted(path.glob("*.py")) if path.is_dir() else [path]


def _text(workspace: Path, name: str, pkg: str = PACKAGE) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in _files(workspace, name, pkg))


@pytest.mark.parametrize("pkg", BOTH)
def test_generation_writes_the_package(workspace: Path, pkg: str) -> None:
    names = sorted(p.name for p in (workspace / pkg).iterdir() if p.name != "__pycache__")
    assert names == [
        "CHANGELOG.md", "__init__.py", "_rules.py", "_runtime", "_testing_data.py", "_tools.py", "_version.py",
        "api.md", "code_mode", "inputs.py", "outputs", "py.typed", "testing.py",
    ]  # fmt: skip


@pytest.mark.parametrize("pkg", BOTH)
@pytest.mark.parametrize("name", [*GENERATED_MODULES, "_runtime", "_rules.py"])
def test_generated_files_compile(workspace: Path, name: str, pkg: str) -> None:
    for path in _files(workspace, name, pkg):
        compile(path.read_text(encoding="utf-8"), path.name, "exec", dont_inherit=True)


@pytest.mark.parametrize("pkg", BOTH)
def test_runtime_is_the_shim_verbatim(workspace: Path, pkg: str) -> None:
    shipped = sorted(p.relative_to(workspace / pkg).as_posix() for p in _files(workspace, "_runtime", pkg))
    assert shipped == sorted(name for name in runtime_sources() if name.startswith("_runtime/"))
    for name, source in runtime_sources().items():
        header, _, body = _text(workspace, name, pkg).partition("\n# Regenerate with")
        assert body.split("\n", 1)[1] == source.read_text(encoding="utf-8"), name


# --- nothing injected runs ------------------------------------------------------------------------


def test_importing_runs_no_injected_code(workspace: Path) -> None:
    code = (
        "import builtins, importlib\n"
        f"for pkg in {BOTH!r}:\n"
        "    for name in ('', '._tools', '.inputs', '.outputs'): importlib.import_module(pkg + name)\n"
        f"print(hasattr(builtins, {SENTINEL!r}))\n"
    )
    completed = subprocess.run([sys.executable, "-c", code], cwd=workspace, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == "False\n"
    assert not (workspace / "pwned").exists()


def test_importing_warns_about_nothing(imported: tuple[ModuleType, list[str]]) -> None:
    """Output properties named ``model_*`` become ``field_model_*`` (aliased to the wire name), so
    pydantic's protected namespaces never warn (a warning is an exception under ``-W error``)."""
    assert imported[1] == []


def test_importing_in_process_runs_no_injected_code(workspace: Path, package: ModuleType) -> None:
    assert not hasattr(builtins, SENTINEL)
    assert not (workspace / "pwned").exists()
    assert package.__name__ == PACKAGE
    modules = [m for m in sys.modules if m.startswith(f"{PACKAGE}.") and not m.startswith(f"{PACKAGE}._runtime")]
    assert len(modules) > 4
    for name in modules:  # no module got an "os" or "subprocess" from injected imports
        module = sys.modules[name]
        assert not {"os", "subprocess", "system", SENTINEL} & set(vars(module)), name


_FORBIDDEN_CALLS = {"system", "popen", "__import__", "eval", "exec", "compile", "open", "getattr", "setattr",
                    "__setitem__", "breakpoint", "globals", "locals", "vars", "import_module"}  # fmt: skip
_ALLOWED_IMPORTS = {"__future__", "typing", "pydantic", "collections.abc", "types", "builtins"}


def _call_names(func: ast.expr) -> set[str]:
    names = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    return names


@pytest.mark.parametrize("pkg", BOTH)
@pytest.mark.parametrize("name", GENERATED_MODULES)
def test_ast_has_no_injected_calls_or_imports(workspace: Path, name: str, pkg: str) -> None:
    for path in _files(workspace, name, pkg):
        _check_module_ast(path.read_text(encoding="utf-8"), path.relative_to(workspace / pkg).as_posix())


def _check_module_ast(text: str, name: str) -> None:
    tree = ast.parse(text)
    calls: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            calls.add(ast.unparse(node.func))
            assert not _call_names(node.func) & _FORBIDDEN_CALLS, ast.unparse(node)
        elif isinstance(node, ast.Import):
            raise AssertionError(f"plain import in {name}: {ast.unparse(node)}")
        elif isinstance(node, ast.ImportFrom):
            # The outputs package names its models for the shim's lazy loader, one level up.
            lazy = name == "outputs/__init__.py" and node.level == 2 and node.module == "_runtime"
            assert node.level == 1 or node.module in _ALLOWED_IMPORTS or lazy, ast.unparse(node)
        elif isinstance(node, ast.Lambda | ast.Global | ast.Nonlocal | ast.Delete | ast.With | ast.Try):
            raise AssertionError(f"unexpected {type(node).__name__} in {name}: {ast.unparse(node)}")
    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    allowed = {"_ToolInfo", "_MappingProxyType", "super", "super().__init__", "self._call", "self._results",
               "self._whole", "self._task", "self._tasks", "TypedDict", "Field", "Field_aliased", "ConfigDict",
               "__name__.rpartition"}  # fmt: skip
    if name in ("outputs/__init__.py", "__init__.py"):
        allowed.add("_lazy_models")
    allowed |= classes | {f"{c}.model_rebuild" for c in classes}  # pydantic: resolve recursive models
    assert calls <= allowed, sorted(calls - allowed)
    # Only definitions at module level: nothing that runs on import but imports, classes and constants.
    kinds = {type(n).__name__ for n in tree.body}
    assert kinds <= {"ImportFrom", "ClassDef", "Assign", "AnnAssign", "Expr", "If"}, kinds
    for node in tree.body:  # the one `if`: models imported for type checkers only
        if isinstance(node, ast.If):
            assert ast.unparse(node.test) == "TYPE_CHECKING", ast.unparse(node)
            assert all(isinstance(n, ast.ImportFrom) and n.level == 1 for n in node.body), ast.unparse(node)
            # The package's __init__ names ToolOutput lazily at run time (a pydantic class).
            lazy = "__getattr__ = _lazy_models(__name__, {'ToolOutput': '_runtime'})"
            assert [ast.unparse(n) for n in node.orelse] == ([lazy] if name == "__init__.py" else []), ast.unparse(node)
    for node in tree.body[1:]:  # after the module docstring, only ``Model.model_rebuild()`` calls
        if isinstance(node, ast.Expr):
            assert isinstance(node.value, ast.Call) and ast.unparse(node.value.func) in allowed, ast.unparse(node)


@pytest.mark.parametrize("pkg", BOTH)
@pytest.mark.parametrize("name", GENERATED_MODULES)
def test_only_the_generator_writes_comments(workspace: Path, name: str, pkg: str) -> None:
    for path in _files(workspace, name, pkg):
        _check_comments(path, name)


def _check_comments(path: Path, name: str) -> None:
    with path.open("rb") as handle:
        comments = [t.string for t in tokenize.tokenize(handle.readline) if t.type == tokenize.COMMENT]
    assert comments[0].startswith("# Generated by toolgen ") and comments[0].endswith(". Do not edit.")
    assert comments[1] == "# Regenerate with `toolgen generate` (or `python -m codegen generate`)."
    expected_rest = (
        ["#: Every tool, keyed by the wire name that ``call_tool`` receives."] if name == "_tools.py" else []
    )
    assert comments[2:] == expected_rest


@pytest.mark.parametrize("pkg", BOTH)
@pytest.mark.parametrize("name", [*GENERATED_MODULES, "_runtime", "_rules.py"])
def test_no_control_or_bidi_characters_reach_a_file(workspace: Path, name: str, pkg: str) -> None:
    text = _text(workspace, name, pkg)
    bad = sorted({f"U+{ord(c):04X}" for c in text if c != "\n" and unicodedata.category(c) in _BAD_CHARACTERS})
    assert bad == []


# --- names ----------------------------------------------------------------------------------------


def test_every_wire_name_round_trips(package: ModuleType, listing: dict[str, Any]) -> None:
    wire_names = [_called("hostile", t["name"]) for t in listing["tools"]]
    assert sorted(package.TOOLS) == sorted(wire_names)
    for wire in wire_names:
        assert package.TOOLS[wire].name == wire


def test_method_names_follow_the_documented_rules(package: ModuleType) -> None:
    assert {wire: info.method for wire, info in package.TOOLS.items()} == {
        _called("hostile", wire): method for wire, method in METHODS.items()
    }


def test_method_names_are_unique_identifiers_defined_on_every_class(package: ModuleType) -> None:
    methods = [info.method for info in package.TOOLS.values()]
    assert len(set(methods)) == len(methods)
    base_attrs = set(dir(package._runtime.ToolsBase)) | set(dir(package._runtime.AsyncToolsBase)) | {"results"}
    for method in methods:
        assert method.isidentifier() and method.isascii()
        assert not keyword.iskeyword(method) and not keyword.issoftkeyword(method)
        assert method not in base_attrs
    ns = package._tools  # every method sits on the source's namespace classes
    for cls in (ns.HostileTools, ns.HostileToolsResults, ns.AsyncHostileTools, ns.AsyncHostileToolsResults):
        own = {n for n, v in vars(cls).items() if inspect.isfunction(v) and not n.startswith("__")}
        assert own == set(methods), cls.__name__


def test_parameter_names_are_unique_identifiers(package: ModuleType) -> None:
    for info in package.TOOLS.values():
        params = list(inspect.signature(getattr(package._tools.HostileTools, info.method)).parameters)
        assert params[0] == "self"
        for name in params[1:]:
            assert name.isidentifier() and name.isascii() and not keyword.iskeyword(name), (info.name, name)
        assert len(set(params)) == len(params)


# --- calls send the exact wire names and keys -----------------------------------------------------


class RecordingProvider:
    """Records what reaches call_tool; answers with structured content that fits each output schema."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def call_tool(self, tool_name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((tool_name, dict(arguments)))
        structured: dict[str, Any] = {}  # fits every output model whose fields are all optional
        if tool_name == "props":
            structured = {key: f"out:{key}" for key in arguments if key not in ("lit", "deflit")}
        elif tool_name == "defs":
            structured = {"node": {"v": 1, "children": [{"v": 2, "children": []}]}, "again": {"node": {"v": 3}}}
        elif tool_name == "shadow":
            structured = {"zz_int": 7, "Field": "f", "model_config": "m", "model_dump": "d", "Annotated": 1, "z-z": 2}
        return {"content": [{"type": "text", "text": "ok"}], "structuredContent": structured, "isError": False}


def _arguments_for(method: Any) -> dict[str, Any]:
    """A distinct value for every parameter (never equal to its default, so nothing is omitted)."""
    out: dict[str, Any] = {}
    for name in inspect.signature(method).parameters:
        if name == "self":
            continue
        out[name] = 5 if name == "zz_int" else ["l"] if name == "zz_list" else f"v:{name}"
    return out


def _sent_by(kwargs: dict[str, Any], sent: dict[str, Any]) -> dict[str, str]:
    """Wire key -> the parameter whose (distinct) value reached it."""
    by_value = {repr(value): name for name, value in kwargs.items()}
    assert len(by_value) == len(kwargs)
    return {key: by_value[repr(value)] for key, value in sent.items()}


def test_sync_calls_send_exact_wire_names_and_keys(package: ModuleType, listing: dict[str, Any]) -> None:
    provider = RecordingProvider()
    tools = package.Tools(provider).hostile
    for tool in listing["tools"]:
        method = getattr(tools, package.TOOLS[_called("hostile", tool["name"])].method)
        kwargs = _arguments_for(method)
        method(**kwargs)
        sent_name, sent_args = provider.calls[-1]
        assert sent_name == _called("hostile", tool["name"])
        assert sorted(sent_args) == sorted(tool["inputSchema"].get("properties", {})), tool["name"]
        # One parameter per wire key, each value sent under exactly one key.
        assert sorted(_sent_by(kwargs, sent_args).values()) == sorted(kwargs), tool["name"]
    assert len(provider.calls) == len(listing["tools"])


def test_colliding_names_reach_their_own_tools(package: ModuleType) -> None:
    provider = RecordingProvider()
    tools = package.Tools(provider).hostile
    for wire in ("weather.get", "weather-get", "weather_get", "Weather.Get"):
        getattr(tools, METHODS[wire])(q=wire)
    tools.tool_call()
    tools.tool_call_2()
    tools.tools()
    tools.tools_2()
    assert provider.calls == [
        ("hostile.weather.get", {"q": "weather.get"}),
        ("weather-get", {"q": "weather-get"}),
        ("weather_get", {"q": "weather_get"}),
        ("hostile.Weather.Get", {"q": "Weather.Get"}),
        ("_call", {}),
        ("tool_call", {}),
        ("TOOLS", {}),
        ("Tools", {}),
    ]


def test_colliding_and_hostile_argument_names_send_the_exact_keys(package: ModuleType, workspace: Path) -> None:
    provider = RecordingProvider()
    tools = package.Tools(provider).hostile
    kwargs = _arguments_for(tools.props)
    value = tools.props(**kwargs)
    ((_, sent),) = provider.calls
    mapping = _sent_by(kwargs, sent)
    assert {wire: mapping[wire] for wire in PROPS_PARAMS} == PROPS_PARAMS
    for text in payloads(workspace / "pwned"):  # the payload keys went out exactly as they came in
        assert text in sent
    # The output model takes the hostile keys back (as aliases) and dumps them unchanged.
    assert value.model_dump(by_alias=True, exclude_unset=True) == {
        key: f"out:{key}" for key in sent if key not in ("lit", "deflit")
    }


def test_keys_that_shadow_imports_or_pydantic_get_safe_names_and_exact_aliases(package: ModuleType) -> None:
    value = package.Tools(RecordingProvider()).hostile.shadow(zz_int=1)
    assert (value.Annotated_, value.z_z, value.field_model_dump, value.field_model_config) == (1, 2, "d", "m")
    assert value.model_dump(by_alias=True, exclude_unset=True) == {
        "zz_int": 7, "Field": "f", "model_config": "m", "model_dump": "d", "Annotated": 1, "z-z": 2
    }  # fmt: skip


def test_recursive_schemas_work_both_ways(package: ModuleType) -> None:
    provider = RecordingProvider()
    tools = package.Tools(provider).hostile
    node = {"v": 1, "children": [{"v": 2, "children": [{"v": 3}]}]}
    value = tools.defs(node=node, again={"node": {"v": 4}})
    assert provider.calls == [("defs", {"node": node, "again": {"node": {"v": 4}}})]
    assert value.node.children[0].v == 2
    assert value.again.node.v == 3


def test_async_calls_send_exact_wire_names(package: ModuleType, listing: dict[str, Any]) -> None:
    provider = RecordingProvider()
    tools = package.AsyncTools(provider).hostile

    async def call_all() -> None:
        for tool in listing["tools"]:
            method = getattr(tools.results, package.TOOLS[_called("hostile", tool["name"])].method)
            result = await method(**_arguments_for(method))
            assert result.text == "ok"

    asyncio.run(call_all())
    assert [name for name, _ in provider.calls] == [_called("hostile", t["name"]) for t in listing["tools"]]


def test_docstrings_and_literals_keep_the_text_inert(package: ModuleType) -> None:
    evil = package.TOOLS[_called("hostile", EVIL_TOOL)]
    doc = inspect.getdoc(getattr(package._tools.HostileTools, evil.method)) or ""
    assert "import os" in doc  # present as text ...
    assert evil.description.endswith("\\")  # ... and a trailing backslash did not eat the closing quote
    bidi = package.TOOLS[_called("hostile", BIDI_TOOL)]
    assert "\u202e" not in (bidi.title or "") and "\x00" not in bidi.description
    assert bidi.name == _called("hostile", BIDI_TOOL)  # the wire name itself is data and stays exact


@pytest.mark.parametrize("pkg", BOTH)
def test_the_payloads_reached_the_files_as_data(workspace: Path, pkg: str) -> None:
    """The checks above are only worth something if the hostile text is in the files (escaped)."""
    tools = _text(workspace, "_tools.py", pkg)
    assert "os.system(" in tools and SENTINEL in tools
    assert "os.system(" in _text(workspace, "inputs.py", pkg)  # TypedDict keys and Literal values
    assert "os.system(" in _text(workspace, "outputs", pkg)  # field aliases, Literal values and defaults


def test_yaml_tools_send_exact_wire_names_and_keys(yaml_package: ModuleType, workspace: Path) -> None:
    assert {wire: info.method for wire, info in yaml_package.TOOLS.items()} == {
        _called("skills", wire): method for wire, method in YAML_METHODS.items()
    }
    provider = RecordingProvider()
    tools = yaml_package.Tools(provider).skills
    for wire, method_name in YAML_METHODS.items():
        method = getattr(tools, method_name)
        kwargs = _arguments_for(method)
        method(**kwargs)
        sent_name, sent = provider.calls[-1]
        assert sent_name == _called("skills", wire)
        mapping = _sent_by(kwargs, sent)
        assert {key: mapping[key] for key in ("a-b", "a_b")} == {"a-b": "a_b", "a_b": "a_b_2"}
        assert sorted(sent) == sorted([*payloads(workspace / "pwned"), "a-b", "a_b", "lit"])


# --- mypy --strict --------------------------------------------------------------------------------

# Schemas a sloppy server may send, which once made the generated outputs.py fail mypy --strict:
# an optional property ``{"const": 0.5}`` (became ``float = None``) and a default that does not fit
# its type (was copied into the model as ``int | None = "3"``).
SLOPPY_LISTING = {
    "tools": [
        {
            "name": "const_float",
            "inputSchema": _obj({}),
            "outputSchema": _obj({"ratio": {"const": 0.5}, "name": _STR}, ["name"]),
        },
        {
            "name": "bad_default",
            "inputSchema": _obj({"n": {"type": "integer", "default": "3"}}),
            "outputSchema": _obj({"n": {"type": "integer", "default": "3"}}),
        },
    ]
}


@pytest.fixture(scope="module")
def mypy_errors(workspace: Path) -> list[tuple[str, str]]:
    (workspace / "sloppy.json").write_text(json.dumps(SLOPPY_LISTING), encoding="utf-8")
    assert _run_toolgen(workspace, ["--out", ".", "--package", SLOPPY, "--mcp-json", "sloppy.json"]) == 0
    completed = mypy_strict(workspace, PACKAGE, YAML_PACKAGE, SLOPPY)
    assert completed.returncode in (0, 1), completed.stdout + completed.stderr
    errors = []
    for line in completed.stdout.splitlines():
        if ": error: " in line:
            file = line.split(":", 1)[0].replace("\\", "/")
            errors.append((file, line.rsplit("[", 1)[-1].rstrip("]")))
    return errors


@pytest.mark.parametrize("pkg", BOTH)
def test_hostile_package_passes_mypy_strict(mypy_errors: list[tuple[str, str]], pkg: str) -> None:
    assert [e for e in mypy_errors if e[0].startswith(pkg + "/")] == []


def test_sloppy_package_passes_mypy_strict(mypy_errors: list[tuple[str, str]]) -> None:
    assert [e for e in mypy_errors if e[0].startswith(SLOPPY + "/")] == []


def test_hostile_package_passes_pyright_strict(workspace: Path, pyright_batch: Batch) -> None:
    """Shadowing names (``str``, ``Field``, ``_rt``...) and hostile keys type-check under pyright too."""
    report = pyright_batch.report(checked)
    assert len(report["checked"]) == checked_modules(workspace, list(BOTH))
    found = [
        (Path(d["file"]).name, d["range"]["start"]["line"] + 1, d.get("rule", ""))
        for d in report["generalDiagnostics"]
        if d["severity"] in ("error", "warning")
    ]
    assert found == [], "\n".join(
        f"{d['file']}:{d['range']['start']['line'] + 1}: {d.get('rule')}: {d['message']}"
        for d in report["generalDiagnostics"]
    )


# --- refused inputs: exit 2, one line, nothing written, no network --------------------------------


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    attempts: list[str] = []

    def refuse(name: str) -> Any:
        def blocked(*args: Any, **kwargs: Any) -> Any:
            attempts.append(f"{name}{args!r}")
            raise OSError(f"network access attempted: {name}")

        return blocked

    monkeypatch.setattr(socket.socket, "connect", refuse("connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("connect_ex"))
    monkeypatch.setattr(socket, "create_connection", refuse("create_connection"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    return attempts


def _refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str) -> str:
    """Generate from ``name`` holding ``text``; assert exit 2 with nothing written; return the error line."""
    (tmp_path / name).write_text(text, encoding="utf-8")
    capsys.readouterr()
    code = _run_toolgen(tmp_path, ["--out", "out", "--package", "refused", "--mcp-json", name])
    captured = capsys.readouterr()
    assert code == 2, captured.err
    assert captured.out == ""
    assert not (tmp_path / "out").exists()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    # The file as given: a relative path stays relative (no machine path in the message).
    prefixes = [f"toolgen: error: {name}: "]
    prefix = next((p for p in prefixes if lines[0].startswith(p)), None)
    assert prefix is not None, lines[0]
    return lines[0].removeprefix(prefix)


def _deep(levels: int, leaf: dict[str, Any], wrap: str) -> dict[str, Any]:
    schema = leaf
    for _ in range(levels):
        schema = _obj({"p": schema}) if wrap == "properties" else {"type": "array", "items": schema}
    return schema


@pytest.mark.parametrize(
    ("schema", "pointer"),
    [
        (_deep(200, _STR, "properties"), "/properties/p" * 65),
        (_obj({"x": _deep(200, _STR, "items")}), "/properties/x" + "/items" * 127),
    ],
    ids=["properties", "items"],
)
def test_deep_schema_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], schema: dict[str, Any], pointer: str
) -> None:
    listing = {"tools": [{"name": "fine", "inputSchema": _obj({})}, {"name": "deep", "inputSchema": schema}]}
    message = _refused(tmp_path, capsys, "deep.json", json.dumps(listing))
    assert message == f"/tools/1/inputSchema{pointer}: schema nested deeper than 64 levels"


def _degraded(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, listing: Any) -> tuple[ModuleType, str]:
    """Generate from ``listing``; assert exit 0 with exactly one warning line; the package and the line."""
    (tmp_path / name).write_text(json.dumps(listing), encoding="utf-8")
    capsys.readouterr()
    code = _run_toolgen(tmp_path, ["--out", "out", "--package", "degraded", "--mcp-json", name])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"toolgen: warning: {name}: ")
    return import_fresh(tmp_path / "out", "degraded"), lines[0].removeprefix(f"toolgen: warning: {name}: ")


@pytest.mark.parametrize(
    "ref",
    [
        "http://127.0.0.1:9/schema.json",
        "https://example.com/schema.json#/$defs/A",
        "//example.com/schema.json",
        "file:///etc/passwd",
        "other.json#/x",
    ],
)
@pytest.mark.parametrize(
    ("key", "where"),
    [
        ("inputSchema", "/properties/a/$ref"),
        ("outputSchema", "/properties/a/items/$ref"),
        ("$defs", "/$defs/D/anyOf/0/$ref"),
    ],
)
def test_external_ref_degrades_to_any_without_network(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_network: list[str], ref: str, key: str, where: str
) -> None:
    """Not fetched (the MCP conformance case "json-schema ref, no deref"), and the other tools still
    generate; that spot is ``Any`` and the wire stays exact."""
    tool: dict[str, Any] = {"name": "ext", "inputSchema": _obj({})}
    if key == "inputSchema":
        tool["inputSchema"] = _obj({"a": {"$ref": ref}})
    elif key == "outputSchema":
        tool["outputSchema"] = _obj({"a": {"type": "array", "items": {"$ref": ref}}})
    else:
        tool["inputSchema"] = _obj({"d": {"$ref": "#/$defs/D"}}, **{"$defs": {"D": {"anyOf": [{"$ref": ref}]}}})
    listing = {"tools": [tool, {"name": "other", "inputSchema": _obj({"q": _STR}, ["q"])}]}
    package, message = _degraded(tmp_path, capsys, "ext.json", listing)
    schema_key = "outputSchema" if key == "outputSchema" else "inputSchema"
    assert (
        message
        == f"tool 'ext': /{schema_key}{where}: external $ref {ref!r} is not fetched; typed as Any [external-ref]"
    )
    assert no_network == []
    provider = Recorder(
        default={"is_error": False, "result": {"a": [{"x": 1}]}, "structured_content": {"a": [{"x": 1}]}}
    )
    tools = package.Tools(provider).ext  # the source is named after ext.json
    anything = {"any": ["thing", 1]}
    if key == "inputSchema":
        tools.ext(a=anything)
        assert provider.calls[-1][:2] == ("ext", {"a": anything})
    elif key == "$defs":
        tools.ext(d=anything)
        assert provider.calls[-1][:2] == ("ext", {"d": anything})
    else:
        assert tools.ext().a == [{"x": 1}]
    tools.other(q="x")
    assert provider.calls[-1][:2] == ("other", {"q": "x"})


def test_strict_schemas_turns_the_warning_into_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = {"name": "ext", "inputSchema": _obj({"a": {"$ref": "http://host/profile-schema.json"}})}
    (tmp_path / "ext.json").write_text(json.dumps({"tools": [tool]}), encoding="utf-8")
    capsys.readouterr()
    code = _run_toolgen(tmp_path, ["--out", "out", "--package", "strict", "--mcp-json", "ext.json", "--strict-schemas"])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.splitlines() == [
        "toolgen: error: ext.json: tool 'ext': /inputSchema/properties/a/$ref: external $ref "
        "'http://host/profile-schema.json' is not fetched; typed as Any [external-ref] (--strict-schemas)"
    ]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("output_schema", "shown"), [(True, "boolean"), ("object", "string"), ([1], "array")])
def test_an_output_schema_that_is_no_schema_object_leaves_the_result_untyped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], output_schema: Any, shown: str
) -> None:
    # A schema of any other type is typed since 2026-07-28 (tests/runtime/test_root_outputs.py).
    listing = {"tools": [{"name": "t", "inputSchema": _obj({}), "outputSchema": output_schema}]}
    package, message = _degraded(tmp_path, capsys, "out.json", listing)
    untyped = f"outputSchema is not a schema object (got {shown}); the result is untyped (ToolOutput)"
    assert message == f"tool 't': /outputSchema: {untyped} [output-schema]"
    value = package.Tools(Recorder(default={"is_error": False, "result": "hi"})).out.t()
    assert value.text == "hi"


def test_deeply_nested_json_document_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Deeper than json.loads can recurse: a clean error, not a RecursionError traceback."""
    nested = "[" * 5000 + "]" * 5000
    text = '{"tools": [{"name": "t", "inputSchema": {"type": "object", "x-deep": ' + nested + "}}]}"
    message = _refused(tmp_path, capsys, "nested.json", text)
    assert message == "JSON nested too deeply"


@pytest.mark.parametrize(
    ("schema", "where", "what"),
    [
        (_obj({"a": {"$ref": "#/$defs/Missing"}}), "/properties/a/$ref",
         "$ref '#/$defs/Missing' points at nothing in this schema; typed as Any [dangling-ref]"),
        (_obj({"a": {"$ref": "#anchor"}}), "/properties/a/$ref",
         "$ref '#anchor' (an anchor) is not followed; typed as Any [unsupported-ref]"),
        (_obj({"a": {"$ref": 7}}), "/properties/a/$ref", "$ref must be a string, got integer; ignored [bad-keyword]"),
        (_obj({"a": 3}), "/properties/a",
         "a schema must be an object or a boolean, got integer; typed as Any [not-a-schema]"),
        (_obj({"a": {"anyOf": {"type": "string"}}}), "/properties/a/anyOf",
         "anyOf must be a non-empty array, got object; ignored [bad-keyword]"),
    ],
    ids=["dangling", "anchor", "ref-not-string", "not-a-schema", "anyOf-not-array"],
)  # fmt: skip
def test_untypable_spot_degrades_to_any(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], schema: dict[str, Any], where: str, what: str
) -> None:
    package, message = _degraded(tmp_path, capsys, "spot.json", {"tools": [{"name": "t", "inputSchema": schema}]})
    assert message == f"tool 't': /inputSchema{where}: {what}"
    provider = Recorder()
    package.Tools(provider).spot.t(a={"free": "form"})
    assert provider.calls == [("t", {"a": {"free": "form"}}, {})]
