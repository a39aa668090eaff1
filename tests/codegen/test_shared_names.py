"""One tool name on two sources (issue 16, item 2): live servers and saved listings.

The rule is ``mas/runtime/routing.py``'s, shared by the generator and the registry: a name two
sources share is sent as ``source.tool``; the registry routes that to the source's provider and
refuses the bare name with one line naming both servers. Real stdio servers
(tests/servers/issues_server.py: github and sentry, both with ``update_issue``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import forked_python, generate, import_fresh

from mas.runtime.registry import RuntimeRegistry

SERVER = Path(__file__).resolve().parents[1] / "servers" / "issues_server.py"


def _infra(folder: Path, *names: str) -> Path:
    servers = [
        {"name": n, "protocol": "mcp", "transport": "stdio", **forked_python(str(SERVER), n),
         "connect_timeout_seconds": 20}
        for n in names
    ]  # fmt: skip
    spec = {
        "apiVersion": "toolgen/v1",
        "kind": "ToolServerRegistry",
        "metadata": {"name": "t"},
        "spec": {"servers": servers},
    }
    path = folder / "infra.yaml"
    path.write_text(json.dumps(spec, indent=1))  # JSON is YAML; one key a line, so each server has its line
    return path


def _listing(*tools: tuple[str, dict[str, Any]]) -> str:
    return json.dumps({"tools": [{"name": n, "inputSchema": {"type": "object", "properties": p}} for n, p in tools]})


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    root = tmp_path_factory.mktemp("shared-live")
    _infra(root, "github", "sentry")
    with pytest.MonkeyPatch.context() as mp:
        code = generate(root, ["--infra", "infra.yaml", "--out", "out", "--package", "issues", "-q"], mp)
    assert code == 0
    return root, import_fresh(root / "out", "issues")


def test_two_live_servers_sharing_a_tool_name_generate_and_each_method_reaches_its_server(
    live: tuple[Path, Any],
) -> None:
    root, pkg = live
    assert sorted(pkg.TOOLS) == [
        "github.search_issues", "github.update_issue", "github_only",
        "sentry.search_issues", "sentry.update_issue", "sentry_only",
    ]  # fmt: skip
    with RuntimeRegistry.from_sources(infra=[root / "infra.yaml"]) as registry:
        tools = pkg.Tools(registry)
        assert tools.github.update_issue(issue="7").text == "github: update_issue {'issue': '7'}"
        assert tools.sentry.update_issue(issue=7, title="t").text == "sentry: update_issue {'issue': 7, 'title': 't'}"
        assert tools.sentry.search_issues(query="q").text == "sentry: search_issues {'query': 'q'}"
        assert tools.github.github_only().text == "github: github_only {}"  # not shared: the bare name


def test_the_registry_refuses_a_shared_bare_name_in_one_line_naming_both_servers(live: tuple[Path, Any]) -> None:
    root, _ = live
    infra = root / "infra.yaml"
    lines = infra.read_text(encoding="utf-8").splitlines()
    # Each entry's line is that of its "{", just above its name (0-based index = 1-based line above).
    github, sentry = (lines.index(f'    "name": "{n}",') for n in ("github", "sentry"))
    with RuntimeRegistry.from_sources(infra=[infra]) as registry:
        refused = registry.call_tool("update_issue", {"issue": "1"})
        assert refused.is_error and refused.error_kind == "unknown_tool"
        assert refused.text == (
            f"tool 'update_issue' is ambiguous: it is provided by 'github' ({infra}:{github}: spec.servers[0]) and "
            f"'sentry' ({infra}:{sentry}: spec.servers[1]); call 'github.update_issue' or 'sentry.update_issue'"
        )
        assert refused.metadata is not None
        assert refused.metadata["candidates"] == ["github.update_issue", "sentry.update_issue"]
        # Listed by the qualified names, each server's tools in its own order.
        assert [e["name"] for e in registry.list_tools()] == [
            "github.update_issue", "github.search_issues", "github_only",
            "sentry.update_issue", "sentry.search_issues", "sentry_only",
        ]  # fmt: skip
        assert registry.call_tool("sentry.update_issue", {"issue": 2}).text == "sentry: update_issue {'issue': 2}"
        # A qualified name always works, listed or not.
        assert registry.call_tool("github.github_only", {}).text == "github: github_only {}"
        assert registry.owner_of("sentry.sentry_only") == "sentry"


def test_saved_listings_sharing_a_name_are_named_on_the_command_line_or_in_pyproject(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(_listing(("update_issue", {"issue": {"type": "string"}})))
    (tmp_path / "b.json").write_text(_listing(("update_issue", {"issue": {"type": "integer"}}), ("b_only", {})))
    args = ["--mcp-json", "github=a.json", "--mcp-json", "sentry=b.json", "--out", "out", "--package", "p1"]
    assert generate(tmp_path, args) == 0
    pkg = import_fresh(tmp_path / "out", "p1")
    assert sorted(pkg.TOOLS) == ["b_only", "github.update_issue", "sentry.update_issue"]
    assert pkg.TOOLS["sentry.update_issue"].method == "update_issue"
    assert pkg.TOOLS["b_only"].namespace == "sentry"
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolgen]\nmcp-json = ["github=a.json", "sentry=b.json"]\nout = "cfg"\npackage = "p2"\n'
    )
    assert generate(tmp_path, []) == 0
    assert (tmp_path / "cfg" / "p2" / "_tools.py").read_text().count('name="sentry.update_issue"') == 1


def test_two_sources_of_one_name_are_one_line_naming_both_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "github.json").write_text(_listing(("a", {})))
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "github.json").write_text(_listing(("b", {})))
    assert generate(tmp_path, ["--mcp-json", "github.json", "--mcp-json", "other/github.json", "--out", "o"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "toolgen: error: other/github.json: two sources are named 'github' (github.json and other/github.json); "
        "rename a server, or name an --mcp-json source (--mcp-json NAME=PATH)"
    ]
    assert not (tmp_path / "o").exists()


def test_a_tool_named_like_another_sources_qualified_name_is_sent_under_its_own_source(tmp_path: Path) -> None:
    (tmp_path / "github.json").write_text(_listing(("update_issue", {})))
    (tmp_path / "sentry.json").write_text(_listing(("x", {}), ("update_issue", {})))
    (tmp_path / "odd.json").write_text(_listing(("sentry.update_issue", {})))
    args = ["--mcp-json", "github.json", "--mcp-json", "sentry.json", "--mcp-json", "odd.json", "--out", "o"]
    assert generate(tmp_path, [*args, "--package", "odd_names"]) == 0
    pkg = import_fresh(tmp_path / "o", "odd_names")
    # odd's dotted name is addressed to sentry, so odd's tool is sent qualified by odd (issue 31).
    assert sorted(pkg.TOOLS) == ["github.update_issue", "odd.sentry.update_issue", "sentry.update_issue", "x"]


def test_a_source_named_like_another_ones_prefix_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.json").write_text(_listing(("t", {})))
    args = ["--mcp-json", "gh=a.json", "--mcp-json", "gh.evil=a.json", "--out", "o"]
    assert generate(tmp_path, args) == 2
    assert capsys.readouterr().err.splitlines() == [
        "toolgen: error: a.json: source names and prefixes clash: 'gh' (of 'gh') begins 'gh.evil' "
        "(of 'gh.evil'): a name like 'gh.evil.tool' would be addressed to both; rename a server or change a prefix"
    ]


def test_a_file_whose_name_has_an_equals_sign_is_given_with_a_folder(tmp_path: Path) -> None:
    (tmp_path / "a=b.json").write_text(_listing(("t", {})))
    assert generate(tmp_path, ["--mcp-json", "./a=b.json", "--out", "out", "--package", "p3"]) == 0
    assert import_fresh(tmp_path / "out", "p3").TOOLS["t"].namespace == "a=b"
