"""The OpenAI Agents SDK adapter against the real SDK and the repo's sample server over stdio: a
minimal ``Model`` subclass driven by a script (no network) makes the tool calls, and the recorder
in front of the registry shows exactly what reached ``call_tool``."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import pytest
from framework_helpers import REPO, Recording, Tampered, cancel_once_sent, import_deferred
from gen_helpers import import_fresh

if TYPE_CHECKING:  # and when the first test runs: the fixture below (framework_helpers.import_deferred)
    from agents import Agent, Runner
    from agents.run_config import RunConfig
    from agents_script import Script, run

    from mas.runtime.frameworks.openai_agents import function_tools, strict_schema


@pytest.fixture(scope="module", autouse=True)
def _framework() -> None:
    pytest.importorskip("agents")
    import_deferred(globals())


def test_tools_carry_exact_schemas_and_calls_reach_the_registry_by_wire_name(recording: Recording) -> None:
    tools = {t.name: t for t in function_tools(recording)}
    listed = {entry["name"]: entry for entry in recording.list_tools()}
    weather = tools["get_weather"]
    assert weather.params_json_schema == listed["get_weather"]["parameters"] and not weather.strict_json_schema
    assert weather.description == listed["get_weather"]["description"]
    assert weather.output_json_schema is None  # the SDK's is for hosted programmatic callers only
    calls = [("get_weather", {"city": "Paris", "units": "fahrenheit"}), ("notes_create", {"title": "t", "body": "b"})]
    script = Script([calls, "ok"])
    result = run(script, list(tools.values()))
    assert result.final_output == "ok"
    assert recording.calls == [("get_weather", {"city": "Paris", "units": "fahrenheit"}),
                               ("notes.create", {"title": "t", "body": "b"})]  # fmt: skip


def test_a_structured_result_reaches_the_model_as_its_json(recording: Recording) -> None:
    expected = recording.inner.call_tool("get_weather", {"city": "Osaka"}).structured_content
    script = Script([[("get_weather", {"city": "Osaka"})], "ok"])
    run(script, function_tools(recording))
    assert json.loads(script.output("get_weather")) == expected


def test_a_schema_is_strict_only_when_strict_mode_accepts_the_same_arguments(recording: Recording) -> None:
    tools = {t.name: t for t in function_tools(recording)}
    # notes.delete: one required property, nothing optional: strict, with the SDK's closed form.
    assert tools["notes_delete"].strict_json_schema
    assert tools["notes_delete"].params_json_schema["additionalProperties"] is False
    assert tools["notes_delete"].params_json_schema["required"] == ["id"]
    # An optional parameter would become required under strict mode: the schema goes as it is.
    assert not tools["get_weather"].strict_json_schema
    assert strict_schema({"type": "object", "properties": {"a": {"type": "object"}}, "required": ["a"]}) is None
    assert strict_schema({"type": "object", "properties": {}, "additionalProperties": True}) is None
    assert all(not t.strict_json_schema for t in function_tools(recording, strict=False))


def test_a_tool_error_is_the_output_the_model_reads(recording: Recording) -> None:
    script = Script([[("notes_delete", {"id": "missing"})], "ok"])
    run(script, function_tools(recording, require_approval=False))
    assert script.output("notes_delete") == "tool_error: note missing not found"
    assert recording.calls == [("notes.delete", {"id": "missing"})]


def test_a_retryable_failure_says_so_and_the_model_sends_it_again(recording: Recording) -> None:
    args = {"key": "agents-retry", "slow_calls": 1, "delay_seconds": 3}
    script = Script([[("flaky_lookup", args)], [("flaky_lookup", args)], "ok"])
    run(script, function_tools(recording, timeout_seconds=0.5))
    first, second = [text for name, text in script.outputs if name == "flaky_lookup"]
    assert first.startswith("timeout: ") and first.endswith("(the call may succeed if sent again)")
    assert json.loads(second)["attempt"] == 2
    assert recording.calls == [("flaky_lookup", args)] * 2


def test_bad_arguments_are_refused_before_anything_is_sent(recording: Recording) -> None:
    script = Script([[("get_weather", {"town": "Paris"})], "ok"])
    run(script, function_tools(recording))
    assert script.output("get_weather").startswith("invalid_arguments: ")
    assert recording.calls == []


def test_a_destructive_tool_needs_approval_and_runs_once_approved(recording: Recording) -> None:
    created = recording.inner.call_tool("notes.create", {"title": "t", "body": "b"}).structured_content
    recording.calls.clear()
    tools = function_tools(recording)
    assert {t.name for t in tools if t.needs_approval} >= {"notes_delete", "count_slowly"}
    assert not any(t.needs_approval for t in tools if t.name in ("get_weather", "notes_create"))
    script = Script([[("notes_delete", {"id": created["id"]})], "deleted"])
    agent = Agent(name="test", model=script, tools=tools)
    config = RunConfig(tracing_disabled=True)
    first = asyncio.run(Runner.run(agent, "go", run_config=config))
    (asked,) = first.interruptions
    assert asked.name == "notes_delete" and recording.calls == []
    state = first.to_state()
    state.approve(asked)
    second = asyncio.run(Runner.run(agent, state, run_config=config))
    assert second.final_output == "deleted"
    assert recording.calls == [("notes.delete", {"id": created["id"]})]
    assert script.output("notes_delete") == f"deleted note {created['id']}"


def test_an_input_round_is_answered_by_on_input(recording: Recording) -> None:
    def on_input(requests: list[Any]) -> dict[str, Any]:
        return {r.key: {"action": "accept", "content": {"name": "Ada"}} for r in requests}

    script = Script([[("greet", {})], "ok"])
    run(script, function_tools(recording, on_input=on_input))
    assert json.loads(script.output("greet")) == {"message": "Hello, Ada!"}
    script = Script([[("greet", {})], "ok"])
    run(script, function_tools(recording))
    assert script.output("greet").startswith("input_required: ")


def test_code_mode_is_one_run_code_tool(recording: Recording) -> None:
    package = import_fresh(REPO / "generated", "sample_tools")
    tools = function_tools(recording, package, code_mode=True, include="sample.*", destructive=False)
    assert [t.name for t in tools] == ["run_code"] and not tools[0].needs_approval
    assert "async def get_weather" in tools[0].description
    # run_code's optional `plan` would become required under strict mode: sent as it is, not strict.
    assert not tools[0].strict_json_schema and tools[0].params_json_schema["required"] == ["code"]
    code = 'from tools import sample\nw = await sample.get_weather(city="Berlin")\nw["city"]\n'
    script = Script([[("run_code", {"code": code})], "ok"])
    run(script, tools)
    assert script.output("run_code").startswith('value: "Berlin"')
    assert recording.calls == [("get_weather", {"city": "Berlin"})]


def test_code_mode_shows_and_reaches_only_the_tools_left_in(
    recording: Recording, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = import_fresh(REPO / "generated", "sample_tools")
    (whole,) = function_tools(recording, package, code_mode=True, read_only=True)
    assert "async def get_weather" in whole.description and "notes_" not in whole.description
    left_out = 'from tools import sample\nawait sample.notes_delete(id="x")\n'
    script = Script([[("run_code", {"code": left_out})], "ok"])
    run(script, [whole])
    assert script.output("run_code").startswith("invalid_arguments: ") and "notes_delete" in script.output("run_code")
    from mas.runtime.code_mode import server

    monkeypatch.setattr(server, "WHOLE_API_MAX_CHARS", 200)  # the discovery tools
    tools = function_tools(recording, package, code_mode=True, read_only=True)
    assert [t.name for t in tools] == ["run_code", "search_tools", "list_functions", "get_stubs"]
    step = [("search_tools", {"query": "delete a note by id", "limit": 10}), ("list_functions", {}),
            ("get_stubs", {"names": ["sample.notes_delete", "sample"]})]  # fmt: skip
    script = Script([step, "ok"])
    run(script, tools)
    for name in ("search_tools", "list_functions", "get_stubs"):
        assert "notes_" not in script.output(name) or name == "get_stubs", name
    assert "get_weather" in script.output("list_functions")
    stubs = script.output("get_stubs")
    assert "async def notes_" not in stubs and "no function or module named 'sample.notes_delete'" in stubs
    assert "notes_" not in tools[0].description
    assert recording.calls == []


def test_with_the_package_a_result_is_its_output_models_data_and_a_misfit_is_invalid_output(
    recording: Recording,
) -> None:
    package = import_fresh(REPO / "generated", "sample_tools")
    script = Script([[("get_weather", {"city": "Osaka"}), ("list_cities", {"country": "JP"})], "ok"])
    run(script, function_tools(recording, package))
    weather = package.TOOLS["get_weather"].output_model.model_validate_json(script.output("get_weather"))
    assert weather.city == "Osaka"
    cities = json.loads(script.output("list_cities"))  # the inferred model's data
    assert set(cities) == {"cities", "total"} and all(c["country"] == "JP" for c in cities["cities"])
    broken = Tampered(recording, "get_weather", {"city": "Osaka", "temperature": "hot"})
    script = Script([[("get_weather", {"city": "Osaka"})], "ok"])
    run(script, function_tools(broken, package))
    assert script.output("get_weather").startswith("invalid_output: ")


REPORT = "compile_report"


def test_a_task_tool_is_awaited_and_timed_out_through_the_runtime_and_progress_is_heard(
    tasks: Recording,
) -> None:
    heard: list[Any] = []
    script = Script(
        [[(REPORT, {"topic": "tides", "steps": 2}), ("count_slowly", {"steps": 2, "delay_seconds": 0})], "ok"]
    )
    given = function_tools(tasks, require_approval=False, on_progress=lambda *update: heard.append(update))
    run(script, given)
    assert json.loads(script.output(REPORT)) == {"topic": "tides", "steps": 2, "audience": None}
    assert [update[:3] for update in heard] == [("count_slowly", 1, 2), ("count_slowly", 2, 2)]
    tasks.clear()
    script = Script([[(REPORT, {"topic": "tides", "steps": 30})], "ok"])
    run(script, function_tools(tasks, require_approval=False, timeout_seconds=0.8))
    assert script.output(REPORT).startswith("timeout: ")
    assert tasks.task_status(REPORT, tasks.results[-1].metadata["task_id"]) == "cancelled"  # type: ignore[index]


def test_a_cancelled_run_cancels_its_call_through_the_contracts_cancel_event(tasks: Recording) -> None:
    script = Script([[(REPORT, {"topic": "tides", "steps": 30})], "ok"])
    agent = Agent(name="test", model=script, tools=function_tools(tasks, require_approval=False))

    cancel_once_sent(tasks, lambda: Runner.run(agent, "go", run_config=RunConfig(tracing_disabled=True)))
    (options,) = tasks.options
    assert options["cancel_event"].is_set()
