"""Tasks behind ``call_tool``, both dialects, against real servers (docs/tasks.md).

* 2025-11-25: the MCP project's reference "everything" server (``@modelcontextprotocol/server-
  everything`` from the npm registry, installed into a user cache once by tests/npm_cache.py, run by
  Node 22 over stdio). Its ``simulate-research-query`` requires a task (``execution.taskSupport:
  "required"``), moves through four one-second stages and, with ``ambiguous=true``, asks for a
  clarification (``elicitation/create`` during ``tasks/result``).
* 2026-07-28: the repo's sample server with ``--with-tasks``, whose ``compile_report`` answers
  ``tools/call`` with ``resultType: "task"`` (the ``io.modelcontextprotocol/tasks`` extension),
  over stdio and streamable HTTP on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from gen_helpers import generate, import_fresh
from mcp import types as mcp_types
from mcp.shared.exceptions import MCPError
from mcp_helpers import free_port, http_config, http_sample_server, stdio_config
from npm_cache import reference_or_skip

from mas.runtime.config import MCPServerConfig
from mas.runtime.contracts.tool_contract import ToolResultEnvelope
from mas.runtime.mcp import _tasks as _mcp_tasks
from mas.runtime.mcp.provider import MCPToolProvider
from mas.runtime.registry import RuntimeRegistry

pytestmark = pytest.mark.slow

RESEARCH = "simulate-research-query"
#: The everything server does not exit on stdin EOF while it holds tasks: each close would wait
#: the default 2 s before stopping it.
EXIT_GRACE = 0.2


def _status(provider: MCPToolProvider, tool: str, task_id: str) -> ToolResultEnvelope:
    """How the task stands on the server (``tasks/get``), without waiting for it."""
    return provider.call_tool(tool, {}, request_state=_mcp_tasks.TASK_PREFIX + task_id, allow_claimed=True)


def _eventually(provider: MCPToolProvider, tool: str, task_id: str, status: str) -> str | None:
    deadline = time.monotonic() + 10
    seen = _status(provider, tool, task_id).session_status
    while seen != status and time.monotonic() < deadline:
        time.sleep(0.1)
        seen = _status(provider, tool, task_id).session_status
    return seen


def _answer(provider: MCPToolProvider, tool: str, asked: ToolResultEnvelope, answer: dict[str, Any]) -> Any:
    assert asked.result_type == "input_required", asked.to_dict()
    [key] = asked.result["inputRequests"]
    assert asked.result["inputRequests"][key]["method"] == "elicitation/create"
    return provider.call_tool(
        tool, {}, request_state=asked.result["requestState"], input_responses={key: answer}
    ), asked.result["inputRequests"][key]


# --- 2025-11-25: the reference "everything" server ---------------------------------------------------


@pytest.fixture(scope="module")
def everything() -> tuple[str, str]:
    """(node, the server's entry point), installed from npm into the user cache once."""
    programs = reference_or_skip()
    return str(programs.node), str(programs.everything)


def _everything_config(everything: tuple[str, str]) -> MCPServerConfig:
    node, entry = everything
    return MCPServerConfig(
        name="everything",
        transport="stdio",
        command=node,
        args=(entry, "stdio"),
        connect_timeout_seconds=30.0,
        client_capabilities=("elicitation",),  # the research tool asks only a client that declares it
        exit_grace_seconds=EXIT_GRACE,
    )


@pytest.fixture(scope="module")
def research(everything: tuple[str, str]) -> Iterator[MCPToolProvider]:
    with MCPToolProvider(_everything_config(everything)) as provider:
        yield provider


def test_the_everything_server_speaks_the_2025_dialect_and_requires_a_task_for_research(
    research: MCPToolProvider,
) -> None:
    listed = {tool["name"]: tool for tool in research.list_mcp_tools()}
    assert _mcp_tasks.task_support_of(listed[RESEARCH]) == "required"
    assert _mcp_tasks.task_support_of(listed["echo"]) == "forbidden"
    assert research.task_dialect() == "2025-11-25"


@pytest.mark.full
def test_call_tool_returns_the_research_report_inline(research: MCPToolProvider) -> None:
    started = time.monotonic()
    envelope = research.call_tool(RESEARCH, {"topic": "typed wrappers"})
    assert envelope.status == "success", envelope.to_dict()
    assert envelope.text.startswith("# Research Report: typed wrappers")
    assert "working` → `completed`" in envelope.text
    # Four one-second stages, polled at the server's interval (1 s): not at once, not much later.
    assert 3.0 <= time.monotonic() - started < 15
    assert envelope.result_mode == "inline" and envelope.execution_mode == "async"
    assert envelope.metadata is not None and len(envelope.metadata["task_id"]) == 32
    # A tool that forbids tasks is still an ordinary call.
    plain = research.call_tool("echo", {"message": "hi"})
    assert (plain.text, plain.execution_mode) == ("Echo: hi", "sync")


def test_an_ambiguous_query_asks_through_the_input_round_and_completes(research: MCPToolProvider) -> None:
    asked = research.call_tool(RESEARCH, {"topic": "python", "ambiguous": True})
    done, request = _answer(research, RESEARCH, asked, {"action": "accept", "content": {"interpretation": "snake"}})
    options = request["params"]["requestedSchema"]["properties"]["interpretation"]["oneOf"]
    assert {"const": "snake", "title": "Python snake species"} in options
    assert done.status == "success", done.to_dict()
    assert "- **Clarification**: snake" in done.text
    assert "`input_required` → `working` → `completed`" in done.text


def test_a_started_task_comes_back_at_once_and_can_be_followed_to_its_report(research: MCPToolProvider) -> None:
    started = time.monotonic()
    session = research.call_tool(RESEARCH, {"topic": "tides"}, allow_claimed=True)
    assert time.monotonic() - started < 3  # not the four stages
    assert (session.status, session.result_mode, session.session_status) == ("running", "session", "working")
    assert session.session_id is not None and not session.is_error
    assert session.metadata is not None and session.metadata["task"]["poll_interval_ms"] == 1000
    assert session.metadata["task"]["dialect"] == "2025-11-25"
    assert _status(research, RESEARCH, session.session_id).session_status == "working"
    followed = research.call_tool(RESEARCH, {}, request_state=_mcp_tasks.TASK_PREFIX + session.session_id)
    assert followed.text.startswith("# Research Report: tides"), followed.to_dict()
    assert _status(research, RESEARCH, session.session_id).session_status == "completed"


def test_a_timeout_cancels_the_task_on_the_server(research: MCPToolProvider) -> None:
    started = time.monotonic()
    envelope = research.call_tool(RESEARCH, {"topic": "slow"}, timeout_seconds=1.5)
    assert time.monotonic() - started < 8
    assert envelope.error_kind == "timeout", envelope.to_dict()
    task_id = envelope.metadata["task_id"] if envelope.metadata else None
    assert task_id is not None and f"timed out waiting for task {task_id!r}" in envelope.text
    assert _eventually(research, RESEARCH, task_id, "cancelled") == "cancelled"


def test_a_cancel_event_cancels_the_task_on_the_server(research: MCPToolProvider) -> None:
    cancel = threading.Event()
    timer = threading.Timer(1.2, cancel.set)
    timer.start()
    try:
        envelope = research.call_tool(RESEARCH, {"topic": "stop"}, cancel_event=cancel)
    finally:
        timer.cancel()
    assert envelope.error_kind == "cancelled", envelope.to_dict()
    task_id = envelope.metadata["task_id"] if envelope.metadata else None
    assert task_id is not None
    assert _eventually(research, RESEARCH, task_id, "cancelled") == "cancelled"


def test_a_started_task_is_cancelled_by_its_id(research: MCPToolProvider) -> None:
    session = research.call_tool(RESEARCH, {"topic": "later"}, allow_claimed=True)
    assert session.session_id is not None
    cancelled = research.call_tool(RESEARCH, {}, request_state=_mcp_tasks.TASK_CANCEL_PREFIX + session.session_id)
    assert (cancelled.status, cancelled.session_status) == ("success", "cancelled"), cancelled.to_dict()
    assert _status(research, RESEARCH, session.session_id).session_status == "cancelled"
    # Following a cancelled task ends at once, saying so.
    followed = research.call_tool(RESEARCH, {}, request_state=_mcp_tasks.TASK_PREFIX + session.session_id)
    assert followed.error_kind == "cancelled" and "was cancelled on the server" in followed.text


def test_an_unknown_task_id_is_a_one_line_protocol_error(research: MCPToolProvider) -> None:
    envelope = research.call_tool(RESEARCH, {}, request_state=_mcp_tasks.TASK_PREFIX + "no-such-task")
    assert envelope.error_kind == "protocol", envelope.to_dict()
    assert "'no-such-task' is unknown to the server" in envelope.text and "\n" not in envelope.text


@pytest.fixture(scope="module")
def generated(everything: tuple[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any]]:
    """A package generated from the live everything server, and a registry on the same infra."""
    folder = tmp_path_factory.mktemp("everything-tasks")
    node, entry = everything
    server = {"name": "everything", "protocol": "mcp", "transport": "stdio", "command": node, "args": [entry, "stdio"],
              "connect_timeout_seconds": 30, "client_capabilities": ["elicitation"],
              "exit_grace_seconds": EXIT_GRACE}  # fmt: skip
    document = {"apiVersion": "toolgen/v1", "kind": "ToolServerRegistry", "spec": {"servers": [server]}}
    infra = folder / "infra.yaml"
    infra.write_text(json.dumps(document), encoding="utf-8")
    args = ["--infra", str(infra), "--out", "out", "--package", "everything_tasks", "--no-cache", "-q"]
    assert generate(folder, args) == 0
    pkg: ModuleType = import_fresh(folder / "out", "everything_tasks")
    with RuntimeRegistry.from_sources(infra=[infra]) as registry:
        yield pkg, registry


def test_the_lock_records_the_dialect_and_the_task_required_tool(generated: tuple[Any, Any]) -> None:
    pkg, _ = generated
    lock = json.loads((Path(pkg.__file__).parents[2] / "toolgen.lock.json").read_text(encoding="utf-8"))
    entry = lock["servers"]["everything"]
    assert entry["task_dialect"] == "2025-11-25"
    research = next(t for t in entry["tools"] if t["name"] == RESEARCH)
    assert research["execution"] == {"taskSupport": "required"}


def test_the_typed_method_of_a_task_required_tool_waits_and_returns_the_report(generated: tuple[Any, Any]) -> None:
    pkg, registry = generated
    output = pkg.Tools(registry).everything.simulate_research_query(topic="typed wrappers")
    assert output.text.startswith("# Research Report: typed wrappers")


@pytest.mark.full
def test_the_typed_method_answers_the_clarification_through_on_input(generated: tuple[Any, Any]) -> None:
    pkg, registry = generated
    seen: list[Any] = []

    def on_input(requests: list[Any]) -> dict[str, Any]:
        seen.extend(requests)
        return {r.key: {"action": "accept", "content": {"interpretation": "comedy"}} for r in requests}

    tools = pkg.Tools(registry).with_options(on_input=on_input).everything
    output = tools.simulate_research_query(topic="python", ambiguous=True)
    assert [r.method for r in seen] == ["elicitation/create"]
    assert "- **Clarification**: comedy" in output.text


# --- 2026-07-28: the sample server's compile_report ---------------------------------------------------


@pytest.fixture(scope="module", params=["stdio", "streamable-http"])
def sample(request: pytest.FixtureRequest) -> Iterator[MCPToolProvider]:
    if request.param == "stdio":
        with MCPToolProvider(stdio_config("sample", "--with-tasks")) as provider:
            yield provider
        return
    port = free_port()
    with http_sample_server(port, "t", "--with-tasks"):
        with MCPToolProvider(http_config("sample", f"http://127.0.0.1:{port}/mcp")) as provider:
            yield provider


REPORT = "compile_report"


def test_the_sample_server_speaks_the_2026_extension(sample: MCPToolProvider) -> None:
    assert sample.task_dialect() == "2026-07-28"
    listed = {tool["name"]: tool for tool in sample.list_mcp_tools()}
    assert "execution" not in listed[REPORT]  # 2026 has no per-tool hint: the server decides


def test_compile_report_returns_its_typed_report_inline(sample: MCPToolProvider) -> None:
    envelope = sample.call_tool(REPORT, {"topic": "tides", "steps": 2})
    assert envelope.status == "success", envelope.to_dict()
    assert envelope.structured_content == {"topic": "tides", "steps": 2, "audience": None}
    assert envelope.execution_mode == "async" and envelope.metadata is not None and envelope.metadata["task_id"]


def test_a_2026_task_asks_through_the_input_round_and_completes(sample: MCPToolProvider) -> None:
    asked = sample.call_tool(REPORT, {"topic": "tides", "steps": 1, "ask_audience": True})
    done, request = _answer(sample, REPORT, asked, {"action": "accept", "content": {"audience": "sailors"}})
    assert request["params"]["message"] == "Who is the report on tides for?"
    assert done.structured_content == {"topic": "tides", "steps": 1, "audience": "sailors"}, done.to_dict()


def test_a_failed_2026_task_is_a_tool_error_with_the_servers_reason(sample: MCPToolProvider) -> None:
    envelope = sample.call_tool(REPORT, {"topic": "tides", "steps": 1, "fail": True})
    assert envelope.error_kind == "tool_error", envelope.to_dict()
    assert "failed: the report on tides could not be compiled (MCP error -32603)" in envelope.text


def test_a_started_2026_task_moves_from_working_to_completed(sample: MCPToolProvider) -> None:
    session = sample.call_tool(REPORT, {"topic": "tides", "steps": 3}, allow_claimed=True)
    assert (session.result_mode, session.session_status) == ("session", "working"), session.to_dict()
    assert session.session_id is not None
    assert session.metadata is not None and session.metadata["task"]["dialect"] == "2026-07-28"
    assert _eventually(sample, REPORT, session.session_id, "completed") == "completed"
    followed = sample.call_tool(REPORT, {}, request_state=_mcp_tasks.TASK_PREFIX + session.session_id)
    assert followed.structured_content == {"topic": "tides", "steps": 3, "audience": None}


def test_a_timeout_cancels_the_2026_task_on_the_server(sample: MCPToolProvider) -> None:
    envelope = sample.call_tool(REPORT, {"topic": "tides", "steps": 30}, timeout_seconds=0.8)
    assert envelope.error_kind == "timeout", envelope.to_dict()
    task_id = envelope.metadata["task_id"] if envelope.metadata else None
    assert task_id is not None
    assert _status(sample, REPORT, task_id).session_status == "cancelled"


def test_a_cancel_event_cancels_the_2026_task_on_the_server(sample: MCPToolProvider) -> None:
    cancel = threading.Event()
    timer = threading.Timer(0.6, cancel.set)
    timer.start()
    try:
        envelope = sample.call_tool(REPORT, {"topic": "tides", "steps": 30}, cancel_event=cancel)
    finally:
        timer.cancel()
    assert envelope.error_kind == "cancelled", envelope.to_dict()
    task_id = envelope.metadata["task_id"] if envelope.metadata else None
    assert task_id is not None
    assert _eventually(sample, REPORT, task_id, "cancelled") == "cancelled"


def test_a_2026_task_is_cancelled_by_its_id(sample: MCPToolProvider) -> None:
    session = sample.call_tool(REPORT, {"topic": "tides", "steps": 30}, allow_claimed=True)
    assert session.session_id is not None
    cancelled = sample.call_tool(REPORT, {}, request_state=_mcp_tasks.TASK_CANCEL_PREFIX + session.session_id)
    assert cancelled.session_status == "cancelled", cancelled.to_dict()


def test_a_server_without_tasks_says_so_when_asked_to_follow_one() -> None:
    with MCPToolProvider(stdio_config("plain")) as provider:
        assert provider.task_dialect() is None
        envelope = provider.call_tool("get_weather", {}, request_state=_mcp_tasks.TASK_PREFIX + "x")
    assert envelope.error_kind == "protocol" and "the server advertises no tasks" in envelope.text


# --- the bounds -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("interval_ms", "seconds"),
    [(None, 1.0), (0, 1.0), (-5, 1.0), (float("nan"), 1.0), (1, 0.05), (250, 0.25), (10**9, 5.0)],
)
def test_a_servers_poll_interval_is_honoured_within_bounds(interval_ms: float | None, seconds: float) -> None:
    assert _mcp_tasks.poll_seconds(interval_ms) == seconds


