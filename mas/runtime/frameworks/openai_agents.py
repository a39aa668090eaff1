"""The tools as OpenAI Agents SDK ``FunctionTool`` s (``pip install "toolgen[openai-agents]"``;
docs/frameworks.md).

    from mas.runtime.frameworks.openai_agents import function_tools
    agent = Agent(name="assistant", tools=function_tools(registry))

Each tool keeps its exact input JSON Schema and description; every call goes through
``provider.call_tool(wire_name, arguments)``. The output schema is not given to the SDK: its
``output_json_schema`` serves hosted programmatic callers only and requires every output, a
failure too, to be a JSON object, so a structured result reaches the model as its JSON instead.
A schema is sent strict (``strict_json_schema=True``, the SDK's strict form) only when strict mode
accepts exactly the same arguments: every property of every object is required and no object
takes extra properties. Any other schema (an optional parameter, a default) is sent as it is,
not strict: the model may then send arguments that do not match, which are refused here before
anything is sent, and the model reads why. Failures come back as the tool's output, as the SDK
expects: ``<kind>: <message>``. A tool that needs approval (destructive, by MCP's defaults) has
``needs_approval=True``: the run stops with ``result.interruptions``, approved or rejected through
``RunState``. An input round is answered by ``on_input=``; without it the model reads
``input_required: ...`` (the SDK has no way to ask a person from inside a tool).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from types import ModuleType
from typing import Any

from agents import FunctionTool
from agents.exceptions import UserError
from agents.strict_schema import ensure_strict_json_schema
from agents.tool_context import ToolContext

from mas.runtime.frameworks._adapt import (
    AgentTool,
    CodeTool,
    InputHandler,
    ProgressHandler,
    call,
    code_tools,
    select_tools,
)

__all__ = ["function_tools", "strict_schema"]


def _closed(schema: Any) -> bool:
    """Strict mode accepts what ``schema`` accepts: every object lists all its properties as
    required, takes no other property (``additionalProperties`` absent or false), and an object
    without ``properties`` is not free-form."""
    if isinstance(schema, list):
        return all(_closed(item) for item in schema)
    if not isinstance(schema, Mapping):
        return True
    properties = schema.get("properties")
    extra = schema.get("additionalProperties")
    if isinstance(properties, Mapping):
        required = schema.get("required", [])
        if not isinstance(required, list) or not set(properties) <= set(required):
            return False
    elif schema.get("type") == "object" and extra is not False:
        return False
    if extra is not None and extra is not False:
        return False
    for key, value in schema.items():
        if key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(value, Mapping):
            if not all(_closed(item) for item in value.values()):
                return False
        elif isinstance(value, Mapping | list) and not _closed(value):
            return False
    return True


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """The SDK's strict form of ``schema`` when strict mode accepts exactly the arguments the schema
    does, else None (the schema is then sent as it is, not strict)."""
    if not _closed(schema):
        return None
    try:
        return ensure_strict_json_schema(copy.deepcopy(dict(schema)))
    except (UserError, TypeError, ValueError):
        return None


def _arguments(tool_name: str, raw: str) -> dict[str, Any] | str:
    """The model's JSON arguments as an object, or the failure the model reads."""
    try:
        parsed = json.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        return f"invalid_arguments: the arguments of {tool_name!r} are not JSON: {exc}"
    if not isinstance(parsed, dict):
        return f"invalid_arguments: the arguments of {tool_name!r} must be a JSON object"
    return parsed


def _invoker(
    provider: Any, tool: AgentTool, on_input: InputHandler | None, options: dict[str, Any]
) -> Callable[[ToolContext[Any], str], Awaitable[str]]:
    async def invoke(ctx: ToolContext[Any], raw: str) -> str:
        arguments = _arguments(tool.name, raw)
        if isinstance(arguments, str):
            return arguments
        outcome = await call(provider, tool, arguments, on_input=on_input, **options)
        if outcome.ok:
            return outcome.model_text()
        return outcome.told(retryable=tool.retryable(outcome.kind))

    return invoke


def _code_invoker(code: CodeTool, options: dict[str, Any]) -> Callable[[ToolContext[Any], str], Awaitable[str]]:
    async def invoke(ctx: ToolContext[Any], raw: str) -> str:
        arguments = _arguments(code.name, raw)
        if isinstance(arguments, str):
            return arguments
        ran = await code.run(arguments, **options)
        return ran.message if ran.kind is not None else ran.text

    return invoke


def function_tools(
    provider: Any,
    package: str | ModuleType | None = None,
    *,
    include: str | Iterable[str] | None = None,
    exclude: str | Iterable[str] | None = None,
    read_only: bool = False,
    destructive: bool = True,
    code_mode: bool = False,
    on_input: InputHandler | None = None,
    require_approval: bool = True,
    timeout_seconds: float | None = None,
    strict: bool = True,
    cancel_event: Any = None,
    on_progress: ProgressHandler | None = None,
) -> list[FunctionTool]:
    """``FunctionTool`` s of ``provider``'s tools (a ``RuntimeRegistry`` or any ToolContract provider).

    ``include``/``exclude``/``read_only``/``destructive`` choose the tools (``_adapt.select_tools``);
    ``code_mode=True`` gives the single ``run_code`` tool over them instead (needs ``package``; with
    ``search_tools`` beside it when the API is too large for its description).
    ``require_approval=False`` runs destructive tools without asking; ``strict=False`` never sends
    a strict schema; ``timeout_seconds`` is each call's limit. With ``package``, results are read
    through its output models. A cancelled run (the task running it cancelled) cancels its calls
    in flight through the contract's ``cancel_event``, as does setting ``cancel_event``;
    ``on_progress`` hears their progress.
    """
    options: dict[str, Any] = {
        "timeout_seconds": timeout_seconds, "cancel_event": cancel_event, "on_progress": on_progress
    }  # fmt: skip
    tools = select_tools(
        provider, include=include, exclude=exclude, read_only=read_only, destructive=destructive, package=package
    )
    if code_mode:
        out = []
        for code in code_tools(provider, package, tools):
            closed = strict_schema(code.input_schema) if strict else None
            out.append(
                FunctionTool(
                    name=code.name,
                    description=code.description,
                    params_json_schema=closed if closed is not None else dict(code.input_schema),
                    on_invoke_tool=_code_invoker(code, options),
                    strict_json_schema=closed is not None,
                    needs_approval=require_approval and code.needs_approval,
                )
            )
        return out
    out = []
    for tool in tools:
        converted = strict_schema(tool.input_schema) if strict else None
        out.append(
            FunctionTool(
                name=tool.name,
                description=tool.description,
                params_json_schema=converted if converted is not None else dict(tool.input_schema),
                on_invoke_tool=_invoker(provider, tool, on_input, options),
                strict_json_schema=converted is not None,
                needs_approval=require_approval and tool.needs_approval,
            )
        )
    return out
