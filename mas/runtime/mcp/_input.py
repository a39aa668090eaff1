"""Server-to-client requests during a call, answered by the caller the way input rounds are.

A server may ask the client something while a ``tools/call`` runs, in one of two ways:

* the 2026 way, by returning an ``input_required`` result (the caller answers with
  ``input_responses`` and ``request_state`` on a repeated call), which the provider passes
  through as it is;
* the 2025-11-25 way, by sending ``elicitation/create``, ``sampling/createMessage`` or
  ``roots/list`` *requests* while the call is in flight, which the server then awaits.

This module turns the second into the first, so a caller has one handler and one request shape
for both (a generated package's ``on_input``): the in-flight call is suspended and returned as an
``input_required`` envelope whose ``requestState`` is a token of this provider, and the caller's
next ``call_tool`` with that token and its ``input_responses`` answers the server's requests and
waits on for the same call's result (or its next question). The ToolContract needs no new
option for this: the answers travel in the options it already has.

SEP-1034 holds both ways: an accepted form answer gets the schema default of each field the user
left out, for a held call's request and for a 2026 round whose form was remembered by its
``requestState``.

What the client declares to the server follows the infra entry's ``client_capabilities``; a
request of a kind not declared there is refused by the SDK (-32600, "Elicitation not
supported", ...). A suspended call nobody resumes is given up after :data:`ANSWER_TIMEOUT`
seconds (or the call's own timeout): the server's requests are refused with a message saying
so, and the call is cancelled. Everything here runs on the provider's loop.

Two bounds keep a server's questions with the caller they belong to, and small:

* MCP gives the client no way to tell which ``tools/call`` a server-to-client request is for. A
  request is put to a caller only when exactly one call is in flight on that connection; with
  several, it is refused (the server gets an error), so one caller's ``on_input`` never answers
  another caller's question. A task's question is the task's call's, always.
* One call may ask at most ``max_client_requests`` (infra, default 64) questions; later ones are
  refused at once with one warning, so a flood neither grows memory nor the caller's round.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.client.session import ClientRequestContext
from pydantic import BaseModel, ValidationError

from mas.runtime.contracts._rules import one_line

__all__ = [
    "ANSWER_TIMEOUT",
    "CAPABILITY_METHODS",
    "TOKEN_PREFIX",
    "Ask",
    "InputBridge",
    "PendingCall",
    "apply_elicitation_defaults",
]

logger = logging.getLogger("mas.runtime.mcp_provider")

#: Seconds a suspended call waits for the caller's answers when the call has no timeout of its own.
ANSWER_TIMEOUT = 300.0
#: ``requestState`` values minted here start with this; any other state belongs to the server.
TOKEN_PREFIX = "toolgen-input:"
#: Infra ``client_capabilities`` names and the server-to-client method each one lets through.
CAPABILITY_METHODS: Mapping[str, str] = {
    "elicitation": "elicitation/create",
    "sampling": "sampling/createMessage",
    "roots": "roots/list",
}
#: How each method's answer is checked before it goes back to the server.
_RESPONSE_TYPES: Mapping[str, type[BaseModel]] = {
    "elicitation/create": types.ElicitResult,
    "sampling/createMessage": types.CreateMessageResult,
    "roots/list": types.ListRootsResult,
}


def apply_elicitation_defaults(params: Mapping[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    """SEP-1034: an accepted form answer gets each field the user left out set to its schema default.

    Only for ``action == "accept"`` of a form request; the user's own values always win.
    """
    if response.get("action") != "accept":
        return response
    schema = params.get("requestedSchema")
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        return response
    content = response.get("content")
    filled: dict[str, Any] = dict(content) if isinstance(content, Mapping) else {}
    for name, prop in properties.items():
        if isinstance(prop, Mapping) and "default" in prop and name not in filled:
            filled[name] = prop["default"]
    return {**response, "content": filled}


@dataclass(eq=False)
class Ask:
    """One server-to-client request waiting for the caller's answer."""

    key: str
    method: str
    #: The request's params with wire keys (what the caller sees).
    params: dict[str, Any]
    #: The typed request, for the ``input_required`` envelope.
    request: types.InputRequest
    answer: asyncio.Future[BaseModel | types.ErrorData]


