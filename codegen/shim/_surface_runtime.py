"""Runtime support for a generated package's resources, resource templates and prompts.

Copied verbatim as ``_surface_runtime.py`` into packages whose servers serve resources or prompts
(only those: a package of tools alone has no such file). Its canonical source is
``codegen/shim/_surface_runtime.py`` in the toolgen repository; guide: docs/resources-and-prompts.md.

Each generated method calls one path on the provider (the runtime registry, or an MCP provider):
``read_resource(uri)``, ``get_prompt(name, arguments)`` or ``complete(ref, argument, value)``
(their ``a``-prefixed twins from async code), and decodes the envelope it gets: a failure raises
the :class:`ToolFailedError` subclass of its kind, a resource comes back as the contents class its
MIME type says (:class:`TextContents`, :class:`JsonContents`, :class:`BlobContents`, or
:class:`ResourceContents` when the server declares none), a prompt as a :class:`PromptResult`.
"""

from __future__ import annotations

import base64
import binascii
import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast

from . import _rules, _uri_template
from ._runtime import CallOptions, ToolFailedError, ToolProtocolError

__all__ = [
    "AsyncPromptsBase",
    "AsyncResourcesBase",
    "AsyncSubscription",
    "BlobContents",
    "JsonContents",
    "PromptMessage",
    "PromptResult",
    "PromptsBase",
    "ResourceContent",
    "ResourceContents",
    "ResourcesBase",
    "Subscription",
    "TextContents",
]

_C = TypeVar("_C", bound="ResourceContents")


@dataclass(frozen=True)
class ResourceContent:
    """One item of a ``resources/read`` answer: its URI, MIME type, and text or (decoded) bytes."""

    uri: str
    mime_type: str | None
    text: str | None
    data: bytes | None


class ResourceContents(Sequence[ResourceContent]):
    """A resource as read: its items (usually one), with their text, bytes and JSON at hand."""

    def __init__(self, name: str, items: Sequence[ResourceContent]) -> None:
        self._name = name
        self.items: tuple[ResourceContent, ...] = tuple(items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> ResourceContent:  # type: ignore[override]
        return self.items[index]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._name!r}, {len(self.items)} item(s))"

    @property
    def text(self) -> str:
        """Every item's text, joined (bytes read as UTF-8); a blob that is not UTF-8 is a protocol error."""
        parts: list[str] = []
        for item in self.items:
            if item.text is not None:
                parts.append(item.text)
            elif item.data is not None:
                try:
                    parts.append(item.data.decode("utf-8"))
                except UnicodeDecodeError:
                    raise _protocol(self._name, f"{item.uri} is binary, not text") from None
        return "".join(parts)

    @property
    def data(self) -> bytes:
        """Every item's bytes, joined (text encoded as UTF-8)."""
        return b"".join(
            item.data if item.data is not None else (item.text or "").encode("utf-8") for item in self.items
        )

    def json(self) -> Any:
        """The text parsed as JSON; text that is not JSON is a protocol error."""
        try:
            return json.loads(self.text)
        except ValueError as exc:
            raise _protocol(self._name, f"the contents are not JSON: {exc}") from None


class TextContents(ResourceContents):
    """A text resource (``text/*``, XML, ...): ``.text`` is the point."""


class JsonContents(ResourceContents):
    """A JSON resource (``application/json``, ``*+json``): ``.value`` is parsed at once."""

    def __init__(self, name: str, items: Sequence[ResourceContent]) -> None:
        super().__init__(name, items)
        self.value: Any = self.json()


class BlobContents(ResourceContents):
    """A binary resource (images, archives, ...): ``.data`` holds the decoded bytes."""


@dataclass(frozen=True)
class PromptMessage:
    """One message of a prompt: its role, and its content block as sent (``type``, ``text``, ...)."""

    role: str
    content: Mapping[str, Any]

    @property
    def type(self) -> str:
        return str(self.content.get("type", ""))

    @property
    def text(self) -> str | None:
        """The text of a text block (or of an embedded text resource), else None."""
        if self.type == "text":
            return str(self.content.get("text", ""))
        resource = _mapping(self.content.get("resource"))
        if self.type == "resource" and resource is not None and "text" in resource:
            return str(resource["text"])
        return None