def test_generate_records_the_2026_dialect_in_the_lock(tmp_path: Path) -> None:
    config = stdio_config("sample", "--with-tasks")
    server = {"name": "sample", "protocol": "mcp", "transport": "stdio", "command": "python",
              "args": list(config.args), "env": dict(config.env), "cwd": config.cwd}  # fmt: skip
    document = {"apiVersion": "toolgen/v1", "kind": "ToolServerRegistry", "spec": {"servers": [server]}}
    (tmp_path / "infra.yaml").write_text(json.dumps(document), encoding="utf-8")
    args = ["--infra", "infra.yaml", "--out", "out", "--package", "sample_tasks", "--no-cache", "-q"]
    assert generate(tmp_path, args) == 0
    lock = json.loads((tmp_path / "toolgen.lock.json").read_text(encoding="utf-8"))
    assert lock["servers"]["sample"]["task_dialect"] == "2026-07-28"


# --- typed task handles in a generated package (everything server) ----------------------------------


@pytest.mark.full
def test_a_typed_handle_moves_from_working_to_completed_and_wait_returns_the_typed_value(
    generated: tuple[Any, Any],
) -> None:
    pkg, registry = generated
    tools = pkg.Tools(registry)
    task = tools.tasks.everything.simulate_research_query(topic="handles")
    assert isinstance(task, pkg.ToolTask) and len(task.id) == 32
    first = task.status()
    assert (first.task_id, first.state, first.poll_interval_ms) == (task.id, "working", 1000)
    value = task.wait(timeout_seconds=30)
    assert type(value) is type(tools.everything.echo(message="x"))  # the plain method's type: ToolOutput
    assert value.text.startswith("# Research Report: handles")
    assert task.status().state == "completed"


