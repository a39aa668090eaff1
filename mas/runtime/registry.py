"""RuntimeRegistry: one ``list_tools``/``call_tool`` over local classes, YAML skills and MCP servers.

Guide: ``docs/infra.md``. The registry starts completely or not at all: every file is loaded,
every handler imported and every server listed before it is returned; on any failure the
providers opened so far are closed and the error is raised.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import types
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from mas.runtime.config import ConfigError, MCPServerConfig, SourceLocation
from mas.runtime.contracts import _rules
from mas.runtime.contracts.tool_contract import (
    ERROR_KINDS,
    CallOptions,
    ToolContract,
    ToolResultEnvelope,
    acall_with_options,
    call_with_options,
)
from mas.runtime.infra import load_infra_files
from mas.runtime.local import LocalToolRegistry, import_tool_class
from mas.runtime.pinning import PinGuard
from mas.runtime.redact import blank
from mas.runtime.routing import Named, NameTaken, QualifierClash, qualified, routed_names
from mas.runtime.samples import SampleRecorder, provider_secrets
from mas.runtime.side_by_side import map_side_by_side
from mas.runtime.skills import SkillToolProvider
from mas.runtime.yaml_source import load_tool_documents

__all__ = ["LOCAL_PROVIDER", "SKILLS_PROVIDER", "RuntimeRegistry"]

LOCAL_PROVIDER = "local"
SKILLS_PROVIDER = "skills"

ProviderFactory = Callable[[MCPServerConfig], Any]
_Route = tuple[str, str, dict[str, Any]]  # provider name, the provider's own tool name, entry


def _mcp_provider(config: MCPServerConfig, authorize: Callable[[str], Any] | None = None) -> Any:
    # Imported by name, lazily: only registries with infra servers need the MCP SDK loaded.
    module = importlib.import_module("mas.runtime.mcp_provider")
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


class RuntimeRegistry:
    """Routes calls by tool name to the provider that lists it.

    ``providers`` maps a provider name to anything with ``list_tools``/``call_tool``.
    ``namespaces`` maps a provider name to a prefix: its tools are exposed as ``prefix.tool``.
    ``locations`` says where a provider was configured (used in error messages).
    ``recorder`` (off by default) keeps a sample of real results for the generator to learn
    result types from; it is flushed on :meth:`close`.
    """

    def __init__(
        self,
        providers: Mapping[str, Any],
        *,
        namespaces: Mapping[str, str] | None = None,
        locations: Mapping[str, SourceLocation] | None = None,
        pins: PinGuard | None = None,
        recorder: SampleRecorder | None = None,
    ) -> None:
        self._providers = dict(providers)
        self._namespaces = dict(namespaces or {})
        self._locations = dict(locations or {})
        self._pins = pins or PinGuard()  # infra `pin:` (docs/drift.md); empty when nothing is pinned
        self._pins.attach(self._providers)  # providers check every later listing too (a reconnect)
        # Listed names; qualified names (``server.tool``) that are not listed; shared bare names.
        self._routes, self._aliases, self._ambiguous = self._build_routes()
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
        local: Iterable[str | ToolContract | type[ToolContract]] = (),
        *,
        mcp_factory: ProviderFactory | None = None,
        recorder: SampleRecorder | None = None,
        authorize: Callable[[str], Any] | None = None,
    ) -> RuntimeRegistry:
        """Build from infra files, tool YAML files/folders and local tools (``"pkg.mod:Class"`` or classes).

        ``mcp_factory`` builds the provider for one infra server (default: ``MCPToolProvider``).
        ``authorize`` is given the authorization URL when an infra server's ``auth:`` needs a person
        to sign in (default: print it and open a browser, on a terminal only; ``docs/infra.md``).
        """
        configs = load_infra_files(infra)
        definitions = load_tool_documents(tools)
        local_tools = [import_tool_class(item) if isinstance(item, str) else item for item in local]
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
            for config in configs:
                if config.name in (LOCAL_PROVIDER, SKILLS_PROVIDER):
                    raise ConfigError(f"server name {config.name!r} is reserved", config.location)
                opened[config.name] = factory(config)
            return cls(
                opened,
                namespaces={c.name: c.namespace for c in configs if c.namespace},
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
        a name that starts with a provider's name or namespace and a dot reaches that provider
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
            prefix = self._namespaces.get(provider_name)
            for entry in entries:
                listed.append((provider_name, entry["name"], entry))
                keys.append(Named(provider_name, entry["name"], prefix))
        try:
            names, shared = routed_names(keys, [(p, self._namespaces.get(p)) for p in self._providers])
        except QualifierClash as exc:
            raise ConfigError(f"server names and namespaces clash: {exc}", self._locations.get(exc.second)) from exc
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
        """Forward to the owning provider (namespace prefix stripped); a tool failure is an error envelope."""
        options = CallOptions.of(kwargs)  # a misspelt option is a caller bug: TypeError, before routing
        route = self._route(tool_name)
        if isinstance(route, ToolResultEnvelope):
            return route
        provider_name, inner, _ = route
        try:
            raw = call_with_options(self._providers[provider_name], inner, arguments, options)
        except Exception as exc:  # e.g. a dropped MCP connection
            return self._failed(tool_name, provider_name, exc)
        return self._observed(provider_name, inner, raw)

    async def acall_tool(
        self, tool_name: str, arguments: Mapping[str, Any] | None, **kwargs: Any
    ) -> ToolResultEnvelope:
        options = CallOptions.of(kwargs)
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
