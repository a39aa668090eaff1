"""The pydantic-ai toolset against the real framework and the repo's sample server over stdio: a
scripted model (pydantic-ai's ``FunctionModel``, no network) makes the tool calls, and the
recorder in front of the registry shows exactly what reached ``call_tool``."""

from __future__ import annotations

import asyncio
import warnings
from typing import TYPE_CHECKING, Any

import pytest
from framework_helpers import REPO, Recording, Tampered, cancel_once_sent, import_deferred
from gen_helpers import import_fresh

if TYPE_CHECKING:  # and when the first test runs: the fixture below (framework_helpers.import_deferred)
    from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from mas.runtime.frameworks.pydantic_ai import toolset


@pytest.fixture(scope="module", autouse=True)
def _framework() -> None:
    pytest.importorskip("pydantic_ai")
    import_deferred(globals())


Step = list[tuple[str, dict[str, Any]]] | str


class Script:
    """A model that answers from a script: each step is the tool calls of one response, or the
    final text. ``seen`` keeps the parts of every request the model was sent after the first."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps = steps
        self.seen: list[Any] = []
        self.tools: list[Any] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.tools = list(info.function_tools)
        last = messages[-1]
        if isinstance(last, ModelRequest):
            self.seen.extend(p for p in last.parts if isinstance(p, ToolReturnPart))
        index = sum(isinstance(m, ModelResponse) for m in messages)
        step = self.steps[index]
        if isinstance(step, str):
            return ModelResponse(parts=[TextPart(step)])
        calls = [ToolCallPart(name, args, tool_call_id=f"call{index}_{i}") for i, (name, args) in enumerate(step)]
        return ModelResponse(parts=calls)

    def part(self, tool_name: str) -> Any:
        found = [p for p in self.seen if p.tool_name == tool_name]
        assert found, f"the model saw nothing of {tool_name}: {self.seen}"
        return found[-1]


def run(script: Script, tools: Any, **kwargs: Any) -> Any:
    agent = Agent(FunctionModel(script), toolsets=[tools], output_type=[str, DeferredToolRequests])
    return run_sync(agent, "go", **kwargs)


def run_sync(agent: Any, *args: Any, **kwargs: Any) -> Any:
    """``agent.run_sync``, then the event loop it keeps closed, its default executor first
    (pydantic-graph sets the loop on this thread and reuses it while it is open): a sync provider's
    calls run in that executor (``ainvoke_call_tool``), and its idle thread, left in the pytest
    worker, would stop tests/codegen/test_parallel.py from forking (a process with threads must not)."""
    try:
        return agent.run_sync(*args, **kwargs)
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # no running loop: asking is the point
            loop = asyncio.get_event_loop_policy().get_event_loop()
        if not loop.is_running() and not loop.is_closed():
            loop.run_until_complete(loop.shutdown_default_executor())
            loop.close()


def test_tools_carry_their_exact_schemas_and_calls_reach_the_registry_by_wire_name(recording: Recording) -> None:
    tools = toolset(recording)
    script = Script(
        [[("get_weather", {"city": "Paris", "units": "fahrenheit"}), ("search-docs", {"query": "x"})], "ok"]
    )
    result = run(script, tools)
    assert result.output == "ok"
    assert recording.calls == [
        ("get_weather", {"city": "Paris", "units": "fahrenheit"}),
        ("search-docs", {"query": "x"}),
    ]
    listed = {entry["name"]: entry for entry in recording.list_tools()}
    weather = tools._definition(tools.tools["get_weather"])
    assert weather.parameters_json_schema == listed["get_weather"]["parameters"]
    assert weather.description == listed["get_weather"]["description"]
    assert weather.return_schema == listed["get_weather"]["output_schema"] and weather.include_return_schema
    assert weather.metadata is not None and weather.metadata["wire_name"] == "get_weather"
    # What the model got: the exact schema, and the output schema (a FunctionModel takes no native
    # return schema, so pydantic-ai appends it to the description).
    sent = {d.name: d for d in script.tools}["get_weather"]
    assert sent.parameters_json_schema == listed["get_weather"]["parameters"]
    assert sent.description.startswith(listed["get_weather"]["description"]) and '"humidity"' in sent.description


def test_a_structured_result_is_the_structured_content(recording: Recording) -> None:
    expected = recording.inner.call_tool("get_weather", {"city": "Osaka"}).structured_content
    recording.calls.clear()
    script = Script([[("get_weather", {"city": "Osaka"})], "ok"])
    run(script, toolset(recording))
    assert script.part("get_weather").content == expected
    assert isinstance(expected, dict) and set(expected) == {"city", "temperature", "conditions", "humidity"}


def test_names_fit_every_framework_and_map_back_to_wire_names(recording: Recording) -> None:
    tools = toolset(recording)
    assert tools.tools["notes_create"].wire_name == "notes.create"
    assert tools.tools["search-docs"].wire_name == "search-docs"
    script = Script([[("notes_create", {"title": "t", "body": "b"})], "ok"])
    run(script, tools)
    assert recording.calls == [("notes.create", {"title": "t", "body": "b"})]


def test_a_tool_error_is_a_failed_tool_result_the_model_sees_not_a_retry(recording: Recording) -> None:
    script = Script([[("notes_delete", {"id": "missing"})], "ok"])
    result = run(script, toolset(recording, require_approval=False))
    assert result.output == "ok"
    seen = script.part("notes_delete")
    assert seen.outcome == "failed"
    assert "tool_error: note missing not found" in str(seen.content)
    assert recording.calls == [("notes.delete", {"id": "missing"})]


def test_a_timeout_of_a_read_only_idempotent_tool_is_a_model_retry(recording: Recording) -> None:
    args = {"key": "retry-me", "slow_calls": 1, "delay_seconds": 3}
    script = Script([[("flaky_lookup", args)], [("flaky_lookup", args)], "ok"])
    result = run(script, toolset(recording, timeout_seconds=0.5))
    assert result.output == "ok"
    retry = script.seen[0]
    assert retry.outcome == "retried" and str(retry.content).startswith("timeout:")
    final = script.part("flaky_lookup")
    assert final.outcome == "success" and final.content["attempt"] == 2
    assert recording.calls == [("flaky_lookup", args), ("flaky_lookup", args)]


def test_bad_arguments_are_a_retry_and_nothing_is_sent(recording: Recording) -> None:
    script = Script([[("get_weather", {"town": "Paris"})], [("get_weather", {"city": "Paris"})], "ok"])
    run(script, toolset(recording))
    retry = script.seen[0]
    assert retry.outcome == "retried" and str(retry.content).startswith("invalid_arguments:")
    assert "missing required argument 'city'" in str(retry.content)
    assert recording.calls == [("get_weather", {"city": "Paris"})]


def test_a_destructive_tool_waits_for_approval_and_runs_once_approved(recording: Recording) -> None:
    created = recording.inner.call_tool("notes.create", {"title": "t", "body": "b"}).structured_content
    recording.calls.clear()
    script = Script([[("notes_delete", {"id": created["id"]})], "deleted"])
    agent = Agent(FunctionModel(script), toolsets=[toolset(recording)], output_type=[str, DeferredToolRequests])
    first = run_sync(agent, "go")
    assert isinstance(first.output, DeferredToolRequests)
    (asked,) = first.output.approvals
    assert asked.tool_name == "notes_delete" and first.output.metadata[asked.tool_call_id]["reason"] == "destructive"
    assert recording.calls == []  # nothing was sent before approval
    second = run_sync(
        agent,
        message_history=first.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={asked.tool_call_id: True}),
    )
    assert second.output == "deleted"
    assert recording.calls == [("notes.delete", {"id": created["id"]})]


def test_an_input_round_is_answered_by_on_input(recording: Recording) -> None:
    asked: list[Any] = []

    def on_input(requests: list[Any]) -> dict[str, Any]:
        asked.extend(requests)
        return {"name": {"action": "accept", "content": {"name": "Ada"}}}

    script = Script([[("greet", {"greeting": "Hi"})], "ok"])
    run(script, toolset(recording, on_input=on_input))
    assert [(r.key, r.method) for r in asked] == [("name", "elicitation/create")]
    assert script.part("greet").content == {"message": "Hi, Ada!"}
    assert recording.calls == [("greet", {"greeting": "Hi"})] * 2
    assert recording.options[1]["request_state"] == "greet:v1"


def test_an_input_round_without_on_input_is_deferred_and_resumed_with_the_answers(recording: Recording) -> None:
    script = Script([[("greet", {})], "ok"])
    agent = Agent(FunctionModel(script), toolsets=[toolset(recording)], output_type=[str, DeferredToolRequests])
    first = run_sync(agent, "go")
    assert isinstance(first.output, DeferredToolRequests)
    (asked,) = first.output.approvals
    metadata = first.output.metadata[asked.tool_call_id]
    assert metadata["reason"] == "input_required" and metadata["input_requests"][0]["key"] == "name"
    answers = {"input_responses": {"name": {"action": "accept", "content": {"name": "Lin"}}},
               "request_state": metadata["request_state"]}  # fmt: skip
    results = DeferredToolResults(approvals={asked.tool_call_id: True}, metadata={asked.tool_call_id: answers})
    second = run_sync(agent, message_history=first.all_messages(), deferred_tool_results=results)
    assert second.output == "ok"
    assert script.part("greet").content == {"message": "Hello, Lin!"}
    assert recording.options[-1]["input_responses"] == answers["input_responses"]


def test_filters_choose_by_source_pattern_and_hints(recording: Recording) -> None:
    assert set(toolset(recording, include="skills.*").tools) == {
        "current_time", "unit_convert", "web_search", "summarize_text"
    }  # fmt: skip
    assert set(toolset(recording, include="notes.*").tools) == {"notes_create", "notes_delete"}
    assert "get_weather" not in toolset(recording, exclude=["get_*"]).tools
    read_only = toolset(recording, read_only=True).tools
    assert read_only and all(t.read_only is True for t in read_only.values())
    safe = toolset(recording, destructive=False).tools
    assert "notes_delete" not in safe and "get_weather" in safe and all(not t.needs_approval for t in safe.values())


def test_code_mode_is_one_run_code_tool_whose_calls_reach_the_registry(recording: Recording) -> None:
    package = import_fresh(REPO / "generated", "sample_tools")
    tools = toolset(recording, package, code_mode=True, include="sample.*", destructive=False)
    code = 'from tools import sample\nw = await sample.get_weather(city="Paris")\nw["city"]\n'
    script = Script([[("run_code", {"code": code})], "ok"])
    run(script, tools)
    assert [d.name for d in script.tools] == ["run_code"]
    assert "async def get_weather" in script.tools[0].description
    seen = script.part("run_code")
    assert isinstance(seen, ToolReturnPart) and seen.content == 'value: "Paris"'
    assert recording.calls == [("get_weather", {"city": "Paris"})]


def test_code_mode_knows_only_the_tools_left_in_and_a_bad_snippet_is_a_retry(recording: Recording) -> None:
    package = import_fresh(REPO / "generated", "sample_tools")
    tools = toolset(recording, package, code_mode=True, read_only=True, max_retries=2)
    left_out = 'from tools import sample\nawait sample.notes_delete(id="x")\n'
    bad = 'from tools import sample\nw = await sample.get_weather(town="Paris")\n'
    script = Script([[("run_code", {"code": left_out})], [("run_code", {"code": bad})], "ok"])
    run(script, tools)
    description = script.tools[0].description
    assert "async def get_weather" in description and "notes_" not in description and "count_slowly" not in description
    left, retry = script.seen
    assert left.outcome == "retried" and "has no member `notes_delete`" in str(left.content)
    assert retry.outcome == "retried" and "did not type-check" in str(retry.content)
    assert recording.calls == []


def test_code_mode_over_an_api_too_large_to_describe_adds_the_discovery_tools(
    recording: Recording, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mas.runtime.code_mode import server

    monkeypatch.setattr(server, "WHOLE_API_MAX_CHARS", 200)  # the sample package's API is larger
    package = import_fresh(REPO / "generated", "sample_tools")
    tools = toolset(recording, package, code_mode=True, read_only=True)
    steps: list[Step] = [
        [("search_tools", {"query": "weather in a city", "limit": 1}), ("list_functions", {"module": "sample"})],
        [("get_stubs", {"names": ["sample.get_weather"]})],
        "ok",
    ]
    script = Script(steps)
    run(script, tools)
    assert [d.name for d in script.tools] == ["run_code", "search_tools", "list_functions", "get_stubs"]
    run_code = script.tools[0]
    assert "get_stubs" in run_code.description and "async def get_weather" not in run_code.description
    assert "async def get_weather(" in script.part("search_tools").content
    assert "get_weather" in script.part("list_functions").content
    assert "async def get_weather(" in script.part("get_stubs").content
    assert recording.calls == []
    # Discovery shows only the tools the filters left in (read_only=True: no notes_*).
    steps = [
        [("search_tools", {"query": "delete a note by id", "limit": 10}), ("list_functions", {}),
         ("get_stubs", {"names": ["sample.notes_delete", "sample"]})],
        "ok",
    ]  # fmt: skip
    script = Script(steps)
    run(script, tools)
    for name in ("search_tools", "list_functions", "get_stubs", "run_code"):
        shown = script.part(name).content if name != "run_code" else script.tools[0].description
        assert "def notes_" not in shown and "count_slowly" not in shown, name
    assert "notes_" not in script.part("list_functions").content
    assert "no function or module named 'sample.notes_delete'" in script.part("get_stubs").content


def test_code_mode_plan_checks_and_lists_the_calls_and_runs_nothing(recording: Recording) -> None:
    package = import_fresh(REPO / "generated", "sample_tools")
    tools = toolset(recording, package, code_mode=True, read_only=True)
    code = 'from tools import sample\nw = await sample.get_weather(city="Paris")\nw["city"]\n'
    script = Script([[("run_code", {"code": code, "plan": True})], "ok"])
    run(script, tools)
    seen = script.part("run_code")
    assert seen.outcome == "success" and "get_weather" in str(seen.content)
    assert recording.calls == []


def test_with_the_package_a_result_is_its_output_model_and_an_inferred_schema_is_given(recording: Recording) -> None:
    package = import_fresh(REPO / "generated", "sample_tools")
    tools = toolset(recording, package)
    script = Script([[("get_weather", {"city": "Osaka"}), ("list_cities", {})], "ok"])
    run(script, tools)
    weather = script.part("get_weather").content
    assert isinstance(weather, package.TOOLS["get_weather"].output_model) and weather.city == "Osaka"
    cities = script.part("list_cities").content  # JSON text from the server: typed by the inferred model
    model = package.TOOLS["list_cities"].output_model
    assert isinstance(cities, model) and cities.total == len(cities.cities) > 0
    # list_cities declares no output schema: the package's (inferred) one is the return schema.
    listed = {entry["name"]: entry for entry in recording.list_tools()}
    assert (
        listed["list_cities"].get("output_schema") is None
        and toolset(recording).tools["list_cities"].output_schema is None
    )
    schema = model.model_json_schema(mode="serialization", by_alias=True)
    assert tools._definition(tools.tools["list_cities"]).return_schema == schema
    assert tools.tools["get_weather"].output_schema == listed["get_weather"]["output_schema"]  # declared: as listed
    assert recording.calls == [("get_weather", {"city": "Osaka"}), ("list_cities", {})]


def test_with_the_package_an_output_that_breaks_its_model_is_invalid_output(recording: Recording) -> None:
    package = import_fresh(REPO / "generated", "sample_tools")
    broken = Tampered(recording, "get_weather", {"city": "Osaka", "temperature": "hot"})
    script = Script([[("get_weather", {"city": "Osaka"})], "ok"])
    run(script, toolset(broken, package))
    seen = script.part("get_weather")
    assert seen.outcome == "failed" and str(seen.content).startswith("invalid_output: ")
    assert "does not match SampleGetWeatherOutput" in str(seen.content)
    script = Script([[("get_weather", {"city": "Osaka"})], "ok"])
    run(script, toolset(broken))  # without the package: the structured content as the server sent it
    assert script.part("get_weather").content == {"city": "Osaka", "temperature": "hot"}


REPORT = "compile_report"


def test_a_task_tool_is_awaited_through_the_runtimes_task_path_and_cancelled_past_its_timeout(tasks: Recording) -> None:
    script = Script([[(REPORT, {"topic": "tides", "steps": 2})], "ok"])
    run(script, toolset(tasks, require_approval=False))
    assert script.part(REPORT).content == {"topic": "tides", "steps": 2, "audience": None}
    (done,) = tasks.results
    assert done.execution_mode == "async" and done.metadata is not None and done.metadata["task_id"]
    tasks.clear()
    script = Script([[(REPORT, {"topic": "tides", "steps": 30})], "ok"])
    run(script, toolset(tasks, require_approval=False, timeout_seconds=0.8))
    seen = script.part(REPORT)
    assert seen.outcome == "failed" and str(seen.content).startswith("timeout: ")
    task_id = tasks.results[-1].metadata["task_id"]  # type: ignore[index]
    assert tasks.task_status(REPORT, task_id) == "cancelled"  # the task ended on the server too


def test_progress_reaches_on_progress(recording: Recording) -> None:
    heard: list[tuple[str, float, float | None, str | None]] = []
    script = Script([[("count_slowly", {"steps": 3, "delay_seconds": 0.05})], "ok"])
    run(script, toolset(recording, require_approval=False, on_progress=lambda *update: heard.append(update)))
    assert [(name, progress, total) for name, progress, total, _ in heard] == [
        ("count_slowly", i, 3) for i in (1, 2, 3)
    ]
    assert heard[-1][3] == "step 3/3"


def test_a_cancelled_run_cancels_its_call_through_the_contracts_cancel_event(tasks: Recording) -> None:
    import time

    script = Script([[(REPORT, {"topic": "tides", "steps": 30})], "ok"])
    agent = Agent(FunctionModel(script), toolsets=[toolset(tasks, require_approval=False)])
    began = time.monotonic()
    cancel_once_sent(tasks, lambda: agent.run("go"))
    assert time.monotonic() - began < 8  # the 30-step task (9 s) was not waited out
    (options,) = tasks.options
    assert options["cancel_event"].is_set()  # the contract's cancel_event: the call stops at the provider


def test_a_cancel_event_given_stops_the_call(recording: Recording) -> None:
    import threading

    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    args = {"key": "cancel-me", "slow_calls": 1, "delay_seconds": 5}
    script = Script([[("flaky_lookup", args)], "ok"])
    run(script, toolset(recording, cancel_event=cancel))
    seen = script.part("flaky_lookup")
    assert seen.outcome == "failed" and str(seen.content).startswith("cancelled: ")
