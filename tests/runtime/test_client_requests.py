"""Server-to-client requests during a call reach the caller's ``on_input``, against real servers.

The server is the MCP project's reference "everything" server (``@modelcontextprotocol/server-
everything`` from the npm registry, installed into a user cache once by tests/npm_cache.py, run by
Node 22 over streamable HTTP on 127.0.0.1). Its ``trigger-elicitation-request``,
``trigger-sampling-request`` and ``get-roots-list`` send ``elicitation/create``,
``sampling/createMessage`` and ``roots/list`` to the client in the middle of the call, the
2025-11-25 way, and it lists each of them only when the client declares that capability. A
package generated from its live listing answers them with the same ``on_input`` that answers
2026-style ``input_required`` rounds (tests/codegen/test_contract_e2e.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from gen_helpers import generate, import_fresh
from mcp_helpers import free_port, http_config, stdio_config
from npm_cache import reference_or_skip
from prefork import python_args

from mas.runtime.mcp._input import apply_elicitation_defaults
from mas.runtime.mcp.provider import MCPToolProvider
from mas.runtime.registry import RuntimeRegistry
from mas.samples.mcp_server import PROFILE_SCHEMA

ASKING_TOOLS = {
    "elicitation": "trigger-elicitation-request",
    "sampling": "trigger-sampling-request",
    "roots": "get-roots-list",
}
PROFILE = {"name": "Grace", "check": True, "email": "grace@example.com"}
#: The caller's answers to sampling and roots requests.
ANSWERS: dict[str, Any] = {
    "sampling/createMessage": {
        "role": "assistant",
        "model": "test-model",
        "content": {"type": "text", "text": "A reply from the caller's LLM"},
    },
    "roots/list": {"roots": [{"uri": "file:///srv/project", "name": "project"}]},
}


def asked(requests: list[Any], method: str) -> list[Any]:
    """The requests of one method. The everything server also asks for roots on its own soon after
    connecting; when that lands inside a call, it is that call's question, for the same handler."""
    return [r for r in requests if r.method == method]


