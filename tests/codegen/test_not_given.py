"""The omission sentinel (issue 16, item 6): ``None`` is sent as ``null`` exactly where the schema
allows null, and an optional argument not passed is not sent at all.

Every optional parameter defaults to ``NOT_GIVEN`` (the shim's ``NotGiven`` enum, as Stainless's
``NOT_GIVEN`` / openapi-python-client's ``UNSET``); its type includes ``None`` only when the schema
does. Against a real stdio server that echoes what it received (tests/servers/notes_server.py); the
type checkers' side is in the typing snapshots (tests/codegen/test_typecheck.py, ``dry_run=None``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import forked_python, generate, import_fresh

from mas.runtime.registry import RuntimeRegistry

SERVER = Path(__file__).resolve().parents[1] / "servers" / "notes_server.py"


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    root = tmp_path_factory.mktemp("notes")
    server = {"name": "notes", "protocol": "mcp", "transport": "stdio", **forked_python(str(SERVER)),
              "connect_timeout_seconds": 20}  # fmt: skip
    infra = {"apiVersion": "toolgen/v1", "kind": "ToolServerRegistry", "metadata": {"name": "n"},
             "spec": {"servers": [server]}}  # fmt: skip
    (root / "infra.yaml").write_text(json.dumps(infra))
    with pytest.MonkeyPatch.context() as mp:
        assert generate(root, ["--infra", "infra.yaml", "--out", "out", "--package", "notes", "-q"], mp) == 0
    return root, import_fresh(root / "out", "notes")


def test_none_is_sent_as_null_and_an_argument_not_passed_is_not_sent(notes: tuple[Path, Any]) -> None:
    root, pkg = notes
    with RuntimeRegistry.from_sources(infra=[root / "infra.yaml"]) as registry:
        tools = pkg.Tools(registry).notes

        def sent(text: str) -> Any:
            return json.loads(text)

        assert sent(tools.set_note(id="x", note=None).text) == {"id": "x", "note": None}  # "null clears it"
        assert sent(tools.set_note(id="x").text) == {"id": "x"}
        assert sent(tools.set_note(id="x", note=pkg.NOT_GIVEN).text) == {"id": "x"}
        assert sent(tools.search(query="q").text) == {"query": "q"}  # the server's default applies
        assert sent(tools.search(query="q", limit=10).text) == {"limit": 10, "query": "q"}  # given: sent


def test_the_signatures_allow_none_only_where_the_schema_allows_null(notes: tuple[Path, Any]) -> None:
    root, pkg = notes
    code = (root / "out" / "notes" / "_tools.py").read_text()
    assert "note: str | None | _NotGiven = _NOT_GIVEN" in code
    assert "limit: int | _NotGiven = _NOT_GIVEN" in code
    assert "limit: (server default: 10)" in code  # the schema default is documented, not copied
    assert repr(pkg.NOT_GIVEN) == "NOT_GIVEN" and isinstance(pkg.NOT_GIVEN, pkg.NotGiven)
