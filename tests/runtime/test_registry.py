"""Infra loading and RuntimeRegistry: merging, routing, prefixes and refusing to half-start."""

from __future__ import annotations

import asyncio
import json
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest
from prefork import python_args

from mas.runtime.config import ConfigError, MCPServerConfig, SourceLocation
from mas.runtime.contracts.tool_contract import ToolContract, ToolResultEnvelope, build_tool_entry
from mas.runtime.infra import load_infra
from mas.runtime.local import LocalToolRegistry
from mas.runtime.registry import RuntimeRegistry
from mas.samples.local_tools import WordCount


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


INFRA = """\
kind: ToolServerRegistry
spec:
  servers:
    - name: weather
      protocol: mcp
      transport: streamable-http
      endpoint: http://127.0.0.1:9/mcp
      headers:
        Authorization: env:WEATHER_TOKEN
      tools: [forecast, {name: alerts, description: Active alerts}]
    - name: files
      protocol: mcp
      transport: stdio
      command: python
      args: [-m, files_server]
      cwd: servers
      prefix: fs
      follow_pagination: false
      max_pages: 5
      cache_ttl_ms: 1000
      cache_scope: process
      cache_hints: ignore
      app_only_tools: keep
"""

TOOL = """\
kind: Tool
metadata:
  name: {name}
spec:
  description: A skill.
  parameters: {{type: object}}
  handler: mas.samples.skills:summarize_text
"""


# --- infra -----------------------------------------------------------------------------------
def test_load_infra_reads_every_field(tmp_path: Path) -> None:
    path = write(tmp_path, "infra.yaml", INFRA)
    weather, files = load_infra(path)
    assert weather == MCPServerConfig(
        name="weather",
        transport="streamable-http",
        url="http://127.0.0.1:9/mcp",
        headers={"Authorization": "env:WEATHER_TOKEN"},
        tools=(
            {"name": "forecast", "inputSchema": {"type": "object"}},
            {"name": "alerts", "description": "Active alerts", "inputSchema": {"type": "object"}},
        ),
        location=SourceLocation(str(path), 4, "spec.servers[0]"),
    )
    assert files == MCPServerConfig(
        name="files",
        transport="stdio",
        command="python",
        args=("-m", "files_server"),
        cwd=str(tmp_path / "servers"),
        prefix="fs",
        follow_pagination=False,
        max_pages=5,
        cache_ttl_ms=1000,
        cache_scope="process",
        cache_hints="ignore",
        app_only_tools="keep",
        location=SourceLocation(str(path), 11, "spec.servers[1]"),
    )


