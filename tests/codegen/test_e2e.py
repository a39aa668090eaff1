"""Generate, import and call through the real runtime: YAML skills and the sample MCP server (stdio)."""

from __future__ import annotations

import ast
import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from gen_helpers import REPO, generate, import_fresh
from mcp_helpers import sample_stdio_infra
from prefork import python_command

from mas.runtime.contracts.tool_contract import invoke_call_tool
from mas.runtime.registry import RuntimeRegistry

#: The sample server's infra file, its server forked from the pre-imported interpreter (mcp_helpers).
INFRA = Path(sample_stdio_infra())
TOOLS_DIR = REPO / "library-samples" / "tools"


class Recorder:
    """Sits between the generated code and the registry and records what crossed ``call_tool``.

    Declares ``timeout_seconds`` and ``cancel_event`` only: per the contract, nothing else may reach it.
    """

    def __init__(self, registry: RuntimeRegistry) -> None:
        self.registry = registry
        self.calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = []

    def call_tool(
        self,
        tool_name: str,
        arguments: dict[str, Any],
        timeout_seconds: float | None = None,
        cancel_event: threading.Event | None = None,
    ) -> Any:
        kwargs = {k: v for k, v in (("timeout_seconds", timeout_seconds), ("cancel_event", cancel_event)) if v}
        self.calls.append((tool_name, dict(arguments), kwargs))
        return invoke_call_tool(self.registry, tool_name, arguments, **kwargs)


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """Generated live from the sample server, the way `nox -s generate` does."""
    root = tmp_path_factory.mktemp("e2e")
    mp = pytest.MonkeyPatch()
    try:
        args = ["--tools", str(TOOLS_DIR), "--infra", str(INFRA), "--lock", str(root / "lock.json")]
        assert generate(root, [*args, "--out", str(root / "out"), "--package", "e2e_tools"], mp) == 0
    finally:
        mp.undo()
    return import_fresh(root / "out", "e2e_tools")


@pytest.fixture(scope="module")
def registry() -> Iterator[RuntimeRegistry]:
    with RuntimeRegistry.from_sources(infra=[INFRA], tools=[TOOLS_DIR]) as reg:
        yield reg


@pytest.fixture
def recorder(registry: RuntimeRegistry) -> Recorder:
    return Recorder(registry)


def test_structured_result_is_decoded_into_the_output_model(pkg: ModuleType, recorder: Recorder) -> None:
    tools = pkg.Tools(recorder)
    weather = tools.sample.get_weather(city="Paris")
    assert type(weather).__name__ == "SampleGetWeatherOutput"
    assert weather.city == "Paris"
    assert isinstance(weather.temperature, float) and isinstance(weather.humidity, int)
    # Optional "units" was not passed, so it must not be sent: the server default applies.
    assert recorder.calls == [("get_weather", {"city": "Paris"}, {})]


def test_wire_names_and_wire_keys_reach_call_tool_unchanged(pkg: ModuleType, recorder: Recorder) -> None:
    tools = pkg.Tools(recorder)
    found = tools.sample.search_docs(query="pagination", limit=2, filters={"tags": ["mcp"]})
    note = tools.sample.notes_create(title="t", body="b", tags=["x"])
    assert [c[:2] for c in recorder.calls] == [
        ("search-docs", {"query": "pagination", "limit": 2, "filters": {"tags": ["mcp"]}}),
        ("sample.notes.create", {"title": "t", "body": "b", "tags": ["x"]}),
    ]
    assert found.total == len(found.results) >= 1
    assert note.title == "t" and len(note.id) > 0


def test_yaml_skill_tools_are_called_through_the_same_path(pkg: ModuleType, recorder: Recorder) -> None:
    tools = pkg.Tools(recorder)
    converted = tools.skills.unit_convert(value=1.0, from_unit="km", to_unit="m")
    assert recorder.calls[0][0] == "unit_convert"
    assert recorder.calls[0][1] == {"value": 1.0, "from_unit": "km", "to_unit": "m"}
    assert converted.value == pytest.approx(1000.0)


def test_error_result_raises_tool_call_error_with_payload(pkg: ModuleType, recorder: Recorder) -> None:
    tools = pkg.Tools(recorder)
    with pytest.raises(pkg.ToolCallError) as caught:
        tools.sample.notes_delete(id="missing-note")
    err = caught.value
    assert isinstance(err, pkg.ToolError)
    assert err.tool_name == "sample.notes.delete"
    assert err.payload == {"code": "not_found", "id": "missing-note"}
    assert "note missing-note not found" in err.message
    assert err.envelope["is_error"] is True


