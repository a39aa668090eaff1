"""The tools as a pydantic-ai toolset (``pip install "toolgen[pydantic-ai]"``; docs/frameworks.md).

    from mas.runtime.frameworks.pydantic_ai import toolset
    agent = Agent(model, toolsets=[toolset(registry)])

Each tool keeps its exact input JSON Schema, description and output schema (``return_schema``);
every call goes through ``provider.call_tool(wire_name, arguments)``. A failure the model can
mend (arguments that do not match the schema, or a timeout or lost server of a read-only and
idempotent tool) is a ``ModelRetry``; any other is a ``ToolFailed`` the model sees. A tool that
needs approval (destructive, by MCP's defaults) raises ``ApprovalRequired``: the run ends with
``DeferredToolRequests`` and resumes with ``DeferredToolResults(approvals=...)``. An input round
the server asks for (MCP ``input_required``) is answered by ``on_input=``, or else is deferred the
same way, carrying the requests in its metadata; the answers travel back in
``DeferredToolResults.metadata[call_id] = {"input_responses": ..., "request_state": ...}``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

from pydantic_ai import ApprovalRequired, ModelRetry, RunContext, ToolDefinition, ToolFailed
from pydantic_ai.tools import AgentDepsT
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from mas.runtime.frameworks._adapt import (
    AgentTool,
    CodeTool,
    InputHandler,
    Outcome,
    ProgressHandler,
    call,
    code_tools,
    select_tools,
)

__all__ = ["ToolgenToolset", "toolset"]

#: Arguments reach ``call`` as the model sent them; it checks them against the tool's own schema.
_ANY_ARGUMENTS = SchemaValidator(core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()))


class ToolgenToolset(AbstractToolset[AgentDepsT]):
    """A pydantic-ai toolset over a ToolContract provider; build one with :func:`toolset`."""

    def __init__(
        self,
        provider: Any,
        tools: list[AgentTool],
        *,
        code: list[CodeTool] | None = None,
        on_input: InputHandler | None = None,
        require_approval: bool = True,
        max_retries: int = 1,
        timeout_seconds: float | None = None,
        return_schemas: bool = True,
        id: str | None = None,
        cancel_event: Any = None,
        on_progress: ProgressHandler | None = None,
    ) -> None:
        self._provider = provider
        self._cancel = cancel_event
        self._on_progress = on_progress
        self._tools = {tool.name: tool for tool in tools}
        self._code = {tool.name: tool for tool in code or ()}
        self._on_input = on_input
        self._require_approval = require_approval
        self._max_retries = max_retries
        self._timeout = timeout_seconds
        self._return_schemas = return_schemas
        self._id = id

    @property
    def id(self) -> str | None:
        return self._id

    @property
    def tools(self) -> Mapping[str, AgentTool]:
        """The tools given to the model, by their names (empty in code mode)."""
        return dict(self._tools)

    def _definition(self, tool: AgentTool) -> ToolDefinition:
        return ToolDefinition(
            name=tool.name,
            parameters_json_schema=tool.input_schema,
            description=tool.description,
            return_schema=tool.output_schema,
            include_return_schema=self._return_schemas if tool.output_schema is not None else None,
            metadata={"wire_name": tool.wire_name, "source": tool.source, **tool.hints},
        )

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        if self._code:
            return {
                name: self._toolset_tool(
                    ToolDefinition(name=name, parameters_json_schema=code.input_schema, description=code.description)
                )
                for name, code in self._code.items()
            }
        return {name: self._toolset_tool(self._definition(tool)) for name, tool in self._tools.items()}

    def _toolset_tool(self, definition: ToolDefinition) -> ToolsetTool[AgentDepsT]:
        return ToolsetTool(
            toolset=self, tool_def=definition, max_retries=self._max_retries, args_validator=_ANY_ARGUMENTS
        )

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT], tool: ToolsetTool[AgentDepsT]
    ) -> Any:
        code = self._code.get(name)
        if code is not None:
            if self._require_approval and code.needs_approval and not ctx.tool_call_approved:
                raise ApprovalRequired({"reason": "destructive", "tool": code.name})
            ran = await code.run(
                tool_args, cancel_event=self._cancel, on_progress=self._on_progress, timeout_seconds=self._timeout
            )
            return _value(ran, retryable=ran.kind == "invalid_arguments")
        spec = self._tools.get(name)
        if spec is None:  # the framework only calls what get_tools listed
            raise ToolFailed(f"unknown_tool: {name!r} is not in this toolset")
        answers: Mapping[str, Any] = {}
        if ctx.tool_call_approved:  # approved, or answered (an input round's answers are in the metadata)
            if isinstance(ctx.tool_call_metadata, Mapping):
                answers = ctx.tool_call_metadata
        elif self._require_approval and spec.needs_approval:
            raise ApprovalRequired({"reason": "destructive", "tool": spec.wire_name})
        outcome = await call(
            self._provider,
            spec,
            tool_args,
            on_input=self._on_input,
            input_responses=answers.get("input_responses"),
            request_state=answers.get("request_state"),
            timeout_seconds=self._timeout,
            cancel_event=self._cancel,
            on_progress=self._on_progress,
        )
        if outcome.needs_input:
            raise ApprovalRequired(
                {
                    "reason": "input_required",
                    "tool": spec.wire_name,
                    "input_requests": [dataclasses.asdict(r) for r in outcome.input_requests],
                    "request_state": outcome.request_state,
                }
            )
        return _value(outcome, retryable=spec.retryable(outcome.kind))


def _value(outcome: Outcome, *, retryable: bool) -> Any:
    """The outcome's value, or the failure as pydantic-ai's retry (``ModelRetry``) or tool error."""
    if outcome.kind is None:
        return outcome.value
    if retryable:
        raise ModelRetry(outcome.message)
    raise ToolFailed(outcome.message)


def toolset(
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
    max_retries: int = 1,
    timeout_seconds: float | None = None,
    return_schemas: bool = True,
    id: str | None = None,
    cancel_event: Any = None,
    on_progress: ProgressHandler | None = None,
) -> ToolgenToolset[Any]:
    """A pydantic-ai toolset of ``provider``'s tools (a ``RuntimeRegistry`` or any ToolContract provider).

    ``include``/``exclude``/``read_only``/``destructive`` choose the tools (``_adapt.select_tools``);
    ``code_mode=True`` gives the single ``run_code`` tool over them instead (needs ``package``, the
    generated package), and ``search_tools`` beside it when the API is too large for its description.
    ``require_approval=False`` runs destructive tools without asking.
    ``max_retries`` is each tool's ``ModelRetry`` budget; ``timeout_seconds`` each call's limit.
    ``return_schemas=False`` keeps the tools' output schemas from the model (pydantic-ai sends a
    ``return_schema`` natively where the model takes one, else appends it to the description).
    With ``package``, results are read through its output models. A cancelled run (the task
    running the agent cancelled) cancels its calls in flight through the contract's
    ``cancel_event``, as does setting ``cancel_event``; ``on_progress`` hears their progress.
    """
    tools = select_tools(
        provider, include=include, exclude=exclude, read_only=read_only, destructive=destructive, package=package
    )
    code = code_tools(provider, package, tools) if code_mode else None
    return ToolgenToolset(
        provider,
        [] if code is not None else tools,
        code=code,
        on_input=on_input,
        require_approval=require_approval,
        max_retries=max_retries,
        timeout_seconds=timeout_seconds,
        return_schemas=return_schemas,
        id=id,
        cancel_event=cancel_event,
        on_progress=on_progress,
    )
