"""Code mode's resources, templates and prompts: the real sandbox (pydantic-monty, its checker),
a package generated from the sample server with ``--with-resources`` (a real process), and the
registry behind a recording provider, so what reached ``read_resource`` / ``get_prompt`` is a fact.

The snippet writes ``await sample.resources.guide()``, ``await sample.resources.weather(city=...)``
and ``await sample.prompts.review_city(city=...)``; the checker refuses a wrong template variable,
a missing prompt argument and a misspelt resource before anything is sent; a read counts as a call
against ``max_tool_calls``; a failed read is the snippet's ``RuntimeError`` of its kind; the host
functions are the manifest's closed table.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import forked_python, generate, import_fresh

from mas.runtime.code_mode import CodeMode
from mas.runtime.contracts.tool_contract import invoke_call_tool
from mas.runtime.registry import RuntimeRegistry

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]  # a server, a generation, a sandbox pool


class Recording:
    """The registry, with every tool call, read and prompt it receives kept."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent: list[tuple[str, str, dict[str, Any]]] = []

    def call_tool(self, tool_name: str, arguments: dict[str, Any], **kwargs: Any) -> Any:
        self.sent.append(("call_tool", tool_name, dict(arguments)))
        return invoke_call_tool(self.inner, tool_name, arguments, **kwargs)

    def read_resource(self, uri: str, **kwargs: Any) -> Any:
        self.sent.append(("read_resource", uri, {}))
        return self.inner.read_resource(uri, **kwargs)

    def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None, **kwargs: Any) -> Any:
        self.sent.append(("get_prompt", name, dict(arguments or {})))
        return self.inner.get_prompt(name, arguments, **kwargs)