def test_library_sample_infra_files_load(repo_root: Path) -> None:
    [http] = load_infra(repo_root / "library-samples" / "infra" / "mcp-localhost.yaml")
    assert (http.name, http.transport, http.url) == ("sample", "streamable-http", "http://127.0.0.1:8765/mcp")
    assert http.headers == {"Authorization": "Bearer env:SAMPLE_SERVER_TOKEN"}
    [stdio] = load_infra(repo_root / "library-samples" / "infra" / "sample-stdio.yaml")
    assert (stdio.command, stdio.args) == ("python", ("-m", "mas.samples.mcp_server"))


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("      command: python\n", "", "11: spec.servers[1]: a stdio server needs `command`"),
        (
            "      endpoint: http://127.0.0.1:9/mcp\n",
            "",
            "4: spec.servers[0]: an HTTP server (streamable-http, sse) needs `url` (or its alias `endpoint`)",
        ),
        (
            "      endpoint: http://127.0.0.1:9/mcp\n",
            "      endpoint: http://127.0.0.1:9/mcp\n      url: http://127.0.0.1:9/mcp\n",
            "4: spec.servers[0]: set `url` or its alias `endpoint`, not both",
        ),
        (
            "transport: stdio",
            "transport: pipe",
            "13: spec.servers[1].transport: must be one of stdio, streamable-http, sse, not 'pipe'",
        ),
        (
            "      max_pages: 5\n",
            "      max_page: 5\n",
            "19: spec.servers[1].max_page: unknown key 'max_page' (did you mean 'max_pages'?)",
        ),
        (
            "Authorization: env:WEATHER_TOKEN",
            "Retries: 3",
            "9: spec.servers[0].headers.Retries: expected string, got integer",
        ),
        (
            "protocol: mcp\n      transport: stdio",
            "protocol: grpc\n      transport: stdio",
            "12: spec.servers[1].protocol: must be 'mcp', not 'grpc'",
        ),
        ("- name: files", "- name: weather", "11: spec.servers[1].name: duplicate server name 'weather' (also at "),
        ("kind: ToolServerRegistry", "kind: Tool", "1: kind: must be 'ToolServerRegistry', got 'Tool'"),
        ("tools: [forecast,", "tools: [3,", "10: spec.servers[0].tools[0]: expected string or object, got integer"),
        (
            "{name: alerts,",
            "{nam: alerts,",
            "10: spec.servers[0].tools[1].nam: unknown key 'nam' (did you mean 'name'?)",
        ),
    ],
)
def test_bad_infra_gives_a_line_numbered_error(tmp_path: Path, old: str, new: str, expected: str) -> None:
    assert old in INFRA
    path = write(tmp_path, "infra.yaml", INFRA.replace(old, new))
    with pytest.raises(ConfigError) as info:
        load_infra(path)
    assert str(info.value).startswith(f"{path}:{expected}")


# --- fakes -----------------------------------------------------------------------------------
class FakeServer:
    """Stands in for MCPToolProvider: lists fixed names and records calls."""

    def __init__(self, config: MCPServerConfig, names: list[str], *, fail: str | None = None) -> None:
        self.config, self.names, self.fail = config, names, fail
        self.calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
        self.closed = False

    def list_tools(self) -> list[dict[str, Any]]:
        if self.fail:
            raise RuntimeError(self.fail)
        return [build_tool_entry(n, f"{n} on {self.config.name}", {"type": "object"}) for n in self.names]

    def call_tool(
        self, tool_name: str, arguments: Mapping[str, Any], timeout_seconds: float | None = None
    ) -> dict[str, Any]:
        self.calls.append((tool_name, dict(arguments), {"timeout_seconds": timeout_seconds}))
        if tool_name == "explode":
            raise ConnectionError("server went away")
        return {"status": "success", "result": f"{self.config.name}:{tool_name}", "is_error": False}

    def close(self) -> None:
        self.closed = True


class Servers:
    """An ``mcp_factory`` that builds FakeServers and remembers them."""

    def __init__(self, names: Mapping[str, list[str]], fail: Mapping[str, str] | None = None) -> None:
        self.names, self.fail = names, dict(fail or {})
        self.built: dict[str, FakeServer] = {}

    def __call__(self, config: MCPServerConfig) -> FakeServer:
        server = FakeServer(config, self.names[config.name], fail=self.fail.get(config.name))
        self.built[config.name] = server
        return server


class Echo(ToolContract):
    name: ClassVar[str] = "echo"
    description: ClassVar[str] = "Echo the text."
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {"text": {"type": "string"}}}

    def execute(self, **kwargs: Any) -> Any:
        return kwargs.get("text", "")


class OtherEcho(Echo):
    pass