def test_result_that_breaks_the_output_schema_raises_validation_error(pkg: ModuleType) -> None:
    class Liar:
        def call_tool(self, tool_name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            return {"is_error": False, "structured_content": {"city": "Paris", "temperature": "hot"}}

    with pytest.raises(pkg.ToolOutputValidationError) as caught:
        pkg.Tools(Liar()).sample.get_weather(city="Paris")
    assert caught.value.tool_name == "get_weather"
    assert caught.value.envelope["structured_content"]["temperature"] == "hot"


def test_results_view_keeps_the_envelope(pkg: ModuleType, recorder: Recorder) -> None:
    result = pkg.Tools(recorder).results.sample.get_weather(city="Oslo")
    assert result.value.city == "Oslo"
    assert result.structured_content["city"] == "Oslo"
    assert result.envelope["is_error"] is False
    assert type(result).__name__ == "ToolResult"


def test_call_options_are_forwarded_only_when_declared(pkg: ModuleType, recorder: Recorder) -> None:
    tools = pkg.Tools(recorder).with_options(timeout_seconds=30.0, meta={"trace": "1"}, user="ann")
    tools.sample.whoami()
    # meta and user are not declared by Recorder.call_tool, so they must not arrive.
    assert recorder.calls == [("whoami", {}, {"timeout_seconds": 30.0})]


def test_timeout_option_reaches_the_server_call(pkg: ModuleType, registry: RuntimeRegistry) -> None:
    tools = pkg.Tools(registry).with_options(timeout_seconds=0.5)
    with pytest.raises(pkg.ToolTimeoutError) as caught:
        # 1.5 s of work: it goes on in its daemon thread after the timeout, so it is kept short.
        tools.sample.count_slowly(steps=3, delay_seconds=0.5)
    assert "timed out" in caught.value.message


def test_async_tools_against_the_registry(pkg: ModuleType, registry: RuntimeRegistry) -> None:
    async def main() -> tuple[Any, Any]:
        tools = pkg.AsyncTools(registry)
        return await asyncio.gather(tools.sample.get_weather(city="Rome"), tools.skills.current_time(timezone="UTC"))

    weather, now = asyncio.run(main())
    assert weather.city == "Rome"
    assert now is not None


def test_manifest_describes_every_tool(pkg: ModuleType, registry: RuntimeRegistry) -> None:
    listed = {t["name"] for t in registry.list_tools()}
    # The package sends the listed names, a dotted one qualified (mas/runtime/routing.py).
    assert set(pkg.TOOLS) == {f"sample.{n}" if "." in n else n for n in listed}
    assert {registry.owner_of(n) for n in pkg.TOOLS} == {"sample", "skills"}
    info = pkg.TOOLS["search-docs"]
    assert (info.name, info.method, info.namespace) == ("search-docs", "search_docs", "sample")
    assert info.read_only is True and info.output_model is not None
    assert pkg.TOOLS["sample.notes.delete"].output_model is None
    assert pkg.TOOLS["sample.notes.delete"].destructive is True


def test_committed_package_is_importable_and_callable(registry: RuntimeRegistry) -> None:
    committed = import_fresh(REPO / "generated", "sample_tools")
    weather = committed.Tools(registry).sample.get_weather(city="Lima", units="fahrenheit")
    assert weather.city == "Lima"


def test_generated_package_depends_only_on_pydantic(pkg: ModuleType) -> None:
    root = Path(pkg.__file__).parent
    imported: set[str] = set()
    # The test kit's engine (testing.py, _runtime/_fake.py) is imported only by tests: it may use
    # polyfactory and the runtime's redaction, lazily; test_kit_imports_only_what_it_declares holds it.
    kit = {root / "testing.py", root / "_testing_data.py", root / "_runtime" / "_fake.py"}
    for path in sorted(set(root.rglob("*.py")) - kit):  # the package, its _runtime/ shim and outputs/
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    third_party = imported - set(sys.stdlib_module_names)
    assert third_party <= {"pydantic", "typing_extensions"}, third_party
    assert "pydantic" in third_party


def test_kit_imports_only_what_it_declares(pkg: ModuleType) -> None:
    root = Path(pkg.__file__).parent
    imported: set[str] = set()
    for path in (root / "testing.py", root / "_runtime" / "_fake.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    assert imported - set(sys.stdlib_module_names) <= {"pydantic", "typing_extensions", "polyfactory", "mas"}


def test_in_process_tool_class_generates_and_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A local ToolContract class: its list_tools() entry (as `mas.runtime list --json` prints it)
    is a generator input, and the typed method calls it through the registry."""
    from mas.samples.local_tools import WordCount

    command = ["-m", "mas.runtime", "list", "--local", "mas.samples.local_tools:WordCount", "--json"]
    listing = subprocess.run(
        python_command(*command, pythonpath=os.environ.get("PYTHONPATH")),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (tmp_path / "local.json").write_text(listing)
    assert (
        generate(tmp_path, ["--mcp-json", "local.json", "--out", "out", "--package", "local_tools"], monkeypatch) == 0
    )
    local = import_fresh(tmp_path / "out", "local_tools")
    with RuntimeRegistry.from_sources(local=[WordCount]) as registry:
        recorder = Recorder(registry)
        counted = local.Tools(recorder).local.word_count(text="two words\nthree")
    assert recorder.calls == [("word_count", {"text": "two words\nthree"}, {})]
    assert type(counted).__name__ == "LocalWordCountOutput"
    assert (counted.words, counted.lines, counted.characters) == (3, 2, 15)
    assert local.TOOLS["word_count"].read_only is True and local.TOOLS["word_count"].title == "Word count"
