"""Input rounds (MCP ``input_required``): the requests a server sends back in a result.

Read by the call's plan (``_plan.py``), named by the call options' ``on_input`` (``_options.py``)
and by ``ToolInputRequiredError`` (``_errors.py``); it imports none of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

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


@dataclass(frozen=True, slots=True)
class ElicitationRequest(InputRequest):
    """The server asks the user for data; answer ``{"action": "accept", "content": {...}}``
    (or ``{"action": "decline"}`` / ``{"action": "cancel"}``)."""

    @property
    def message(self) -> str:
        text = self.params.get("message")
        return text if isinstance(text, str) else ""

    @property
    def requested_schema(self) -> dict[str, Any] | None:
        schema = self.params.get("requestedSchema")
        return cast("dict[str, Any]", schema) if isinstance(schema, dict) else None


@dataclass(frozen=True, slots=True)
class SamplingRequest(InputRequest):
    """The server asks for an LLM completion; answer an MCP ``CreateMessageResult`` dict."""


@dataclass(frozen=True, slots=True)
class RootsRequest(InputRequest):
    """The server asks for the client's roots; answer ``{"roots": [{"uri": ...}, ...]}``."""


_REQUEST_TYPES: dict[str, type[InputRequest]] = {
    "elicitation/create": ElicitationRequest,
    "sampling/createMessage": SamplingRequest,
    "roots/list": RootsRequest,
}


def input_round(envelope: Mapping[str, Any]) -> tuple[list[InputRequest], str | None] | None:
    """The requests and state of an ``input_required`` envelope; None for any other envelope."""
    if envelope.get("result_type") != "input_required" or envelope.get("is_error"):
        return None
    result: object = envelope.get("result")
    wire: Mapping[str, object] = cast("Mapping[str, object]", result) if isinstance(result, Mapping) else {}
    raw_requests: object = wire.get("inputRequests") or {}
    requests: list[InputRequest] = []
    if isinstance(raw_requests, Mapping):
        for key, request in cast("Mapping[str, object]", raw_requests).items():
            body: Mapping[str, object] = cast("Mapping[str, object]", request) if isinstance(request, Mapping) else {}
            method = body.get("method")
            params = body.get("params")
            method_name = method if isinstance(method, str) else ""
            kind = _REQUEST_TYPES.get(method_name, InputRequest)
            requests.append(kind(str(key), method_name, dict(cast("Mapping[str, Any]", params or {}))))
    state = wire.get("requestState")
    if not requests and not isinstance(state, str):
        return None  # MCP requires one of the two: without either there is nothing to answer
    return requests, state if isinstance(state, str) else None
