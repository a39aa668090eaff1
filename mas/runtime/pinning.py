"""Run-time pinning: refuse (or warn about) an MCP tool that no longer matches the toolgen lock.

An infra server entry may say ``pin: warn`` or ``pin: refuse`` with ``lock: toolgen.lock.json``.
When the registry lists that server, each live tool is compared with its lock entry by the per-tool
content hash (``mas.runtime.lockfile.tool_hash``). A tool that differs, or that the lock does not
know, is then:

* ``refuse``: never called. ``call_tool`` returns an error envelope whose ``metadata`` is
  ``{"error_kind": "unavailable", "reason": "pinned", "tool", "server", "pointer", "lock"}``, where
  ``pointer`` is the first JSON pointer at which the live tool differs from the lock;
* ``warn``: called, after one logged warning line (once per tool).

Every listing the runtime acts on is checked, not only the registry's first one: an MCP provider
given its pin (:meth:`PinGuard.attach`) checks each listing it fetches (after a reconnect, after
a ``notifications/tools/list_changed``) before it sends the next call on that connection.

Guide: ``docs/drift.md``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mas.runtime.config import ConfigError, MCPServerConfig
from mas.runtime.contracts.tool_contract import ToolResultEnvelope
from mas.runtime.lockfile import VERSION_KEY, first_difference, keep_locked, lock_version_problem, tool_hash

__all__ = ["PIN_REASON", "Mismatch", "PinGuard", "ServerPin", "load_pinned_prompts", "load_pinned_tools"]

logger = logging.getLogger(__name__)

#: ``metadata["reason"]`` of a refused call, next to the failure kind ``unavailable``.
PIN_REASON = "pinned"


@dataclass(frozen=True)
class Mismatch:
    """A live tool that is not the one in the lock: where they first differ."""

    tool: str
    pointer: str  # "" when the lock has no such tool

    def describe(self, lock: str) -> str:
        return (
            f"it is not in the lock {lock}"
            if not self.pointer
            else f"it differs from the lock {lock} at {self.pointer}"
        )


def load_pinned_tools(config: MCPServerConfig) -> tuple[dict[str, Mapping[str, Any]], dict[str, str]]:
    """The lock's tools for ``config``'s server and their hashes, by name (hashes kept in the lock
    win; a format-1 lock has none, so they are computed). Raises ConfigError naming the lock."""
    lock = Path(config.lock or "")
    where = config.location

    def bad(message: str) -> ConfigError:
        return ConfigError(f"lock {lock.name!r}: {message}", where)

    try:
        data = json.loads(lock.read_text(encoding="utf-8"))
    except OSError as exc:
        raise bad(f"cannot read: {exc.strerror}") from exc
    except (json.JSONDecodeError, RecursionError) as exc:
        raise bad(f"not JSON: {exc}") from exc
    problem = lock_version_problem(data)
    if problem is not None:
        raise bad(f"/{VERSION_KEY}: {problem}")
    servers = data.get("servers")
    entry = servers.get(config.name) if isinstance(servers, Mapping) else None
    if not isinstance(entry, Mapping) or not isinstance(entry.get("tools"), list):
        raise bad(f"has no listing for server {config.name!r}; run `toolgen generate` with this server")
    tools = {str(t.get("name")): t for t in entry["tools"] if isinstance(t, Mapping)}
    kept = entry.get("hashes")
    kept = kept if isinstance(kept, Mapping) else {}
    hashes = {name: str(kept.get(name) or tool_hash(tool)) for name, tool in tools.items()}
    return tools, hashes


def load_pinned_prompts(config: MCPServerConfig) -> dict[str, Mapping[str, Any]]:
    """The lock's prompts for ``config``'s server, by name (none when it recorded none: a lock
    records ``prompts`` only for a server that has some, docs/lock.md)."""
    data = json.loads(Path(config.lock or "").read_text(encoding="utf-8"))  # load_pinned_tools checked it
    prompts = data["servers"][config.name].get("prompts")
    return {str(p.get("name")): p for p in prompts or () if isinstance(p, Mapping)}


@dataclass
class ServerPin:
    """One pinned server: its mode, its lock entries and what the last listing found."""

    config: MCPServerConfig
    locked: Mapping[str, Mapping[str, Any]]
    hashes: Mapping[str, str]
    mismatches: dict[str, Mismatch] = field(default_factory=dict)
    warned: set[str] = field(default_factory=set)
    #: The lock's prompts by name (ServerContract ``get_prompt`` is pinned too); None: not loaded.
    prompts: Mapping[str, Mapping[str, Any]] | None = None
    prompt_mismatches: dict[str, Mismatch] = field(default_factory=dict)

    def check_prompts(self, live: Iterable[Mapping[str, Any]]) -> None:
        """Compare a prompts listing with the lock's prompts (the tools' hash rule)."""
        locked = self.prompts or {}
        found: dict[str, Mismatch] = {}
        for prompt in live:
            name = str(prompt.get("name"))
            if name not in locked:
                found[name] = Mismatch(name, "")
            elif tool_hash(prompt) != tool_hash(locked[name]):
                found[name] = Mismatch(name, first_difference(locked[name], prompt) or "/")
        self.prompt_mismatches = found

    def prompt_refusal(self, name: str) -> ToolResultEnvelope | None:
        """None when ``prompts/get`` may be sent (after one warning under ``warn``); else the failure."""
        mismatch = self.prompt_mismatches.get(name)
        if mismatch is None:
            return None
        lock = Path(self.config.lock or "").name
        if self.config.pin == "warn":
            if f"prompt:{name}" not in self.warned:
                self.warned.add(f"prompt:{name}")
                logger.warning("prompt %r (server %r): %s; getting it anyway (pin: warn)", name, self.config.name,
                               mismatch.describe(lock))  # fmt: skip
            return None
        message = (
            f"prompt {name!r} (server {self.config.name!r}) refused: {mismatch.describe(lock)} (pin: refuse); "
            "run `toolgen diff` to see what changed"
        )
        metadata = {"reason": PIN_REASON, "prompt": name, "server": self.config.name, "pointer": mismatch.pointer,
                    "lock": lock}  # fmt: skip
        return ToolResultEnvelope.failure(message, kind="unavailable", metadata=metadata)

    def prompt_unverified(self, name: str, why: str) -> ToolResultEnvelope | None:
        """A prompt whose listing failed: refused under ``refuse`` (it cannot be compared), else None."""
        if self.config.pin == "warn":
            return None
        lock = Path(self.config.lock or "").name
        message = (
            f"prompt {name!r} (server {self.config.name!r}) refused: cannot compare it with the lock {lock} "
            f"(pin: refuse): {why}"
        )
        metadata = {"reason": PIN_REASON, "prompt": name, "server": self.config.name, "pointer": "", "lock": lock}
        return ToolResultEnvelope.failure(message, kind="unavailable", metadata=metadata)

    def check(self, live: Iterable[Mapping[str, Any]]) -> None:
        """Compare a listing with the lock; replaces what the previous listing found."""
        mismatches: dict[str, Mismatch] = {}
        for tool in live:
            name = str(tool.get("name"))
            if name not in self.locked:
                mismatches[name] = Mismatch(name, "")
                continue
            # The infra entry's drift_ignore spots compare as the lock has them (known noise).
            seen = keep_locked(tool, self.locked[name], self.config.ignored(name))
            if tool_hash(seen) != self.hashes[name]:
                mismatches[name] = Mismatch(name, first_difference(self.locked[name], seen) or "/")
        self.mismatches = mismatches  # one assignment: a call on another thread sees old or new, whole

    def exposed(self, inner: str) -> str:
        """The name the registry exposes ``inner`` under (the server's prefix included)."""
        return f"{self.config.prefix}.{inner}" if self.config.prefix else inner

    def refusal(self, inner: str, exposed: str | None = None) -> ToolResultEnvelope | None:
        """None when the call may go ahead (after a warning under ``warn``); else the failure."""
        mismatch = self.mismatches.get(inner)
        if mismatch is None:
            return None
        exposed = exposed or self.exposed(inner)
        provider_name = self.config.name
        lock = Path(self.config.lock or "").name
        if self.config.pin == "warn":
            if inner not in self.warned:
                self.warned.add(inner)
                logger.warning(
                    "tool %r (server %r): %s; calling anyway (pin: warn)",
                    exposed, provider_name, mismatch.describe(lock),
                )  # fmt: skip
            return None
        message = (
            f"tool {exposed!r} (server {provider_name!r}) refused: {mismatch.describe(lock)} (pin: refuse); "
            "run `toolgen diff` to see what changed"
        )
        metadata = {
            "reason": PIN_REASON,
            "tool": exposed,
            "server": provider_name,
            "pointer": mismatch.pointer,
            "lock": lock,
        }
        return ToolResultEnvelope.failure(message, kind="unavailable", metadata=metadata)

    def unverified(self, inner: str, why: str) -> ToolResultEnvelope | None:
        """A call whose tool could not be listed on this connection: refused under ``refuse``."""
        exposed = self.exposed(inner)
        if self.config.pin == "warn":
            logger.warning("tool %r (server %r): cannot compare with the lock: %s; calling anyway", exposed,
                           self.config.name, why)  # fmt: skip
            return None
        lock = Path(self.config.lock or "").name
        message = (
            f"tool {exposed!r} (server {self.config.name!r}) refused: cannot compare it with the lock "
            f"{lock} (pin: refuse): {why}"
        )
        metadata = {"reason": PIN_REASON, "tool": exposed, "server": self.config.name, "pointer": "", "lock": lock}
        return ToolResultEnvelope.failure(message, kind="unavailable", metadata=metadata)


class PinGuard:
    """The pins of one registry, by provider name. Servers without ``pin`` are not listed here."""

    def __init__(self, pins: Mapping[str, ServerPin] | None = None) -> None:
        self._pins = dict(pins or {})

    @classmethod
    def from_configs(cls, configs: Iterable[MCPServerConfig]) -> PinGuard:
        pins: dict[str, ServerPin] = {}
        for config in configs:
            if config.pin == "off":
                continue
            locked, hashes = load_pinned_tools(config)
            pins[config.name] = ServerPin(config, locked, hashes, prompts=load_pinned_prompts(config))
        return cls(pins)

    def list_tools(self, provider_name: str, provider: Any) -> list[dict[str, Any]]:
        """``provider.list_tools()``; a pinned provider is listed through its raw MCP tools (what the
        lock holds), which are checked against the lock on the way."""
        if provider_name not in self._pins:
            entries: list[dict[str, Any]] = provider.list_tools()
            return entries
        from mas.runtime.contracts.tool_contract import tool_entry_from_mcp

        if not hasattr(provider, "list_mcp_tools"):
            raise TypeError(f"pinning needs an MCP provider with list_mcp_tools(), not {type(provider).__name__}")
        raw: list[dict[str, Any]] = provider.list_mcp_tools()
        self._pins[provider_name].check(raw)
        return [tool_entry_from_mcp(tool) for tool in raw]

    def attach(self, providers: Mapping[str, Any]) -> None:
        """Hand each pinned provider its pin, so it checks every listing it fetches itself (a
        reconnect, a ``tools/list_changed``) before it sends a call, not only the registry's."""
        for name, pin in self._pins.items():
            guard = getattr(providers.get(name), "guard_with", None)
            if callable(guard):
                guard(pin)

    def refusal(self, provider_name: str, inner: str, exposed: str) -> ToolResultEnvelope | None:
        """None when the call may go ahead (after a warning under ``warn``); else the failure.

        Decided on the last listing checked, whichever connection fetched it; a provider given its
        pin checks again on its own connection before it sends (a reconnect, a list change).
        """
        pin = self._pins.get(provider_name)
        return None if pin is None else pin.refusal(inner, exposed)
