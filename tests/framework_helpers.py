"""What the framework adapter tests share: the registry over the repo's sample server (stdio) and
the YAML skills, behind a recorder that keeps every call exactly as it reached the registry."""

from __future__ import annotations

import ast
import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mcp_helpers import stdio_config

from mas.runtime.contracts.tool_contract import ToolResultEnvelope, ainvoke_call_tool, invoke_call_tool
from mas.runtime.mcp._tasks import TASK_PREFIX
from mas.runtime.mcp.provider import MCPToolProvider
from mas.runtime.registry import RuntimeRegistry
from mas.runtime.skills import SkillToolProvider
from mas.runtime.yaml_source import load_tool_documents

REPO = Path(__file__).resolve().parents[1]


class Recording:
    """The registry, with every call it receives kept (wire name, arguments, the options sent)."""

    def __init__(self, inner: RuntimeRegistry) -> None:
        self.inner = inner
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.options: list[dict[str, Any]] = []
        self.results: list[ToolResultEnvelope] = []

    def list_tools(self) -> list[dict[str, Any]]:
        return self.inner.list_tools()

    def owner_of(self, tool_name: str) -> str | None:
        return self.inner.owner_of(tool_name)

    def call_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        self.calls.append((tool_name, dict(arguments or {})))
        self.options.append(dict(kwargs))
        result = ToolResultEnvelope.coerce(invoke_call_tool(self.inner, tool_name, arguments, **kwargs))
        self.results.append(result)
        return result

    async def acall_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        self.calls.append((tool_name, dict(arguments or {})))
        self.options.append(dict(kwargs))
        result = ToolResultEnvelope.coerce(await ainvoke_call_tool(self.inner, tool_name, arguments, **kwargs))
        self.results.append(result)
        return result

    def clear(self) -> None:
        self.calls.clear()
        self.options.clear()
        self.results.clear()

    def task_status(self, tool_name: str, task_id: str) -> str | None:
        """How a task of ``tool_name`` stands on the server (``tasks/get``), once it is no longer
        working (or after 10 s)."""
        deadline = time.monotonic() + 10
        while True:
            state = TASK_PREFIX + task_id
            status = self.inner.call_tool(tool_name, {}, request_state=state, allow_claimed=True).session_status
            if status not in ("working", "input_required") or time.monotonic() > deadline:
                return status
            time.sleep(0.1)


@contextmanager
def sample_registry(*flags: str) -> Iterator[Recording]:
    """The sample server over stdio as ``sample`` (started with ``flags``), the library's YAML
    skills as ``skills``."""
    skills = SkillToolProvider(load_tool_documents([REPO / "library-samples" / "tools"]), name="skills")
    skills.resolve()
    registry = RuntimeRegistry({"skills": skills, "sample": MCPToolProvider(stdio_config("sample", *flags))})
    with registry:
        yield Recording(registry)


class Tampered:
    """The recorder, with one tool's structured content replaced: a server whose output no longer
    fits the output model the package was generated with."""

    def __init__(self, inner: Recording, tool_name: str, structured: Any) -> None:
        self.inner = inner
        self.tool_name = tool_name
        self.structured = structured

    def list_tools(self) -> list[dict[str, Any]]:
        return self.inner.list_tools()

    def owner_of(self, tool_name: str) -> str | None:
        return self.inner.owner_of(tool_name)

    def call_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any) -> Any:
        envelope = ToolResultEnvelope.coerce(self.inner.call_tool(tool_name, arguments, **kwargs)).to_dict()
        if tool_name == self.tool_name:
            envelope.update(structured_content=self.structured, result=self.structured)
        return envelope


def cancel_once_sent(recording: Recording, start: Callable[[], Awaitable[Any]]) -> None:
    """Run ``start()`` (an agent's run, a tool's ``ainvoke``) as a task and cancel it half a second
    after its call reached ``recording``: the task ends cancelled."""

    async def cancelled() -> None:
        running = asyncio.ensure_future(start())
        while not recording.options:
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        running.cancel()
        try:
            await running
        except asyncio.CancelledError:
            return
        raise AssertionError("the run ended before it was cancelled")

    asyncio.run(cancelled())


def import_deferred(module: dict[str, Any]) -> None:
    """Run the imports of a test module's ``if TYPE_CHECKING:`` block into its globals.

    The framework modules import their framework this way, in an autouse module fixture, rather
    than at the top: every pytest-xdist worker imports every test module to collect it while one
    worker runs a given module's tests, and importing the three frameworks was about half of each
    worker's collection (3.5 of 6.7 CPU-s; docs/tests.md). The block is the one list of those
    imports, read by the type checker as usual; a name missing from it fails its test (NameError).
    """
    path = Path(module["__file__"])
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            exec(compile(ast.Module(body=node.body, type_ignores=[]), str(path), "exec"), module)
            return
    raise AssertionError(f"{path.name} has no `if TYPE_CHECKING:` block of imports")
