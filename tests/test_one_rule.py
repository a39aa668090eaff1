"""Rules written once (issue 34): each has one definition, and the code calls it instead of
spelling it again."""

from __future__ import annotations

import ast
from pathlib import Path

from codegen.generate import _canonical_digest
from mas.runtime.lockfile import canonical_json, tool_hash

REPO = Path(__file__).resolve().parents[1]
#: Where canonical JSON (compact, keys sorted, UTF-8 as itself) is spelled: its one definition.
CANONICAL_JSON_HOME = ("mas/runtime/lockfile.py", "canonical_json")


def _keywords(call: ast.Call) -> dict[str, str]:
    return {k.arg: ast.unparse(k.value) for k in call.keywords if k.arg}


def canonical_dumps() -> list[str]:
    """Every ``json.dumps``/``json.dump`` call that spells canonical JSON, as ``path:function``."""
    found = []
    for root in ("mas", "codegen"):
        for path in sorted((REPO / root).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for func in ast.walk(tree):
                if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                for node in ast.walk(func):
                    if not (isinstance(node, ast.Call) and ast.unparse(node.func) in ("json.dumps", "json.dump")):
                        continue
                    words = _keywords(node)
                    if words.get("sort_keys") == "True" and words.get("separators") == "(',', ':')":
                        if words.get("ensure_ascii") == "False":
                            found.append(f"{path.relative_to(REPO).as_posix()}:{func.name}")
    return sorted(set(found))


def test_canonical_json_is_spelled_once() -> None:
    assert canonical_dumps() == [":".join(CANONICAL_JSON_HOME)]


def test_canonical_json_is_compact_sorted_and_keeps_text() -> None:
    assert canonical_json({"b": 1, "a": ["é", None]}) == '{"a":["é",null],"b":1}'


def test_the_header_hashes_each_tool_by_the_locks_hash() -> None:
    tool = {"name": "t", "inputSchema": {"type": "object", "required": ["b", "a"]}}
    assert "sha256:" + _canonical_digest(tool, None) == tool_hash(tool)
    reordered = {"inputSchema": {"required": ["a", "b"], "type": "object"}, "name": "t"}
    assert _canonical_digest(reordered, None) == _canonical_digest(tool, None)  # canonical: sets sorted