@pytest.fixture(scope="module")
def everything_url() -> Iterator[str]:
    programs = reference_or_skip()
    port = free_port()
    proc = subprocess.Popen(
        [str(programs.node), str(programs.everything), "streamableHttp"],
        env={**os.environ, "PORT": str(port)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the everything server did not start (exit {proc.poll()})") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _infra(folder: Path, url: str, capabilities: list[str]) -> Path:
    path = folder / "infra.yaml"
    server = {"name": "everything", "protocol": "mcp", "transport": "streamable-http", "url": url,
              "connect_timeout_seconds": 20, "client_capabilities": capabilities}  # fmt: skip
    document = {"apiVersion": "toolgen/v1", "kind": "ToolServerRegistry", "spec": {"servers": [server]}}
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def answering(everything_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, Any]]:
    """A package generated from the live server (all three declared) and a registry on the same infra."""
    folder = tmp_path_factory.mktemp("everything")
    infra = _infra(folder, everything_url, ["elicitation", "sampling", "roots"])
    args = ["--infra", str(infra), "--out", "out", "--package", "everything_tools", "--no-cache", "-q"]
    assert generate(folder, args) == 0
    pkg = import_fresh(folder / "out", "everything_tools")
    with RuntimeRegistry.from_sources(infra=[infra]) as registry:
        # The server asks for roots on its own 350 ms after connecting (refused: no call is in
        # flight); let that pass so each test's handler sees its own call's questions.
        time.sleep(1)
        yield pkg, registry


@pytest.mark.parametrize("declared", [[], ["elicitation"], ["sampling", "roots"], ["elicitation", "sampling", "roots"]])
def test_the_server_sees_exactly_the_declared_capabilities(everything_url: str, declared: list[str]) -> None:
    # The everything server lists each asking tool only when the client declares its capability.
    config = http_config("everything", everything_url, client_capabilities=tuple(declared))
    with MCPToolProvider(config) as provider:
        listed = {tool["name"] for tool in provider.list_tools()}
    assert {kind for kind, tool in ASKING_TOOLS.items() if tool in listed} == set(declared)


def test_elicitation_during_a_call_reaches_on_input(answering: tuple[ModuleType, Any]) -> None:
    pkg, registry = answering
    seen: list[Any] = []

    def on_input(requests: list[Any]) -> dict[str, Any]:
        seen.extend(requests)
        return {r.key: ANSWERS.get(r.method, {"action": "accept", "content": PROFILE}) for r in requests}

    output = pkg.Tools(registry).with_options(on_input=on_input).everything.trigger_elicitation_request()
    [request] = asked(seen, "elicitation/create")
    assert isinstance(request, pkg.ElicitationRequest)
    assert request.message == "Please provide inputs for the following fields:"
    assert request.requested_schema is not None and "firstLine" in request.requested_schema["properties"]
    raw = json.loads(output.text.partition("Raw result: ")[2])
    # The user's values reach the server, and SEP-1034 fills in each default the user left out.
    assert raw["action"] == "accept"
    assert {key: raw["content"][key] for key in PROFILE} == PROFILE
    assert raw["content"]["firstLine"] == "It was a dark and stormy night."
    assert raw["content"]["integer"] == 42


def test_sampling_and_roots_reach_the_same_handler(answering: tuple[ModuleType, Any]) -> None:
    pkg, registry = answering
    seen: list[Any] = []

    def on_input(requests: list[Any]) -> dict[str, Any]:
        seen.extend(requests)
        return {r.key: ANSWERS[r.method] for r in requests}

    tools = pkg.Tools(registry).with_options(on_input=on_input).everything
    sampled = tools.trigger_sampling_request(prompt="Say hello")
    roots = tools.get_roots_list()
    [sampling] = asked(seen, "sampling/createMessage")
    assert isinstance(sampling, pkg.SamplingRequest)
    assert sampling.params["messages"][0]["content"]["text"].endswith("Say hello")
    assert asked(seen, "roots/list") and all(isinstance(r, pkg.RootsRequest) for r in asked(seen, "roots/list"))
    assert "A reply from the caller's LLM" in sampled.text and "test-model" in sampled.text
    assert "file:///srv/project" in roots.text


def test_the_async_path_answers_the_same_way(answering: tuple[ModuleType, Any]) -> None:
    pkg, registry = answering

    async def on_input(requests: list[Any]) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {r.key: ANSWERS.get(r.method, {"action": "decline"}) for r in requests}

    async def main() -> Any:
        return await pkg.AsyncTools(registry).with_options(on_input=on_input).everything.trigger_elicitation_request()

    assert "User declined" in asyncio.run(main()).text


def test_without_a_handler_the_caller_gets_a_typed_error_and_the_server_a_refusal(
    answering: tuple[ModuleType, Any], caplog: pytest.LogCaptureFixture
) -> None:
    pkg, registry = answering
    caplog.set_level(logging.INFO, logger="mas.runtime.mcp_provider")
    tools = pkg.Tools(registry).with_options(timeout_seconds=1)  # the server's request waits 1 s for an answer
    with pytest.raises(pkg.ToolInputRequiredError) as caught:
        tools.everything.trigger_elicitation_request()
    error = caught.value
    [request] = asked(error.requests, "elicitation/create")
    assert f"{request.key} (elicitation/create)" in str(error) and "on_input" in str(error)
    deadline = time.monotonic() + 10
    while "refusing and cancelling the call" not in caplog.text and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "no answer to " in caplog.text and f"{request.key} (elicitation/create)" in caplog.text
    assert "within 1 s; refusing and cancelling the call" in caplog.text
    # The round is over: answering it now is refused with a one-line protocol error, nothing sent.
    late = registry.call_tool(
        "trigger-elicitation-request", {}, input_responses={request.key: {"action": "decline"}},
        request_state=error.request_state,
    )  # fmt: skip
    assert late.is_error and late.metadata["error_kind"] == "protocol"
    assert "its input round is over" in str(late.result)


def test_an_invalid_answer_fails_the_call_naming_the_request(answering: tuple[ModuleType, Any]) -> None:
    _, registry = answering
    first = registry.call_tool("trigger-elicitation-request", {})
    assert first.result_type == "input_required"
    requests = first.result["inputRequests"]
    [key] = [k for k, r in requests.items() if r["method"] == "elicitation/create"]
    responses = {k: ANSWERS.get(r["method"], {"action": "maybe"}) for k, r in requests.items()}
    answer = registry.call_tool(
        "trigger-elicitation-request", {}, input_responses=responses, request_state=first.result["requestState"]
    )
    assert answer.is_error and answer.metadata["error_kind"] == "invalid_arguments"
    assert f"invalid input_responses: {key} (elicitation/create)" in str(answer.result)
    assert "\n" not in str(answer.result)


def test_an_undeclared_kind_is_never_asked(everything_url: str) -> None:
    # Nothing declared: the server does not even offer the tool, so nothing can reach a handler.
    with MCPToolProvider(http_config("everything", everything_url)) as provider:
        envelope = provider.call_tool("trigger-elicitation-request", {})
    assert envelope.is_error


def test_elicitation_defaults_fill_only_what_the_user_left_out() -> None:
    params = {
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "default": "Ada"}, "age": {"type": "integer", "default": 36},
                           "note": {"type": "string"}},
        }
    }  # fmt: skip
    assert apply_elicitation_defaults(params, {"action": "accept", "content": {"name": "Bob"}}) == {
        "action": "accept",
        "content": {"name": "Bob", "age": 36},
    }
    assert apply_elicitation_defaults(params, {"action": "accept"})["content"] == {"name": "Ada", "age": 36}
    assert apply_elicitation_defaults(params, {"action": "decline"}) == {"action": "decline"}
    assert apply_elicitation_defaults({}, {"action": "accept", "content": {}}) == {"action": "accept", "content": {}}


