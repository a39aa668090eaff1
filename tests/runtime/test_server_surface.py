"""The ServerContract against real servers: resources, templates, prompts and completions.

The sample server with ``--with-resources`` (stdio and streamable HTTP), the npm reference
"everything" server, and FastMCP on the mcp 1.x SDK in its own venv: each is listed, read, its
templates filled, its prompts got and its arguments completed, through the provider and through
the registry; failures come back as envelopes of one kind; pinning refuses a changed prompt.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import REPO, free_port, http_config, http_sample_server, stdio_config
from npm_cache import Reference, reference_or_skip
from prefork import python_args, python_command
from tiers import tiered

from mas.runtime.config import ConfigError
from mas.runtime.contracts.server_contract import ServerProvider
from mas.runtime.contracts.uri_template import TemplateError, expand, matches, parse
from mas.runtime.lockfile import tool_hash
from mas.runtime.mcp.provider import MCPToolProvider
from mas.runtime.pinning import PinGuard
from mas.runtime.registry import RuntimeRegistry

OLD_RESOURCES_SERVER = Path(__file__).resolve().parents[1] / "servers" / "old_sdk_resources_server.py"
WEATHER = "sample://weather/{city}{?units}"


def _contents(envelope: Any) -> list[dict[str, Any]]:
    assert not envelope.is_error, envelope.result
    contents: list[dict[str, Any]] = envelope.result["contents"]
    return contents


# --- the sample server, stdio --------------------------------------------------------------------


def test_the_sample_servers_resources_templates_and_prompts_are_listed_read_and_got() -> None:
    with MCPToolProvider(stdio_config("sample", "--with-resources")) as provider:
        assert isinstance(provider, ServerProvider)
        # Two pages of resources, followed; the ui:// panel (MCP Apps) is left out.
        assert [r["uri"] for r in provider.list_resources()] == [
            "sample://guide",
            "sample://cities.json",
            "sample://logo.png",
        ]
        assert [t["uriTemplate"] for t in provider.list_resource_templates()] == [WEATHER]
        [prompt] = provider.list_prompts()
        assert prompt["name"] == "review_city"
        assert [(a["name"], a.get("required")) for a in prompt["arguments"]] == [("city", True), ("style", False)]

        guide = _contents(provider.read_resource("sample://guide"))
        assert guide[0]["mimeType"] == "text/markdown" and guide[0]["text"].startswith("# The sample server")
        cities = json.loads(_contents(provider.read_resource("sample://cities.json"))[0]["text"])
        assert cities["total"] == len(cities["cities"]) > 0
        logo = _contents(provider.read_resource("sample://logo.png"))[0]
        assert base64.b64decode(logo["blob"]).startswith(b"\x89PNG")
        # A template filled by the one RFC 6570 rule, then read.
        uri = expand(WEATHER, {"city": "São Paulo", "units": "fahrenheit"})
        assert uri == "sample://weather/S%C3%A3o%20Paulo?units=fahrenheit"
        weather = json.loads(_contents(provider.read_resource(uri))[0]["text"])
        assert weather["city"] == "São Paulo"

        got = provider.get_prompt("review_city", {"city": "Lyon", "style": "detailed"})
        assert not got.is_error
        messages = got.result["messages"]
        assert messages[0] == {
            "role": "user",
            "content": {"type": "text", "text": "Write a detailed review of the weather in Lyon."},
        }
        assert messages[1]["content"]["type"] == "resource"

        done = provider.complete({"type": "ref/prompt", "name": "review_city"}, "style", "de")
        assert done.result["completion"]["values"] == ["detailed"]
        done = provider.complete({"type": "ref/resource", "uri": WEATHER}, "city", "pa")
        assert done.result["completion"]["values"] == ["Paris"]


def test_failures_are_envelopes_of_one_kind_and_never_raise() -> None:
    with MCPToolProvider(stdio_config("sample", "--with-resources")) as provider:
        missing = provider.read_resource("sample://nope")
        assert (missing.is_error, missing.error_kind) == (True, "unknown_tool")
        assert "Resource not found" in missing.text and missing.text.startswith("MCP server 'sample': resources/read")
        assert provider.get_prompt("review_city", {}).error_kind == "invalid_arguments"
        assert provider.get_prompt("no_such_prompt", {"city": "x"}).error_kind == "unknown_tool"
        not_text = provider.get_prompt("review_city", {"city": 5})  # type: ignore[dict-item]
        assert not_text.error_kind == "invalid_arguments" and "not sent" in not_text.text
        assert provider.complete({"type": "ref/tool"}, "a", "b").error_kind == "invalid_arguments"
        slow = provider.read_resource("sample://guide", timeout_seconds=1e-9)
        assert slow.error_kind == "timeout" and "timed out after" in slow.text
        assert not provider.read_resource("sample://guide").is_error  # the session survived it
    closed = provider.read_resource("sample://guide")
    assert closed.error_kind == "unavailable" and "closed" in closed.text


def test_app_only_resources_are_listed_when_configured_and_max_pages_bounds_the_listing() -> None:
    with MCPToolProvider(stdio_config("sample", "--with-resources", app_only_tools="keep")) as provider:
        assert "ui://sample/panel" in [r["uri"] for r in provider.list_resources()]
    with MCPToolProvider(stdio_config("sample", "--with-resources", max_pages=1)) as provider:
        with pytest.raises(Exception, match=r"resources/list returned more than max_pages=1 pages"):
            provider.list_resources()


def test_a_server_without_resources_lists_none_without_asking() -> None:
    with MCPToolProvider(stdio_config("sample")) as provider:
        assert (provider.list_resources(), provider.list_resource_templates(), provider.list_prompts()) == ([], [], [])


def test_a_server_that_fails_resources_list_still_lists_its_tools_with_one_warning_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    config = stdio_config("sample", "--with-resources", "--fail-resources")
    with RuntimeRegistry({"sample": MCPToolProvider(config)}) as registry:
        assert "get_weather" in [t["name"] for t in registry.list_tools()]
        assert registry.list_resources() == []
        assert registry.list_resources() == []  # asked again, not said again
        assert [p["name"] for p in registry.list_prompts()] == ["review_city"]  # the rest still works
    lines = [r.getMessage() for r in caplog.records if "resources" in r.getMessage()]
    assert lines == [
        "MCP server 'sample': resources/list failed: MCPError: the resource index is unavailable; "
        "its resources are left out (its tools are not affected)"
    ]


def test_the_listing_cache_serves_a_second_listing_without_a_request() -> None:
    config = stdio_config("sample", "--with-resources", cache_ttl_ms=60_000, cache_hints="ignore")
    with MCPToolProvider(config) as provider:
        first = provider.list_resources()
        first[0]["uri"] = "changed by the caller"
        provider._keeper.closed = True  # noqa: SLF001  a request now would fail: only the cache can answer
        try:
            assert provider._runner.run(provider._surface.listing("resources"))[0]["uri"] == "sample://guide"  # noqa: SLF001
        finally:
            provider._keeper.closed = False  # noqa: SLF001


# --- the registry: routing, names, the CLI ---------------------------------------------------------


def test_the_registry_routes_reads_prompts_and_completions_to_the_owning_server() -> None:
    providers = {
        "sample": MCPToolProvider(stdio_config("sample", "--with-resources")),
        "plain": MCPToolProvider(stdio_config("plain")),
        "other": MCPToolProvider(stdio_config("other", "--with-resources")),
    }
    with RuntimeRegistry(providers, prefixes={"other": "o"}) as registry:
        assert registry.surface_providers() == ["sample", "plain", "other"]
        assert {(r["server"], r["uri"]) for r in registry.list_resources()} >= {
            ("sample", "sample://guide"),
            ("other", "sample://guide"),
        }
        assert [(p["server"], p["name"]) for p in registry.list_prompts()] == [
            ("sample", "review_city"),
            ("other", "o.review_city"),
        ]
        shared = registry.read_resource("sample://guide")
        assert shared.error_kind == "unknown_tool" and shared.metadata["candidates"] == ["sample", "other"]
        assert not registry.read_resource("sample://guide", server="other").is_error
        assert registry.read_resource("sample://guide", server="nobody").error_kind == "unknown_tool"
        assert registry.read_resource("file:///etc/passwd").error_kind == "unknown_tool"
        assert not registry.get_prompt("o.review_city", {"city": "Nice"}).is_error
        assert not registry.get_prompt("other.review_city", {"city": "Nice"}).is_error  # qualified works too
        typo = registry.get_prompt("review_cty", {"city": "Nice"})
        assert typo.error_kind == "unknown_tool" and "did you mean 'review_city'" in typo.text
        completed = registry.complete({"type": "ref/prompt", "name": "o.review_city"}, "city", "ly")
        assert completed.result["completion"]["values"] == ["Lyon"]
        ambiguous = registry.complete({"type": "ref/resource", "uri": WEATHER}, "city", "ly")
        assert ambiguous.error_kind == "unknown_tool"
        assert not registry.complete({"type": "ref/resource", "uri": WEATHER}, "city", "ly", server="sample").is_error


def test_the_async_twins_route_the_same_way() -> None:
    async def run() -> None:
        provider = MCPToolProvider(stdio_config("sample", "--with-resources"))
        async with RuntimeRegistry({"sample": provider}) as registry:
            assert _contents(await registry.aread_resource("sample://guide"))[0]["uri"] == "sample://guide"
            got = await registry.aget_prompt("review_city", {"city": "Lyon"})
            assert got.result["description"] == "Review of Lyon"
            done = await registry.acomplete({"type": "ref/prompt", "name": "review_city"}, "style", "b")
            assert done.result["completion"]["values"] == ["brief"]
            assert [t["name"] for t in await provider.alist_resource_templates()] == ["weather"]
            assert [p["name"] for p in await provider.alist_prompts()] == ["review_city"]
            assert len(await provider.alist_resources()) == 3

    asyncio.run(run())


def test_mas_runtime_list_shows_resources_templates_and_prompts(tmp_path: Path) -> None:
    args = list(python_args("-m", "mas.samples.mcp_server", "--with-resources"))
    server = {"name": "sample", "protocol": "mcp", "transport": "stdio", "command": "python", "args": args,
              "env": {"PYTHONPATH": str(REPO)}}  # fmt: skip
    (tmp_path / "infra.yaml").write_text(json.dumps({"kind": "ToolServerRegistry", "spec": {"servers": [server]}}))
    command = python_command(
        "-m", "mas.runtime", "list", "--infra", "infra.yaml", "-q", pythonpath=os.environ.get("PYTHONPATH")
    )
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stderr) == (0, "")
    after_tools = done.stdout.split("\n\n", 1)[1]
    assert after_tools.splitlines() == [
        "RESOURCE              PROVIDER  MIME TYPE         NAME",
        "sample://guide        sample    text/markdown     Guide",
        "sample://cities.json  sample    application/json  cities",
        "sample://logo.png     sample    image/png         logo",
        "",
        "TEMPLATE                         PROVIDER  MIME TYPE         NAME",
        "sample://weather/{city}{?units}  sample    application/json  weather",
        "",
        "PROMPT       PROVIDER  TITLE          ARGUMENTS (? optional)",
        "review_city  sample    Review a city  city, style?",
    ]


# --- the sample server over HTTP: secrets stay out of answers --------------------------------------


def test_over_http_a_secret_the_server_echoes_is_blanked(monkeypatch: pytest.MonkeyPatch) -> None:
    token = "s3cret-token-for-surface"
    monkeypatch.setenv("SURFACE_TOKEN", token)
    port = free_port()
    with http_sample_server(port, token, "--with-resources"):
        config = http_config(
            "web", f"http://127.0.0.1:{port}/mcp", headers={"Authorization": "Bearer env:SURFACE_TOKEN"}
        )
        with MCPToolProvider(config) as provider:
            assert [t["name"] for t in provider.list_resource_templates()] == ["weather"]
            got = provider.get_prompt("review_city", {"city": token})
            assert not got.is_error
            assert token not in json.dumps(got.to_dict()) and "***" in got.result["messages"][0]["content"]["text"]
            read = provider.read_resource(expand(WEATHER, {"city": token}))
            assert token not in json.dumps(read.to_dict())
            assert provider.read_resource("sample://nope").error_kind == "unknown_tool"


# --- pinning: a changed prompt is refused ----------------------------------------------------------


def _lock(tmp_path: Path, tools: list[dict[str, Any]], prompts: list[dict[str, Any]]) -> Path:
    entry = {"tools": tools, "hashes": {t["name"]: tool_hash(t) for t in tools}, "prompts": prompts}
    path = tmp_path / "toolgen.lock.json"
    path.write_text(json.dumps({"toolgen_snapshot": 3, "servers": {"sample": entry}}), encoding="utf-8")
    return path


def test_pinning_refuses_a_changed_prompt_before_anything_is_sent(tmp_path: Path) -> None:
    with MCPToolProvider(stdio_config("sample", "--with-resources")) as live:
        tools, prompts = live.list_mcp_tools(), live.list_prompts()
    changed = [{**prompts[0], "arguments": [{"name": "city", "required": True}]}]  # the lock had one argument
    for locked, refused in ((prompts, False), (changed, True)):
        config = stdio_config("sample", "--with-resources", pin="refuse", lock=str(_lock(tmp_path, tools, locked)))
        pins = PinGuard.from_configs([config])
        with RuntimeRegistry({"sample": MCPToolProvider(config)}, pins=pins) as registry:
            got = registry.get_prompt("review_city", {"city": "Lyon"})
            assert got.is_error is refused, got.result
            if refused:
                assert got.error_kind == "unavailable"
                assert got.metadata == {
                    "error_kind": "unavailable", "reason": "pinned", "prompt": "review_city", "server": "sample",
                    "pointer": "/arguments", "lock": "toolgen.lock.json",
                }  # fmt: skip
                assert not registry.call_tool("get_weather", {"city": "Lyon"}).is_error  # tools are not affected


def test_pin_warn_gets_a_changed_prompt_after_one_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="mas.runtime.pinning")
    with MCPToolProvider(stdio_config("sample", "--with-resources")) as live:
        tools = live.list_mcp_tools()
    config = stdio_config("sample", "--with-resources", pin="warn", lock=str(_lock(tmp_path, tools, [])))
    with RuntimeRegistry({"sample": MCPToolProvider(config)}, pins=PinGuard.from_configs([config])) as registry:
        for _ in range(2):
            assert not registry.get_prompt("review_city", {"city": "Lyon"}).is_error
    assert [r.getMessage() for r in caplog.records] == [
        "prompt 'review_city' (server 'sample'): it is not in the lock toolgen.lock.json; getting it anyway (pin: warn)"
    ]


def test_a_lock_without_the_server_is_still_a_configuration_error(tmp_path: Path) -> None:
    (tmp_path / "toolgen.lock.json").write_text('{"toolgen_snapshot": 3, "servers": {}}')
    config = stdio_config("sample", pin="refuse", lock=str(tmp_path / "toolgen.lock.json"))
    with pytest.raises(ConfigError, match="has no listing for server 'sample'"):
        PinGuard.from_configs([config])


# --- RFC 6570 --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "values", "expected"),
    [
        ("file:///{path}", {"path": "a b/c"}, "file:///a%20b%2Fc"),
        ("file:///{+path}", {"path": "a b/c"}, "file:///a%20b/c"),
        ("x{#frag}", {"frag": "a/b c"}, "x#a/b%20c"),
        ("x{.ext}", {"ext": "json"}, "x.json"),
        ("x{/a,b}", {"a": "1", "b": "2"}, "x/1/2"),
        ("x{;a,b}", {"a": "1", "b": ""}, "x;a=1;b"),
        ("x{?a,b}", {"a": "1", "b": None}, "x?a=1"),
        ("x?z=1{&a}", {"a": "é"}, "x?z=1&a=%C3%A9"),
        ("x/{name:3}", {"name": "abcdef"}, "x/abc"),
        ("x/{name*}", {"name": "abc"}, "x/abc"),
        ("x/{a}{?b}", {}, "x/"),
    ],
)
def test_uri_templates_expand_by_rfc_6570(template: str, values: dict[str, str | None], expected: str) -> None:
    assert expand(template, values) == expected


def test_uri_templates_that_do_not_parse_say_where_and_matching_needs_the_literals() -> None:
    for bad, words in (("x{a", "never closed"), ("x}a", "without"), ("x{a b}", "bad variable"), ("x{=a}", "reserved")):
        with pytest.raises(TemplateError, match=words):
            parse(bad)
    assert parse("a{b}{?c,d}").variables == ("b", "c", "d")
    assert matches(WEATHER, "sample://weather/Paris?units=celsius")
    assert not matches(WEATHER, "other://weather/Paris")


# --- the reference "everything" server (TypeScript SDK) ---------------------------------------------


@pytest.fixture(scope="module")
def everything_server() -> Reference:
    return reference_or_skip()


@pytest.mark.timeout(600)  # a cold cache installs the server from npm first
def test_the_everything_server_lists_reads_fills_gets_and_completes(everything_server: Reference) -> None:
    server = everything_server
    config = stdio_config("everything", "stdio", script=server.everything, command=str(server.node), env={})
    with MCPToolProvider(config) as provider:
        resources = provider.list_resources()
        assert len(resources) >= 5 and all("uri" in r for r in resources)
        templates = {t["name"]: t["uriTemplate"] for t in provider.list_resource_templates()}
        text_template = templates["Dynamic Text Resource"]
        read = _contents(provider.read_resource(expand(text_template, {"resourceId": "1"})))
        assert read[0]["uri"] == "demo://resource/dynamic/text/1" and "text" in read[0]
        blob = _contents(provider.read_resource(expand(templates["Dynamic Blob Resource"], {"resourceId": "2"})))
        assert base64.b64decode(blob[0]["blob"])
        assert not provider.read_resource(resources[0]["uri"]).is_error
        prompts = {p["name"]: p for p in provider.list_prompts()}
        got = provider.get_prompt("args-prompt", {"city": "Paris"})
        assert "Paris" in json.dumps(got.result["messages"])
        assert provider.get_prompt("args-prompt", {}).error_kind == "invalid_arguments"
        assert "completable-prompt" in prompts
        done = provider.complete({"type": "ref/prompt", "name": "completable-prompt"}, "department", "")
        assert done.result["completion"]["values"], done.result


# --- mcp 1.x FastMCP in its own venv --------------------------------------------------------------


@pytest.mark.timeout(600)  # a cold cache builds the old SDK's venv first
@pytest.mark.parametrize("version", tiered(["1.6.0", "1.30.0"], ["1.30.0"]))  # one old-SDK venv in the fast tier
def test_an_old_sdk_server_lists_reads_fills_and_gets(version: str) -> None:
    from old_sdk import old_sdk_python

    python = str(old_sdk_python(version))
    config = stdio_config(
        "old", script=OLD_RESOURCES_SERVER, connect_mode="legacy", command=python, env={}, exit_grace_seconds=0.2
    )
    with MCPToolProvider(config) as provider:
        assert [r["uri"] for r in provider.list_resources()] == ["docs://readme"]
        [template] = provider.list_resource_templates()
        assert parse(template["uriTemplate"]).variables == ("name",)
        assert _contents(provider.read_resource("docs://readme"))[0]["text"] == "old but fine"
        filled = _contents(provider.read_resource(expand(template["uriTemplate"], {"name": "Ann"})))
        assert filled[0]["text"] == "Hello, Ann!"
        got = provider.get_prompt("summarize", {"text": "hi"})
        assert got.result["messages"] == [{"role": "user", "content": {"type": "text", "text": "Summarize this: hi"}}]
        assert provider.get_prompt("summarize", {}).is_error
        # FastMCP 1.x serves no completions: the server says so, as a protocol failure.
        assert provider.complete({"type": "ref/prompt", "name": "summarize"}, "text", "h").is_error
