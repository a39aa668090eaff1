"""Method docstrings from a Python server's own docstrings (issue 30, item 12).

FastMCP on the mcp 1.x SDK sends a tool function's docstring as its description, indented as in
its source and with an ``Args:`` section of its own (markitdown-mcp's ``convert_to_markdown``).
The method's docstring once had that section at a 20-space indent and a second ``Args:`` of
ours below it, and every double quote spelt ``\\"`` in the source editors show. Against the
repo's 1.x test server (tests/servers/old_sdk_server.py ``--docstrings``) in its cached venv.
"""

from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path

import pytest
from gen_helpers import generate, import_fresh
from old_sdk import OLD_SDK_SERVER, old_sdk_python
from tiers import tiered

from codegen.literals import docstring_literal

EXPECTED = """\
Convert a resource to Markdown.

Reads the resource at a "uri" and answers with its text, as markitdown-mcp's
convert_to_markdown does.

Args:
    uri: Where the resource is, e.g. "file:///tmp/a.txt".
    max_chars: The longest answer.
    mode: (server default: "text")

Wire name: 'convert'."""


@pytest.mark.parametrize("version", tiered(["1.6.0", "1.30.0"], ["1.30.0"]))  # one old-SDK venv in the fast tier
def test_a_python_servers_docstring_keeps_one_args_section_at_its_own_indent(version: str, tmp_path: Path) -> None:
    server = {"name": "old", "protocol": "mcp", "transport": "stdio", "command": str(old_sdk_python(version)),
              "args": [str(OLD_SDK_SERVER), "--docstrings"], "connect_mode": "legacy",
              "exit_grace_seconds": 0.2}  # fmt: skip
    (tmp_path / "infra.yaml").write_text(json.dumps({"kind": "ToolServerRegistry", "spec": {"servers": [server]}}))
    assert generate(tmp_path, ["--infra", "infra.yaml", "--out", "out", "--package", "docs_pkg", "-q"]) == 0
    source = (tmp_path / "out" / "docs_pkg" / "_tools.py").read_text(encoding="utf-8")
    method = next(
        node for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef) and node.name == "convert"
    )  # fmt: skip
    literal = ast.get_source_segment(source, method.body[0]) or ""
    assert '\\"' not in literal  # the quotes read as written
    assert literal.count("Args:") == 1
    assert inspect.cleandoc(ast.literal_eval(literal)) == EXPECTED
    pkg = import_fresh(tmp_path / "out", "docs_pkg")
    assert inspect.getdoc(pkg._tools.OldTools.convert) == EXPECTED  # what help() shows


@pytest.mark.parametrize("text", ['say "hi"', 'ends with a quote"', '""" three """', "a \\ b", 'x""', '"'])
def test_only_quotes_that_another_quote_follows_are_escaped(text: str) -> None:
    literal = docstring_literal(text, 8)
    assert ast.literal_eval(literal).rstrip() == text  # the value exactly, whatever the quotes
    if '""' not in text:
        assert '\\"' not in literal


def test_the_run_code_description_counts_one_tool_in_the_singular(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same item's last point: a catalog too large for the whole API lists each module with
    its count, and a module of one tool said "1 tools"."""
    from gen_helpers import RecordingProvider

    from mas.runtime.code_mode import server
    from mas.runtime.code_mode.core import CodeMode

    one = {"tools": [{"name": "ping", "inputSchema": {"type": "object"}}]}
    two = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in ("a", "b")]}
    (tmp_path / "one.json").write_text(json.dumps(one))
    (tmp_path / "two.json").write_text(json.dumps(two))
    args = ["--mcp-json", "one=one.json", "--mcp-json", "two=two.json", "--out", "out", "--package", "counted", "-q"]
    assert generate(tmp_path, args) == 0
    monkeypatch.setattr(server, "WHOLE_API_MAX_CHARS", 0)  # as for a large catalog
    with CodeMode(RecordingProvider(), package=import_fresh(tmp_path / "out", "counted")) as mode:
        description = server._run_description(mode)
    assert "Modules: tools.one (1 tool), tools.two (2 tools).\n" in description
