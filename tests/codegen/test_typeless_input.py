"""An ``inputSchema`` without ``"type"`` (issue 16, item 5): a published GitLab server sends only
``{"$schema": "http://json-schema.org/draft-07/schema#"}`` for each of its tools.

Each such tool is one warning, ``--strict-schemas`` makes it exit 2, and its method takes
``**arguments`` and sends them as given; the package still passes mypy --strict and pyright strict.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest
from gen_helpers import RecordingProvider, generate, import_fresh
from pyright_batch import Batch, pyright_workspace

DRAFT7 = {"$schema": "http://json-schema.org/draft-07/schema#"}
LISTING = {
    "tools": [
        {"name": "create_issue", "description": "Create an issue.", "inputSchema": DRAFT7},
        {"name": "list_projects", "inputSchema": DRAFT7},
        {"name": "typed", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}},
        # No type, but properties: typed from them, as an object is (and warned of too).
        {"name": "props_only", "inputSchema": {"properties": {"b": {"type": "integer"}}}},
    ]
}
WARNING = (
    'toolgen: warning: gitlab.json: tool {!r}: /inputSchema: inputSchema has no "type" and no properties; the '
    "method takes any keyword arguments (**arguments: Any) and sends them as given [input-without-type]"
)
WITH_PROPERTIES = (
    "toolgen: warning: gitlab.json: tool 'props_only': /inputSchema: inputSchema has no \"type\"; typed as an "
    "object from its properties [input-without-type]"
)


@pytest.fixture(scope="module")
def gitlab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("typeless")
    (root / "gitlab.json").write_text(json.dumps(LISTING))
    return root


def test_each_typeless_tool_is_one_warning_and_its_method_sends_any_arguments(
    gitlab: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert generate(gitlab, ["--mcp-json", "gitlab.json", "--out", "out", "--package", "gitlab", "-q"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        WARNING.format("create_issue"),
        WARNING.format("list_projects"),
        WITH_PROPERTIES,
    ]
    pkg = import_fresh(gitlab / "out", "gitlab")
    provider = RecordingProvider()
    tools = pkg.Tools(provider).gitlab
    assert str(inspect.signature(tools.create_issue)) == "(**arguments: '_Any') -> '_ToolOutput'"
    tools.create_issue(project_id=7, title="Bug", labels=["a"])
    tools.list_projects()
    tools.props_only(b=1)
    assert [(name, args) for name, args, _ in provider.calls] == [
        ("create_issue", {"project_id": 7, "title": "Bug", "labels": ["a"]}),
        ("list_projects", {}),
        ("props_only", {"b": 1}),
    ]


def test_strict_schemas_refuses_a_typeless_input(gitlab: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--mcp-json", "gitlab.json", "--out", "strict", "--package", "gitlab", "--strict-schemas", "-q"]
    assert generate(gitlab, args) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "toolgen: error: "
        + WARNING.format("create_issue").removeprefix("toolgen: warning: ")
        + " (--strict-schemas; 2 more)"
    ]
    assert not (gitlab / "strict").exists()


@pyright_workspace(include=["gitlab", "use_it.py"], root="tc", full=True)
def checked(root: Path) -> None:
    (root / "gitlab.json").write_text(json.dumps(LISTING))
    assert generate(root, ["--mcp-json", "gitlab.json", "--out", "tc", "--package", "gitlab", "-q"]) == 0
    (root / "tc" / "use_it.py").write_text(
        "from gitlab import Tools\nfrom gitlab._runtime import SupportsCallTool\n\n\n"
        "def use(provider: SupportsCallTool) -> str:\n"
        '    return Tools(provider).gitlab.create_issue(project_id=7, title="Bug").text\n'
    )


@pytest.mark.full
@pytest.mark.slow
def test_the_package_and_code_calling_it_type_check(pyright_batch: Batch) -> None:
    gitlab = pyright_batch.built(checked)[0]
    (gitlab / "tc" / "mypy.ini").write_text("[mypy]\n")
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--strict",
         "gitlab", "use_it.py"],
        cwd=gitlab / "tc", capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
    report = pyright_batch.report(checked)
    assert [d["message"] for d in report["generalDiagnostics"] if d["severity"] in ("error", "warning")] == []
