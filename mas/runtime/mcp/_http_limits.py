"""``max_result_bytes`` and ``max_json_depth`` over HTTP: a response hook on our own httpx2 client.

Why (checked against mcp 2.3.0 and httpx2 2.16.2): the SDK's streamable HTTP transport reads a
JSON answer with ``response.aread()``, whole and unbounded, and SSE events through httpx2's
``EventSource``, bounded only by its ``max_sse_event_size`` (1 MiB unless the caller says; we pass
``max_result_bytes``). A hostile server could send gigabytes; a gzip body could inflate to them.
The SDK is not patched: the client we hand it (``streamable_http_client(http_client=...)``, the
``httpx_client_factory`` of ``sse_client``) carries a ``response`` event hook that swaps each
response's byte stream for :class:`_LimitedStream` before anything reads it. That stream

* inflates ``gzip``/``deflate`` itself in bounded pieces (the client offers only those two), so
  the size counted is what the SDK would parse; any other content-encoding is refused;
* for ``application/json``: counts the body while it arrives and raises :class:`AnswerRefused`
  as soon as it passes ``max_result_bytes`` (the SDK turns that into an error for the request; the
  connection is replaced through :class:`HttpState`); a whole body nested deeper than
  ``max_json_depth`` is handed on as a JSON-RPC error for the request's id instead, so the call
  fails at once with the same text as over stdio;
* for ``text/event-stream``: splits events at blank lines and applies both limits to each event
  (the SDK's own event bound is never reached first: ours counts the same bytes and more);
* for anything else: counts the body.

The SDK's own JSON parser (pydantic-core) still refuses more than about 200 levels
(``SDK_PARSER_DEPTH``); over HTTP such an answer fails its call at once as a parse error even when
``max_json_depth`` is higher. Over stdio our reader parses it again itself.
"""

from __future__ import annotations

import json
import logging
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import httpx2

from mas.runtime.mcp._stdio import REFUSED, StdioLimits, answer_id, json_depth, too_big, too_deep

__all__ = ["ACCEPT_ENCODING", "ERROR_STATUSES", "AnswerRefused", "HttpLimits", "HttpState", "limit_responses"]

logger = logging.getLogger("mas.runtime.mcp_provider")

#: What the client offers: the encodings :class:`_Inflater` decodes within the size bound.
ACCEPT_ENCODING = "gzip, deflate"
#: Largest piece inflated at once, so a compressed bomb is stopped after at most this much more.
_PIECE = 64 * 1024


#: One message's limits over HTTP are those over stdio (infra ``max_result_bytes``,
#: ``max_json_depth``): one definition, so the two transports cannot drift apart.
HttpLimits = StdioLimits


@dataclass
class HttpState:
    """Why the transport ended this connection (``fault``), for the provider's error messages."""

    server: str
    fault: str | None = None
    on_fault: list[Callable[[str], None]] = field(default_factory=list)

    def trip(self, reason: str) -> None:
        if self.fault is None:
            logger.warning("MCP server %r: %s", self.server, reason)
        self.fault = reason
        for callback in self.on_fault:
            callback(reason)


class AnswerRefused(httpx2.StreamError):
    """Raised while a response body is read. A ``StreamError``: the SDK's JSON path turns it into
    a JSON-RPC error for the request at once; its SSE path ends that stream."""


#: HTTP error statuses answered to the requests a task makes, for a caller that sets a list here
#: (the SDK sends each request in a task started in its sender's context, so the list is seen).
ERROR_STATUSES: ContextVar[list[int] | None] = ContextVar("toolgen_http_error_statuses", default=None)


def limit_responses(state: HttpState, limits: HttpLimits) -> Callable[[httpx2.Response], Awaitable[None]]:
    """The ``event_hooks={"response": [...]}`` entry that bounds every response of the client."""

    async def hook(response: httpx2.Response) -> None:
        seen = ERROR_STATUSES.get()
        if seen is not None and response.status_code >= 400 and len(seen) < 16:
            seen.append(response.status_code)
        encodings = [
            value.strip().lower()
            for value in response.headers.get_list("content-encoding", split_commas=True)
            if value.strip().lower() != "identity"
        ]
        inflater: _Inflater | None = None
        refused: str | None = None
        if encodings == ["gzip"] or encodings == ["x-gzip"] or encodings == ["deflate"]:
            inflater = _Inflater(encodings[0])
            # Decoded here, within the bound; httpx2 must not decode (and grow) it again.
            del response.headers["content-encoding"]
        elif encodings:
            refused = f"the server sent a body with content-encoding {', '.join(encodings)!r}, which was not offered"
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        response.stream = _LimitedStream(response, kind, inflater, refused, state, limits)

    return hook


class _Inflater:
    """gzip or deflate, decoded in pieces of at most ``_PIECE`` bytes (httpx2's decoders are unbounded)."""

    def __init__(self, encoding: str) -> None:
        self._deflate = encoding == "deflate"
        self._first = True
        self._codec = zlib.decompressobj(zlib.MAX_WBITS if self._deflate else zlib.MAX_WBITS | 16)

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self._first and self._deflate and data:
            self._first = False
            try:  # "deflate" is zlib-wrapped by the RFC, raw in some servers (httpx2 accepts both)
                probe = zlib.decompressobj(zlib.MAX_WBITS)
                probe.decompress(data[:64], 1)
            except zlib.error:
                self._codec = zlib.decompressobj(-zlib.MAX_WBITS)
        try:
            while data:
                piece = self._codec.decompress(data, _PIECE)
                data = self._codec.unconsumed_tail
                if piece:
                    yield piece
        except zlib.error as exc:
            raise AnswerRefused(f"the server's compressed body is corrupt: {exc}") from None

    def flush(self) -> bytes:
        return self._codec.flush()


