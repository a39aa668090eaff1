"""Rules written once (issue 34): each has one definition, and the code calls it instead of
spelling it again."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from codegen.emit.flavours import FLAVOURS, PARTS, SHIM_BASES, TOOLS_EXPORTS
from codegen.generate import _canonical_digest
from mas.runtime.contracts._rules import (
    CALL_OPTIONS,
    CallOptions,
    checked_options,
    joined_text,
    json_equal,
    json_type,
    keywords_taken,
    options_for,
)
from mas.runtime.contracts.tool_contract import CALL_KWARGS, HINT_KEYS, declared_hints, entry_hints, tool_title
from mas.runtime.lockfile import canonical_json, tool_hash

REPO = Path(__file__).resolve().parents[1]
#: Where canonical JSON (compact, keys sorted, UTF-8 as itself) is spelled: its one definition.
CANONICAL_JSON_HOME = ("mas/runtime/lockfile.py", "canonical_json")


def _keywords(call: ast.Call) -> dict[str, str]:
    return {k.arg: ast.unparse(k.value) for k in call.keywords if k.arg}


def canonical_dumps() -> list[str]:
    """Every ``json.dumps``/``json.dump`` call that spells canonical JSON, as ``path:function``."""
    found = []
    for rel, tree in _all_trees():
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(func):
                if not (isinstance(node, ast.Call) and _is_json_dump(node.func)):
                    continue
                words = _keywords(node)
                if words.get("sort_keys") == "True" and words.get("separators") == "(',', ':')":
                    if words.get("ensure_ascii") == "False":
                        found.append(f"{rel}:{func.name}")
    return sorted(set(found))


def _is_json_dump(func: ast.expr) -> bool:
    """``json.dumps`` or ``json.dump`` (what ``ast.unparse`` would spell so, without unparsing)."""
    return (
        isinstance(func, ast.Attribute)
        and func.attr in ("dumps", "dump")
        and isinstance(func.value, ast.Name)
        and func.value.id == "json"
    )


def test_canonical_json_is_spelled_once() -> None:
    assert canonical_dumps() == [":".join(CANONICAL_JSON_HOME)]


def test_canonical_json_is_compact_sorted_and_keeps_text() -> None:
    assert canonical_json({"b": 1, "a": ["é", None]}) == '{"a":["é",null],"b":1}'


def test_the_header_hashes_each_tool_by_the_locks_hash() -> None:
    tool = {"name": "t", "inputSchema": {"type": "object", "required": ["b", "a"]}}
    assert "sha256:" + _canonical_digest(tool, None) == tool_hash(tool)
    reordered = {"inputSchema": {"required": ["a", "b"], "type": "object"}, "name": "t"}
    assert _canonical_digest(reordered, None) == _canonical_digest(tool, None)  # canonical: sets sorted


# --------------------------------------------------------------------------------------------
# Where a rule is spelled: every function (``path:function``) of mas/ and codegen/ (the shim that
# every package ships included, the sample server left out: it is a server, not a reader).


@functools.cache
def _all_trees() -> tuple[tuple[str, ast.Module], ...]:
    """Every module of mas/ and codegen/, parsed once for all the tests here."""
    found = []
    for root in ("mas", "codegen"):
        for path in sorted((REPO / root).rglob("*.py")):
            found.append((path.relative_to(REPO).as_posix(), ast.parse(path.read_text(encoding="utf-8"))))
    return tuple(found)


def _trees() -> tuple[tuple[str, ast.Module], ...]:
    """Every module of mas/ and codegen/ but the sample server's."""
    return tuple((rel, tree) for rel, tree in _all_trees() if not rel.startswith("mas/samples/"))


def _functions() -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for rel, tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield f"{rel}:{node.name}", node


