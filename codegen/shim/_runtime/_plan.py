"""One call's plan: the input rounds it answers, the retries it may take, the confirmation it asks.

The sync and async bases (``_base.py``) run the same plan; they differ only in how they send,
wait and ask. An input round's requests are read in ``_input.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from .. import _rules
from ._errors import TRANSIENT_KINDS, ToolCancelledError, ToolInputRequiredError, ToolProtocolError
from ._input import InputRequest, input_round
from ._options import MAX_INPUT_ROUNDS

if TYPE_CHECKING:
    from ._info import ToolInfo
    from ._options import CallOptions

__all__ = ["CallPlan"]

# --------------------------------------------------------------------------------------------
# Retries and confirmation
# --------------------------------------------------------------------------------------------


def _retry_safe(info: ToolInfo[Any]) -> bool:
    """Only a tool that says it is both read-only and idempotent may run twice (``_rules.retry_safe``)."""
    return _rules.retry_safe(info.read_only, info.idempotent, info.destructive)


def _is_destructive(info: ToolInfo[Any]) -> bool:
    """MCP's defaults: destructive unless it says it is read-only or not destructive (``_rules.is_destructive``)."""
    return _rules.is_destructive(info.read_only, info.destructive)


def _backoff(attempt: int) -> float:
    return min(0.05 * 2.0**attempt, 1.0)


class CallPlan:
    """One call's plan across attempts: what to send next, and what an envelope means.

    The sync and async bases run the same plan; they differ only in how they send, wait and ask.
    """

    def __init__(self, info: ToolInfo[Any], arguments: dict[str, Any], options: CallOptions) -> None:
        self.info = info
        self.arguments = arguments
        self.options: dict[str, object] = dict(options)
        retries = options.get("retries")
        self.retries_left = retries if retries is not None and _retry_safe(info) else 0
        self.attempt = 0
        self.rounds = 0

    def needs_confirmation(self) -> bool:
        return self.options.get("confirm") is not None and _is_destructive(self.info)

    def confirmation(self) -> object:
        """``confirm(info, arguments)``'s answer (an awaitable from an async callback), or True when
        the tool needs none. The bases only wait for it, each in its own way, and pass it to
        :meth:`confirmed`."""
        if not self.needs_confirmation():
            return True
        confirm = cast("Callable[..., object]", self.options["confirm"])
        return confirm(self.info, dict(self.arguments))

    def confirmed(self, answer: object) -> None:
        """Go on after a yes; a no raises the refusal, before anything is sent."""
        if not answer:
            raise self.refused()

    def ask(self, requests: list[InputRequest]) -> object:
        """``on_input(requests)``'s answer (an awaitable from an async callback), for :meth:`answered`."""
        on_input = cast("Callable[[list[InputRequest]], object]", self.options["on_input"])
        return on_input(requests)

    def refused(self) -> ToolCancelledError:
        message = f"confirm refused destructive tool {self.info.name!r}; nothing was sent"
        return ToolCancelledError(self.info.name, _rules.failure_dict(message, "cancelled"))

    def retry_delay(self, envelope: Mapping[str, Any]) -> float | None:
        """Seconds to wait before sending again, or None when this envelope is final."""
        if self.retries_left <= 0 or _rules.error_kind(envelope) not in TRANSIENT_KINDS:
            return None
        self.retries_left -= 1
        self.attempt += 1
        return _backoff(self.attempt)

    def input_needed(self, envelope: Mapping[str, Any]) -> list[InputRequest] | None:
        """The requests to answer before sending again; raises when nobody can answer them."""
        pending = input_round(envelope)
        if pending is None:
            return None
        requests, state = pending
        if self.options.get("on_input") is None:
            raise ToolInputRequiredError(self.info.name, envelope, requests, state)
        self.rounds += 1
        if self.rounds > MAX_INPUT_ROUNDS:
            message = f"still input_required after {MAX_INPUT_ROUNDS} input rounds"
            raise ToolProtocolError(self.info.name, _rules.failure_dict(message, "protocol"))
        self.options["request_state"] = state
        return requests

    def answered(self, responses: object) -> None:
        if not isinstance(responses, Mapping):
            raise TypeError(f"on_input must return a dict of responses by request key, not {type(responses).__name__}")
        self.options["input_responses"] = dict(cast("Mapping[str, object]", responses))
