"""Input rounds (MCP ``input_required``): the requests a server sends back in a result.

Read by the call's plan (``_plan.py``), named by the call options' ``on_input`` (``_options.py``)
and by ``ToolInputRequiredError`` (``_errors.py``); it imports none of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from .. import _rules

__all__ = ["ElicitationRequest", "InputRequest", "RootsRequest", "SamplingRequest", "input_round"]


@dataclass(frozen=True, slots=True)
class InputRequest:
    """One request of an ``input_required`` result; answer it under ``key``.

    ``method`` is the MCP method (``elicitation/create``, ``sampling/createMessage``,
    ``roots/list``); ``params`` its parameters with MCP wire keys.
    """

    key: str
    method: str
    params: dict[str, Any]


# The three kinds below add no field, so they are not dataclasses of their own: they inherit
# InputRequest's fields, __init__, __eq__, __hash__, __repr__ (which names the subclass) and frozen
# __setattr__, and ``__slots__ = ()`` keeps them slotted, as ``slots=True`` did. Decorating each
# again compiled the same methods anew at every import of the package (about 0.4 ms a class).
class ElicitationRequest(InputRequest):
    """The server asks the user for data; answer ``{"action": "accept", "content": {...}}``
    (or ``{"action": "decline"}`` / ``{"action": "cancel"}``)."""

    __slots__ = ()

    @property
    def message(self) -> str:
        text = self.params.get("message")
        return text if isinstance(text, str) else ""

    @property
    def requested_schema(self) -> dict[str, Any] | None:
        schema = self.params.get("requestedSchema")
        return cast("dict[str, Any]", schema) if isinstance(schema, dict) else None


class SamplingRequest(InputRequest):
    """The server asks for an LLM completion; answer an MCP ``CreateMessageResult`` dict."""

    __slots__ = ()


class RootsRequest(InputRequest):
    """The server asks for the client's roots; answer ``{"roots": [{"uri": ...}, ...]}``."""

    __slots__ = ()


_REQUEST_TYPES: dict[str, type[InputRequest]] = {
    "elicitation/create": ElicitationRequest,
    "sampling/createMessage": SamplingRequest,
    "roots/list": RootsRequest,
}


def input_round(envelope: Mapping[str, Any]) -> tuple[list[InputRequest], str | None] | None:
    """The requests and state of an ``input_required`` envelope; None for any other envelope
    (the one reading of a round: ``_rules.input_requests``)."""
    found = _rules.input_requests(envelope)
    if found is None:
        return None
    requests, state = found
    return [_REQUEST_TYPES.get(method, InputRequest)(key, method, params) for key, method, params in requests], state