@dataclass(eq=False)
class PendingCall:
    """One ``tools/call`` in flight, with the server's questions it has not had answered yet."""

    label: str
    #: The connection the call went out on (set once the session is acquired).
    conn: object | None = None
    work: asyncio.Future[Any] | None = None
    asks: list[Ask] = field(default_factory=list)
    #: The envelope the work ended with (set in its last step), until a follower hands it over.
    result: Any = None
    #: Called on the loop when there may be something to hand the caller: the work's result, or
    #: a question from the server (``MCPToolProvider._follow``). None while nobody follows the
    #: call (it is suspended in an input round, or its caller stopped waiting).
    follower: Callable[[], None] | None = None
    token: str | None = None
    expiry: asyncio.TimerHandle | None = None
    #: The server task the call is following (``_mcp_tasks``), for the caller's failure envelope.
    task_id: str | None = None
    #: Server-to-client requests refused because the call reached ``max_client_requests``.
    over_limit: int = 0

    def unanswered(self) -> list[Ask]:
        return [ask for ask in self.asks if not ask.answer.done()]

    def wake_up(self) -> None:
        """Tell the follower, if any, that the server asked something or the work ended."""
        if self.follower is not None:
            self.follower()

    def ended(self, result: Any) -> None:
        """The work's last step: its result reaches the follower, if any, in this very step."""
        self.result = result
        self.wake_up()

    def refuse(self, reason: str) -> None:
        for ask in self.unanswered():
            ask.answer.set_result(types.ErrorData(code=types.INVALID_REQUEST, message=one_line(reason)))

    def answer(self, responses: Mapping[str, Any] | None) -> list[str]:
        """Hand the caller's answers to the server's waiting requests (the unanswered stay asked).

        Every answer is checked first; when one is invalid nothing is sent and the problems
        (one line each, naming the request key) are returned.
        """
        checked: list[tuple[Ask, BaseModel]] = []
        problems: list[str] = []
        for ask in self.unanswered():
            if responses is None or ask.key not in responses:
                continue
            raw = responses[ask.key]
            wire = raw.model_dump(mode="json", by_alias=True, exclude_none=True) if isinstance(raw, BaseModel) else raw
            if not isinstance(wire, Mapping):
                problems.append(f"{ask.key} ({ask.method}): expected an object, not {type(raw).__name__}")
                continue
            wire = dict(wire)
            if ask.method == "elicitation/create":
                wire = apply_elicitation_defaults(ask.params, wire)
            try:
                checked.append((ask, _RESPONSE_TYPES[ask.method].model_validate(wire)))
            except ValidationError as exc:
                problems.append(f"{ask.key} ({ask.method}): {one_line(str(exc))}")
        if not problems:
            for ask, response in checked:
                ask.answer.set_result(response)
        return problems


#: Form requests of 2026 input rounds remembered per ``requestState``, to fill their defaults in.
_REMEMBERED_ROUNDS = 256


