"""Typed failures, input rounds, retries and confirm, end to end through the repo's generated package.

The calls go ``generated/sample_tools`` -> ``RuntimeRegistry`` -> ``MCPToolProvider`` -> the sample
MCP server, over stdio and over streamable HTTP on 127.0.0.1. Nothing is mocked; a ``Counter``
between the package and the registry only counts what was sent.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Any

import pytest
from gen_helpers import REPO, import_fresh
from mcp_helpers import free_port, http_config, http_sample_server, stdio_config

from mas.runtime.contracts.tool_contract import ToolResultEnvelope, invoke_call_tool
from mas.runtime.mcp.provider import MCPToolProvider
from mas.runtime.registry import RuntimeRegistry

_KEYS = itertools.count()


def fresh_key() -> str:
    """flaky_lookup counts calls per key in the server process: every test takes its own key."""
    return f"key-{threading.get_ident()}-{next(_KEYS)}"


class Counter:
    """Forwards to the registry (every option, as a ``**kwargs`` provider) and counts the calls."""

    def __init__(self, registry: RuntimeRegistry) -> None:
        self.registry = registry
        self.sent: list[tuple[str, dict[str, Any], dict[str, Any]]] = []

    def call_tool(self, tool_name: str, arguments: dict[str, Any], **kwargs: Any) -> ToolResultEnvelope:
        self.sent.append((tool_name, dict(arguments), dict(kwargs)))
        return self.registry.call_tool(tool_name, arguments, **kwargs)

    async def acall_tool(self, tool_name: str, arguments: dict[str, Any], **kwargs: Any) -> ToolResultEnvelope:
        self.sent.append((tool_name, dict(arguments), dict(kwargs)))
        return await self.registry.acall_tool(tool_name, arguments, **kwargs)


@pytest.fixture(scope="module")
def pkg() -> ModuleType:
    return import_fresh(REPO / "generated", "sample_tools")


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    port = free_port()
    with http_sample_server(port, "unused-token"):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="module", params=["stdio", "http"])
def registry(request: pytest.FixtureRequest) -> Iterator[RuntimeRegistry]:
    if request.param == "stdio":
        provider = MCPToolProvider(stdio_config("sample"))
    else:
        provider = MCPToolProvider(http_config("sample", request.getfixturevalue("http_url")))
    with RuntimeRegistry({"sample": provider}) as reg:
        yield reg


@pytest.fixture
def counter(registry: RuntimeRegistry) -> Counter:
    return Counter(registry)


def name_please(requests: list[Any]) -> dict[str, Any]:
    return {r.key: {"action": "accept", "content": {"name": "Ada"}} for r in requests}


# --- input rounds -------------------------------------------------------------------------------


def test_on_input_answers_the_round_and_the_call_completes(pkg: ModuleType, counter: Counter) -> None:
    seen: list[Any] = []

    def handler(requests: list[Any]) -> dict[str, Any]:
        seen.extend(requests)
        return name_please(requests)

    greeting = pkg.Tools(counter).with_options(on_input=handler).sample.greet(greeting="Hi")
    assert greeting.message == "Hi, Ada!"
    (request,) = seen
    assert isinstance(request, pkg.ElicitationRequest) and isinstance(request, pkg.InputRequest)
    assert (request.key, request.method, request.message) == ("name", "elicitation/create", "What is your name?")
    assert request.requested_schema == {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    }
    first, second = counter.sent
    assert "input_responses" not in first[2]
    assert second[2] == {"input_responses": name_please(seen), "request_state": "greet:v1"}


def test_async_on_input_handler_on_the_async_path(pkg: ModuleType, counter: Counter) -> None:
    async def handler(requests: list[Any]) -> dict[str, Any]:
        await asyncio.sleep(0)
        return name_please(requests)

    async def main() -> Any:
        return await pkg.AsyncTools(counter).with_options(on_input=handler).sample.greet()

    assert asyncio.run(main()).message == "Hello, Ada!"
    assert len(counter.sent) == 2


def test_without_a_handler_a_typed_error_carries_requests_and_state(pkg: ModuleType, counter: Counter) -> None:
    tools = pkg.Tools(counter)
    with pytest.raises(pkg.ToolInputRequiredError) as caught:
        tools.sample.greet()
    error = caught.value
    assert isinstance(error, pkg.ToolError) and error.tool_name == "greet"
    assert error.request_state == "greet:v1"
    assert [(r.key, type(r).__name__) for r in error.requests] == [("name", "ElicitationRequest")]
    assert error.envelope["result_type"] == "input_required"
    resumed = tools.with_options(input_responses=name_please(error.requests), request_state=error.request_state)
    assert resumed.sample.greet().message == "Hello, Ada!"


def test_a_declined_input_is_the_tools_own_error(pkg: ModuleType, counter: Counter) -> None:
    tools = pkg.Tools(counter).with_options(on_input=lambda rs: {r.key: {"action": "decline"} for r in rs})
    with pytest.raises(pkg.ToolCallError, match="no name given"):
        tools.sample.greet()


def test_input_rounds_are_bounded(pkg: ModuleType, counter: Counter) -> None:
    # Answers that never satisfy the server (a wrong key) keep the tool asking; the bound ends it.
    tools = pkg.Tools(counter).with_options(on_input=lambda rs: {"other": {"action": "accept", "content": {}}})
    with pytest.raises(pkg.ToolProtocolError, match="input rounds"):
        tools.sample.greet()
    assert len(counter.sent) == pkg._runtime.MAX_INPUT_ROUNDS + 1


# --- retries ------------------------------------------------------------------------------------


def test_a_read_only_idempotent_tool_is_retried_on_timeout(pkg: ModuleType, counter: Counter) -> None:
    tools = pkg.Tools(counter).with_options(timeout_seconds=0.5, retries=2)
    found = tools.sample.flaky_lookup(key=fresh_key(), slow_calls=1, delay_seconds=3)
    assert found.attempt == 2 and len(counter.sent) == 2


def test_without_retries_the_timeout_is_typed(pkg: ModuleType, counter: Counter) -> None:
    tools = pkg.Tools(counter).with_options(timeout_seconds=0.3)
    with pytest.raises(pkg.ToolTimeoutError) as caught:
        tools.sample.flaky_lookup(key=fresh_key(), slow_calls=1, delay_seconds=3)
    assert caught.value.envelope["metadata"] == {"error_kind": "timeout"}
    assert not isinstance(caught.value, pkg.ToolCallError) and len(counter.sent) == 1


def test_retries_run_out(pkg: ModuleType, counter: Counter) -> None:
    tools = pkg.Tools(counter).with_options(timeout_seconds=0.3, retries=1)
    with pytest.raises(pkg.ToolTimeoutError):
        tools.sample.flaky_lookup(key=fresh_key(), slow_calls=5, delay_seconds=3)
    assert len(counter.sent) == 2


def test_a_tool_without_both_hints_is_never_retried(pkg: ModuleType, counter: Counter) -> None:
    # count_slowly declares no hints: not known to be read-only and idempotent.
    tools = pkg.Tools(counter).with_options(timeout_seconds=0.2, retries=3)
    with pytest.raises(pkg.ToolTimeoutError):
        tools.sample.count_slowly(steps=2, delay_seconds=0.5)
    assert len(counter.sent) == 1


def test_a_tool_error_is_never_retried(pkg: ModuleType, counter: Counter) -> None:
    tools = pkg.Tools(counter).with_options(retries=3)
    with pytest.raises(pkg.ToolCallError):  # the server refuses the arguments as a tool error
        tools.sample.flaky_lookup(key=fresh_key(), slow_calls=-1)
    assert len(counter.sent) == 1


# --- confirm ------------------------------------------------------------------------------------


def test_a_refused_destructive_tool_is_never_sent(pkg: ModuleType, counter: Counter) -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    def refuse(info: Any, arguments: dict[str, Any]) -> bool:
        asked.append((info.name, arguments))
        return False

    with pytest.raises(pkg.ToolCancelledError, match="nothing was sent") as caught:
        pkg.Tools(counter).with_options(confirm=refuse).sample.notes_delete(id="n1")
    assert asked == [("sample.notes.delete", {"id": "n1"})] and counter.sent == []
    assert caught.value.envelope["metadata"] == {"error_kind": "cancelled"}


def test_an_accepted_destructive_tool_runs(pkg: ModuleType, counter: Counter) -> None:
    tools = pkg.Tools(counter).with_options(confirm=lambda info, arguments: True)
    with pytest.raises(pkg.ToolCallError) as caught:  # the note does not exist: the tool's own error
        tools.sample.notes_delete(id="missing")
    assert caught.value.payload == {"code": "not_found", "id": "missing"} and len(counter.sent) == 1


def test_async_confirm_and_read_only_tools_are_not_asked(pkg: ModuleType, counter: Counter) -> None:
    asked: list[str] = []

    async def confirm(info: Any, arguments: dict[str, Any]) -> bool:
        asked.append(info.name)
        return False

    async def main() -> Any:
        tools = pkg.AsyncTools(counter).with_options(confirm=confirm)
        weather = await tools.sample.get_weather(city="Oslo")  # read-only: never asked
        with pytest.raises(pkg.ToolCancelledError):
            await tools.sample.notes_delete(id="x")
        return weather

    assert asyncio.run(main()).city == "Oslo"
    assert asked == ["sample.notes.delete"] and [name for name, _, _ in counter.sent] == ["get_weather"]


# --- every failure kind has its type ------------------------------------------------------------


def test_unknown_tool_raises_tool_not_found(pkg: ModuleType) -> None:
    with RuntimeRegistry({}) as empty, pytest.raises(pkg.ToolNotFoundError) as caught:
        pkg.Tools(empty).sample.get_weather(city="Paris")
    assert caught.value.tool_name == "get_weather"


def test_invalid_arguments_raise_tool_arguments_error(pkg: ModuleType) -> None:
    with RuntimeRegistry.from_sources(tools=[REPO / "library-samples" / "tools"]) as skills:
        with pytest.raises(pkg.ToolArgumentsError, match="from_unit"):
            pkg.Tools(skills).skills.unit_convert(value=1, from_unit="parsec", to_unit="kg")


def test_a_closed_provider_raises_tool_unavailable(pkg: ModuleType) -> None:
    provider = MCPToolProvider(stdio_config("gone"))
    provider.close()
    with pytest.raises(pkg.ToolUnavailableError) as caught:
        pkg.Tools(RuntimeRegistry({"sample": _Listed(provider)})).sample.get_weather(city="Paris")
    assert caught.value.envelope["metadata"] == {"error_kind": "unavailable"}


def test_a_set_cancel_event_raises_tool_cancelled(pkg: ModuleType, counter: Counter) -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(pkg.ToolCancelledError):
        pkg.Tools(counter).with_options(cancel_event=cancel).sample.get_weather(city="Paris")


def test_a_malformed_envelope_raises_tool_protocol_error(pkg: ModuleType) -> None:
    class Malformed:
        def call_tool(self, tool_name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
            return {"status": "finished", "result": 1}

    with pytest.raises(pkg.ToolProtocolError, match="status"):
        pkg.Tools(Malformed()).sample.get_weather(city="Paris")


def test_every_error_type_is_a_tool_error_and_distinct(pkg: ModuleType) -> None:
    names = [
        "ToolCallError",
        "ToolArgumentsError",
        "ToolNotFoundError",
        "ToolTimeoutError",
        "ToolCancelledError",
        "ToolUnavailableError",
        "ToolProtocolError",
        "ToolInputRequiredError",
    ]
    types = [getattr(pkg, name) for name in names]
    assert all(issubclass(t, pkg.ToolError) for t in types)
    assert all(not issubclass(a, b) for a in types for b in types if a is not b)
    assert set(names) <= set(pkg.__all__)


class _Listed:
    """A closed provider that still lists (from the sample's tool names) so the registry can route."""

    def __init__(self, provider: MCPToolProvider) -> None:
        self.provider = provider

    def list_tools(self) -> list[dict[str, Any]]:
        return [{"name": "get_weather", "description": "", "parameters": {"type": "object"}}]

    def call_tool(self, tool_name: str, arguments: Mapping[str, Any], **kwargs: Any) -> Any:
        return invoke_call_tool(self.provider, tool_name, arguments, **kwargs)
