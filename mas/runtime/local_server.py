"""In-process resources, templates and prompts: the ServerContract served from Python.

Subclass :class:`LocalServer`, declare what it lists (MCP ``Resource``, ``ResourceTemplate`` and
``Prompt`` objects, wire keys) and implement ``read`` and ``prompt``; the registry routes to it as
to an MCP server (``RuntimeRegistry({"docs": Docs()})``, or ``--local pkg.mod:Docs`` /
``from_sources(local=[...])``, where the provider is named by the class's ``name``). The contract's
discipline comes with it: answers are envelopes, never exceptions (a URI or prompt it does not
serve: ``unknown_tool``; a missing or non-string prompt argument: ``invalid_arguments``; a
handler that raised: ``tool_error``; longer than ``timeout_seconds``: ``timeout``), and a
subscription (``notify_updated(uri)`` from the class's own code) has the MCP provider's bounded
queue. Guide: ``docs/resources-and-prompts.md``, "Local sources".
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from mas.runtime.contracts._rules import one_line
from mas.runtime.contracts.server_contract import completion_ref
from mas.runtime.contracts.tool_contract import ToolResultEnvelope, await_with_timeout, run_with_timeout
from mas.runtime.contracts.uri_template import TemplateError, matches
from mas.runtime.subscriptions import (
    DEFAULT_MAX_QUEUED,
    ResourceSubscription,
    ResourceUpdate,
    SubscriptionError,
    UpdateCallback,
    deliver,
)

__all__ = ["LocalServer"]

#: How long a read, a prompt or a completion may take when neither the caller nor the class says.
DEFAULT_TIMEOUT_SECONDS = 60.0


class LocalServer:
    """Resources, templates and prompts served by Python code; see the module docstring."""

    #: The provider's name under ``--local`` / ``from_sources`` (what listings say in ``server``).
    name: ClassVar[str] = "local-server"
    resources: ClassVar[Sequence[Mapping[str, Any]]] = ()
    resource_templates: ClassVar[Sequence[Mapping[str, Any]]] = ()
    prompts: ClassVar[Sequence[Mapping[str, Any]]] = ()
    timeout_seconds: ClassVar[float] = DEFAULT_TIMEOUT_SECONDS

    def __init__(self) -> None:
        self._subscriptions: list[ResourceSubscription] = []
        self._subs_lock = threading.Lock()

    # --- what a subclass implements -------------------------------------------------------------
    def read(self, uri: str) -> Any:
        """The contents of ``uri``: ``str`` (text), ``bytes`` (a blob), a dict or list (JSON), or
        a list of MCP contents objects. Raise ``LookupError`` for a URI it does not serve; may be
        ``async def``."""
        raise LookupError(uri)

    def prompt(self, name: str, arguments: Mapping[str, str]) -> Any:
        """The messages of prompt ``name``: ``str`` (one user message) or a list of MCP
        ``PromptMessage`` objects (``{"role", "content"}``). Arguments were checked against the
        prompt's declared ones. May be ``async def``."""
        raise LookupError(name)

    def completions(self, ref: Mapping[str, Any], argument: str, value: str) -> list[str]:
        """Suggested values for a prompt argument or a template variable (default: none)."""
        return []

    def notify_updated(self, uri: str) -> None:
        """Tell the subscriptions of ``uri`` (and of the URIs it is under) that it changed; any thread."""
        with self._subs_lock:
            subs = list(self._subscriptions)
        for sub in subs:
            if uri == sub.uri or uri.startswith(sub.uri.rstrip("/") + "/"):
                sub.push(ResourceUpdate(self.name, uri))

    # --- the ToolContract side: no tools ---------------------------------------------------------
    def list_tools(self) -> list[dict[str, Any]]:
        return []

    def call_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any) -> ToolResultEnvelope:
        return ToolResultEnvelope.failure(f"{self.name!r} serves no tools ({tool_name!r})", kind="unknown_tool")

    # --- listings -------------------------------------------------------------------------------
    def list_resources(self) -> list[dict[str, Any]]:
        return [dict(item) for item in self.resources]

    async def alist_resources(self) -> list[dict[str, Any]]:
        return self.list_resources()

    def list_resource_templates(self) -> list[dict[str, Any]]:
        return [dict(item) for item in self.resource_templates]

    async def alist_resource_templates(self) -> list[dict[str, Any]]:
        return self.list_resource_templates()

    def list_prompts(self) -> list[dict[str, Any]]:
        return [dict(item) for item in self.prompts]

    async def alist_prompts(self) -> list[dict[str, Any]]:
        return self.list_prompts()

    # --- requests: envelopes, never exceptions --------------------------------------------------
    def read_resource(self, uri: str, *, timeout_seconds: float | None = None) -> ToolResultEnvelope:
        label = f"resources/read {uri!r}"
        refused = self._unknown_uri(label, uri)
        if refused is not None:
            return refused
        return self._run(label, timeout_seconds, lambda: self.read(uri), lambda v: self._contents(uri, v))

    async def aread_resource(self, uri: str, *, timeout_seconds: float | None = None) -> ToolResultEnvelope:
        label = f"resources/read {uri!r}"
        refused = self._unknown_uri(label, uri)
        if refused is not None:
            return refused
        return await self._arun(label, timeout_seconds, lambda: self.read(uri), lambda v: self._contents(uri, v))

    def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, timeout_seconds: float | None = None
    ) -> ToolResultEnvelope:
        label = f"prompts/get {name!r}"
        checked = self._prompt_arguments(label, name, arguments)
        if isinstance(checked, ToolResultEnvelope):
            return checked
        return self._run(label, timeout_seconds, lambda: self.prompt(name, checked), _messages)

    async def aget_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, timeout_seconds: float | None = None
    ) -> ToolResultEnvelope:
        label = f"prompts/get {name!r}"
        checked = self._prompt_arguments(label, name, arguments)
        if isinstance(checked, ToolResultEnvelope):
            return checked
        return await self._arun(label, timeout_seconds, lambda: self.prompt(name, checked), _messages)

    def complete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
        timeout_seconds: float | None = None,
    ) -> ToolResultEnvelope:
        found = completion_ref(ref)
        if isinstance(found, str):
            return self._failure("completion/complete", f"not sent: {found}", "invalid_arguments")
        label = f"completion/complete {found[1]!r}"
        return self._run(label, timeout_seconds, lambda: self.completions(ref, argument, value), _completion)

    async def acomplete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
        timeout_seconds: float | None = None,
    ) -> ToolResultEnvelope:
        return await asyncio.to_thread(
            lambda: self.complete(ref, argument, value, context=context, timeout_seconds=timeout_seconds)
        )

    # --- subscriptions ----------------------------------------------------------------------------
    def subscribe_resource(
        self,
        uri: str,
        *,
        on_update: UpdateCallback | None = None,
        max_queued: int = DEFAULT_MAX_QUEUED,
        timeout_seconds: float | None = None,
    ) -> ResourceSubscription:
        """Updates of ``uri`` whenever the class calls ``notify_updated``; a plain ``on_update``
        runs in a worker thread, one update at a time."""
        sub = self._subscription(uri, max_queued)
        if on_update is not None:
            thread = threading.Thread(target=asyncio.run, args=(deliver(sub, on_update, None),), daemon=True)
            thread.start()
        return sub

    async def asubscribe_resource(
        self,
        uri: str,
        *,
        on_update: UpdateCallback | None = None,
        max_queued: int = DEFAULT_MAX_QUEUED,
        timeout_seconds: float | None = None,
    ) -> ResourceSubscription:
        sub = self._subscription(uri, max_queued)
        if on_update is not None:
            sub.delivery = asyncio.ensure_future(deliver(sub, on_update, asyncio.get_running_loop()))
        return sub

    def _subscription(self, uri: str, max_queued: int) -> ResourceSubscription:
        if self._unknown_uri("subscribe", uri) is not None:
            raise SubscriptionError(self._text(f"subscribe to {uri!r}: it serves no such resource"), "unknown_tool")

        def release() -> None:
            with self._subs_lock:
                if sub in self._subscriptions:
                    self._subscriptions.remove(sub)

        async def arelease() -> None:
            release()

        sub = ResourceSubscription(self.name, uri, max_queued=max_queued, release=release, arelease=arelease)
        with self._subs_lock:
            self._subscriptions.append(sub)
        return sub

    def close(self) -> None:
        """End every subscription (as an MCP provider's do when it closes)."""
        with self._subs_lock:
            subs, self._subscriptions = self._subscriptions, []
        for sub in subs:
            sub.end(
                SubscriptionError(self._text(f"subscribe to {sub.uri!r} ended: the source was closed"), "unavailable")
            )

    # --- the rules --------------------------------------------------------------------------------
    def _unknown_uri(self, label: str, uri: str) -> ToolResultEnvelope | None:
        if any(item.get("uri") == uri for item in self.resources):
            return None
        for template in self.resource_templates:
            try:
                if matches(str(template.get("uriTemplate")), uri):
                    return None
            except TemplateError:
                continue
        return self._failure(label, "failed: no listed resource or template serves it", "unknown_tool")

    def _prompt_arguments(
        self, label: str, name: str, arguments: Mapping[str, str] | None
    ) -> dict[str, str] | ToolResultEnvelope:
        declared = next((p for p in self.prompts if p.get("name") == name), None)
        if declared is None:
            return self._failure(label, "failed: no such prompt", "unknown_tool")
        given = dict(arguments or {})
        known = {str(a.get("name")): bool(a.get("required")) for a in declared.get("arguments") or ()}
        problems = [f"argument {k!r} is not a string" for k, v in given.items() if not isinstance(v, str)]
        problems += [f"unknown argument {k!r}" for k in given if k not in known]
        problems += [f"missing required argument {k!r}" for k, required in known.items() if required and k not in given]
        if problems:
            return self._failure(label, f"not sent: {problems[0]}", "invalid_arguments")
        return given

    def _run(self, label: str, timeout: float | None, work: Any, shape: Any) -> ToolResultEnvelope:
        limit = self.timeout_seconds if timeout is None else timeout
        try:
            value = run_with_timeout(lambda: _resolved(work()), limit)
        except TimeoutError:
            return self._failure(label, f"timed out after {limit} s", "timeout")
        except LookupError as exc:
            return self._failure(label, f"failed: not found ({type(exc).__name__}: {exc})", "unknown_tool")
        except Exception as exc:
            return self._failure(label, f"failed: {type(exc).__name__}: {exc}", "tool_error")
        return self._shaped(label, value, shape)

    async def _arun(self, label: str, timeout: float | None, work: Any, shape: Any) -> ToolResultEnvelope:
        limit = self.timeout_seconds if timeout is None else timeout

        async def run() -> Any:
            # A plain handler runs in a worker thread: a slow one cannot hold up the caller's loop.
            value = await asyncio.to_thread(work)
            return await value if inspect.isawaitable(value) else value

        try:
            value = await await_with_timeout(run(), limit)
        except TimeoutError:
            return self._failure(label, f"timed out after {limit} s", "timeout")
        except LookupError as exc:
            return self._failure(label, f"failed: not found ({type(exc).__name__}: {exc})", "unknown_tool")
        except Exception as exc:
            return self._failure(label, f"failed: {type(exc).__name__}: {exc}", "tool_error")
        return self._shaped(label, value, shape)

    def _shaped(self, label: str, value: Any, shape: Any) -> ToolResultEnvelope:
        try:
            return ToolResultEnvelope.success(shape(value))
        except (TypeError, ValueError) as exc:
            return self._failure(label, f"failed: the handler's answer is not usable: {exc}", "protocol")

    def _contents(self, uri: str, value: Any) -> dict[str, Any]:
        mime = next((str(r["mimeType"]) for r in self.resources if r.get("uri") == uri and r.get("mimeType")), None)
        if isinstance(value, str):
            return {"contents": [{"uri": uri, "mimeType": mime or "text/plain", "text": value}]}
        if isinstance(value, bytes):
            blob = base64.b64encode(value).decode("ascii")
            return {"contents": [{"uri": uri, "mimeType": mime or "application/octet-stream", "blob": blob}]}
        if (
            isinstance(value, list)
            and value
            and all(isinstance(c, Mapping) and ("text" in c or "blob" in c) for c in value)
        ):
            return {"contents": [{"uri": uri, **dict(c)} for c in value]}
        if isinstance(value, dict | list):
            text = json.dumps(value, sort_keys=True, allow_nan=False)
            return {"contents": [{"uri": uri, "mimeType": mime or "application/json", "text": text}]}
        raise TypeError(f"read() returned {type(value).__name__}; return str, bytes, a dict or a list")

    def _failure(self, label: str, what: str, kind: str) -> ToolResultEnvelope:
        return ToolResultEnvelope.failure(self._text(f"{label} {what}"), kind=kind)

    def _text(self, what: str) -> str:
        return one_line(f"local server {self.name!r}: {what}")


def _resolved(value: Any) -> Any:
    """A sync caller's answer from an ``async def`` handler (run to completion on a fresh loop)."""
    return asyncio.run(value) if inspect.iscoroutine(value) else value


def _messages(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        return {"messages": [{"role": "user", "content": {"type": "text", "text": value}}]}
    if isinstance(value, list) and all(isinstance(m, Mapping) and "role" in m and "content" in m for m in value):
        return {"messages": [dict(m) for m in value]}
    raise TypeError("prompt() returned neither a str nor a list of {role, content} messages")


def _completion(value: Any) -> dict[str, Any]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError("completions() returned something other than a list of str")
    return {"completion": {"values": value[:100], "total": len(value), "hasMore": len(value) > 100}}
