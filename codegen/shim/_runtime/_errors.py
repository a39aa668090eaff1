"""The errors a generated package raises, by kind (the shape of openai-python's ``_exceptions.py``)::

    ToolError                      .message .tool_name .envelope .payload
    ├── ToolFailedError            the call failed: the envelope reports an error; .kind says why
    │   ├── ToolCallError          tool_error: the tool itself reported an error
    │   ├── ToolArgumentsError     invalid_arguments
    │   ├── ToolNotFoundError      unknown_tool
    │   ├── ToolCancelledError     cancelled (or ``confirm`` refused)
    │   ├── ToolProtocolError      protocol: a malformed reply
    │   └── ToolTransientError     may succeed when sent again
    │       ├── ToolTimeoutError   timeout
    │       └── ToolUnavailableError  unavailable
    ├── ToolInputRequiredError     the tool needs input and no ``on_input`` answers it
    └── ToolOutputValidationError  the output does not match the generated model

A caller's mistake is no ``ToolError``: a provider without ``call_tool``, an unknown or ill-typed
call option, an ``on_input`` answer that is not a dict raise ``TypeError``. So ``except ToolError``
catches what a tool or its server did, never a bug in the calling code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import _rules
from ._envelope import as_envelope
from ._text import as_list, joined_text, one_line

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ._envelope import ToolEnvelope
    from ._input import InputRequest

__all__ = [
    "ERRORS_BY_KIND",
    "TRANSIENT_KINDS",
    "ToolArgumentsError",
    "ToolCallError",
    "ToolCancelledError",
    "ToolError",
    "ToolFailedError",
    "ToolInputRequiredError",
    "ToolNotFoundError",
    "ToolOutputValidationError",
    "ToolProtocolError",
    "ToolTimeoutError",
    "ToolTransientError",
    "ToolUnavailableError",
    "raise_failure",
]


class ToolError(Exception):
    """Base class of the errors a generated package raises.

    ``message`` is the error's text (``str(error)``; a failed call's is what the tool said, see
    :class:`ToolFailedError`); ``envelope`` the whole result (empty when there is none);
    ``payload`` what the failure carried (structured content, else ``result``), or None.
    """

    def __init__(
        self, message: str, *, tool_name: str, envelope: Mapping[str, Any] | None = None, payload: Any = None
    ) -> None:
        super().__init__(message)
        self.message: str = message
        self.tool_name = tool_name
        self.envelope: ToolEnvelope = as_envelope(envelope)
        self.payload: Any = payload


class ToolFailedError(ToolError):
    """The call failed: its envelope reports an error; ``kind`` is the error kind, and the subclass
    says the same (catch this class for "any failure the tool or its server reported").

    ``message`` is the text of its content (or ``str(result)``); ``payload`` is its structured
    content when present, else its ``result``.
    """

    #: The contract's error kind (``metadata["error_kind"]``): ``tool_error``, ``timeout``, ...
    kind: str = "tool_error"
    _what = "reported an error"

    def __init__(self, tool_name: str, envelope: Mapping[str, Any]) -> None:
        result = envelope.get("result")
        text = joined_text(as_list(envelope.get("content")) or [])
        if text is None:
            text = f"tool {self._what}" if result is None else str(result)
        structured = envelope.get("structured_content")
        super().__init__(
            f"tool {tool_name!r} {self._what}: {one_line(text) or f'tool {self._what}'}",
            tool_name=tool_name,
            envelope=envelope,
            payload=structured if structured is not None else result,
        )
        self.message = text
        self.kind = _rules.error_kind(envelope) or type(self).kind


class ToolCallError(ToolFailedError):
    """The tool itself reported an error (error kind ``tool_error``)."""


class ToolArgumentsError(ToolFailedError):
    """The arguments were refused (error kind ``invalid_arguments``)."""

    kind = "invalid_arguments"
    _what = "refused its arguments"


class ToolNotFoundError(ToolFailedError):
    """No provider serves the tool (error kind ``unknown_tool``)."""

    kind = "unknown_tool"
    _what = "was not found"


class ToolCancelledError(ToolFailedError):
    """The call was cancelled, or ``confirm`` refused it before it was sent (error kind ``cancelled``)."""

    kind = "cancelled"
    _what = "was cancelled"


class ToolProtocolError(ToolFailedError):
    """The reply was malformed, or input rounds did not end (error kind ``protocol``)."""

    kind = "protocol"
    _what = "got a malformed reply"


class ToolTransientError(ToolFailedError):
    """A failure that may pass when the call is sent again (a timeout, a server out of reach).

    The ``retries`` option resends only these, and only for a read-only, idempotent tool.
    """


class ToolTimeoutError(ToolTransientError):
    """The call ran out of time (error kind ``timeout``)."""

    kind = "timeout"
    _what = "timed out"


class ToolUnavailableError(ToolTransientError):
    """The server could not be reached, died or the transport failed (error kind ``unavailable``)."""

    kind = "unavailable"
    _what = "is unavailable"


#: The class each error kind raises: one per kind of the contract.
ERRORS_BY_KIND: dict[str, type[ToolFailedError]] = {
    cls.kind: cls
    for cls in (
        ToolCallError,
        ToolArgumentsError,
        ToolNotFoundError,
        ToolTimeoutError,
        ToolCancelledError,
        ToolUnavailableError,
        ToolProtocolError,
    )
}
#: The kinds worth sending again: those whose class is a :class:`ToolTransientError`.
TRANSIENT_KINDS = frozenset(kind for kind, cls in ERRORS_BY_KIND.items() if issubclass(cls, ToolTransientError))


def raise_failure(tool_name: str, envelope: Mapping[str, Any]) -> None:
    kind = _rules.error_kind(envelope)
    if kind is not None:
        raise ERRORS_BY_KIND[kind](tool_name, envelope)


class ToolInputRequiredError(ToolError):
    """The tool needs input (``input_required``) and no ``on_input`` handler was given.

    ``requests`` are the typed requests and ``request_state`` the state to echo: answer them with
    ``with_options(input_responses={key: response, ...}, request_state=error.request_state)``.
    """

    #: Why the call stopped (what code mode reports for it).
    kind: str = "input_required"

    def __init__(
        self, tool_name: str, envelope: Mapping[str, Any], requests: list[InputRequest], request_state: str | None
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

    #: Why the call failed (what code mode reports for it).
    kind: str = "invalid_output"

    def __init__(
        self,
        tool_name: str,
        model: type[BaseModel],
        *,
        errors: list[dict[str, Any]],
        raw: object,
        envelope: Mapping[str, Any],
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