def test_a_typed_handle_is_resumed_from_its_id_and_cancelled(generated: tuple[Any, Any]) -> None:
    pkg, registry = generated
    started = pkg.Tools(registry).tasks.everything.simulate_research_query(topic="elsewhere")
    # Another process needs only the id: a fresh Tools on the same infra resumes it.
    resumed = pkg.Tools(registry).tasks.resume(pkg.TOOLS["simulate-research-query"], started.id)
    assert resumed.status().state == "working"
    after = resumed.cancel()
    assert (after.task_id, after.state) == (started.id, "cancelled")
    assert started.status().state == "cancelled"
    with pytest.raises(pkg.ToolCancelledError):
        started.wait(timeout_seconds=10)


@pytest.mark.full  # four one-second research stages each; the fast tier keeps three of the research tests
def test_the_async_handle_answers_the_clarification_and_completes(generated: tuple[Any, Any]) -> None:
    pkg, registry = generated

    async def on_input(requests: list[Any]) -> dict[str, Any]:
        return {r.key: {"action": "accept", "content": {"interpretation": "snake"}} for r in requests}

    async def main() -> tuple[str, Any]:
        tools = pkg.AsyncTools(registry).with_options(on_input=on_input)
        task = await tools.tasks.everything.simulate_research_query(topic="python", ambiguous=True)
        assert isinstance(task, pkg.AsyncToolTask)
        return (await task.status()).state, await task.wait(timeout_seconds=30)

    state, value = asyncio.run(main())
    assert state in ("working", "input_required")
    assert "- **Clarification**: snake" in value.text


