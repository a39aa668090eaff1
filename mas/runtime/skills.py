"""Skill tools: declared in ``kind: Tool`` YAML, implemented by the Python callable in ``spec.handler``.

Handler resolution: a handler is imported the first time its tool is called, so building the
provider (and the code generator's use of the same YAML) never imports user code. A failed import
comes back as an error envelope, never as an exception. :meth:`SkillToolProvider.resolve` imports
every handler up front and raises :class:`ConfigError`; ``RuntimeRegistry`` calls it at start so a
typo in ``spec.handler`` stops the registry instead of failing on the first call.

Where a handler module is looked up (one rule, however the process was started): on ``sys.path``
first; when it is not there, in the working folder, then in the folder of the YAML file that names
it. ``python -m`` puts the working folder on ``sys.path`` and a console script does not; this rule
makes ``mas-runtime`` and ``python -m mas.runtime`` import the same handlers.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mas.runtime.config import ConfigError
from mas.runtime.contracts import _rules
from mas.runtime.contracts.tool_contract import (
    CallCancelled,
    ToolResultEnvelope,
    await_with_timeout,
    bound_failure,
    resolve_awaitable,
    run_with_timeout,
    validate_arguments,
    wrap_result,
)
from mas.runtime.yaml_source import ToolDefinition

__all__ = ["SkillToolProvider", "import_handler"]


def _import_module(name: str, search: Sequence[Path]) -> Any:
    """Import ``name`` from sys.path, else from the ``search`` folders (see the module docstring)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name.partition(".")[0] or not search:
            raise  # missing inside the module, or nowhere else to look
    added = [str(f) for f in dict.fromkeys(Path(f).resolve() for f in search) if str(f) not in sys.path]
    sys.path.extend(added)  # after everything else: an installed module of the same name still wins
    try:
        return importlib.import_module(name)
    finally:
        for folder in added:
            sys.path.remove(folder)


def import_handler(spec: str, search: Sequence[Path] = ()) -> Callable[..., Any]:
    """``"package.module:function"`` (or ``module:Class.method``) -> the callable.

    The module comes from sys.path, else from the ``search`` folders in order. Raises
    ImportError/AttributeError/TypeError with a message naming ``spec``.
    """
    module_name, sep, attr_path = spec.partition(":")
    if not sep or not module_name or not attr_path:
        raise ValueError(f"handler {spec!r} must look like 'package.module:function'")
    target: Any = _import_module(module_name, search)
    for attr in attr_path.split("."):
        try:
            target = getattr(target, attr)
        except AttributeError:
            raise AttributeError(f"module {module_name!r} has no attribute {attr_path!r}") from None
    if not callable(target):
        raise TypeError(f"handler {spec!r} is not callable")
    return target  # type: ignore[no-any-return]