@dataclass(frozen=True)
class PromptResult:
    """A prompt as got: its description (or None) and its messages, in order."""

    description: str | None
    messages: tuple[PromptMessage, ...]


class Subscription(Protocol):
    """What ``resources.subscribe(uri)`` returns: the runtime's bounded ``ResourceSubscription``.

    Each update says "read it again" (``update.uri``); at most ``max_queued`` wait, and on a full
    queue the oldest is dropped and counted in ``dropped``. ``get(timeout)`` is None when the wait
    ran out or it was closed; leaving ``with`` (or ``close()``) unsubscribes. When the connection
    ends, iteration raises the runtime's ``SubscriptionError`` (``.kind``). Guide:
    docs/resources-and-prompts.md, "Subscriptions".
    """

    uri: str
    dropped: int

    def get(self, timeout: float | None = None) -> Any: ...
    def close(self) -> None: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __enter__(self) -> Any: ...
    def __exit__(self, *exc: object) -> None: ...


class AsyncSubscription(Protocol):
    """The async side of :class:`Subscription`: ``aget``, ``async for``, ``async with``, ``aclose``."""

    uri: str
    dropped: int

    async def aget(self, timeout: float | None = None) -> Any: ...
    async def aclose(self) -> None: ...
    def __aiter__(self) -> AsyncIterator[Any]: ...
    async def __aenter__(self) -> Any: ...
    async def __aexit__(self, *exc: object) -> None: ...