# --- the repo's sample server (mas/samples/mcp_server.py --with-client-requests) ---------------
# Its ask_profile, draft_reply and client_roots send the client a request during the call. A
# server may do so only on a 2025-11-25 connection (a 2026 one has no back-channel), so these
# entries say `connect_mode: legacy`.


def sample_config(*declared: str) -> Any:
    return stdio_config("sample", "--with-client-requests", connect_mode="legacy", client_capabilities=tuple(declared))


def test_the_sample_servers_requests_reach_the_caller_over_stdio() -> None:
    answers = {**ANSWERS, "elicitation/create": {"action": "accept", "content": {"name": "Lin"}}}
    seen: list[str] = []
    with MCPToolProvider(sample_config("elicitation", "sampling", "roots")) as provider:
        registry = RuntimeRegistry({"sample": provider})
        results = {}
        for tool, args in (("ask_profile", {}), ("draft_reply", {"prompt": "hi"}), ("client_roots", {})):
            envelope = registry.call_tool(tool, args, timeout_seconds=20)
            while envelope.result_type == "input_required":
                requests = envelope.result["inputRequests"]
                seen.extend(r["method"] for r in requests.values())
                envelope = registry.call_tool(
                    tool, args, timeout_seconds=20, request_state=envelope.result["requestState"],
                    input_responses={key: answers[r["method"]] for key, r in requests.items()},
                )  # fmt: skip
            assert not envelope.is_error, envelope.result
            results[tool] = envelope.structured_content["answer"]
    assert seen == ["elicitation/create", "sampling/createMessage", "roots/list"]
    # SEP-1034: the fields the user left out arrive with their schema defaults.
    assert results["ask_profile"] == {
        "action": "accept",
        "content": {"name": "Lin", "age": 36, "score": 9.5, "plan": "free", "newsletter": False},
    }
    assert results["draft_reply"]["content"]["text"] == "A reply from the caller's LLM"
    assert results["client_roots"] == {"roots": [{"uri": "file:///srv/project", "name": "project"}]}


def test_an_undeclared_kind_is_refused_and_the_caller_told_what_was_asked() -> None:
    # Only sampling declared: the server's elicitation/create gets the SDK's refusal, which this
    # server reports as its tool error, so the caller's typed error names what was asked.
    with MCPToolProvider(sample_config("sampling")) as provider:
        envelope = provider.call_tool("ask_profile", {}, timeout_seconds=20)
    assert envelope.is_error and envelope.error_kind == "tool_error"  # a package raises ToolCallError
    assert "the client refused: Elicitation not supported" in str(envelope.result)