@functools.cache
def _own_nodes() -> tuple[tuple[str, tuple[ast.AST, ...]], ...]:
    """Each function and its own nodes (a nested function's are its own, not its parent's), walked once."""
    found = []
    for where, func in _functions():
        inner = [n for n in ast.walk(func) if n is not func and isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        skip = {id(n) for f in inner for n in ast.walk(f)}
        found.append((where, tuple(node for node in ast.walk(func) if id(node) not in skip)))
    return tuple(found)


def _spelled(test: Callable[[ast.AST], bool]) -> list[str]:
    """The functions with a node for which ``test`` holds (a nested function counts for its own)."""
    return sorted({where for where, nodes in _own_nodes() if any(test(node) for node in nodes)})


def _is_text_join(node: ast.AST) -> bool:
    """``"\\n".join(...)`` in a function that also compares something with ``"text"`` (a block's type)."""
    return isinstance(node, ast.Call) and ast.unparse(node.func) == "'\\n'.join"


def _compares_text_type(node: ast.AST) -> bool:
    return isinstance(node, ast.Compare) and any(
        isinstance(c, ast.Constant) and c.value == "text" for c in (node.left, *node.comparators)
    )


def test_content_text_is_joined_in_one_place() -> None:
    joins = set(_spelled(_is_text_join))
    typed = set(_spelled(_compares_text_type))
    assert sorted(joins & typed) == ["mas/runtime/contracts/_rules.py:joined_text"]


def test_joined_text_takes_text_blocks_of_dicts_and_models() -> None:
    class Block:
        type, text = "text", "b"

    blocks: list[object] = [{"type": "text", "text": "a"}, {"type": "image"}, Block(), {"type": "text", "text": 1}]
    assert joined_text(blocks) == "a\nb"
    assert joined_text([{"type": "image"}]) is None


def test_hints_are_read_in_one_module() -> None:
    """The MCP annotation names of the hints are written in ``HINT_KEYS`` alone; every reader goes
    through ``declared_hints``/``entry_hints`` (or inverts ``HINT_KEYS``)."""
    names = set(HINT_KEYS.values())
    found = [
        rel for rel, tree in _trees() if any(isinstance(n, ast.Constant) and n.value in names for n in ast.walk(tree))
    ]
    assert found == ["mas/runtime/contracts/tool_contract.py"]


def test_hints_have_their_three_meanings() -> None:
    tool = {"annotations": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": "yes"}}
    assert declared_hints(tool) == {"idempotent": None, "read_only": True, "destructive": False, "open_world": None}
    entry = {"read_only": False, **tool}  # an entry's own key wins over its mirrored annotation
    assert entry_hints(entry)["read_only"] is False
    assert entry_hints(entry)["destructive"] is False


def _gets_title(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and [ast.unparse(a) for a in node.args[:1]] == ["'title'"]
    )


def _names_annotations(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == "annotations"


def test_a_tools_title_is_read_in_one_place() -> None:
    both = set(_spelled(_gets_title)) & set(_spelled(_names_annotations))
    assert sorted(both) == ["mas/runtime/contracts/tool_contract.py:tool_title"]
    assert tool_title({"title": "", "annotations": {"title": "Shown"}}) == "Shown"
    assert tool_title({"title": "Own", "annotations": {"title": "Shown"}}) == "Own"
    assert tool_title({"annotations": {"title": 3}}) is None


def _maps_error_classes(node: ast.AST) -> bool:
    return isinstance(node, ast.Dict) and any(
        isinstance(k, ast.Constant) and isinstance(k.value, str) and re.fullmatch(r"Tool\w*Error", k.value)
        for k in node.keys
    )


def test_error_kinds_come_from_the_classes() -> None:
    """No table maps the package's error class names to kinds: each class carries ``.kind``."""
    assert [rel for rel, tree in _trees() if any(_maps_error_classes(n) for n in ast.walk(tree))] == []
    from codegen.shim._runtime import _errors

    for name in _errors.__all__:
        cls = getattr(_errors, name)
        if isinstance(cls, type) and issubclass(cls, _errors.ToolError) and cls is not _errors.ToolError:
            assert isinstance(cls.__dict__.get("kind", getattr(cls, "kind", None)), str), name


def _compares_types(node: ast.AST) -> bool:
    """``type(a) is type(b)`` (or ``is not``, ``==``, ``!=``): a strict-equality check spelled out."""
    if not isinstance(node, ast.Compare) or len(node.comparators) != 1:
        return False
    sides = (node.left, node.comparators[0])
    return all(isinstance(side, ast.Call) and ast.unparse(side.func) == "type" for side in sides)


def test_strict_json_equality_is_written_once() -> None:
    assert _spelled(_compares_types) == ["mas/runtime/contracts/_rules.py:json_equal"]
    assert json_equal({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]})
    assert not json_equal([1], [True]) and not json_equal({"a": 1}, {"a": 1.0}) and not json_equal(0, False)


_PY_TYPES = {"bool", "int", "float", "str", "list", "dict", "tuple", "Mapping"}


def _names_json_types(node: ast.AST) -> bool:
    """A table naming Python types in JSON words: a ``{bool: "boolean", ...}`` dict, or a
    ``(bool, "a boolean")`` pair."""
    if isinstance(node, ast.Dict):
        pairs = list(zip(node.keys, node.values, strict=True))
    elif isinstance(node, ast.Tuple) and len(node.elts) == 2:
        pairs = [(node.elts[0], node.elts[1])]
    else:
        return False
    return any(
        isinstance(k, ast.Name) and k.id in _PY_TYPES and isinstance(v, ast.Constant) and isinstance(v.value, str)
        for k, v in pairs
    )


def test_json_type_names_are_written_once() -> None:
    tables = {rel for rel, tree in _trees() for n in ast.walk(tree) if _names_json_types(n)}
    # settings.py words what a pyproject.toml key wants in TOML's words ("true or false"), not a
    # JSON value's type.
    assert tables == {"mas/runtime/contracts/_rules.py", "codegen/settings.py"}
    assert [json_type(v) for v in (True, 1, 1.0, "", [], {}, None)] == [
        "boolean", "integer", "number", "string", "array", "object", "null",
    ]  # fmt: skip


def _reads_a_signature(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and ast.unparse(node.func) in ("inspect.signature", "signature")


def test_a_callees_signature_is_read_in_one_place() -> None:
    """Options (and the surface's ``server``) are passed only where declared: one reading of a
    signature, ``_rules.keywords_taken``, and one filtering of options, ``_rules.options_for``."""
    assert _spelled(_reads_a_signature) == ["mas/runtime/contracts/_rules.py:_declared"]

    def declares(*, timeout_seconds: float | None = None, server: str | None = None) -> None: ...

    def takes_any(**kwargs: object) -> None: ...

    options = {"timeout_seconds": 1.0, "user": "u", "meta": None}
    assert options_for(declares, options) == {"timeout_seconds": 1.0}
    assert options_for(takes_any, options) == {"timeout_seconds": 1.0, "user": "u"}
    assert keywords_taken(declares) == {"timeout_seconds", "server"} and keywords_taken(takes_any) is None


def test_the_method_flavours_are_one_table() -> None:
    """The macros, classes, bases, exports and part count of the three flavours come from
    ``codegen/emit/flavours.py``: no other generator module spells a flavour's macro or base, and
    the table agrees with the template and with a generated package."""
    spelled = {f.macro for f in FLAVOURS} | SHIM_BASES - {"ToolsBase", "AsyncToolsBase"}
    found = sorted(
        rel
        for rel, tree in _trees()
        if rel.startswith("codegen/") and not rel.startswith("codegen/shim/") and rel != "codegen/emit/flavours.py"
        if any(isinstance(n, ast.Constant) and n.value in spelled for n in ast.walk(tree))
    )
    assert found == []
    template = (REPO / "templates" / "_tool.py.jinja").read_text(encoding="utf-8")
    assert all(f"{{% macro {f.macro}(tool, is_async, values_class" in template for f in FLAVOURS)
    assert PARTS == 1 + 2 * len(FLAVOURS)
    package = (REPO / "generated" / "sample_tools" / "_tools.py").read_text(encoding="utf-8")
    assert all(f"\nclass {name}(" in package for name in TOOLS_EXPORTS if name != "TOOLS")


# --------------------------------------------------------------------------------------------
# Call options: one definition (``_rules.CallOptions``), checked once where a call enters, then
# passed whole as one value down to the SDK call; the arguments copied once on the way.

#: Where a call's options enter and are checked (``_rules.checked_options``): the contract's
#: kwargs surface of each runtime provider and of a generated package. Past these, one value.
OPTIONS_CHECKED_AT = [
    "codegen/shim/_runtime/_base.py:__init__",  # Tools(provider, options)
    "codegen/shim/_runtime/_base.py:with_options",
    "codegen/shim/_runtime/_options.py:checked_options",  # the package's own options as well
    "mas/runtime/contracts/tool_contract.py:acall_tool",  # ToolContract: a user's tool
    "mas/runtime/contracts/tool_contract.py:ainvoke_call_tool",  # code mode, framework adapters
    "mas/runtime/contracts/tool_contract.py:invoke_call_tool",
    "mas/runtime/local.py:acall_tool",
    "mas/runtime/local.py:call_tool",
    "mas/runtime/mcp/provider.py:acall_tool",
    "mas/runtime/mcp/provider.py:call_tool",
    "mas/runtime/registry.py:acall_tool",
    "mas/runtime/registry.py:call_tool",
]
#: The modules a call passes through to the MCP SDK (or a local tool).
CALL_PATH = (
    "mas/runtime/registry.py",
    "mas/runtime/local.py",
    "mas/runtime/contracts/",
    "mas/runtime/mcp/",
    "mas/runtime/frameworks/_adapt.py",  # an agent framework's call, on its way to the registry
)
#: Where those modules copy a call's arguments, and why each copy is needed.
ARGUMENTS_COPIED_AT = [
    # A provider that is not the runtime's may keep or change the dict it gets.
    "mas/runtime/contracts/tool_contract.py:acall_with_options",
    "mas/runtime/contracts/tool_contract.py:call_with_options",
    # Only a Mapping that is no dict: jsonschema's "object" is a dict.
    "mas/runtime/contracts/tool_contract.py:validate_arguments",
    "mas/runtime/mcp/_surface.py:prompt",  # a prompt's arguments (prompts/get), not a tool call's
    "mas/runtime/mcp/provider.py:_start",  # the request is built on the provider's loop thread
]


def _names_option_fields(node: ast.AST) -> bool:
    """A class that declares three or more call options as fields (a second definition of them)."""
    if not isinstance(node, ast.ClassDef):
        return False
    fields = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
    return len(fields & set(CALL_OPTIONS)) >= 3


def _rebuilds_options(node: ast.AST) -> bool:
    """``CallOptions(...)`` called, or a call spelling three or more options as keywords (options
    rebuilt from loose values instead of passed on as the one value)."""
    if not isinstance(node, ast.Call):
        return False
    named = {k.arg for k in node.keywords} & set(CALL_OPTIONS)
    return ast.unparse(node.func).endswith("CallOptions") or len(named) >= 3


def test_call_options_are_defined_once() -> None:
    classes = sorted(
        f"{rel}:{n.name}"
        for rel, tree in _trees()
        for n in ast.walk(tree)
        if isinstance(n, ast.ClassDef) and _names_option_fields(n)
    )
    assert classes == ["mas/runtime/contracts/_rules.py:CallOptions"]
    assert CALL_OPTIONS == tuple(CallOptions.__annotations__) and CALL_KWARGS == CALL_OPTIONS
    # The package's CallOptions extends the contract's with only the options it acts on itself.
    package = ast.parse((REPO / "codegen/shim/_runtime/_options.py").read_text(encoding="utf-8"))
    (own,) = [n for n in package.body if isinstance(n, ast.ClassDef) and n.name == "CallOptions"]
    assert [ast.unparse(b) for b in own.bases] == ["_rules.CallOptions"]
    assert [ast.unparse(s.target) for s in own.body if isinstance(s, ast.AnnAssign)] == [
        "on_input",
        "retries",
        "confirm",
    ]


def test_call_options_are_checked_where_a_call_enters_and_never_rebuilt() -> None:
    def checks(node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and ast.unparse(node.func).endswith("checked_options")

    assert _spelled(checks) == OPTIONS_CHECKED_AT
    # The one place options take other words: the SDK's tools/call.
    assert _spelled(_rebuilds_options) == [
        "mas/runtime/frameworks/pydantic_ai.py:call_tool",  # the toolset's own fields, into _adapt.call
        "mas/runtime/mcp/provider.py:_call_on",
    ]
    assert checked_options({"user": "u", "meta": None}) == {"user": "u"}


def test_arguments_are_copied_once_on_the_way_to_the_sdk() -> None:
    def copies_arguments(node: ast.AST) -> bool:
        return (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) == "dict"
            and len(node.args) == 1
            and re.match(r"(arguments|args)\b", ast.unparse(node.args[0])) is not None
        )

    found = [where for where in _spelled(copies_arguments) if where.startswith(CALL_PATH)]
    assert found == ARGUMENTS_COPIED_AT