def _infra(folder: Path, *flags: str) -> Path:
    run = forked_python("-m", "mas.samples.mcp_server", *flags)
    server = {"name": "sample", "protocol": "mcp", "transport": "stdio", **run, "connect_timeout_seconds": 30}
    path = folder / "infra.yaml"
    path.write_text(json.dumps({"kind": "ToolServerRegistry", "spec": {"servers": [server]}}), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("code_mode_surface")
    infra = _infra(folder, "--with-resources")
    args = ["--infra", str(infra), "--out", "out", "--package", "cms", "--lock", "lock.json", "-q"]
    assert generate(folder, args) == 0
    return folder


@pytest.fixture(scope="module")
def recorded(folder: Path) -> Iterator[tuple[CodeMode, Recording]]:
    package = import_fresh(folder / "out", "cms")
    with RuntimeRegistry.from_sources(infra=[folder / "infra.yaml"]) as registry:
        recording = Recording(registry)
        with CodeMode(recording, package=package) as mode:
            yield mode, recording


@pytest.fixture
def mode(recorded: tuple[CodeMode, Recording]) -> CodeMode:
    recorded[1].sent.clear()
    return recorded[0]


def _sent(mode: CodeMode) -> list[tuple[str, str, dict[str, Any]]]:
    recording = mode._provider
    assert isinstance(recording, Recording)
    return recording.sent


def test_discovery_shows_the_resources_and_prompts(mode: CodeMode) -> None:
    listing = mode.listing()
    assert "tools.sample: 9 function(s), 5 resource(s) and prompt(s)" in listing
    assert "  resources.guide: Guide\n" in listing and "  prompts.review_city: Review a city\n" in listing
    stub = mode.stubs(["resources.weather"])
    assert "class SampleResources:\n    async def weather(self, *, city: str, units: str | None = None) -> Any:" in stub
    assert stub.rstrip().endswith("resources: SampleResources")
    prompt = mode.stubs(["sample.prompts"])
    assert "class PromptResult(TypedDict):" in prompt and "prompts: SamplePrompts" in prompt
    assert "city: The city to review." in prompt  # the whole docstring
    found = mode.search("review a city", limit=1)
    assert (
        'async def review_city(self, *, city: str, style: Literal["brief", "detailed"] | None = None) -> PromptResult:'
        in found
    )
    api = mode.api()
    assert "`<module>.resources.<name>(...)` reads a resource" in api
    assert '    async def logo(self) -> bytes:\n        """logo"""' in api  # brief: the first line only


def test_the_checker_refuses_a_wrong_variable_a_missing_argument_a_misspelt_resource_a_wrong_literal(
    mode: CodeMode,
) -> None:
    code = (
        "from tools import sample\n"
        'await sample.resources.weather(town="Paris")\n'
        'await sample.prompts.review_city(style="brief")\n'
        "await sample.resources.guid()\n"
        'await sample.prompts.review_city(city="Lyon", style="long")\n'
    )
    found = [(d.line, d.code, d.message) for d in mode.check(code)]
    assert found == [
        (2, "missing-argument", "No argument provided for required parameter `city` of bound method "
                                "`SampleResources.weather`"),
        (2, "unknown-argument", "Argument `town` does not match any known parameter of bound method "
                                "`SampleResources.weather`"),
        (3, "missing-argument", "No argument provided for required parameter `city` of bound method "
                                "`SamplePrompts.review_city`"),
        (4, "unresolved-attribute", "Object of type `SampleResources` has no attribute `guid`"),
        (5, "invalid-argument-type", "Argument to bound method `SamplePrompts.review_city` is incorrect: Expected "
                                     "`Literal[\"brief\", \"detailed\"] | None`, found `Literal[\"long\"]`"),
    ]  # fmt: skip
    run = mode.run(code)
    assert run.error is not None and run.error.kind == "check" and _sent(mode) == []  # nothing was sent


READS = """\
import asyncio
from tools import sample

guide = await sample.resources.guide()
weather, logo = await asyncio.gather(
    sample.resources.weather(city="Paris", units="fahrenheit"), sample.resources.logo()
)
review = await sample.prompts.review_city(city="Lyon", style="detailed")
cities = await sample.resources.cities()
{
    "guide": guide.split("\\n")[0],
    "city": weather["city"],
    "png": logo[:4] == b"\\x89PNG",
    "review": [m["text"] for m in review["messages"]][0],
    "description": review["description"],
    "cities": cities["total"] > 0,
}
"""


def test_reads_and_prompts_go_out_through_read_resource_and_get_prompt(mode: CodeMode) -> None:
    run = mode.run(READS)
    assert run.error is None, run.error
    assert run.value == {
        "guide": "# The sample server",
        "city": "Paris",
        "png": True,
        "review": "Write a detailed review of the weather in Lyon.",
        "description": "Review of Lyon",
        "cities": True,
    }
    assert sorted(_sent(mode)) == [
        ("get_prompt", "review_city", {"city": "Lyon", "style": "detailed"}),
        ("read_resource", "sample://cities.json", {}),
        ("read_resource", "sample://guide", {}),
        ("read_resource", "sample://logo.png", {}),
        ("read_resource", "sample://weather/Paris?units=fahrenheit", {}),
    ]
    assert [(c.function, c.wire_name, c.arguments) for c in run.calls][:1] == [
        ("tools.sample.resources.guide", "sample://guide", {})
    ]
    planned = [(p.line, p.function, p.read_only, p.in_loop) for p in mode.plan(READS)]
    assert (4, "tools.sample.resources.guide", True, False) in planned
    assert (8, "tools.sample.prompts.review_city", True, False) in planned


def test_a_read_counts_as_a_call_and_the_limits_hold(mode: CodeMode) -> None:
    code = "from tools import sample\nawait sample.resources.guide()\nawait sample.prompts.review_city(city='Nice')\n"
    run = mode.run(code, max_tool_calls=1)
    assert run.error is not None and run.error.kind == "tool_calls", run.error
    assert "a resource read or a prompt counts as one" in run.error.message
    assert [s[:2] for s in _sent(mode)] == [("read_resource", "sample://guide")]  # the second was not sent
    big = mode.run("from tools import sample\nawait sample.resources.guide()\n", max_value_chars=10)
    assert big.error is not None and big.error.kind == "output"


def test_a_failed_read_is_the_snippets_runtime_error_of_its_kind(mode: CodeMode) -> None:
    code = (
        "from tools import sample\n"
        "try:\n"
        '    await sample.resources.weather(city="")\n'
        "    got = 'no error'\n"
        "except RuntimeError as exc:\n"
        "    got = str(exc)\n"
        "got\n"
    )
    run = mode.run(code)
    assert run.error is None and run.value.startswith("invalid_arguments: "), run
    assert run.calls[0].error == "invalid_arguments" and run.calls[0].wire_name == "sample://weather/"


def test_the_host_functions_are_the_manifests_closed_table(mode: CodeMode, folder: Path) -> None:
    import_fresh(folder / "out", "cms")
    manifest = importlib.import_module("cms.code_mode")
    sample = mode._run_modules()["tools"].attrs["sample"].attrs
    served = {f"{attr}.{name}" for attr in ("resources", "prompts") for name in sample[attr].attrs}
    assert served == set(manifest.SURFACE["sample"]) == {
        "resources.cities", "resources.guide", "resources.logo", "resources.weather", "prompts.review_city"
    }  # fmt: skip
    # A name the package does not list is no host function, whatever the server serves (ui://...).
    run = mode.run("from tools import sample\nawait sample.resources.panel()\n")
    assert run.error is not None and run.error.kind == "check" and _sent(mode) == []


class AsyncOnly:
    """A provider with only the async operations (``acall_tool``, ``aread_resource``, ``aget_prompt``)."""

    def __init__(self, registry: RuntimeRegistry) -> None:
        self.registry = registry

    async def acall_tool(self, tool_name: str, arguments: dict[str, Any], **kwargs: Any) -> Any:
        return await self.registry.acall_tool(tool_name, arguments, **kwargs)

    async def aread_resource(self, uri: str, **kwargs: Any) -> Any:
        return await self.registry.aread_resource(uri, **kwargs)

    async def aget_prompt(self, name: str, arguments: Mapping[str, str] | None = None, **kwargs: Any) -> Any:
        return await self.registry.aget_prompt(name, arguments, **kwargs)


def test_an_async_provider_reads_and_gets_prompts_too(folder: Path) -> None:
    package = import_fresh(folder / "out", "cms")
    with RuntimeRegistry.from_sources(infra=[folder / "infra.yaml"]) as registry:
        with CodeMode(AsyncOnly(registry), package=package) as mode:
            code = (
                "from tools import sample\n"
                "(await sample.resources.guide())[:6], (await sample.prompts.review_city(city='Nice'))['description']"
            )
            run = mode.run(code)
    assert run.error is None and run.value == ["# The ", "Review of Nice"], run


def test_a_package_without_resources_has_no_surface_in_its_api() -> None:
    package = import_fresh(REPO / "generated", "sample_tools")
    assert not hasattr(importlib.import_module("sample_tools.code_mode"), "SURFACE")

    class Nothing:
        def call_tool(self, tool_name: str, arguments: dict[str, Any], **kwargs: Any) -> Any:
            raise AssertionError("nothing is called")

    mode = CodeMode(Nothing(), package=package)
    assert "resources" not in mode.api() and "resource(s)" not in mode.listing()


def test_a_module_no_server_answers_leaves_with_its_resources_and_prompts(folder: Path) -> None:
    package = import_fresh(folder / "out", "cms")
    kept = CodeMode(Recording(None), package=package, reachable=lambda wire: wire == "get_weather")
    assert "resources.guide" in kept.listing() and "notes_create" not in kept.listing()
    gone = CodeMode(Recording(None), package=package, reachable=lambda wire: False)
    assert gone.left_out == ("sample",) and gone.stubs(["resources.guide"]).startswith("# no function")
    assert "resources" not in gone.api()


def test_a_module_cut_to_some_tools_keeps_its_resources_and_prompts(folder: Path) -> None:
    """``reachable`` keeping one tool of the module (the framework adapters' filters): the other
    tools leave the stub, its resources and prompts stay, checked as before."""
    package = import_fresh(folder / "out", "cms")
    with (
        RuntimeRegistry.from_sources(infra=[folder / "infra.yaml"]) as registry,
        CodeMode(registry, package=package, reachable={"get_weather"}.__contains__) as mode,
    ):
        api = mode.api()
        assert "async def get_weather(" in api and "list_cities" not in api and "notes_" not in api
        assert "async def guide(" in api and "async def review_city(" in api
        assert mode.check("from tools import sample\nawait sample.resources.guide()\n") == []
        assert mode.check('from tools import sample\nawait sample.prompts.review_city(city="Nice")\n') == []
        (problem,) = mode.check("from tools import sample\nawait sample.list_cities()\n")
        assert "list_cities" in problem.message
