"""The mcp Python SDK's own wrapper of a plain return value (issue 30, item 3).

FastMCP in mcp 1.x (and MCPServer in 2.x) gives a tool whose function returns a plain value the
output schema ``{"type": "object", "properties": {"result": ...}, "required": ["result"],
"title": "<function>Output"}``, without fastmcp's ``x-fastmcp-wrap-result`` marker, and sends
``{"result": value}``. The method returns the value itself, as for fastmcp's marker; a real
one-field object (another title, another key, ``result`` not required) stays an object. Against
FastMCP on mcp 1.30 in its cached venv (tests/old_sdk.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import RecordingProvider, generate, import_fresh
from old_sdk import OLD_SDK_SERVER, old_sdk_python

from codegen.schemas import wrapped_key
from mas.runtime.registry import RuntimeRegistry

SDK_WRAP = {"type": "object", "properties": {"result": {"type": "integer", "title": "Result"}},
            "required": ["result"], "title": "addOutput"}  # fmt: skip


@pytest.mark.slow  # an old-SDK server, the generator
def test_a_plain_value_the_sdk_wrapped_is_returned_itself(tmp_path: Path) -> None:
    server = {"name": "old", "protocol": "mcp", "transport": "stdio", "command": str(old_sdk_python("1.30.0")),
              "args": [str(OLD_SDK_SERVER)], "connect_mode": "legacy", "exit_grace_seconds": 0.2}  # fmt: skip
    (tmp_path / "infra.yaml").write_text(json.dumps({"kind": "ToolServerRegistry", "spec": {"servers": [server]}}))
    assert generate(tmp_path, ["--infra", "infra.yaml", "--out", "out", "--package", "wraps", "-q"]) == 0
    pkg = import_fresh(tmp_path / "out", "wraps")
    assert {name: info.output_key for name, info in pkg.TOOLS.items()} == {
        "add": "result", "greet": "result", "client_info": None,
    }  # fmt: skip
    code = (tmp_path / "out" / "wraps" / "_tools.py").read_text(encoding="utf-8")
    assert "_info_old__add: _ToolInfo[int]" in code and "_info_old__greet: _ToolInfo[str]" in code
    stub = (tmp_path / "out" / "wraps" / "code_mode" / "old.pyi").read_text(encoding="utf-8")
    assert "async def add(*, a: int, b: int) -> int:" in stub  # code mode gets the value, not ["result"]
    with RuntimeRegistry.from_sources(infra=[tmp_path / "infra.yaml"]) as registry:
        tools = pkg.Tools(registry).old
        total = tools.add(a=2, b=3)
        assert total == 5 and type(total) is int
        assert tools.greet(name="Ada") == "Hello, Ada!"
        assert tools.results.add(a=1, b=1).structured_content == {"result": 2}


@pytest.mark.parametrize(
    ("schema", "tool", "key"),
    [
        (SDK_WRAP, "add", "result"),
        ({**SDK_WRAP, "$defs": {"Point": {"type": "object"}}}, "add", "result"),  # a value with models
        (SDK_WRAP, "plus", None),  # a tool renamed away from its function: not told apart, kept whole
        ({**SDK_WRAP, "title": "Sum"}, "add", None),  # a server's own one-field object
        ({**SDK_WRAP, "description": "The sum."}, "add", None),
        ({**SDK_WRAP, "required": []}, "add", None),
        ({**SDK_WRAP, "additionalProperties": False}, "add", None),
        ({k: v for k, v in SDK_WRAP.items() if k != "title"}, "add", None),
        ({**SDK_WRAP, "x-fastmcp-wrap-result": True, "title": "Anything"}, "other", "result"),  # fastmcp's marker
    ],
)
def test_only_the_sdks_exact_wrapper_is_unwrapped(schema: dict[str, Any], tool: str, key: str | None) -> None:
    assert wrapped_key(schema, tool) == key


def test_a_one_field_object_of_another_title_stays_a_model(tmp_path: Path) -> None:
    listing = {
        "tools": [{"name": "add", "inputSchema": {"type": "object"}, "outputSchema": {**SDK_WRAP, "title": "Sum"}}]
    }
    (tmp_path / "t.json").write_text(json.dumps(listing))
    assert generate(tmp_path, ["--mcp-json", "t=t.json", "--out", "out", "--package", "kept", "-q"]) == 0
    pkg = import_fresh(tmp_path / "out", "kept")
    answer = pkg.Tools(RecordingProvider(default={"is_error": False, "structured_content": {"result": 4}})).t.add()
    assert answer.result == 4
