"""A scripted model for the OpenAI Agents SDK tests (tests/runtime/frameworks/): a ``Model``
subclass that answers from a script, no network. A module of its own so that the SDK is imported
only when those tests run (their module imports it in a fixture, not when pytest collects it)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, FunctionTool, Model, ModelResponse, Runner, Usage
from agents.run_config import RunConfig
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

Step = list[tuple[str, dict[str, Any]]] | str


class Script(Model):
    """A model that answers from a script: each step is the tool calls of one response, or the
    final text. ``outputs`` keeps every tool output the model was sent, by tool name."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps = steps
        self.turn = 0
        self.outputs: list[tuple[str, str]] = []
        self.tools: list[Any] = []
        self._names: dict[str, str] = {}

    async def get_response(self, system_instructions: Any, input: Any, model_settings: Any, tools: Any,
                           *args: Any, **kwargs: Any) -> ModelResponse:  # fmt: skip
        self.tools = list(tools)
        for item in input if isinstance(input, list) else []:
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                entry = (self._names[item["call_id"]], str(item["output"]))
                if entry not in self.outputs:
                    self.outputs.append(entry)
        step = self.steps[self.turn]
        self.turn += 1
        if isinstance(step, str):
            text = ResponseOutputText(annotations=[], text=step, type="output_text")
            message = ResponseOutputMessage(
                id="m", content=[text], role="assistant", status="completed", type="message"
            )
            return ModelResponse(output=[message], usage=Usage(), response_id=None)
        calls = []
        for i, (name, args) in enumerate(step):
            call_id = f"call{self.turn}_{i}"
            self._names[call_id] = name
            calls.append(ResponseFunctionToolCall(arguments=json.dumps(args), call_id=call_id, name=name,
                                                  type="function_call", id=f"fc{self.turn}_{i}"))  # fmt: skip
        return ModelResponse(output=calls, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError

    def output(self, tool_name: str) -> str:
        found = [text for name, text in self.outputs if name == tool_name]
        assert found, f"the model saw nothing of {tool_name}: {self.outputs}"
        return found[-1]


def run(script: Script, tools: list[FunctionTool], start: Any = "go") -> Any:
    agent = Agent(name="test", model=script, tools=list(tools))
    config = RunConfig(tracing_disabled=True)
    return asyncio.run(Runner.run(agent, start, run_config=config))
