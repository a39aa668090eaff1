"""The typed tools handed to agent frameworks: pydantic-ai, the OpenAI Agents SDK and LangChain.

One module per framework, each an optional extra (``pip install "toolgen[pydantic-ai]"``,
``toolgen[openai-agents]``, ``toolgen[langchain]``); importing this package imports none of them.

* ``mas.runtime.frameworks.pydantic_ai.toolset(provider, ...)``: a pydantic-ai toolset.
* ``mas.runtime.frameworks.openai_agents.function_tools(provider, ...)``: ``agents.FunctionTool`` s.
* ``mas.runtime.frameworks.langchain.tools(provider, ...)``: ``langchain_core`` ``StructuredTool`` s.

Each takes a ``RuntimeRegistry`` (or anything with the ToolContract's ``list_tools``/``call_tool``)
and the same options; what they share (which tools, under which names, what a result or a failure
becomes) is in ``_adapt.py``. ``docs/frameworks.md`` describes the whole.
"""

from mas.runtime.frameworks._adapt import (
    MAX_INPUT_ROUNDS,
    MAX_NAME_LENGTH,
    AgentTool,
    InputRequest,
    select_tools,
)

__all__ = ["MAX_INPUT_ROUNDS", "MAX_NAME_LENGTH", "AgentTool", "InputRequest", "select_tools"]