class _LimitedStream(httpx2.AsyncByteStream):
    def __init__(
        self,
        response: httpx2.Response,
        kind: str,
        inflater: _Inflater | None,
        refused: str | None,
        state: HttpState,
        limits: HttpLimits,
    ) -> None:
        assert isinstance(response.stream, httpx2.AsyncByteStream)  # an AsyncClient's response
        self._inner = response.stream
        self._request = response.request
        self._kind = kind
        self._inflater = inflater
        self._refused = refused
        self._state = state
        self._limits = limits

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._refused is not None:
            self._fail(self._refused)
        framer: _Framer
        if self._kind == "application/json":
            framer = _WholeBody(self)
        elif self._kind == "text/event-stream":
            framer = _Events(self)
        else:
            framer = _Counted(self)
        async for raw in self._inner:
            pieces = self._inflater.feed(raw) if self._inflater is not None else iter((raw,))
            for piece in pieces:
                for out in framer.feed(piece):
                    yield out
        if self._inflater is not None:
            for out in framer.feed(self._inflater.flush()):
                yield out
        for out in framer.end():
            yield out

    async def aclose(self) -> None:
        await self._inner.aclose()

    def _fail(self, reason: str) -> None:
        """End the connection (the next call reconnects) and this body."""
        self._state.trip(reason)
        raise AnswerRefused(reason)

    def too_big(self, size: int, *, ended: bool) -> None:
        self._fail(too_big(size, self._limits.max_message_bytes, ended=ended))

    def request_id(self) -> Any:
        """The id of the JSON-RPC request this response answers (a POST's body), or None."""
        try:
            sent = json.loads(self._request.content)
        except (httpx2.RequestNotRead, ValueError, RecursionError):
            return None
        return sent.get("id") if isinstance(sent, dict) and "method" in sent else None

    def deep_refusal(self, message: bytes, ident: Any) -> bytes | None:
        """A JSON-RPC error answering ``message`` when it is nested deeper than the limit, else None."""
        limit = self._limits.max_json_depth
        if message.count(b"[") + message.count(b"{") <= limit:  # fewer brackets than the limit: fine
            return None
        try:
            data = json.loads(message)
        except RecursionError:
            data, depth = None, None
        except ValueError:
            return None  # not JSON: the SDK reports that itself
        else:
            depth = json_depth(data)
            if depth <= limit:
                return None
        answered = None if data is None else answer_id(data)
        ident = ident if answered is None else answered
        if ident is None:  # nobody's answer: the connection ends instead of a call waiting
            self._fail(f"the server sent a message nested deeper than max_json_depth={limit}, for no request")
        if depth is None:
            text = f"the server's answer is nested deeper than Python can parse (max_json_depth={limit})"
        else:
            text = too_deep(depth, limit)
        error = {"jsonrpc": "2.0", "id": ident, "error": {"code": REFUSED, "message": text}}
        return json.dumps(error).encode()


class _Framer:
    def __init__(self, stream: _LimitedStream) -> None:
        self.stream = stream
        self.limit = stream._limits.max_message_bytes

    def feed(self, piece: bytes) -> Iterator[bytes]:
        raise NotImplementedError

    def end(self) -> Iterator[bytes]:
        return iter(())


class _Counted(_Framer):
    """A body that is not JSON-RPC (an error page): passed on, bounded."""

    size = 0

    def feed(self, piece: bytes) -> Iterator[bytes]:
        self.size += len(piece)
        if self.size > self.limit:
            self.stream.too_big(self.size, ended=False)
        yield piece


class _WholeBody(_Framer):
    """An ``application/json`` body: the SDK reads it whole anyway, so it is held until it ends."""

    def __init__(self, stream: _LimitedStream) -> None:
        super().__init__(stream)
        self._body = bytearray()

    def feed(self, piece: bytes) -> Iterator[bytes]:
        self._body += piece
        if len(self._body) > self.limit:
            self.stream.too_big(len(self._body), ended=False)
        return iter(())

    def end(self) -> Iterator[bytes]:
        body = bytes(self._body)
        refusal = self.stream.deep_refusal(body, self.stream.request_id())
        yield body if refusal is None else refusal


class _Events(_Framer):
    """A ``text/event-stream`` body, passed on one whole event at a time, each one bounded."""

    def __init__(self, stream: _LimitedStream) -> None:
        super().__init__(stream)
        self._buffer = bytearray()
        self._cr = False  # a "\r" ended the last piece: a "\n" may follow in the next

    def feed(self, piece: bytes) -> Iterator[bytes]:
        if self._cr:
            piece = b"\r" + piece
        self._cr = piece.endswith(b"\r")
        if self._cr:
            piece = piece[:-1]
        # SSE ends lines with \r\n, \n or \r; one spelling makes an event's end one search.
        piece = piece.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        buffer = self._buffer
        scan = max(len(buffer) - 1, 0)
        buffer += piece
        start = 0
        while (end := buffer.find(b"\n\n", scan)) != -1:
            if end - start > self.limit:
                self.stream.too_big(end - start, ended=True)
            yield self._checked(bytes(buffer[start : end + 2]))
            start = scan = end + 2
        del buffer[:start]
        if len(buffer) > self.limit:
            self.stream.too_big(len(buffer), ended=False)

    def end(self) -> Iterator[bytes]:
        if self._buffer or self._cr:
            yield bytes(self._buffer) + (b"\n" if self._cr else b"")

    def _checked(self, event: bytes) -> bytes:
        data = b"\n".join(line[5:].removeprefix(b" ") for line in event.split(b"\n") if line.startswith(b"data:"))
        refusal = self.stream.deep_refusal(data, self.stream.request_id()) if data else None
        return event if refusal is None else b"event: message\ndata: " + refusal + b"\n\n"
