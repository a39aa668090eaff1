"""RuntimeRegistry: one ``list_tools``/``call_tool`` over local classes, YAML skills and MCP servers.

Guide: ``docs/infra.md``. The registry starts completely or not at all: every file is loaded,
every handler imported and every server listed before it is returned; on any failure the
providers opened so far are closed and the error is raised.
"""

from __future__ import annotations

import asyncio
import difflib
import functools
import importlib
import logging
import types
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Any, cast

from mas.runtime.config import ConfigError, MCPServerConfig, SourceLocation
from mas.runtime.contracts import _rules
from mas.runtime.contracts._rules import checked_options
from mas.runtime.contracts.server_contract import (
    PROMPT_REF,
    RESOURCE_REF,
    ServerProvider,
    SubscribingProvider,
    completion_ref,
)
from mas.runtime.contracts.tool_contract import (
    ERROR_KINDS,
    CallOptions,
    ToolContract,
    ToolResultEnvelope,
    acall_with_options,
    call_with_options,
    takes_checked_options,
)
from mas.runtime.contracts.uri_template import matches
from mas.runtime.infra import load_infra_files
from mas.runtime.local import LocalToolRegistry, import_tool_class
from mas.runtime.local_server import LocalServer
from mas.runtime.pinning import PinGuard
from mas.runtime.redact import blank
from mas.runtime.routing import Named, NameTaken, QualifierClash, qualified, routed_names
from mas.runtime.samples import SampleRecorder, provider_secrets
from mas.runtime.side_by_side import map_side_by_side
from mas.runtime.skills import SkillToolProvider
from mas.runtime.subscriptions import DEFAULT_MAX_QUEUED, ResourceSubscription, SubscriptionError, UpdateCallback
from mas.runtime.yaml_source import load_tool_documents

__all__ = ["LOCAL_PROVIDER", "SKILLS_PROVIDER", "RuntimeRegistry"]

LOCAL_PROVIDER = "local"
SKILLS_PROVIDER = "skills"

logger = logging.getLogger(__name__)

ProviderFactory = Callable[[MCPServerConfig], Any]
_Route = tuple[str, str, dict[str, Any]]  # provider name, the provider's own tool name, entry


def _mcp_provider(config: MCPServerConfig, authorize: Callable[[str], Any] | None = None) -> Any:
    # Imported by name, lazily: only registries with infra servers need the MCP SDK loaded.
    module = importlib.import_module("mas.runtime.mcp.provider")
    return module.MCPToolProvider(config, authorize=authorize)


def _close_quietly(provider: Any) -> None:
    closer = getattr(provider, "close", None)
    if callable(closer):
        try:
            closer()
        except Exception:  # already failing: the original error is the one to report
            pass


def _raise_first(errors: list[Exception]) -> None:
    """Raise the first of ``errors``; the others are named in its notes, so none is lost."""
    if not errors:
        return
    first = errors[0]
    for other in errors[1:]:
        first.add_note(f"also failed while closing: {type(other).__name__}: {other}")
    raise first