class SkillToolProvider:
    """A provider over ``ToolDefinition`` objects (see the module docstring for resolution)."""

    def __init__(self, definitions: Sequence[ToolDefinition], *, name: str = "skills") -> None:
        self.name = name
        self._definitions: dict[str, ToolDefinition] = {}
        for definition in definitions:
            if definition.name in self._definitions:
                first = self._definitions[definition.name].location
                raise ConfigError(f"duplicate tool name {definition.name!r} (also at {first})", definition.location)
            self._definitions[definition.name] = definition
        self._handlers: dict[str, Callable[..., Any]] = {}
        self._lock = threading.Lock()

    @property
    def definitions(self) -> Mapping[str, ToolDefinition]:
        return dict(self._definitions)

    def list_tools(self) -> list[dict[str, Any]]:
        return [definition.to_entry() for definition in self._definitions.values()]

    def resolve(self) -> None:
        """Import every handler now; raise ConfigError (with the ``spec.handler`` line) on the first failure."""
        for name, definition in self._definitions.items():
            try:
                self._handler(name)
            except Exception as exc:
                where = definition.handler_location or definition.location
                raise ConfigError(f"cannot load handler: {type(exc).__name__}: {exc}", where) from exc

    def _handler(self, tool_name: str) -> Callable[..., Any]:
        with self._lock:  # concurrent first calls import once
            if tool_name not in self._handlers:
                definition = self._definitions[tool_name]
                if definition.handler is None:
                    raise LookupError(f"tool {tool_name!r} declares no spec.handler")
                search = (Path.cwd(), Path(definition.location.file).parent)
                self._handlers[tool_name] = import_handler(definition.handler, search)
            return self._handlers[tool_name]

    def _prepare(
        self, tool_name: str, arguments: Mapping[str, Any] | None, timeout_seconds: float | None
    ) -> tuple[Callable[..., Any], dict[str, Any], float | None] | ToolResultEnvelope:
        """The handler, checked arguments and time limit, or the error envelope that explains why not."""
        definition = self._definitions.get(tool_name)
        if definition is None:
            return ToolResultEnvelope.failure(
                f"unknown tool {tool_name!r} (skills: {', '.join(self._definitions)})", kind="unknown_tool"
            )
        args = dict(arguments or {})
        problem = validate_arguments(definition.parameters, args)
        if problem is not None:
            return ToolResultEnvelope.failure(
                f"invalid arguments for tool {tool_name!r}: {problem}", kind="invalid_arguments"
            )
        try:
            return self._handler(tool_name), args, self._limit(tool_name, timeout_seconds)
        except Exception as exc:
            return ToolResultEnvelope.failure(
                f"cannot load handler {definition.handler!r} for tool {tool_name!r}: {type(exc).__name__}: {exc}",
                kind="unavailable",
            )

    def _wrap(self, tool_name: str, value: Any) -> ToolResultEnvelope:
        return wrap_result(value, has_output_schema="output_schema" in self._definitions[tool_name].advertise)

    def _limit(self, tool_name: str, timeout_seconds: float | None) -> float | None:
        # timeout_seconds=0 is a limit ("at once"), not "unset": only None falls back to the spec.
        if timeout_seconds is not None:
            return timeout_seconds
        limit: float | None = self._definitions[tool_name].advertise.get("timeout_seconds")
        return limit

    def call_tool(
        self,
        tool_name: str,
        arguments: Mapping[str, Any] | None,
        *,
        timeout_seconds: float | None = None,
        cancel_event: Any = None,
    ) -> ToolResultEnvelope:
        """Validate, then ``handler(**arguments)``; coroutine handlers are run to completion.

        ``timeout_seconds`` (else the tool's ``spec.timeout_seconds``) and ``cancel_event``
        (anything with ``is_set()``) bound the wait; a handler that overruns or is cancelled keeps
        running in its thread, but the caller gets an error envelope on time.
        """
        prepared = self._prepare(tool_name, arguments, timeout_seconds)
        if isinstance(prepared, ToolResultEnvelope):
            return prepared
        handler, args, limit = prepared
        try:
            value = run_with_timeout(lambda: resolve_awaitable(handler(**args)), limit, cancel_event)
        except (TimeoutError, CallCancelled) as exc:
            return bound_failure(tool_name, limit, exc)
        except Exception as exc:  # a handler error never crashes the caller
            return _handler_failed(tool_name, exc)
        return self._wrap(tool_name, value)

    async def acall_tool(
        self,
        tool_name: str,
        arguments: Mapping[str, Any] | None,
        *,
        timeout_seconds: float | None = None,
        cancel_event: Any = None,
    ) -> ToolResultEnvelope:
        """Await coroutine handlers; run sync ones in a worker thread; same limits as :meth:`call_tool`."""
        prepared = self._prepare(tool_name, arguments, timeout_seconds)
        if isinstance(prepared, ToolResultEnvelope):
            return prepared
        handler, args, limit = prepared
        try:
            value = await await_with_timeout(_rules.acall(handler, **args), limit, cancel_event)
        except (TimeoutError, CallCancelled) as exc:
            return bound_failure(tool_name, limit, exc)
        except Exception as exc:
            return _handler_failed(tool_name, exc)
        return self._wrap(tool_name, value)

    def close(self) -> None:
        """Nothing to release; present so every provider can be closed the same way."""

    async def aclose(self) -> None:
        """Async twin of :meth:`close`."""


def _handler_failed(tool_name: str, exc: Exception) -> ToolResultEnvelope:
    return ToolResultEnvelope.failure(f"tool {tool_name!r} failed: {type(exc).__name__}: {exc}")