class _TimedOutSession:
    """Answers every request as the SDK does when the request's bound runs out."""

    async def send_request(self, *args: Any) -> Any:
        raise MCPError(mcp_types.REQUEST_TIMEOUT, "Timed out while waiting for response")


@pytest.mark.parametrize("method", ["get", "payload", "update"])
def test_a_tasks_request_that_outlives_the_calls_deadline_is_the_call_timing_out(method: str) -> None:
    """Every request made while following a task is bounded by what is left of the call's deadline,
    so the SDK's request timeout there is the call's timeout, not a protocol fault (``tasks/get``
    timing out on a busy machine was reported as ``protocol``)."""
    tasks = _mcp_tasks.Tasks(_TimedOutSession(), "2025-11-25")  # type: ignore[arg-type]
    request = tasks.update("t1", {}, 0.1) if method == "update" else getattr(tasks, method)("t1", 0.1)
    with pytest.raises(TimeoutError):
        asyncio.run(request)


LOST_KINDS = [
    (mcp_types.INVALID_PARAMS, "protocol"),
    (mcp_types.CONNECTION_CLOSED, "unavailable"),
    (-32603, "protocol"),
]


@pytest.mark.parametrize(("code", "kind"), LOST_KINDS)
def test_other_failed_tasks_requests_end_the_task_by_kind(code: int, kind: str) -> None:
    lost = _mcp_tasks.Tasks(None, "2025-11-25")._lost("t1", MCPError(code, "no"))  # type: ignore[arg-type]
    assert isinstance(lost, _mcp_tasks.TaskEnded) and lost.kind == kind


def test_a_tasks_get_answer_about_another_task_is_never_followed() -> None:
    """Issue 31, defect 13: tests/servers/other_task_server.py answers `tasks/get` about a new
    task with an older task's completed state. The call used to return the older task's result
    while its envelope named the new task; now it is a `protocol` error naming both ids."""
    server = Path(__file__).resolve().parents[1] / "servers" / "other_task_server.py"
    with MCPToolProvider(stdio_config("liar", "--with-tasks", script=server)) as provider:
        first = provider.call_tool(REPORT, {"topic": "tides", "steps": 1}, timeout_seconds=30)
        assert first.structured_content == {"topic": "tides", "steps": 1, "audience": None}, first.to_dict()
        second = provider.call_tool(REPORT, {"topic": "storms", "steps": 1}, timeout_seconds=30)
    assert second.is_error and second.error_kind == "protocol", second.to_dict()
    assert second.structured_content is None
    old, new = first.metadata["task_id"], second.metadata["task_id"]  # type: ignore[index]
    assert f"tasks/get about task {new!r} was answered about another task, {old!r}" in str(second.result)