@takes_checked_options
class RuntimeRegistry:
    """Routes calls by tool name to the provider that lists it.

    ``providers`` maps a provider name to anything with ``list_tools``/``call_tool``.
    ``prefixes`` maps a provider name to a prefix: its tools are exposed as ``prefix.tool``
    (``namespaces``, its older name, is still taken).
    ``locations`` says where a provider was configured (used in error messages).
    ``recorder`` (off by default) keeps a sample of real results for the generator to learn
    result types from; it is flushed on :meth:`close`.
    """

    def __init__(
        self,
        providers: Mapping[str, Any],
        *,
        prefixes: Mapping[str, str] | None = None,
        # `namespaces`: prefixes' older name, kept for callers that pass it; "namespace" now means
        # only a generated package's attribute of one source (docs/generator.md, "Words used here").
        namespaces: Mapping[str, str] | None = None,
        locations: Mapping[str, SourceLocation] | None = None,
        pins: PinGuard | None = None,
        recorder: SampleRecorder | None = None,
    ) -> None:
        self._providers = dict(providers)
        self._prefixes = dict(prefixes or namespaces or {})
        self._locations = dict(locations or {})
        self._pins = pins or PinGuard()  # infra `pin:` (docs/drift.md); empty when nothing is pinned
        self._pins.attach(self._providers)  # providers check every later listing too (a reconnect)
        # Listed names; qualified names (``server.tool``) that are not listed; shared bare names.
        self._routes, self._aliases, self._ambiguous = self._build_routes()
        #: (provider, listing) pairs whose failure was logged already: one warning line each.
        self._surface_warned: set[tuple[str, str]] = set()
        # Off by default. When set, results are sampled into a samples file (mas/runtime/samples.py).
        self._recorder = recorder
        if recorder is not None:
            recorder.add_secrets(provider_secrets(self._providers.values()))

    # --- construction -----------------------------------------------------------------------
    @classmethod
    def from_sources(
        cls,
        infra: Iterable[str | Path] = (),
        tools: Iterable[str | Path] = (),
        local: Iterable[str | ToolContract | type[ToolContract] | LocalServer | type[LocalServer]] = (),
        *,
        mcp_factory: ProviderFactory | None = None,
        recorder: SampleRecorder | None = None,
        authorize: Callable[[str], Any] | None = None,
        servers: Collection[str] | None = None,
    ) -> RuntimeRegistry:
        """Build from infra files, tool YAML files/folders and local tools (``"pkg.mod:Class"`` or classes);
        a local ``LocalServer`` (resources, templates, prompts) is a provider named by its ``name``.

        ``mcp_factory`` builds the provider for one infra server (default: ``MCPToolProvider``).
        ``authorize`` is given the authorization URL when an infra server's ``auth:`` needs a person
        to sign in (default: print it and open a browser, on a terminal only; ``docs/infra.md``).
        ``servers``: start only the infra servers of these names (every file is still loaded and
        checked); ``None``, the default, starts them all.
        """
        configs = load_infra_files(infra)
        if servers is not None:
            configs = [c for c in configs if c.name in servers]
        definitions = load_tool_documents(tools)
        imported = [import_tool_class(item) if isinstance(item, str) else item for item in local]
        # LocalServer classes (resources, templates, prompts) are providers of their own, by name.
        local_servers = [item() if isinstance(item, type) else item for item in imported if _is_local_server(item)]
        local_tools = [
            cast("ToolContract | type[ToolContract]", item) for item in imported if not _is_local_server(item)
        ]
        factory = mcp_factory or functools.partial(_mcp_provider, authorize=authorize)
        pins = PinGuard.from_configs(configs)
        opened: dict[str, Any] = {}
        try:
            if local_tools:
                opened[LOCAL_PROVIDER] = LocalToolRegistry(local_tools, name=LOCAL_PROVIDER)
            if definitions:
                skills = SkillToolProvider(definitions, name=SKILLS_PROVIDER)
                skills.resolve()
                opened[SKILLS_PROVIDER] = skills
            for server in local_servers:
                if server.name in (LOCAL_PROVIDER, SKILLS_PROVIDER) or server.name in opened:
                    where = SourceLocation(f"{type(server).__module__}:{type(server).__qualname__}")
                    raise ConfigError(f"local server name {server.name!r} is taken", where)
                opened[server.name] = server
            for config in configs:
                if config.name in (LOCAL_PROVIDER, SKILLS_PROVIDER):
                    raise ConfigError(f"server name {config.name!r} is reserved", config.location)
                if config.name in opened:
                    raise ConfigError(f"server name {config.name!r} is a local server's", config.location)
                opened[config.name] = factory(config)
            return cls(
                opened,
                prefixes={c.name: c.prefix for c in configs if c.prefix},
                locations={c.name: c.location for c in configs if c.location is not None},
                pins=pins,
                recorder=recorder,
            )
        except BaseException:
            for provider in reversed(opened.values()):
                _close_quietly(provider)
            raise

    def _where(self, provider_name: str, tool_name: str) -> str:
        provider = self._providers[provider_name]
        if isinstance(provider, SkillToolProvider) and tool_name in provider.definitions:
            return str(provider.definitions[tool_name].location)
        if isinstance(provider, LocalToolRegistry):
            return provider.origin_of(tool_name) or provider_name
        location = self._locations.get(provider_name)
        return str(location) if location is not None else provider_name

    def _list(self, provider_name: str) -> list[dict[str, Any]]:
        try:
            entries = self._pins.list_tools(provider_name, self._providers[provider_name])
        except Exception as exc:  # unreachable server, bad handler module, ...: refuse to start
            raise ConfigError(
                f"provider {provider_name!r} cannot list its tools: {type(exc).__name__}: {exc}",
                self._locations.get(provider_name),
            ) from exc
        return entries

    def _build_routes(self) -> tuple[dict[str, _Route], dict[str, _Route], dict[str, tuple[_Route, ...]]]:
        """The routing table, by the one rule of ``mas/runtime/routing.py`` (the generator's too):
        a name that starts with a provider's name or prefix and a dot reaches that provider
        only; a bare name two providers share is listed and routed by each one's ``provider.tool``
        instead, and a call by the shared name is refused (``_ambiguous_call``); every tool is
        also reachable, unlisted, by its qualified name.

        Returns the listed routes (providers in their order, tools in theirs), the qualified names
        that are not listed, and the ambiguous names with their candidates.
        """
        listed: list[_Route] = []
        keys: list[Named] = []
        # Side by side (bounded), in provider order: the table and any error never depend on timing.
        listings = map_side_by_side(self._list, list(self._providers))
        for provider_name, entries in zip(self._providers, listings, strict=True):
            prefix = self._prefixes.get(provider_name)
            for entry in entries:
                listed.append((provider_name, entry["name"], entry))
                keys.append(Named(provider_name, entry["name"], prefix))
        try:
            names, shared = routed_names(keys, [(p, self._prefixes.get(p)) for p in self._providers])
        except QualifierClash as exc:
            raise ConfigError(f"server names and prefixes clash: {exc}", self._locations.get(exc.second)) from exc
        except NameTaken as exc:
            provider_name, inner, _ = listed[exc.index]
            raise ConfigError(
                f"provider {provider_name!r} ({self._where(provider_name, inner)}) lists the tool {inner!r} twice"
            ) from exc
        routes = {
            name: (p, inner, {**entry, "name": name}) for name, (p, inner, entry) in zip(names, listed, strict=True)
        }
        # Every key of both tables that has a dot is addressed to its own provider (routing.py), so a
        # name a server chooses can never take another provider's address.
        aliases = {
            qualified(p, inner): (p, inner, {**entry, "name": qualified(p, inner)})
            for p, inner, entry in listed
            if qualified(p, inner) not in routes
        }
        ambiguous = {name: tuple(listed[i] for i in found) for name, found in shared.items()}
        return routes, aliases, ambiguous

    def refresh(self) -> None:
        """Re-list every provider (e.g. after an MCP list change); on a conflict keep the old table and raise."""
        self._routes, self._aliases, self._ambiguous = self._build_routes()

    # --- the contract -----------------------------------------------------------------------
    @property
    def providers(self) -> Mapping[str, Any]:
        return types.MappingProxyType(self._providers)

    def owner_of(self, tool_name: str) -> str | None:
        """The name of the provider serving ``tool_name`` (as exposed), or None."""
        route = self._routes.get(tool_name) or self._aliases.get(tool_name)
        return None if route is None else route[0]

    def list_tools(self) -> list[dict[str, Any]]:
        return [dict(entry) for _, _, entry in self._routes.values()]

    def _unknown(self, tool_name: str) -> ToolResultEnvelope:
        close = difflib.get_close_matches(tool_name, list(self._routes), n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else f" ({len(self._routes)} known)"
        return ToolResultEnvelope.failure(f"unknown tool {tool_name!r}{hint}", kind="unknown_tool")

    def _ambiguous_call(self, tool_name: str) -> ToolResultEnvelope:
        """A bare name two providers share: refused, naming every provider and where it is set up."""
        found = self._ambiguous[tool_name]
        owners = " and ".join(f"{p!r} ({self._where(p, inner)})" for p, inner, _ in found)
        qualified = " or ".join(repr(f"{p}.{inner}") for p, inner, _ in found)
        message = f"tool {tool_name!r} is ambiguous: it is provided by {owners}; call {qualified}"
        metadata = {"reason": "ambiguous", "candidates": [f"{p}.{inner}" for p, inner, _ in found]}
        return ToolResultEnvelope.failure(message, kind="unknown_tool", metadata=metadata)

    def _route(self, tool_name: str) -> _Route | ToolResultEnvelope:
        route = self._routes.get(tool_name) or self._aliases.get(tool_name)
        if route is None:
            if tool_name in self._ambiguous:
                return self._ambiguous_call(tool_name)
            return self._unknown(tool_name)
        return self._pins.refusal(route[0], route[1], tool_name) or route

    @staticmethod
    def _failed(tool_name: str, provider_name: str, exc: Exception) -> ToolResultEnvelope:
        # A provider that raised could not serve the call: a lost connection or server is
        # "unavailable" (errors may say so with an ``error_kind`` attribute); anything else is the tool's.
        kind = getattr(exc, "error_kind", None)
        if kind not in ERROR_KINDS:
            kind = "unavailable" if isinstance(exc, ConnectionError | OSError) else "tool_error"
        message = blank(f"tool {tool_name!r} ({provider_name}) failed: {type(exc).__name__}: {exc}")
        return ToolResultEnvelope.failure(message, kind=kind)

    def call_tool(self, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any) -> ToolResultEnvelope:
        """Forward to the owning provider (its prefix stripped); a tool failure is an error envelope."""
        # A misspelt option is a caller bug: TypeError, before routing. The one check of a call's options.
        return self.call_checked(tool_name, arguments, checked_options(kwargs))

    async def acall_tool(
        self, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any
    ) -> ToolResultEnvelope:
        return await self.acall_checked(tool_name, arguments, checked_options(kwargs))

    def call_checked(
        self, tool_name: str, arguments: Mapping[str, Any] | None, options: CallOptions
    ) -> ToolResultEnvelope:
        """:meth:`call_tool` with its options checked already: the value goes to the provider whole."""
        route = self._route(tool_name)
        if isinstance(route, ToolResultEnvelope):
            return route
        provider_name, inner, _ = route
        try:
            raw = call_with_options(self._providers[provider_name], inner, arguments, options)
        except Exception as exc:  # e.g. a dropped MCP connection
            return self._failed(tool_name, provider_name, exc)
        return self._observed(provider_name, inner, raw)

    async def acall_checked(
        self, tool_name: str, arguments: Mapping[str, Any] | None, options: CallOptions
    ) -> ToolResultEnvelope:
        route = self._route(tool_name)
        if isinstance(route, ToolResultEnvelope):
            return route
        provider_name, inner, _ = route
        try:
            raw = await acall_with_options(self._providers[provider_name], inner, arguments, options)
        except Exception as exc:
            return self._failed(tool_name, provider_name, exc)
        return self._observed(provider_name, inner, raw)

    def _observed(self, provider_name: str, inner: str, raw: Any) -> ToolResultEnvelope:
        """What a provider returned, as an envelope, sampled when a recorder is on (both paths)."""
        envelope = ToolResultEnvelope.coerce(raw)
        if self._recorder is not None:
            self._recorder.observe(provider_name, inner, envelope)
        return envelope

    # --- the server surface: resources, templates, prompts, completions (ServerContract) --------
    # Beside the ToolContract, not in it (docs/resources-and-prompts.md). Listings name the server
    # of each item under "server"; a provider that cannot list one logs one warning line and is
    # left out of that listing (its tools are not affected). Requests never raise.
    def surface_providers(self) -> list[str]:
        """The providers that serve resources and prompts (MCP servers), in registry order."""
        return [name for name, p in self._providers.items() if isinstance(p, ServerProvider)]

    def _surface_listing(self, provider_name: str, which: str) -> list[dict[str, Any]]:
        """One provider's listing (its own cache applies); a failure is one warning line, once."""
        try:
            items: list[dict[str, Any]] = getattr(self._providers[provider_name], f"list_{which}")()
        except Exception as exc:
            key = (provider_name, which)
            if key not in self._surface_warned:
                self._surface_warned.add(key)
                text = str(exc) if isinstance(exc, ConfigError) or str(exc).startswith("MCP server") else (
                    f"provider {provider_name!r}: {type(exc).__name__}: {exc}"
                )  # fmt: skip
                what = which.replace("_", " ")
                logger.warning("%s; its %s are left out (its tools are not affected)", blank(text), what)
            return []
        return [dict(item) for item in items]

    def _surface_all(self, which: str) -> list[tuple[str, dict[str, Any]]]:
        names = self.surface_providers()
        listings = map_side_by_side(lambda name: self._surface_listing(name, which), names)
        return [(name, item) for name, items in zip(names, listings, strict=True) for item in items]

    def list_resources(self) -> list[dict[str, Any]]:
        """Every server's resources (MCP ``Resource`` objects) with ``server`` naming its server."""
        return [{**item, "server": name} for name, item in self._surface_all("resources")]

    def list_resource_templates(self) -> list[dict[str, Any]]:
        return [{**item, "server": name} for name, item in self._surface_all("resource_templates")]

    def _prompt_names(self) -> tuple[list[tuple[str, dict[str, Any]]], list[str], dict[str, list[int]]]:
        """Every listed prompt, the name it is exposed by (the tools' rule, ``mas/runtime/routing.py``:
        a server's prefix; a name two servers share is exposed as ``server.name``), and the shared
        bare names with the indices of their prompts."""
        listed = self._surface_all("prompts")
        keys = [Named(name, str(item.get("name")), self._prefixes.get(name)) for name, item in listed]
        try:
            names, shared = routed_names(keys)
        except NameTaken:  # a qualified name is another prompt's: every prompt by its qualified name
            names, shared = [qualified(k.provider, k.tool) for k in keys], {}
        return listed, names, shared

    def list_prompts(self) -> list[dict[str, Any]]:
        """Every server's prompts (MCP ``Prompt`` objects), ``name`` as ``get_prompt`` takes it."""
        listed, names, _ = self._prompt_names()
        return [{**item, "name": exposed, "server": p} for exposed, (p, item) in zip(names, listed, strict=True)]

    def _prompt_owner(self, name: str) -> tuple[str, str] | ToolResultEnvelope:
        listed, names, shared = self._prompt_names()
        routes: dict[str, tuple[str, str]] = {}
        for exposed, (p, item) in zip(names, listed, strict=True):
            routes[exposed] = (p, str(item.get("name")))
        for p, item in listed:  # every prompt is reachable by its qualified name too
            routes.setdefault(qualified(p, str(item.get("name"))), (p, str(item.get("name"))))
        if name in routes and name not in shared:
            return routes[name]
        if name in shared:
            candidates = [qualified(listed[i][0], str(listed[i][1].get("name"))) for i in shared[name]]
            options = " or ".join(repr(c) for c in candidates)
            return ToolResultEnvelope.failure(f"prompt {name!r} is ambiguous; get {options}", kind="unknown_tool",
                                              metadata={"reason": "ambiguous", "candidates": candidates})  # fmt: skip
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else f" ({len(names)} known)"
        return ToolResultEnvelope.failure(f"unknown prompt {name!r}{hint}", kind="unknown_tool")

    def _resource_owner(self, uri: str, server: str | None) -> str | ToolResultEnvelope:
        """The provider to read ``uri`` from: ``server`` when given; else the one that lists it,
        else the one whose template fits it, else the only one there is."""
        names = self.surface_providers()
        label = f"resource {uri!r}"
        if server is not None:
            if server not in names:
                known = ", ".join(repr(n) for n in names) or "none"
                return ToolResultEnvelope.failure(f"{label}: no server {server!r} serves resources (servers: {known})",
                                                  kind="unknown_tool")  # fmt: skip
            return server
        if len(names) == 1:
            return names[0]
        owners = [n for n, item in self._surface_all("resources") if item.get("uri") == uri]
        if not owners:
            owners = [n for n, item in self._surface_all("resource_templates")
                      if matches(str(item.get("uriTemplate")), uri)]  # fmt: skip
        owners = list(dict.fromkeys(owners))
        if len(owners) == 1:
            return owners[0]
        if not owners:
            return ToolResultEnvelope.failure(f"{label}: no server lists it or a template that fits it",
                                              kind="unknown_tool")  # fmt: skip
        both = " and ".join(repr(o) for o in owners)
        return ToolResultEnvelope.failure(f"{label} is served by {both}; pass server=", kind="unknown_tool",
                                          metadata={"reason": "ambiguous", "candidates": owners})  # fmt: skip

    def _complete_owner(
        self, ref: Mapping[str, Any], server: str | None
    ) -> tuple[str, dict[str, Any]] | ToolResultEnvelope:
        found = completion_ref(ref)
        if isinstance(found, str):
            return ToolResultEnvelope.failure(f"completion not sent: {found}", kind="invalid_arguments")
        kind, target = found
        if kind == PROMPT_REF and server is None:
            owner = self._prompt_owner(target)
            if isinstance(owner, ToolResultEnvelope):
                return owner
            return owner[0], {"type": PROMPT_REF, "name": owner[1]}
        if kind == RESOURCE_REF and server is None:
            names = self.surface_providers()
            owners = names if len(names) == 1 else list(dict.fromkeys(
                n for n, item in self._surface_all("resource_templates") if item.get("uriTemplate") == target
            ))  # fmt: skip
            if len(owners) != 1:
                what = "no server lists" if not owners else "several servers list"
                return ToolResultEnvelope.failure(f"completion for {target!r}: {what} that template; pass server=",
                                                  kind="unknown_tool")  # fmt: skip
            return owners[0], dict(ref)
        if server not in self.surface_providers():
            return ToolResultEnvelope.failure(f"completion: no server {server!r} serves prompts or resources",
                                              kind="unknown_tool")  # fmt: skip
        return str(server), dict(ref)

    def read_resource(
        self, uri: str, *, server: str | None = None, timeout_seconds: float | None = None
    ) -> ToolResultEnvelope:
        """``resources/read`` at the server that serves ``uri`` (``server`` picks one); never raises."""
        owner = self._resource_owner(uri, server)
        if isinstance(owner, ToolResultEnvelope):
            return owner
        envelope = self._surface_call(owner, lambda p: p.read_resource(uri, timeout_seconds=timeout_seconds))
        if self._recorder is not None:  # a read is sampled as a call is: generate learns its JSON shape
            self._recorder.observe_read(owner, uri, envelope)
        return envelope

    def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, timeout_seconds: float | None = None
    ) -> ToolResultEnvelope:
        """``prompts/get`` at the server that lists ``name`` (as ``list_prompts`` names it); never raises."""
        owner = self._prompt_owner(name)
        if isinstance(owner, ToolResultEnvelope):
            return owner
        provider_name, inner = owner
        return self._surface_call(
            provider_name, lambda p: p.get_prompt(inner, arguments, timeout_seconds=timeout_seconds)
        )

    def complete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
        server: str | None = None,
        timeout_seconds: float | None = None,
    ) -> ToolResultEnvelope:
        """``completion/complete``: ``ref`` is ``{"type": "ref/prompt", "name": ...}`` (a prompt as
        listed) or ``{"type": "ref/resource", "uri": <a template>}``; never raises."""
        owner = self._complete_owner(ref, server)
        if isinstance(owner, ToolResultEnvelope):
            return owner
        provider_name, inner_ref = owner
        return self._surface_call(
            provider_name,
            lambda p: p.complete(inner_ref, argument, value, context=context, timeout_seconds=timeout_seconds),
        )

    async def aread_resource(
        self, uri: str, *, server: str | None = None, timeout_seconds: float | None = None
    ) -> ToolResultEnvelope:
        owner = await asyncio.to_thread(self._resource_owner, uri, server)
        if isinstance(owner, ToolResultEnvelope):
            return owner
        envelope = await self._asurface_call(owner, lambda p: p.aread_resource(uri, timeout_seconds=timeout_seconds))
        if self._recorder is not None:
            self._recorder.observe_read(owner, uri, envelope)
        return envelope

    async def aget_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, timeout_seconds: float | None = None
    ) -> ToolResultEnvelope:
        owner = await asyncio.to_thread(self._prompt_owner, name)
        if isinstance(owner, ToolResultEnvelope):
            return owner
        provider_name, inner = owner
        return await self._asurface_call(
            provider_name, lambda p: p.aget_prompt(inner, arguments, timeout_seconds=timeout_seconds)
        )

    async def acomplete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
        server: str | None = None,
        timeout_seconds: float | None = None,
    ) -> ToolResultEnvelope:
        owner = await asyncio.to_thread(self._complete_owner, ref, server)
        if isinstance(owner, ToolResultEnvelope):
            return owner
        provider_name, inner_ref = owner
        return await self._asurface_call(
            provider_name,
            lambda p: p.acomplete(inner_ref, argument, value, context=context, timeout_seconds=timeout_seconds),
        )

    def subscribe_resource(
        self,
        uri: str,
        *,
        server: str | None = None,
        on_update: UpdateCallback | None = None,
        max_queued: int = DEFAULT_MAX_QUEUED,
        timeout_seconds: float | None = None,
    ) -> ResourceSubscription:
        """Subscribe to ``uri`` at the server that serves it (routed as ``read_resource`` is).
        Raises :class:`SubscriptionError` (with ``kind``) when it cannot subscribe."""
        provider = self._subscriber(uri, server, self._resource_owner(uri, server))
        return provider.subscribe_resource(
            uri, on_update=on_update, max_queued=max_queued, timeout_seconds=timeout_seconds
        )

    async def asubscribe_resource(
        self,
        uri: str,
        *,
        server: str | None = None,
        on_update: UpdateCallback | None = None,
        max_queued: int = DEFAULT_MAX_QUEUED,
        timeout_seconds: float | None = None,
    ) -> ResourceSubscription:
        owner = await asyncio.to_thread(self._resource_owner, uri, server)
        provider = self._subscriber(uri, server, owner)
        return await provider.asubscribe_resource(
            uri, on_update=on_update, max_queued=max_queued, timeout_seconds=timeout_seconds
        )

    def _subscriber(self, uri: str, server: str | None, owner: str | ToolResultEnvelope) -> SubscribingProvider:
        if isinstance(owner, ToolResultEnvelope):
            raise SubscriptionError(f"subscribe: {owner.text}", owner.error_kind or "unknown_tool")
        provider = self._providers[owner]
        if not isinstance(provider, SubscribingProvider):
            raise SubscriptionError(f"subscribe to {uri!r}: provider {owner!r} serves no subscriptions", "protocol")
        return provider

    def _surface_call(self, provider_name: str, send: Callable[[Any], Any]) -> ToolResultEnvelope:
        try:
            return ToolResultEnvelope.coerce(send(self._providers[provider_name]))
        except Exception as exc:
            return self._failed("(server surface)", provider_name, exc)

    async def _asurface_call(self, provider_name: str, send: Callable[[Any], Any]) -> ToolResultEnvelope:
        try:
            return ToolResultEnvelope.coerce(await send(self._providers[provider_name]))
        except Exception as exc:
            return self._failed("(server surface)", provider_name, exc)

    # --- lifetime ---------------------------------------------------------------------------
    def close(self) -> None:
        """Close every provider (last opened first); the first error is raised after all are tried."""
        errors: list[Exception] = []
        self._flush_samples(errors)
        for provider in reversed(list(self._providers.values())):
            closer = getattr(provider, "close", None)
            if callable(closer):
                try:
                    closer()
                except Exception as exc:
                    errors.append(exc)
        _raise_first(errors)

    async def aclose(self) -> None:
        """Async twin of :meth:`close`, with the same rule: every provider is closed (its ``aclose``,
        else its ``close`` in a worker thread), and the first error is raised after all are tried."""
        errors: list[Exception] = []
        self._flush_samples(errors)
        for provider in reversed(list(self._providers.values())):
            try:
                await _rules.aclose(provider)
            except Exception as exc:
                errors.append(exc)
        _raise_first(errors)

    def _flush_samples(self, errors: list[Exception]) -> None:
        if self._recorder is not None:
            try:
                self._recorder.flush()
            except Exception as exc:  # reported after the providers are closed
                errors.append(exc)

    def __enter__(self) -> RuntimeRegistry:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> RuntimeRegistry:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _is_local_server(item: object) -> bool:
    return isinstance(item, LocalServer) or (isinstance(item, type) and issubclass(item, LocalServer))
