"""The whole-result classes (``tools.results``): thin wrappers that run the value method of the same
tool and return the whole ``ToolResult`` (the shim's ``ToolsResultsBase``), made once per instance."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from gen_helpers import REPO, RecordingProvider, golden_package, import_fresh


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return import_fresh(golden_package("samples", tmp_path_factory.mktemp("results")), "samples")


def test_results_is_made_once_per_instance_and_carries_its_options(pkg: ModuleType) -> None:
    tools = pkg.Tools(RecordingProvider())
    assert tools.results is tools.results
    assert tools.skills.results is tools.skills.results
    timed = tools.with_options(timeout_seconds=2.0)
    assert timed.results is not tools.results
    assert isinstance(timed.results, pkg.ToolsResults)
    assert "'timeout_seconds': 2.0" in repr(timed.skills.results)


def test_a_whole_result_method_sends_what_the_value_method_sends(pkg: ModuleType) -> None:
    provider = RecordingProvider()
    tools = pkg.Tools(provider)
    value = tools.skills.summarize_text(text="One. Two.")
    whole = tools.results.skills.summarize_text(text="One. Two.")
    assert isinstance(whole, pkg.ToolResult) and not isinstance(value, pkg.ToolResult)
    assert whole.value == value
    # The same one call each time; the optional argument left out is not sent.
    assert provider.calls == [("summarize_text", {"text": "One. Two."}, {})] * 2


def test_a_whole_result_method_with_options_takes_the_planned_path(pkg: ModuleType) -> None:
    provider = RecordingProvider()
    whole = pkg.Tools(provider).with_options(timeout_seconds=2.0).results.skills.summarize_text(text="x")
    assert isinstance(whole, pkg.ToolResult)
    assert provider.calls == [("summarize_text", {"text": "x"}, {"timeout_seconds": 2.0})]


def test_async_whole_result_methods_await_the_async_value_method(pkg: ModuleType) -> None:
    provider = RecordingProvider()
    tools = pkg.AsyncTools(provider)
    assert tools.results is tools.results

    async def both() -> tuple[object, object]:
        return await tools.skills.summarize_text(text="a"), await tools.results.skills.summarize_text(text="a")

    value, whole = asyncio.run(both())
    assert isinstance(whole, pkg.ToolResult) and whole.value == value
    assert provider.calls == [("summarize_text", {"text": "a"}, {})] * 2


def test_each_description_is_written_once_per_flavour() -> None:
    """The ToolInfo constant, the sync and the async value method: the wrappers repeat no docstring."""
    text = (REPO / "tests" / "golden" / "samples" / "_tools.py").read_text(encoding="utf-8")
    documents = [
        doc
        for path in sorted((REPO / "library-samples" / "tools").glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8"))
    ]
    assert len(documents) == 4
    for doc in documents:
        assert text.count(doc["spec"]["description"]) == 3, doc["metadata"]["name"]


def test_a_whole_result_class_has_no_call_of_its_own() -> None:
    """Only the value methods build arguments; a whole-result method hands its parameters over."""
    text = Path(REPO / "tests" / "golden" / "samples" / "_tools.py").read_text(encoding="utf-8")
    results_classes = text.split("class SkillsToolsResults(")[1].split("\nclass ")[0]
    assert "self._call(" not in results_classes and results_classes.count("self._whole(") == 4
