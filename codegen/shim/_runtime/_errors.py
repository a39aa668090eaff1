"""The errors a generated package raises, one class per failure kind."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import _rules
from ._text import as_list, joined_text, one_line

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ._plan import InputRequest

__all__ = [
    "ToolArgumentsError",
    "ToolCallError",
    "ToolCancelledError",
    "ToolError",
    "ToolInputRequiredError",
    "ToolNotFoundError",
    "ToolOutputValidationError",
    "ToolProtocolError",
    "ToolTimeoutError",
    "ToolUnavailableError",
    "raise_failure",
]


class ToolError(Exception):
    """Base class of the errors a generated package raises; ``envelope`` is {} when there is none.

    ``payload`` is what the failure carried (structured content, else ``result``), or None.
    """

    def __init__(
        self, message: str, *, tool_name: str, envelope: dict[str, Any] | None = None, payload: Any = None
    ) -> None:
        super().__init__(message)
        self.tool_name = tool_name
        self.envelope: dict[str, Any] = {} if envelope is None else envelope
        self.payload: Any = payload


class _FailedCall(ToolError):
    """A call whose envelope reports an error; the subclass says why (the envelope's error kind).

    ``message`` is the text of its content (or ``str(result)``); ``payload`` is its structured
    content when present, else its ``result``.
    """

    _what = "reported an error"

    def __init__(self, tool_name: str, envelope: dict[str, Any]) -> None:
        result = envelope.get("result")
        text = joined_text(as_list(envelope.get("content")) or [])
        if text is None:
            text = f"tool {self._what}" if result is None else str(result)
        self.message = text
        structured = envelope.get("structured_content")
        super().__init__(
            f"tool {tool_name!r} {self._what}: {one_line(text) or f'tool {self._what}'}",
            tool_name=tool_name,
            envelope=envelope,
            payload=structured if structured is not None else result,
        )


class ToolCallError(_FailedCall):
    """The tool itself reported an error (error kind ``tool_error``)."""


class ToolArgumentsError(_FailedCall):
    """The arguments were refused (error kind ``invalid_arguments``)."""

    _what = "refused its arguments"


class ToolNotFoundError(_FailedCall):
    """No provider serves the tool (error kind ``unknown_tool``)."""

    _what = "was not found"


class ToolTimeoutError(_FailedCall):
    """The call ran out of time (error kind ``timeout``)."""

    _what = "timed out"


class ToolCancelledError(_FailedCall):
    """The call was cancelled, or ``confirm`` refused it before it was sent (error kind ``cancelled``)."""

    _what = "was cancelled"


class ToolUnavailableError(_FailedCall):
    """The server could not be reached, died or the transport failed (error kind ``unavailable``)."""

    _what = "is unavailable"


class ToolProtocolError(_FailedCall):
    """The reply was malformed, or input rounds did not end (error kind ``protocol``)."""

    _what = "got a malformed reply"


_ERRORS_BY_KIND: dict[str, type[_FailedCall]] = {
    "tool_error": ToolCallError,
    "invalid_arguments": ToolArgumentsError,
    "unknown_tool": ToolNotFoundError,
    "timeout": ToolTimeoutError,
    "cancelled": ToolCancelledError,
    "unavailable": ToolUnavailableError,
    "protocol": ToolProtocolError,
}


def raise_failure(tool_name: str, envelope: dict[str, Any]) -> None:
    kind = _rules.error_kind(envelope)
    if kind is not None:
        raise _ERRORS_BY_KIND[kind](tool_name, envelope)


class ToolInputRequiredError(ToolError):
    """The tool needs input (``input_required``) and no ``on_input`` handler was given.

    ``requests`` are the typed requests and ``request_state`` the state to echo: answer them with
    ``with_options(input_responses={key: response, ...}, request_state=error.request_state)``.
    """

    def __init__(
        self, tool_name: str, envelope: dict[str, Any], requests: list[InputRequest], request_state: str | None
    ) -> None:
        self.requests = requests
        self.request_state = request_state
        kinds = ", ".join(f"{r.key} ({r.method})" for r in requests) or "no requests, only state"
        super().__init__(
            f"tool {tool_name!r} needs input: {kinds}; pass on_input=... in with_options to answer it",
            tool_name=tool_name,
            envelope=envelope,
            payload=envelope.get("result"),
        )


class ToolOutputValidationError(ToolError):
    """The tool's output does not match its generated output model.

    ``errors`` is pydantic's error list; ``raw`` is the value that was validated (None when the
    result carried nothing to validate).
    """

    def __init__(
        self,
        tool_name: str,
        model: type[BaseModel],
        *,
        errors: list[dict[str, Any]],
        raw: object,
        envelope: dict[str, Any],
    ) -> None:
        self.errors = errors
        self.raw = raw
        self.model = model
        first = errors[0] if errors else {}
        where = ".".join(str(part) for part in first.get("loc", ())) or "/"
        count = f"{len(errors)} validation error{'s' if len(errors) != 1 else ''}"
        message = one_line(f"{where}: {first.get('msg', 'invalid')}")
        super().__init__(
            f"tool {tool_name!r} returned output that does not match {model.__name__} ({count}; {message})",
            tool_name=tool_name,
            envelope=envelope,
        )
