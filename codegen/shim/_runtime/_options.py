"""Providers and call options: what a generated package calls, and how a call may be tuned."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast

from .. import _rules

if TYPE_CHECKING:
    from ._info import ToolInfo
    from ._input import InputRequest

__all__ = [
    "CALL_OPTION_NAMES",
    "MAX_INPUT_ROUNDS",
    "PACKAGE_OPTION_NAMES",
    "CallOptions",
    "SupportsAsyncCallTool",
    "SupportsCallTool",
    "checked_options",
    "forwarded",
]


class SupportsCallTool(Protocol):
    """Anything with the ToolContract's ``call_tool(tool_name, arguments)``.

    The parameters are positional-only here so that any provider parameter names match; extra
    optional keyword parameters (or ``**kwargs``) on the provider are fine.
    """

    def call_tool(self, tool_name: str, arguments: dict[str, Any], /) -> object: ...


class SupportsAsyncCallTool(Protocol):
    """A provider with the async twin ``acall_tool(tool_name, arguments)``."""

    def acall_tool(self, tool_name: str, arguments: dict[str, Any], /) -> Awaitable[object]: ...


class CallOptions(_rules.CallOptions, total=False):
    """The call options a generated method takes: the contract's (``_rules.CallOptions``, the one
    definition the runtime uses too), then the ones this package acts on itself and never sends:
    ``on_input``, ``retries``, ``confirm``.

    A contract option reaches the provider only when the callable that finally receives it
    declares a parameter of that name or takes ``**kwargs``; ``None`` means "not set".
    """

    on_input: Callable[[list[InputRequest]], object]
    """Answers an ``input_required`` result: gets the typed requests, returns ``{key: response}``
    (a dict or an awaitable of one on the async path); the call is repeated with the responses."""
    retries: int
    """How often a read-only and idempotent tool is retried on ``unavailable`` or ``timeout``."""
    confirm: Callable[[ToolInfo[Any], dict[str, Any]], object]
    """Asked ``confirm(info, arguments)`` before a destructive tool runs; falsy refuses."""


#: The contract's option names, in the contract's order (the runtime's ``CALL_KWARGS``).
CALL_OPTION_NAMES: tuple[str, ...] = _rules.CALL_OPTIONS
#: Options this package handles itself; they never reach the provider.
PACKAGE_OPTION_NAMES: tuple[str, ...] = tuple(CallOptions.__annotations__)[len(CALL_OPTION_NAMES) :]
#: Input rounds one call may take before it fails with :class:`ToolProtocolError`.
MAX_INPUT_ROUNDS = 8


def checked_options(options: Mapping[str, object] | None) -> CallOptions:
    """The options checked where they enter the package (``_rules.checked_options``: a misspelt
    name is a :class:`TypeError`, ``None`` means "not set"), and ``retries`` a count."""
    checked: Mapping[str, object] = _rules.checked_options(options or {}, CALL_OPTION_NAMES + PACKAGE_OPTION_NAMES)
    retries = checked.get("retries")
    if retries is not None and (not isinstance(retries, int) or isinstance(retries, bool) or retries < 0):
        raise TypeError(f"retries must be a non-negative int, not {retries!r}")
    return cast(CallOptions, checked)


#: The contract options that reach ``provider.<method>`` (the runtime's rule, in ``_rules``).
forwarded = _rules.forwarded
