"""The tools as LangChain ``StructuredTool`` s (``pip install "toolgen[langchain]"``; docs/frameworks.md).

    from mas.runtime.frameworks.langchain import tools
    model_with_tools = chat_model.bind_tools(tools(registry))

Each tool's ``args_schema`` is the tool's exact input JSON Schema (a dict: LangChain hands it to
the model as it is) and its description the listing's; every call goes through
``provider.call_tool(wire_name, arguments)``. ``response_format="content_and_artifact"``: the
model reads the structured result as JSON (else the text), and the ``ToolMessage``'s ``artifact``
keeps the structured result itself for the program. A failure is a ``ToolException`` handled by
``handle_tool_error=True``: a ``ToolMessage`` with ``status="error"`` and ``<kind>: <message>``.

LangChain's core has no approval step of its own (``HumanInTheLoopMiddleware`` is in the
``langchain`` agents package, ``interrupt()`` in LangGraph). A tool that needs approval
(destructive, by MCP's defaults) says so in ``metadata["needs_approval"]`` and its tags
(``"destructive"``), so such middleware can be set on exactly those, and asks ``confirm(tool,
arguments)`` before anything is sent; without ``confirm=`` it refuses (``cancelled``), unless
``require_approval=False``. An input round is answered by ``on_input=``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable
from types import ModuleType
from typing import Any, cast

from langchain_core.tools import StructuredTool, ToolException

from mas.runtime.contracts._rules import run_sync
from mas.runtime.frameworks._adapt import (
    AgentTool,
    CodeTool,
    InputHandler,
    ProgressHandler,
    call,
    code_tools,
    select_tools,
)

__all__ = ["Confirm", "tools"]

#: Asked ``confirm(tool, arguments)`` before a tool that needs approval runs; falsy refuses.
Confirm = Callable[[AgentTool, dict[str, Any]], "bool | Awaitable[bool]"]


def _sync(coroutine: Callable[..., Awaitable[tuple[str, Any]]]) -> Callable[..., tuple[str, Any]]:
    def func(**arguments: Any) -> tuple[str, Any]:
        # The runtime's one running-loop policy: works from a thread that runs a loop too.
        result = run_sync(coroutine(**arguments))
        return cast("tuple[str, Any]", result)

    return func


def _tool_coroutine(
    provider: Any,
    tool: AgentTool,
    *,
    confirm: Confirm | None,
    require_approval: bool,
    on_input: InputHandler | None,
    options: dict[str, Any],
) -> Callable[..., Awaitable[tuple[str, Any]]]:
    async def run(**arguments: Any) -> tuple[str, Any]:
        if require_approval and tool.needs_approval:
            if confirm is None:
                raise ToolException(
                    f"cancelled: tool {tool.wire_name!r} needs approval and no confirm= was given; nothing was sent"
                )
            answer = confirm(tool, dict(arguments))
            if not (await answer if inspect.isawaitable(answer) else answer):
                raise ToolException(f"cancelled: approval of tool {tool.wire_name!r} was refused; nothing was sent")
        outcome = await call(provider, tool, arguments, on_input=on_input, **options)
        if not outcome.ok:
            raise ToolException(outcome.told(retryable=tool.retryable(outcome.kind)))
        return outcome.model_text(), outcome.artifact

    return run


def _code_coroutine(
    code: CodeTool, confirm: Confirm | None, require_approval: bool, options: dict[str, Any]
) -> Callable[..., Any]:
    async def run(**arguments: Any) -> tuple[str, Any]:
        if require_approval and code.needs_approval:
            spec = AgentTool(name=code.name, wire_name=code.name, description="", input_schema=code.input_schema)
            answer = None if confirm is None else confirm(spec, dict(arguments))
            if not (await answer if inspect.isawaitable(answer) else answer):
                raise ToolException("cancelled: run_code may call tools that need approval, and it was not given")
        ran = await code.run(arguments, **options)
        if ran.kind is not None:
            raise ToolException(ran.message)
        return ran.text, ran.structured

    return run


def tools(
    provider: Any,
    package: str | ModuleType | None = None,
    *,
    include: str | Iterable[str] | None = None,
    exclude: str | Iterable[str] | None = None,
    read_only: bool = False,
    destructive: bool = True,
    code_mode: bool = False,
    on_input: InputHandler | None = None,
    confirm: Confirm | None = None,
    require_approval: bool = True,
    timeout_seconds: float | None = None,
    handle_tool_error: bool = True,
    cancel_event: Any = None,
    on_progress: ProgressHandler | None = None,
) -> list[StructuredTool]:
    """``StructuredTool`` s of ``provider``'s tools (a ``RuntimeRegistry`` or any ToolContract provider).

    ``include``/``exclude``/``read_only``/``destructive`` choose the tools (``_adapt.select_tools``);
    ``code_mode=True`` gives the single ``run_code`` tool over them instead (needs ``package``; with
    ``search_tools`` beside it when the API is too large for its description).
    ``handle_tool_error=False`` lets a failure's ``ToolException`` reach the caller instead of the model.
    With ``package``, results are read through its output models (the artifact is the typed value).
    A cancelled ``ainvoke`` (its task cancelled) cancels the call through the contract's
    ``cancel_event``, as does setting ``cancel_event``; ``on_progress`` hears the calls' progress.
    """
    options: dict[str, Any] = {
        "timeout_seconds": timeout_seconds, "cancel_event": cancel_event, "on_progress": on_progress
    }  # fmt: skip
    selected = select_tools(
        provider, include=include, exclude=exclude, read_only=read_only, destructive=destructive, package=package
    )
    if code_mode:
        given = code_tools(provider, package, selected)
        return [
            _structured(code, _code_coroutine(code, confirm, require_approval, options), handle_tool_error, {})
            for code in given
        ]
    out: list[StructuredTool] = []
    for tool in selected:
        run = _tool_coroutine(
            provider, tool, confirm=confirm, require_approval=require_approval, on_input=on_input, options=options
        )
        facts = {"wire_name": tool.wire_name, "source": tool.source, "output_schema": tool.output_schema}
        out.append(_structured(tool, run, handle_tool_error, {**facts, **tool.hints}))
    return out


def _structured(
    tool: AgentTool | CodeTool,
    run: Callable[..., Awaitable[tuple[str, Any]]],
    handle_tool_error: bool,
    metadata: dict[str, Any],
) -> StructuredTool:
    """One ``StructuredTool``: a tool of the provider or a code-mode tool, the same shape for both."""
    return StructuredTool(
        name=tool.name,
        description=tool.description,
        args_schema=dict(tool.input_schema),
        coroutine=run,
        func=_sync(run),
        response_format="content_and_artifact",
        handle_tool_error=handle_tool_error,
        metadata={**metadata, "needs_approval": tool.needs_approval},
        tags=["destructive"] if tool.needs_approval else [],
    )