class InputBridge:
    """The calls in flight on one provider and the server-to-client requests routed to them."""

    def __init__(self, server: str, capabilities: Iterable[str], max_requests: int = 64) -> None:
        self.server = server
        self.capabilities = frozenset(capabilities)
        #: Infra ``max_client_requests``: questions one call may ask; later ones are refused.
        self.max_requests = max_requests
        #: The calls in flight, in the order they began (a dict: ending one is not a scan of the rest).
        self._calls: dict[PendingCall, None] = {}
        self._suspended: dict[str, PendingCall] = {}
        self._counter = 0
        #: requestState of a server's input_required result -> {request key: form params}.
        self._forms: OrderedDict[str, dict[str, dict[str, Any]]] = OrderedDict()

    # --- SEP-1034 for 2026 rounds: the form travels in one call, the answer in the next ----------
    def remember_forms(self, result: types.InputRequiredResult) -> None:
        """Keep the elicitation forms of a server's ``input_required`` result for its answer."""
        if result.request_state is None or not result.input_requests:
            return  # without a state the answer cannot be matched to its round
        forms = {
            key: request.params.model_dump(mode="json", by_alias=True, exclude_none=True)
            for key, request in result.input_requests.items()
            if isinstance(request, types.ElicitRequest)
        }
        if forms:
            self._forms[result.request_state] = forms
            self._forms.move_to_end(result.request_state)
            while len(self._forms) > _REMEMBERED_ROUNDS:
                self._forms.popitem(last=False)

    def fill_defaults(self, request_state: str | None, responses: dict[str, Any]) -> dict[str, Any]:
        """The caller's answers to a 2026 round, with SEP-1034 defaults filled into accepted forms."""
        forms = self._forms.get(request_state) if request_state is not None else None
        if not forms:
            return responses
        filled = dict(responses)
        for key, params in forms.items():
            answer = filled.get(key)
            if isinstance(answer, types.ElicitResult):
                wire = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
                filled[key] = types.ElicitResult.model_validate(apply_elicitation_defaults(params, wire))
        return filled

    # --- the SDK side: callbacks the session is built with ------------------------------------
    def session_callbacks(self, conn: object) -> dict[str, Any]:
        """``ClientSession`` keyword arguments: a callback for each declared capability only.

        The SDK declares a capability exactly when its callback is given, so what the server is
        told is what the infra entry says the caller answers.
        """

        async def elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> Any:
            return await self._ask(conn, context, "elicitation/create", types.ElicitRequest(params=params))

        async def sample(context: ClientRequestContext, params: types.CreateMessageRequestParams) -> Any:
            return await self._ask(conn, context, "sampling/createMessage", types.CreateMessageRequest(params=params))

        async def roots(context: ClientRequestContext) -> Any:
            return await self._ask(conn, context, "roots/list", types.ListRootsRequest())

        callbacks: dict[str, Callable[..., Any]] = {
            "elicitation": elicit,
            "sampling": sample,
            "roots": roots,
        }
        names = {"elicitation": "elicitation_callback", "sampling": "sampling_callback", "roots": "list_roots_callback"}
        return {names[kind]: callbacks[kind] for kind in sorted(self.capabilities)}

    async def _ask(
        self, conn: object, context: ClientRequestContext, method: str, request: types.InputRequest
    ) -> BaseModel | types.ErrorData:
        return await self.ask(conn, method, request)

    async def ask(
        self, conn: object, method: str, request: types.InputRequest, call: PendingCall | None = None
    ) -> BaseModel | types.ErrorData:
        """Put one server question to the caller of the ``tools/call`` in flight on ``conn``.

        For a request the server sent during the call (``call`` None: the one call in flight on
        ``conn``, if there is exactly one), and for a question a 2026 task carries in
        ``inputRequests`` (``_mcp_tasks``, with its own ``call``): either way the caller sees one
        ``input_required`` round.
        """
        if call is None:
            flying = [c for c in self._calls if c.conn is conn and c.work is not None and not c.work.done()]
            if not flying:
                # MCP lets a server ask only while serving one of our requests; none is a tools/call here.
                message = f"{method} refused: no tools/call of this client is in flight to ask for"
                return types.ErrorData(code=types.INVALID_REQUEST, message=message)
            if len(flying) > 1:
                # Which call asks is not said on the wire: guessing would put one caller's question
                # to another caller (a shared code-mode server's clients), so nobody is asked.
                logger.info("MCP server %r: %s refused: %d calls in flight ask", self.server, method, len(flying))
                message = (
                    f"{method} refused: {len(flying)} tools/call of this client are in flight on this connection "
                    "and MCP does not say which one asks"
                )
                return types.ErrorData(code=types.INVALID_REQUEST, message=message)
            call = flying[0]
        if len(call.asks) >= self.max_requests:
            call.over_limit += 1
            if call.over_limit == 1:
                logger.warning(
                    "%s: the server asked more than max_client_requests=%d questions during one call; "
                    "refusing the rest",
                    call.label,
                    self.max_requests,
                )
            message = f"{method} refused: more than max_client_requests={self.max_requests} requests during one call"
            return types.ErrorData(code=types.INVALID_REQUEST, message=message)
        self._counter += 1
        params = request.model_dump(mode="json", by_alias=True, exclude_none=True).get("params") or {}
        ask = Ask(
            key=f"{method.partition('/')[0]}-{self._counter}",
            method=method,
            params=params,
            request=request,
            answer=asyncio.get_running_loop().create_future(),
        )
        call.asks.append(ask)
        call.wake_up()
        logger.debug("%s: the server asks %s (%s)", call.label, ask.key, method)
        return await ask.answer

    # --- the caller side ------------------------------------------------------------------------
    def begin(self, label: str) -> PendingCall:
        call = PendingCall(label=label)
        self._calls[call] = None
        return call

    def end(self, call: PendingCall, reason: str) -> None:
        """The call is over (finished, cancelled or abandoned): refuse whatever it still asks."""
        if call.expiry is not None:
            call.expiry.cancel()
            call.expiry = None
        if call.token is not None:
            self._suspended.pop(call.token, None)
        call.refuse(reason)
        self._calls.pop(call, None)

    def suspend(self, call: PendingCall, timeout: float | None) -> types.InputRequiredResult:
        """The ``input_required`` result that hands the call's open questions to the caller."""
        if call.token is None:
            call.token = TOKEN_PREFIX + secrets.token_urlsafe(16)
            self._suspended[call.token] = call
        if call.expiry is not None:
            call.expiry.cancel()
        wait = ANSWER_TIMEOUT if timeout is None else timeout
        call.expiry = asyncio.get_running_loop().call_later(wait, self._expire, call, wait)
        return types.InputRequiredResult(
            input_requests={ask.key: ask.request for ask in call.unanswered()}, request_state=call.token
        )

    def resume(self, token: str) -> PendingCall | None:
        call = self._suspended.get(token)
        if call is not None and call.expiry is not None:
            call.expiry.cancel()
            call.expiry = None
        return call

    def _expire(self, call: PendingCall, waited: float) -> None:
        asked = ", ".join(f"{a.key} ({a.method})" for a in call.unanswered()) or "nothing"
        logger.info("%s: no answer to %s within %s s; refusing and cancelling the call", call.label, asked, waited)
        self.end(call, f"the caller did not answer within {waited} s")
        if call.work is not None and not call.work.done():
            call.work.cancel()  # the SDK sends notifications/cancelled for the request

    def close(self) -> None:
        for call in list(self._calls):
            self.end(call, "the client is closing")
            if call.work is not None and not call.work.done():
                call.work.cancel()