# --- registry --------------------------------------------------------------------------------
def test_merges_local_skills_and_servers_and_routes_by_name(tmp_path: Path, repo_root: Path) -> None:
    infra = write(tmp_path, "infra.yaml", INFRA)
    servers = Servers({"weather": ["forecast", "alerts"], "files": ["read", "write"]})
    with RuntimeRegistry.from_sources(
        infra=[infra],
        tools=[repo_root / "library-samples" / "tools"],
        local=["mas.samples.local_tools:WordCount", Echo],
        mcp_factory=servers,
    ) as registry:
        names = [entry["name"] for entry in registry.list_tools()]
        assert names == [
            "word_count",
            "echo",
            "current_time",
            "unit_convert",
            "web_search",
            "summarize_text",
            "forecast",
            "alerts",
            "fs.read",
            "fs.write",
        ]
        assert list(registry.providers) == ["local", "skills", "weather", "files"]
        assert [registry.owner_of(n) for n in ("echo", "web_search", "alerts", "fs.read", "nope")] == [
            "local",
            "skills",
            "weather",
            "files",
            None,
        ]
        assert registry.call_tool("echo", {"text": "hi"}).result == "hi"
        assert registry.call_tool("word_count", {"text": "a b\nc"}).result == {"words": 3, "lines": 2, "characters": 5}
        assert registry.call_tool("unit_convert", {"value": 1, "from_unit": "kg", "to_unit": "g"}).result == {
            "value": 1000.0,
            "unit": "g",
            "category": "mass",
        }
        # The prefix is stripped when forwarding.
        assert registry.call_tool("fs.read", {"path": "a"}).result == "files:read"
        assert servers.built["files"].calls == [("read", {"path": "a"}, {"timeout_seconds": None})]
    assert servers.built["weather"].closed and servers.built["files"].closed


def test_prefixed_entries_keep_everything_but_the_name(tmp_path: Path) -> None:
    servers = Servers({"weather": ["forecast", "alerts"], "files": ["read"]})
    registry = RuntimeRegistry.from_sources(infra=[write(tmp_path, "i.yaml", INFRA)], mcp_factory=servers)
    entry = next(e for e in registry.list_tools() if e["name"] == "fs.read")
    assert entry == {"name": "fs.read", "description": "read on files", "parameters": {"type": "object"}}


def test_optional_kwargs_reach_only_providers_that_declare_them(tmp_path: Path) -> None:
    servers = Servers({"weather": ["forecast"], "files": []})
    registry = RuntimeRegistry.from_sources(infra=[write(tmp_path, "i.yaml", INFRA)], mcp_factory=servers)
    registry.call_tool("forecast", {"day": 1}, timeout_seconds=4.0, user="ada", meta={"m": 1})
    assert servers.built["weather"].calls == [("forecast", {"day": 1}, {"timeout_seconds": 4.0})]
    with pytest.raises(TypeError, match="unknown call option\\(s\\): retries"):
        registry.call_tool("forecast", {}, retries=2)


def test_acall_tool_routes_too(tmp_path: Path) -> None:
    servers = Servers({"weather": ["forecast"], "files": ["read"]})
    registry = RuntimeRegistry.from_sources(infra=[write(tmp_path, "i.yaml", INFRA)], local=[Echo], mcp_factory=servers)

    async def calls() -> list[Any]:
        return [
            (await registry.acall_tool("fs.read", {}, timeout_seconds=1.0)).result,
            (await registry.acall_tool("echo", {"text": "yo"})).result,
            (await registry.acall_tool("ecoh", {})).result,
        ]

    assert asyncio.run(calls()) == ["files:read", "yo", "unknown tool 'ecoh'; did you mean 'echo'?"]
    assert servers.built["files"].calls == [("read", {}, {"timeout_seconds": 1.0})]


def test_unknown_tool_suggests_close_names(repo_root: Path) -> None:
    registry = RuntimeRegistry.from_sources(tools=[repo_root / "library-samples" / "tools"])
    envelope = registry.call_tool("web-search", {"query": "x"})
    assert envelope.is_error is True
    assert envelope.result == "unknown tool 'web-search'; did you mean 'web_search'?"
    assert registry.call_tool("zzz", {}).result == "unknown tool 'zzz' (4 known)"


