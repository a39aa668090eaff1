"""Providers and call options: what a generated package calls, and how a call may be tuned."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, cast

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


class CallOptions(TypedDict, total=False):
    """The contract's optional ``call_tool`` keyword arguments, in the contract's order, then the
    options this package acts on itself (never sent): ``on_input``, ``retries``, ``confirm``.

    A contract option reaches the provider only when the callable that finally receives it
    declares a parameter of that name or takes ``**kwargs``; ``None`` values are never forwarded.
    """

    timeout_seconds: float
    progress_callback: Callable[..., object]
    cancel_event: object
    meta: dict[str, Any]
    input_responses: object
    request_state: str
    allow_input_required: bool
    allow_claimed: bool
    ctx: object
    user: str
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
PACKAGE_OPTION_NAMES: tuple[str, ...] = ("on_input", "retries", "confirm")
#: Input rounds one call may take before it fails with :class:`ToolProtocolError`.
MAX_INPUT_ROUNDS = 8


def checked_options(options: Mapping[str, object] | None) -> CallOptions:
    if not options:
        return {}
    _rules.unknown_options(options, CALL_OPTION_NAMES + PACKAGE_OPTION_NAMES)
    retries = options.get("retries")
    if retries is not None and (not isinstance(retries, int) or isinstance(retries, bool) or retries < 0):
        raise TypeError(f"retries must be a non-negative int, not {retries!r}")
    return cast(CallOptions, dict(options))


#: The contract options that reach ``provider.<method>`` (the runtime's rule, in ``_rules``).
forwarded = _rules.forwarded