def _subscribed(uri: str, subscribe: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """``subscribe(uri, **kwargs)``; a failure with a kind raises that kind's error, as reads do."""
    try:
        return subscribe(uri, **kwargs)
    except Exception as exc:
        raise _kind_error(uri, exc) from None


async def _asubscribed(uri: str, subscribe: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    try:
        return await _maybe(subscribe(uri, **kwargs))
    except Exception as exc:
        raise _kind_error(uri, exc) from None


def _kind_error(uri: str, exc: Exception) -> Exception:
    """The error of ``exc``'s failure kind (the runtime's ``SubscriptionError.kind``), else ``exc``."""
    kind = getattr(exc, "kind", None)
    if not isinstance(kind, str):
        return exc
    from ._runtime._errors import ERRORS_BY_KIND

    envelope = {"status": "error", "is_error": True, "result": str(exc), "metadata": {"error_kind": kind}}
    return ERRORS_BY_KIND.get(kind, ToolFailedError)(uri, envelope)


def _subscribe_kwargs(
    callee: object, server: str | None, on_update: Callable[[Any], object] | None, max_queued: int | None
) -> dict[str, Any]:
    out = _kwargs(callee, server, {})
    if on_update is not None:
        out["on_update"] = on_update
    if max_queued is not None:
        out["max_queued"] = max_queued
    return out


def _protocol(name: str, what: str) -> ToolProtocolError:
    envelope = {"status": "error", "is_error": True, "result": what, "metadata": {"error_kind": "protocol"}}
    return ToolProtocolError(name, envelope)


def _envelope(name: str, raw: object) -> dict[str, Any]:
    """The answer as an envelope dict; a failure raises its kind's error."""
    envelope = _rules.to_envelope(raw)
    kind = _rules.error_kind(envelope)
    if kind is not None:
        from ._runtime._errors import ERRORS_BY_KIND

        raise ERRORS_BY_KIND.get(kind, ToolFailedError)(name, envelope)
    return envelope


def _mapping(value: object) -> Mapping[str, Any] | None:
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else None


def _array(value: object) -> list[object] | None:
    return cast("list[object]", value) if isinstance(value, list) else None


def _result(name: str, raw: object) -> Mapping[str, Any]:
    return _mapping(_envelope(name, raw).get("result")) or {}


def _contents(cls: type[_C], name: str, raw: object) -> _C:
    items = _array(_result(name, raw).get("contents"))
    if items is None:
        raise _protocol(name, "the answer has no `contents` array")
    out: list[ResourceContent] = []
    for item in items:
        entry = _mapping(item)
        if entry is None:
            raise _protocol(name, "a `contents` item is not an object")
        blob, text, mime = entry.get("blob"), entry.get("text"), entry.get("mimeType")
        data: bytes | None = None
        if isinstance(blob, str):
            try:
                data = base64.b64decode(blob, validate=True)
            except (binascii.Error, ValueError):
                raise _protocol(name, "a blob is not base64") from None
        out.append(
            ResourceContent(
                str(entry.get("uri", "")),
                mime if isinstance(mime, str) else None,
                text if isinstance(text, str) else None,
                data,
            )
        )
    return cls(name, out)


def _prompt(name: str, raw: object) -> PromptResult:
    result = _result(name, raw)
    messages = _array(result.get("messages"))
    if messages is None:
        raise _protocol(name, "the answer has no `messages` array")
    found: list[PromptMessage] = []
    for message in messages:
        entry = _mapping(message) or {}
        content = _mapping(entry.get("content"))
        if content is None:
            raise _protocol(name, "a message has no content block")
        found.append(PromptMessage(str(entry.get("role", "")), content))
    description = result.get("description")
    return PromptResult(description if isinstance(description, str) else None, tuple(found))


def _values(name: str, raw: object) -> list[str]:
    completion = _mapping(_result(name, raw).get("completion")) or {}
    values = _array(completion.get("values"))
    if values is None:
        raise _protocol(name, "the answer has no `completion.values` array")
    return [str(v) for v in values]


def _kwargs(callee: object, server: str | None, options: Mapping[str, object]) -> dict[str, Any]:
    """``server`` (the registry routes by it) and ``timeout_seconds``, where the callee takes them."""
    taken = _rules.keywords_taken(cast("Any", callee))
    out: dict[str, Any] = {}
    if server is not None and (taken is None or "server" in taken):
        out["server"] = server
    out.update(_rules.options_for(cast("Any", callee), {"timeout_seconds": options.get("timeout_seconds")}))
    return out


def _method(provider: object, name: str, what: str) -> Any:
    method = getattr(provider, name, None)
    if not callable(method):
        raise _protocol(what, f"the provider ({type(provider).__name__}) has no {name}(); use the runtime registry")
    return method


class _SurfaceCore:
    def __init__(self, provider: object, options: CallOptions | None = None) -> None:
        self._provider = provider
        self._options: Mapping[str, object] = dict(options or {})


class ResourcesBase(_SurfaceCore):
    """Base of a source's generated resources class: one method per resource and template."""

    _source: str | None = None

    def _read(self, cls: type[_C], uri: str) -> _C:
        read = _method(self._provider, "read_resource", uri)
        raw = _rules.run_sync(read(uri, **_kwargs(read, self._source, self._options)))
        return _contents(cls, uri, raw)

    def _fill(self, cls: type[_C], template: str, values: Mapping[str, str | None]) -> _C:
        return self._read(cls, _uri_template.expand(template, values))

    def subscribe(
        self, uri: str, *, on_update: Callable[[Any], object] | None = None, max_queued: int | None = None
    ) -> Subscription:
        """Updates of ``uri`` (the runtime's ``subscribe_resource``): iterate the result, or pass
        ``on_update``; a server that cannot be subscribed to raises the error of its kind."""
        subscribe = _method(self._provider, "subscribe_resource", uri)
        kwargs = _subscribe_kwargs(subscribe, self._source, on_update, max_queued)
        return cast("Subscription", _subscribed(uri, subscribe, kwargs))

    def _complete(self, template: str, argument: str, value: str, context: Mapping[str, str] | None) -> list[str]:
        complete = _method(self._provider, "complete", template)
        ref = {"type": "ref/resource", "uri": template}
        raw = _rules.run_sync(
            complete(ref, argument, value, **_context(context), **_kwargs(complete, self._source, self._options))
        )
        return _values(template, raw)


class AsyncResourcesBase(_SurfaceCore):
    """The async base: ``aread_resource`` (else ``read_resource``) on the provider."""

    _source: str | None = None

    async def _read(self, cls: type[_C], uri: str) -> _C:
        read = _method(self._provider, "aread_resource", uri) if hasattr(self._provider, "aread_resource") else (
            _method(self._provider, "read_resource", uri)
        )  # fmt: skip
        raw = await _maybe(read(uri, **_kwargs(read, self._source, self._options)))
        return _contents(cls, uri, raw)

    async def _fill(self, cls: type[_C], template: str, values: Mapping[str, str | None]) -> _C:
        return await self._read(cls, _uri_template.expand(template, values))

    async def subscribe(
        self, uri: str, *, on_update: Callable[[Any], object] | None = None, max_queued: int | None = None
    ) -> AsyncSubscription:
        """Async twin of ``subscribe`` (the runtime's ``asubscribe_resource``)."""
        subscribe = _method(self._provider, "asubscribe_resource", uri)
        kwargs = _subscribe_kwargs(subscribe, self._source, on_update, max_queued)
        return cast("AsyncSubscription", await _asubscribed(uri, subscribe, kwargs))

    async def _complete(self, template: str, argument: str, value: str, context: Mapping[str, str] | None) -> list[str]:
        name = "acomplete" if hasattr(self._provider, "acomplete") else "complete"
        complete = _method(self._provider, name, template)
        ref = {"type": "ref/resource", "uri": template}
        raw = await _maybe(
            complete(ref, argument, value, **_context(context), **_kwargs(complete, self._source, self._options))
        )
        return _values(template, raw)


class PromptsBase(_SurfaceCore):
    """Base of a source's generated prompts class: one method per prompt."""

    def _get(self, name: str, arguments: Mapping[str, str | None]) -> PromptResult:
        get = _method(self._provider, "get_prompt", name)
        sent = {key: value for key, value in arguments.items() if value is not None}
        raw = _rules.run_sync(get(name, sent, **_kwargs(get, None, self._options)))
        return _prompt(name, raw)

    def _complete(self, prompt: str, argument: str, value: str, context: Mapping[str, str] | None) -> list[str]:
        complete = _method(self._provider, "complete", prompt)
        ref = {"type": "ref/prompt", "name": prompt}
        raw = _rules.run_sync(
            complete(ref, argument, value, **_context(context), **_kwargs(complete, None, self._options))
        )
        return _values(prompt, raw)


class AsyncPromptsBase(_SurfaceCore):
    """The async base: ``aget_prompt`` (else ``get_prompt``) on the provider."""

    async def _get(self, name: str, arguments: Mapping[str, str | None]) -> PromptResult:
        method = "aget_prompt" if hasattr(self._provider, "aget_prompt") else "get_prompt"
        get = _method(self._provider, method, name)
        sent = {key: value for key, value in arguments.items() if value is not None}
        raw = await _maybe(get(name, sent, **_kwargs(get, None, self._options)))
        return _prompt(name, raw)

    async def _complete(self, prompt: str, argument: str, value: str, context: Mapping[str, str] | None) -> list[str]:
        name = "acomplete" if hasattr(self._provider, "acomplete") else "complete"
        complete = _method(self._provider, name, prompt)
        ref = {"type": "ref/prompt", "name": prompt}
        raw = await _maybe(
            complete(ref, argument, value, **_context(context), **_kwargs(complete, None, self._options))
        )
        return _values(prompt, raw)


def _context(context: Mapping[str, str] | None) -> dict[str, Any]:
    return {} if context is None else {"context": dict(context)}


async def _maybe(value: object) -> object:
    return await cast("Awaitable[object]", value) if inspect.isawaitable(value) else value