def test_a_provider_exception_becomes_an_error_envelope(tmp_path: Path) -> None:
    servers = Servers({"weather": ["explode"], "files": []})
    registry = RuntimeRegistry.from_sources(infra=[write(tmp_path, "i.yaml", INFRA)], mcp_factory=servers)
    assert (
        registry.call_tool("explode", {}).result == "tool 'explode' (weather) failed: ConnectionError: server went away"
    )


def test_a_name_a_skill_and_a_server_share_is_refused_naming_both_and_qualified_names_route(tmp_path: Path) -> None:
    infra = write(tmp_path, "i.yaml", INFRA)
    tools = write(tmp_path, "tools/forecast.yaml", TOOL.format(name="forecast"))
    servers = Servers({"weather": ["forecast", "alerts"], "files": ["forecast"]})  # files has prefix fs
    with RuntimeRegistry.from_sources(infra=[infra], tools=[tools], mcp_factory=servers) as registry:
        assert [e["name"] for e in registry.list_tools()] == [
            "skills.forecast", "weather.forecast", "alerts", "fs.forecast",
        ]  # fmt: skip
        refused = registry.call_tool("forecast", {})
        assert refused.text == (
            f"tool 'forecast' is ambiguous: it is provided by 'skills' ({tools}:3: metadata.name) and "
            f"'weather' ({infra}:4: spec.servers[0]); call 'skills.forecast' or 'weather.forecast'"
        )
        assert refused.error_kind == "unknown_tool"
        assert registry.call_tool("weather.forecast", {"day": 1}).result == "weather:forecast"
        assert registry.call_tool("files.forecast", {}).result == "files:forecast"  # qualified, unlisted
        assert registry.call_tool("weather.alerts", {}).result == "weather:alerts"  # qualified, unshared
        assert servers.built["weather"].calls[0][:2] == ("forecast", {"day": 1})
    assert servers.built["weather"].closed and servers.built["files"].closed


def test_a_name_local_classes_and_skills_share_is_ambiguous_too(tmp_path: Path) -> None:
    tools = write(tmp_path, "echo.yaml", TOOL.format(name="echo"))
    registry = RuntimeRegistry.from_sources(tools=[tools], local=[Echo])
    assert registry.call_tool("echo", {"text": "x"}).text == (
        f"tool 'echo' is ambiguous: it is provided by 'local' ({__name__}:Echo) and 'skills' ({tools}:3: "
        "metadata.name); call 'local.echo' or 'skills.echo'"
    )
    assert registry.call_tool("local.echo", {"text": "x"}).result == "x"


def test_a_prefix_that_is_another_servers_name_stops_the_start(tmp_path: Path) -> None:
    infra = write(tmp_path, "i.yaml", INFRA.replace("prefix: fs", "prefix: weather"))
    servers = Servers({"weather": ["x"], "files": ["x"]})
    with pytest.raises(ConfigError) as info:  # "weather.x" would be addressed to both servers
        RuntimeRegistry.from_sources(infra=[infra], tools=[write(tmp_path, "t/x.yaml", TOOL.format(name="x"))],
                                     mcp_factory=servers)  # fmt: skip
    assert str(info.value) == (
        f"{infra}:11: spec.servers[1]: server names and prefixes clash: 'weather' (of 'weather') is 'weather' "
        "(of 'files'): a name like 'weather.tool' would be addressed to both; rename a server or change a prefix"
    )
    assert servers.built["weather"].closed and servers.built["files"].closed