@pytest.fixture(scope="module")
def sample_pkg(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, Path]:
    """A package generated from the sample server with its asking tools, and the infra folder."""
    folder = tmp_path_factory.mktemp("sample")
    for mode in ("legacy", "auto"):
        server = {"name": "sample", "protocol": "mcp", "transport": "stdio", "command": "python",
                  "args": [*python_args("-m", "mas.samples.mcp_server", pythonpath=None), "--with-client-requests"],
                  "connect_mode": mode,
                  "client_capabilities": ["elicitation"], "connect_timeout_seconds": 20}  # fmt: skip
        document = {"apiVersion": "toolgen/v1", "kind": "ToolServerRegistry", "spec": {"servers": [server]}}
        (folder / f"{mode}.yaml").write_text(json.dumps(document), encoding="utf-8")
    args = ["--infra", "auto.yaml", "--out", "out", "--package", "sample_asking", "--no-cache", "-q"]
    assert generate(folder, args) == 0
    return import_fresh(folder / "out", "sample_asking"), folder


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_one_handler_answers_whichever_way_the_server_asks(sample_pkg: tuple[ModuleType, Path], mode: str) -> None:
    # legacy: ask_profile sends elicitation/create during the call; auto (a 2026 connection, no
    # back-channel): it returns the same form as an input_required round. One handler, one shape,
    # and the same SEP-1034 defaults either way.
    pkg, folder = sample_pkg
    seen: list[Any] = []

    def on_input(requests: list[Any]) -> dict[str, Any]:
        seen.extend(requests)
        return {r.key: {"action": "accept", "content": {"name": "Lin"}} for r in requests}

    with RuntimeRegistry.from_sources(infra=[folder / f"{mode}.yaml"]) as registry:
        profile = pkg.Tools(registry).with_options(on_input=on_input).sample.ask_profile()
    [request] = seen
    assert isinstance(request, pkg.ElicitationRequest) and request.message == "Your profile, please"
    assert request.requested_schema == PROFILE_SCHEMA
    assert profile.answer == {
        "action": "accept",
        "content": {"name": "Lin", "age": 36, "score": 9.5, "plan": "free", "newsletter": False},
    }


def test_a_second_caller_answering_a_round_another_call_follows_is_refused_at_once() -> None:
    # Two callers resume one input round. The one whose answer goes out follows the call to its
    # end; the other is refused at once (it used to wait forever for a result it could never get).
    # Both resumes are queued on the provider's loop back to back, long before the server's
    # answer to the first can come back through its pipes.
    with MCPToolProvider(sample_config("elicitation")) as provider:
        first = provider.call_tool("ask_profile", {}, timeout_seconds=20)
        assert first.result_type == "input_required", first.to_dict()
        requests = first.result["inputRequests"]
        answers = {key: {"action": "accept", "content": {"name": "Lin"}} for key in requests}

        async def resume() -> Any:
            return await provider.acall_tool(
                "ask_profile", {}, timeout_seconds=20, input_responses=answers,
                request_state=first.result["requestState"],
            )  # fmt: skip

        async def both() -> list[Any]:
            return list(await asyncio.wait_for(asyncio.gather(resume(), resume()), 30))

        envelopes = asyncio.run(both())
    [answered] = [e for e in envelopes if not e.is_error]
    [refused] = [e for e in envelopes if e.is_error]
    assert answered.structured_content["answer"]["content"]["name"] == "Lin"
    assert refused.error_kind == "protocol"
    # Which refusal it is depends on timing: on a busy machine the first caller's round may be
    # over before the second resume reaches the provider's loop. Either way it came at once (the
    # 30 s bound above; without the refusal, the second caller waits for ever and times out there).
    assert any(
        reason in str(refused.result)
        for reason in ("another call is answering this input round", "its input round is over")
    ), refused.result
