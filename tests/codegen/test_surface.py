"""Resources, templates and prompts in the lock and the generated package (codegen/surface.py).

Generated from the sample server with ``--with-resources`` (a real process): the lock records
them in canonical form, ``--offline`` makes the same package from the lock, the package reads,
fills, gets and completes through the registry (sync and async), passes ``mypy --strict`` and
strict pyright, and both checkers report a wrong template variable, a missing prompt argument,
a misspelt resource method and a value outside a closed completion set (typing snapshots). A
server that fails ``resources/list`` still gets its tools, with one warning line.
"""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import forked_python, generate, import_fresh

from codegen.model import SourceTools
from codegen.surface import build_surface, contents_class
from mas.runtime.registry import RuntimeRegistry

REPO = Path(__file__).resolve().parents[2]


def _infra(folder: Path, *flags: str) -> Path:
    run = forked_python("-m", "mas.samples.mcp_server", *flags)
    server = {"name": "sample", "protocol": "mcp", "transport": "stdio", **run, "connect_timeout_seconds": 30}
    path = folder / "infra.yaml"
    path.write_text(json.dumps({"kind": "ToolServerRegistry", "spec": {"servers": [server]}}), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("surface")
    infra = _infra(folder, "--with-resources")
    args = ["--infra", str(infra), "--out", "out", "--package", "st", "--lock", "toolgen.lock.json", "-q"]
    assert generate(folder, args) == 0
    return folder


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_lock_records_resources_templates_and_prompts_sorted(generated: Path) -> None:
    entry = json.loads((generated / "toolgen.lock.json").read_text())["servers"]["sample"]
    assert [r["uri"] for r in entry["resources"]] == ["sample://cities.json", "sample://guide", "sample://logo.png"]
    assert [t["uriTemplate"] for t in entry["resource_templates"]] == ["sample://weather/{city}{?units}"]
    assert [p["name"] for p in entry["prompts"]] == ["review_city"]
    assert "ui://sample/panel" not in json.dumps(entry)  # MCP Apps' resources stay out


def test_offline_generation_from_the_lock_is_byte_identical(generated: Path) -> None:
    before = _files(generated / "out")
    args = ["--infra", str(generated / "infra.yaml"), "--out", "out", "--package", "st"]
    assert generate(generated, [*args, "--lock", "toolgen.lock.json", "--offline", "--check", "-q"]) == 0
    assert _files(generated / "out") == before
    assert {"st/surface.py", "st/_surface_runtime.py", "st/_uri_template.py"} <= set(before)
    assert (
        (generated / "out" / "st" / "_uri_template.py")
        .read_text()
        .endswith((REPO / "mas" / "runtime" / "contracts" / "uri_template.py").read_text())
    )


def test_the_package_reads_fills_gets_and_completes_typed(generated: Path) -> None:
    package = import_fresh(generated / "out", "st")
    surface = import_fresh(generated / "out", "st.surface")
    with RuntimeRegistry.from_sources(infra=[generated / "infra.yaml"]) as registry:
        tools = package.Tools(registry)
        guide = tools.sample.resources.guide()
        assert isinstance(guide, surface.TextContents) and guide.text.startswith("# The sample server")
        weather = tools.sample.resources.weather(city="Paris", units="fahrenheit")
        assert isinstance(weather, surface.JsonContents) and weather.value["city"] == "Paris"
        assert weather[0].uri == "sample://weather/Paris?units=fahrenheit"
        assert tools.sample.resources.weather(city="Nice")[0].uri == "sample://weather/Nice"  # None: left out
        logo = tools.sample.resources.logo()
        assert isinstance(logo, surface.BlobContents) and logo.data.startswith(b"\x89PNG")
        assert tools.sample.resources.cities().value["total"] > 0
        review = tools.sample.prompts.review_city(city="Lyon", style="detailed")
        assert review.description == "Review of Lyon"
        assert review.messages[0].role == "user" and review.messages[0].text == (
            "Write a detailed review of the weather in Lyon."
        )
        assert review.messages[1].type == "resource" and '"city": "Lyon"' in (review.messages[1].text or "")
        # An optional argument left out is not sent (the server's default applies).
        assert (
            tools.sample.prompts.review_city(city="Nice").messages[0].text
            == "Write a brief review of the weather in Nice."
        )
        assert tools.sample.prompts.complete("review_city", "style", "b") == ["brief"]
        assert tools.sample.resources.complete("sample://weather/{city}{?units}", "city", "pa") == ["Paris"]
        assert tools.sample.get_weather(city="Paris").city == "Paris"  # the tools are unchanged
        with pytest.raises(package.ToolTimeoutError):
            tools.with_options(timeout_seconds=1e-9).sample.resources.guide()

        async def awaited() -> tuple[str, str | None]:
            atools = package.AsyncTools(registry)
            text = (await atools.sample.resources.guide()).text
            got = await atools.sample.prompts.review_city(city="Nice")
            return text, got.description

        assert asyncio.run(awaited()) == (guide.text, "Review of Nice")


def test_a_failed_read_raises_the_error_of_its_kind(generated: Path) -> None:
    package = import_fresh(generated / "out", "st")
    with RuntimeRegistry.from_sources(infra=[_infra(generated / "out", "--with-resources", "--fail-resources")]) as r:
        tools = package.Tools(r)
        with pytest.raises(package.ToolArgumentsError):
            tools.sample.resources.weather(city="")  # the server refuses an empty city
        with pytest.raises(package.ToolProtocolError, match="not JSON"):
            tools.sample.resources.guide().json()


# --- typing: mypy --strict and strict pyright, with snapshots of three mistakes ------------------

USER_SCRIPT = """\
from __future__ import annotations

from mas.runtime.registry import RuntimeRegistry
from st import Tools
from st.surface import BlobContents, JsonContents, PromptResult, TextContents


def use(registry: RuntimeRegistry) -> None:
    tools = Tools(registry)
    guide: TextContents = tools.sample.resources.guide()
    weather: JsonContents = tools.sample.resources.weather(city="Paris", units="celsius")
    logo: BlobContents = tools.sample.resources.logo()
    review: PromptResult = tools.sample.prompts.review_city(city="Lyon")
    styles: list[str] = tools.sample.prompts.complete("review_city", "style", "b")
    print(guide.text, weather.value, logo.data, review.messages, styles)
    tools.sample.resources.weather(town="Paris")  # a wrong template variable
    tools.sample.prompts.review_city(style="brief")  # a missing prompt argument
    tools.sample.resources.guid()  # a misspelt resource method
    tools.sample.prompts.review_city(city="Lyon", style="long")  # outside the closed completion set
"""
MYPY_SNAPSHOT = [
    (16, "call-arg", 'Unexpected keyword argument "town" for "weather" of "SampleResources"'),
    (17, "call-arg", 'Missing named argument "city" for "review_city" of "SamplePrompts"'),
    (18, "attr-defined", '"SampleResources" has no attribute "guid"'),
    (
        19,
        "arg-type",
        'Argument "style" to "review_city" of "SamplePrompts" has incompatible type "Literal[\'long\']"; '
        "expected \"Literal['brief', 'detailed'] | None\"",
    ),
]
PYRIGHT_SNAPSHOT = [  # sorted by line, then message
    (16, "reportCallIssue", 'Argument missing for parameter "city"'),
    (16, "reportCallIssue", 'No parameter named "town"'),
    (17, "reportCallIssue", 'Argument missing for parameter "city"'),
    (18, "reportAttributeAccessIssue", 'Cannot access attribute "guid" for class "SampleResources"'),
    (18, "reportUnknownMemberType", 'Type of "guid" is unknown'),
    (19, "reportArgumentType", 'Argument of type "Literal[\'long\']" cannot be assigned to parameter "style"'),
]


@pytest.mark.full  # the fast tier type-checks generated packages in test_typecheck.py
@pytest.mark.slow  # one mypy --strict and one pyright run over a whole package: tens of seconds
@pytest.mark.timeout(600)
def test_the_package_is_strictly_typed_and_mistakes_are_reported_by_both_checkers(generated: Path) -> None:
    work = generated / "out"
    (work / "use_surface.py").write_text(USER_SCRIPT, encoding="utf-8")
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "st", "use_surface.py"],
        cwd=work, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    found = []
    for line in mypy.stdout.splitlines():
        parts = line.split(":", 3)
        if len(parts) == 4 and parts[2].strip() == "error":
            code = parts[3].rsplit("[", 1)[-1].rstrip("]") if parts[3].endswith("]") else ""
            found.append((parts[0], int(parts[1]), code, parts[3]))
    assert [f for f in found if f[0] != "use_surface.py"] == [], mypy.stdout  # the package: no error
    got = [(line, code, message) for _, line, code, message in found]
    for (line, code, fragment), (g_line, g_code, g_message) in zip(MYPY_SNAPSHOT, got, strict=True):
        assert (line, code) == (g_line, g_code) and fragment in g_message, got

    (work / "pyrightconfig.json").write_text(
        json.dumps({"typeCheckingMode": "strict", "include": ["st", "use_surface.py"]})
    )
    pyright = subprocess.run(
        [str(Path(sys.executable).parent / "pyright"), "--outputjson"],
        cwd=work, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    report: dict[str, Any] = json.loads(pyright.stdout)
    diagnostics = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    assert [d for d in diagnostics if not d["file"].endswith("use_surface.py")] == []
    got_p = [(d["range"]["start"]["line"] + 1, d.get("rule", ""), d["message"]) for d in diagnostics]
    got_p.sort(key=lambda d: (d[0], d[2]))
    assert len(got_p) == len(PYRIGHT_SNAPSHOT), got_p
    for (line, rule, fragment), (g_line, g_rule, g_message) in zip(PYRIGHT_SNAPSHOT, got_p, strict=True):
        assert (line, rule) == (g_line, g_rule) and fragment in g_message, got_p


# --- a server that fails resources/list, and the build's own rules ----------------------------------


def test_a_server_that_fails_resources_list_still_generates_its_tools_with_one_warning_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    infra = _infra(tmp_path, "--with-resources", "--fail-resources")
    args = ["--infra", str(infra), "--out", "out", "--package", "ft", "--lock", "lock.json", "-q"]
    assert generate(tmp_path, args) == 0
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert lines == [
        "MCP server 'sample': resources/list failed: MCPError: the resource index is unavailable; "
        "its resources are left out of the lock and the package"
    ]
    entry = json.loads((tmp_path / "lock.json").read_text())["servers"]["sample"]
    assert "resources" not in entry and [p["name"] for p in entry["prompts"]] == ["review_city"]
    package = import_fresh(tmp_path / "out", "ft")
    assert hasattr(package.Tools, "__init__") and (tmp_path / "out" / "ft" / "surface.py").is_file()
    resources = import_fresh(tmp_path / "out", "ft.surface").SampleResources
    assert hasattr(resources, "weather") and not hasattr(resources, "guide")  # the templates listed fine


def test_contents_classes_follow_the_mime_type() -> None:
    assert [contents_class(m) for m in (None, "", "application/json", "application/vnd.x+json; charset=utf-8",
            "text/markdown", "application/xml", "image/svg+xml", "image/png", "application/octet-stream")] == [
        "ResourceContents", "ResourceContents", "JsonContents", "JsonContents", "TextContents", "TextContents",
        "TextContents", "BlobContents", "BlobContents",
    ]  # fmt: skip


def test_names_variables_and_a_template_that_does_not_parse() -> None:
    surface = {
        "resources": ({"uri": "x://b", "name": "complete"}, {"uri": "x://a", "name": "class"}),
        "resource_templates": (
            {"uriTemplate": "x://{+path}{?q,page}{#frag}", "name": "find"},
            {"uriTemplate": "x://{bad", "name": "broken"},
        ),
        "prompts": ({"name": "ask", "arguments": [{"name": "b"}, {"name": "a", "required": True}]},),
    }
    source = SourceTools("srv", "mcp-live", "MCP server 'srv'", (), surface=surface)
    found: list[Any] = []
    spec = build_surface(source, "srv", {("srv", "ask"): "ns.ask"}, found)
    assert spec is not None
    assert [m.method for m in spec.resources] == ["class_", "complete_", "find"]
    [find] = [m for m in spec.resources if m.template]
    assert [(p.py_name, p.required) for p in find.params] == [("path", True), ("q", False), ("page", False),
                                                                ("frag", False)]  # fmt: skip
    [ask] = spec.prompts
    assert ask.target_literal == '"ns.ask"' and [(p.py_name, p.required) for p in ask.params] == [
        ("a", True),
        ("b", False),
    ]
    assert [(d.tool, d.kind) for d in found] == [("x://{bad", "template")]
    assert "never closed" in found[0].what


def test_a_tool_named_resources_or_prompts_keeps_a_method_of_its_own() -> None:
    from codegen.build import build_package

    tools = tuple({"name": name, "inputSchema": {"type": "object"}} for name in ("resources", "prompts", "get"))
    surface = {"prompts": ({"name": "ask"},), "resources": ({"uri": "x://a", "name": "a"},)}
    with_surface = SourceTools("srv", "mcp-live", "MCP server 'srv'", tools, surface=surface)
    spec = build_package([with_surface], package="p", header="# h")
    [namespace] = spec.namespaces
    assert sorted(t.method for t in namespace.tools) == ["get", "prompts_", "resources_"]
    assert namespace.surface is not None and [m.method for m in namespace.surface.resources] == ["a"]
    plain = build_package([SourceTools("srv", "mcp-live", "MCP server 'srv'", tools)], package="p", header="# h")
    assert sorted(t.method for t in plain.namespaces[0].tools) == ["get", "prompts", "resources"]  # as before