def test_namespace_is_read_as_the_prefix_and_both_at_once_is_one_line(tmp_path: Path) -> None:
    """``namespace`` is ``prefix``'s older name: infra files and callers that spell it keep working."""
    old = write(tmp_path, "old.yaml", INFRA.replace("prefix: fs", "namespace: fs"))
    [_, files] = load_infra(old)
    assert files.prefix == files.namespace == "fs"
    servers = Servers({"weather": ["forecast"], "files": ["read"]})
    with RuntimeRegistry.from_sources(infra=[old], mcp_factory=servers) as registry:
        assert registry.call_tool("fs.read", {"path": "a"}).result == "files:read"
    with RuntimeRegistry({"files": servers.built["files"]}, namespaces={"files": "fs"}) as registry:
        assert [e["name"] for e in registry.list_tools()] == ["fs.read"]
    both = write(tmp_path, "both.yaml", INFRA.replace("prefix: fs", "prefix: fs\n      namespace: fs"))
    with pytest.raises(ConfigError) as info:
        load_infra(both)
    assert str(info.value) == (
        f"{both}:18: spec.servers[1].namespace: give the prefix once: 'prefix' (or its older name 'namespace')"
    )


def test_duplicate_local_classes_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        LocalToolRegistry([Echo, OtherEcho])
    assert (
        str(info.value)
        == f"{__name__}:OtherEcho: duplicate local tool name 'echo': {__name__}:Echo and {__name__}:OtherEcho"
    )


def test_unreachable_server_stops_the_start_and_closes_what_was_opened(tmp_path: Path) -> None:
    infra = write(tmp_path, "i.yaml", INFRA)
    servers = Servers({"weather": ["forecast"], "files": []}, fail={"files": "connection refused"})
    with pytest.raises(ConfigError) as info:
        RuntimeRegistry.from_sources(infra=[infra], local=[Echo], mcp_factory=servers)
    assert str(info.value) == (
        f"{infra}:11: spec.servers[1]: provider 'files' cannot list its tools: RuntimeError: connection refused"
    )
    assert servers.built["weather"].closed is True
    assert servers.built["files"].closed is True


def test_bad_files_refuse_to_start_before_any_server_is_opened(tmp_path: Path) -> None:
    infra = write(tmp_path, "i.yaml", INFRA)
    bad = write(tmp_path, "tools/bad.yaml", TOOL.format(name="x") + "  colour: red\n")
    servers = Servers({"weather": [], "files": []})
    with pytest.raises(ConfigError) as info:
        RuntimeRegistry.from_sources(infra=[infra], tools=[tmp_path / "tools"], mcp_factory=servers)
    assert str(info.value).startswith(f"{bad}:8: spec.colour: unknown key")
    assert servers.built == {}


def test_bad_handler_refuses_to_start(tmp_path: Path) -> None:
    tools = write(tmp_path, "t.yaml", TOOL.format(name="x").replace("summarize_text", "no_such_function"))
    with pytest.raises(ConfigError) as info:
        RuntimeRegistry.from_sources(tools=[tools], local=[Echo])
    assert str(info.value) == (
        f"{tools}:7: spec.handler: cannot load handler: AttributeError: "
        "module 'mas.samples.skills' has no attribute 'no_such_function'"
    )


def test_bad_local_class_refuses_to_start() -> None:
    with pytest.raises(ConfigError) as info:
        RuntimeRegistry.from_sources(local=["mas.samples.local_tools:Missing"])
    assert str(info.value) == (
        "mas.samples.local_tools:Missing: cannot import local tool: "
        "AttributeError: module 'mas.samples.local_tools' has no attribute 'Missing'"
    )
    refused = "^mas.samples.skills:web_search: not a ToolContract or LocalServer subclass$"
    with pytest.raises(ConfigError, match=refused):
        RuntimeRegistry.from_sources(local=["mas.samples.skills:web_search"])


def test_reserved_server_name(tmp_path: Path) -> None:
    infra = write(tmp_path, "i.yaml", INFRA.replace("- name: files", "- name: local"))
    with pytest.raises(ConfigError, match=r"i.yaml:11: spec.servers\[1\]: server name 'local' is reserved$"):
        RuntimeRegistry.from_sources(infra=[infra], mcp_factory=Servers({"weather": [], "local": []}))


