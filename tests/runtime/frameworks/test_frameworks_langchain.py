"""The LangChain adapter against the real ``langchain_core`` and the repo's sample server over
stdio: a fake chat model (``GenericFakeChatModel``, no network) emits the tool calls, and a loop
runs them as an agent's tool node does (``tool.ainvoke(tool_call)`` gives the ``ToolMessage``);
the recorder in front of the registry shows exactly what reached ``call_tool``."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import pytest
from framework_helpers import REPO, Recording, Tampered, cancel_once_sent, import_deferred
from gen_helpers import import_fresh

if TYPE_CHECKING:  # and when the first test runs: the fixture below (framework_helpers.import_deferred)
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
    from langchain_core.tools import BaseTool, ToolException
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from mas.runtime.frameworks.langchain import tools


@pytest.fixture(scope="module", autouse=True)
def _framework() -> None:
    pytest.importorskip("langchain_core")
    import_deferred(globals())


def agent(steps: list[list[tuple[str, dict[str, Any]]] | str], given: list[BaseTool]) -> list[BaseMessage]:
    """The conversation a fake model and a tool loop make: each step is one AI message's tool
    calls, or its final text."""
    replies = [
        AIMessage(content=step) if isinstance(step, str) else AIMessage(
            content="", tool_calls=[{"name": n, "args": a, "id": f"call{i}_{j}"} for j, (n, a) in enumerate(step)]
        )
        for i, step in enumerate(steps)
    ]  # fmt: skip
    model = GenericFakeChatModel(messages=iter(replies))
    by_name = {t.name: t for t in given}

    async def loop() -> list[BaseMessage]:
        history: list[BaseMessage] = [HumanMessage("go")]
        while True:
            reply = await model.ainvoke(history)
            history.append(reply)
            if not isinstance(reply, AIMessage) or not reply.tool_calls:
                return history
            for tool_call in reply.tool_calls:
                history.append(await by_name[tool_call["name"]].ainvoke({**tool_call, "type": "tool_call"}))

    return asyncio.run(loop())


def tool_messages(history: list[BaseMessage], name: str) -> list[ToolMessage]:
    return [m for m in history if isinstance(m, ToolMessage) and m.name == name]


def test_args_schema_is_the_exact_schema_and_calls_reach_the_registry_by_wire_name(recording: Recording) -> None:
    given = {t.name: t for t in tools(recording)}
    listed = {entry["name"]: entry for entry in recording.list_tools()}
    sent = convert_to_openai_tool(given["get_weather"])["function"]
    assert sent["parameters"] == listed["get_weather"]["parameters"]
    assert sent["description"] == listed["get_weather"]["description"]
    assert given["notes_create"].metadata == {
        "wire_name": "notes.create",
        "source": "sample",
        "output_schema": listed["notes.create"]["output_schema"],
        "needs_approval": False,
        "idempotent": False,
        "destructive": False,
    }
    agent(
        [[("get_weather", {"city": "Paris"}), ("notes_create", {"title": "t", "body": "b"})], "ok"],
        list(given.values()),
    )
    assert recording.calls == [("get_weather", {"city": "Paris"}), ("notes.create", {"title": "t", "body": "b"})]


def test_a_structured_result_is_the_content_and_the_artifact(recording: Recording) -> None:
    expected = recording.inner.call_tool("get_weather", {"city": "Osaka"}).structured_content
    (message,) = tool_messages(agent([[("get_weather", {"city": "Osaka"})], "ok"], tools(recording)), "get_weather")
    assert message.status == "success" and message.artifact == expected and json.loads(str(message.content)) == expected


def test_a_text_result_has_no_artifact(recording: Recording) -> None:
    history = agent([[("list_cities", {"country": "FR"})], "ok"], tools(recording))
    (message,) = tool_messages(history, "list_cities")
    assert message.artifact is None and "Paris" in str(message.content)


def test_a_tool_error_is_an_error_tool_message(recording: Recording) -> None:
    given = tools(recording, require_approval=False)
    (message,) = tool_messages(agent([[("notes_delete", {"id": "missing"})], "ok"], given), "notes_delete")
    assert message.status == "error" and message.content == "tool_error: note missing not found"
    assert recording.calls == [("notes.delete", {"id": "missing"})]
    # handle_tool_error=False: the failure reaches the caller instead of the model.
    raw = {t.name: t for t in tools(recording, require_approval=False, handle_tool_error=False)}["notes_delete"]
    with pytest.raises(ToolException, match="tool_error: note missing not found"):
        raw.invoke({"id": "missing"})


def test_a_retryable_failure_says_so_and_the_model_sends_it_again(recording: Recording) -> None:
    args = {"key": "lc-retry", "slow_calls": 1, "delay_seconds": 3}
    history = agent([[("flaky_lookup", args)], [("flaky_lookup", args)], "ok"], tools(recording, timeout_seconds=0.5))
    first, second = tool_messages(history, "flaky_lookup")
    assert first.status == "error" and str(first.content).startswith("timeout: ")
    assert str(first.content).endswith("(the call may succeed if sent again)")
    assert second.status == "success" and second.artifact["attempt"] == 2


def test_a_destructive_tool_asks_confirm_and_refuses_without_it(recording: Recording) -> None:
    created = recording.inner.call_tool("notes.create", {"title": "t", "body": "b"}).structured_content
    recording.calls.clear()
    given = {t.name: t for t in tools(recording)}
    assert "destructive" in (given["notes_delete"].tags or []) and given["notes_delete"].metadata["needs_approval"]
    (refused,) = tool_messages(agent([[("notes_delete", {"id": created["id"]})], "ok"], list(given.values())),
                               "notes_delete")  # fmt: skip
    assert refused.status == "error" and str(refused.content).startswith("cancelled: ")
    asked: list[tuple[str, dict[str, Any]]] = []

    def confirm(tool: Any, arguments: dict[str, Any]) -> bool:
        asked.append((tool.wire_name, arguments))
        return tool.wire_name == "notes.delete"

    history = agent([[("notes_delete", {"id": created["id"]})], "ok"], tools(recording, confirm=confirm))
    (done,) = tool_messages(history, "notes_delete")
    assert done.status == "success" and done.content == f"deleted note {created['id']}"
    assert asked == [("notes.delete", {"id": created["id"]})]
    assert recording.calls == [("notes.delete", {"id": created["id"]})]


def test_an_input_round_is_answered_by_on_input(recording: Recording) -> None:
    def on_input(requests: list[Any]) -> dict[str, Any]:
        return {r.key: {"action": "accept", "content": {"name": "Grace"}} for r in requests}

    (message,) = tool_messages(agent([[("greet", {})], "ok"], tools(recording, on_input=on_input)), "greet")
    assert message.artifact == {"message": "Hello, Grace!"}
    (unanswered,) = tool_messages(agent([[("greet", {})], "ok"], tools(recording)), "greet")
    assert unanswered.status == "error" and str(unanswered.content).startswith("input_required: ")


def test_code_mode_is_one_run_code_tool(recording: Recording) -> None:
    package = import_fresh(REPO / "generated", "sample_tools")
    given = tools(recording, package, code_mode=True, read_only=True)
    assert [t.name for t in given] == ["run_code"] and "async def get_weather" in given[0].description
    code = 'from tools import sample\nw = await sample.get_weather(city="Osaka")\nw["city"]\n'
    (message,) = tool_messages(agent([[("run_code", {"code": code})], "ok"], given), "run_code")
    assert message.status == "success" and message.artifact["value"] == "Osaka"
    assert recording.calls == [("get_weather", {"city": "Osaka"})]


def test_code_mode_shows_and_reaches_only_the_tools_left_in(
    recording: Recording, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = import_fresh(REPO / "generated", "sample_tools")
    given = tools(recording, package, code_mode=True, read_only=True)
    assert "notes_" not in given[0].description and "count_slowly" not in given[0].description
    left_out = 'from tools import sample\nawait sample.notes_delete(id="x")\n'
    (message,) = tool_messages(agent([[("run_code", {"code": left_out})], "ok"], given), "run_code")
    assert message.status == "error" and str(message.content).startswith("invalid_arguments: ")
    from mas.runtime.code_mode import server

    monkeypatch.setattr(server, "WHOLE_API_MAX_CHARS", 200)  # the discovery tools
    given = tools(recording, package, code_mode=True, read_only=True)
    assert [t.name for t in given] == ["run_code", "search_tools", "list_functions", "get_stubs"]
    step = [("search_tools", {"query": "delete a note by id", "limit": 10}), ("list_functions", {}),
            ("get_stubs", {"names": ["sample.notes_delete", "sample"]})]  # fmt: skip
    history = agent([step, "ok"], given)
    shown = {name: str(tool_messages(history, name)[0].content) for name in ("search_tools", "list_functions")}
    assert all("notes_" not in text and "count_slowly" not in text for text in shown.values())
    assert "get_weather" in shown["list_functions"]
    stubs = str(tool_messages(history, "get_stubs")[0].content)
    assert "async def notes_" not in stubs and "no function or module named 'sample.notes_delete'" in stubs
    assert recording.calls == []


def test_with_the_package_the_artifact_is_the_output_model_and_a_misfit_is_invalid_output(
    recording: Recording,
) -> None:
    package = import_fresh(REPO / "generated", "sample_tools")
    given = tools(recording, package)
    model = package.TOOLS["list_cities"].output_model
    by_name = {t.name: t for t in given}
    assert by_name["list_cities"].metadata is not None
    assert by_name["list_cities"].metadata["output_schema"] == model.model_json_schema(
        mode="serialization", by_alias=True
    )
    history = agent([[("get_weather", {"city": "Osaka"}), ("list_cities", {})], "ok"], given)
    (weather,) = tool_messages(history, "get_weather")
    assert isinstance(weather.artifact, package.TOOLS["get_weather"].output_model) and weather.artifact.city == "Osaka"
    assert json.loads(str(weather.content))["city"] == "Osaka"
    (cities,) = tool_messages(history, "list_cities")
    assert isinstance(cities.artifact, model) and cities.artifact.total > 0
    (untyped,) = tool_messages(agent([[("list_cities", {})], "ok"], tools(recording)), "list_cities")
    assert untyped.artifact is None  # without the package: the server's JSON text only
    broken = Tampered(recording, "get_weather", {"city": "Osaka", "temperature": "hot"})
    (failed,) = tool_messages(
        agent([[("get_weather", {"city": "Osaka"})], "ok"], tools(broken, package)), "get_weather"
    )
    assert failed.status == "error" and str(failed.content).startswith("invalid_output: ")


REPORT = "compile_report"


def test_a_task_tool_is_awaited_and_timed_out_through_the_runtime_and_progress_is_heard(
    tasks: Recording,
) -> None:
    heard: list[Any] = []
    given = tools(tasks, require_approval=False, on_progress=lambda *update: heard.append(update))
    history = agent(
        [[(REPORT, {"topic": "tides", "steps": 2}), ("count_slowly", {"steps": 2, "delay_seconds": 0})], "ok"], given
    )
    (report,) = tool_messages(history, REPORT)
    assert report.artifact == {"topic": "tides", "steps": 2, "audience": None}
    assert [update[:3] for update in heard] == [("count_slowly", 1, 2), ("count_slowly", 2, 2)]
    tasks.clear()
    timed = tools(tasks, require_approval=False, timeout_seconds=0.8)
    (late,) = tool_messages(agent([[(REPORT, {"topic": "tides", "steps": 30})], "ok"], timed), REPORT)
    assert late.status == "error" and str(late.content).startswith("timeout: ")
    assert tasks.task_status(REPORT, tasks.results[-1].metadata["task_id"]) == "cancelled"  # type: ignore[index]


def test_a_cancelled_ainvoke_cancels_its_call_through_the_contracts_cancel_event(tasks: Recording) -> None:
    (report,) = [t for t in tools(tasks, require_approval=False) if t.name == REPORT]

    cancel_once_sent(tasks, lambda: report.ainvoke({"topic": "tides", "steps": 30}))
    (options,) = tasks.options
    assert options["cancel_event"].is_set()


def test_code_mode_progress_reaches_on_progress(recording: Recording) -> None:
    package = import_fresh(REPO / "generated", "sample_tools")
    heard: list[Any] = []
    (run_code,) = tools(recording, package, code_mode=True, include="count_slowly", require_approval=False,
                        on_progress=lambda *update: heard.append(update))  # fmt: skip
    code = "from tools import sample\nawait sample.count_slowly(steps=2, delay_seconds=0)\n"
    (message,) = tool_messages(agent([[("run_code", {"code": code})], "ok"], [run_code]), "run_code")
    assert message.status == "success", message.content
    assert [(name, count) for name, count, _, _ in heard] == [("run_code", 1), ("run_code", 2)]
    assert "count_slowly" in str(heard[0][3])