def test_duplicate_server_names_across_infra_files(tmp_path: Path) -> None:
    first = write(tmp_path, "a.yaml", INFRA)
    second = write(tmp_path, "b.yaml", INFRA.replace("- name: files", "- name: other"))
    with pytest.raises(ConfigError) as info:
        RuntimeRegistry.from_sources(infra=[first, second], mcp_factory=Servers({}))
    assert str(info.value) == (
        f"{second}:4: spec.servers[0]: duplicate server name 'weather' (also at {first}:4: spec.servers[0])"
    )


def test_registry_results_are_envelopes() -> None:
    registry = RuntimeRegistry({"local": LocalToolRegistry([WordCount])})
    envelope = registry.call_tool("word_count", {"text": "one two"})
    assert isinstance(envelope, ToolResultEnvelope)
    assert envelope.structured_content == {"words": 2, "lines": 1, "characters": 7}
    assert registry.call_tool("word_count", {}).result == (
        "invalid arguments for tool 'word_count': /: missing required argument 'text'"
    )


# --- the real sample server over stdio -------------------------------------------------------
def test_sample_mcp_server_over_stdio_with_skills(tmp_path: Path, repo_root: Path) -> None:
    pytest.importorskip("mas.runtime.mcp.provider")
    from mas.samples.mcp_server import get_weather

    # cwd = the repo root so `python -m mas.samples.mcp_server` imports this checkout's package.
    infra = write(
        tmp_path,
        "stdio.yaml",
        f"""\
        kind: ToolServerRegistry
        spec:
          servers:
            - name: sample
              protocol: mcp
              transport: stdio
              command: python
              args: {json.dumps([*python_args("-m", "mas.samples.mcp_server", pythonpath=None), "--page-size", "2"])}
              cwd: {repo_root}
              namespace: sample
        """,
    )
    with RuntimeRegistry.from_sources(infra=[infra], tools=[repo_root / "library-samples" / "tools"]) as registry:
        names = [entry["name"] for entry in registry.list_tools()]
        assert names[:4] == ["current_time", "unit_convert", "web_search", "summarize_text"]
        assert {"sample.get_weather", "sample.search-docs", "sample.notes.create", "sample.whoami"} <= set(names)
        assert registry.owner_of("sample.get_weather") == "sample"
        envelope = registry.call_tool("sample.get_weather", {"city": "Paris"})
        assert envelope.is_error is False
        assert envelope.structured_content == get_weather("Paris")
        assert registry.call_tool("sample.get_wether", {}).result == (
            "unknown tool 'sample.get_wether'; did you mean 'sample.get_weather' or 'sample.greet' or "
            "'sample.list_cities'?"
        )
        assert registry.call_tool("web_search", {"query": "units"}).is_error is False


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("parameters: {{type: object}}", "parameters: {{type: object", "7: YAML syntax error: "),
        ("kind: Tool", "kind: Agent", "1: kind: must be 'Tool', got 'Agent'"),
        ("  name: {name}\n", "  labels: {{}}\n", "2: metadata.name: required key is missing"),
        ("{{type: object}}", "{{type: object, required: x}}", "6: spec.parameters.required: invalid JSON Schema: "),
        ("  handler:", "  hadler:", "7: spec.hadler: unknown key 'hadler' (did you mean 'handler'?)"),
    ],
)
def test_each_bad_tool_file_stops_the_registry(tmp_path: Path, old: str, new: str, expected: str) -> None:
    assert old in TOOL
    write(tmp_path, "tools/a_good.yaml", TOOL.format(name="good"))
    bad = write(tmp_path, "tools/b_bad.yaml", TOOL.replace(old, new).format(name="bad"))
    servers = Servers({"weather": ["forecast"], "files": []})
    with pytest.raises(ConfigError) as info:
        RuntimeRegistry.from_sources(
            infra=[write(tmp_path, "i.yaml", INFRA)], tools=[tmp_path / "tools"], local=[Echo], mcp_factory=servers
        )
    assert str(info.value).startswith(f"{bad}:{expected}")
    assert servers.built == {}  # no server was started, so none is left half-started
