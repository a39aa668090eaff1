"""Parse every input into ``SourceTools``: kind: Tool YAML, saved tools/list JSON, live MCP servers.

All three end up as MCP-shaped tool objects, so the build stage has one path.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from codegen.errors import GenerateError
from codegen.lock import Lock
from codegen.model import YAML_SOURCE_NAME, SourceTools
from mas.runtime.config import ConfigError, MCPServerConfig
from mas.runtime.contracts.server_contract import LISTINGS
from mas.runtime.json_file import read_json
from mas.runtime.lockfile import keep_locked
from mas.runtime.progress import Progress
from mas.runtime.tool_filters import agent_facing

__all__ = [
    "SURFACE_LISTINGS",
    "from_contract_entry",
    "parse_infra",
    "parse_mcp_json",
    "parse_yaml_tools",
    "read_live",
    "read_locked_sources",
]

logger = logging.getLogger(__name__)


def from_contract_entry(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    """A ToolContract ``list_tools()`` entry as an MCP tool object; an MCP tool passes through.

    Entries carry ``parameters``/``output_schema`` and mirror their hints as MCP ``annotations``
    (see ``build_tool_entry``), so only the schema keys are renamed.
    """
    if "inputSchema" in entry or "parameters" not in entry:
        return entry
    tool: dict[str, Any] = {"name": entry.get("name"), "inputSchema": entry["parameters"]}
    for ours, theirs in (("description", "description"), ("title", "title"), ("output_schema", "outputSchema"),
                         ("annotations", "annotations"), ("meta", "_meta")):  # fmt: skip
        if entry.get(ours) is not None:
            tool[theirs] = entry[ours]
    return tool


def parse_yaml_tools(paths: Sequence[Path]) -> SourceTools:
    from mas.runtime.yaml_source import load_tool_documents

    try:
        definitions = load_tool_documents(paths)
    except ConfigError as exc:
        raise GenerateError(str(exc)) from exc
    tools = [from_contract_entry(d.to_entry()) for d in definitions]
    origin = ", ".join(str(p) for p in paths)
    return SourceTools(name=YAML_SOURCE_NAME, kind="yaml", origin=origin, tools=tuple(tools))


def parse_mcp_json(path: Path, name: str | None = None) -> SourceTools:
    """A saved tools/list result: ``{"tools": [...]}`` (``nextCursor`` allowed), a JSON-RPC response
    wrapping one, or a bare array of tools. Entries may also be ToolContract ``list_tools()`` entries
    (``python -m mas.runtime list --json``), so in-process tools can be generated too.

    The source is named ``name`` (``--mcp-json NAME=PATH``), else after the file."""
    data = read_json(path, GenerateError)
    pointer = ""
    if isinstance(data, Mapping) and isinstance(data.get("result"), Mapping):
        data, pointer = data["result"], "/result"
    if isinstance(data, Mapping):
        if "tools" not in data:
            raise GenerateError("not a tools/list result: no 'tools' array", str(path), pointer or "/")
        data, pointer = data["tools"], f"{pointer}/tools"
    if not isinstance(data, list):
        raise GenerateError("not a tools/list result: 'tools' must be an array", str(path), pointer or "/")
    tools = tuple(from_contract_entry(t) if isinstance(t, Mapping) else t for t in data)
    # What a live listing leaves out (invalid x-mcp-header, app-only tools) a saved one does too.
    source = name or path.stem
    if all(isinstance(t, Mapping) for t in tools):
        tools = tuple(agent_facing(tools, source))
    # Pointers in later errors say /tools/N; keep that true for a bare array too.
    return SourceTools(name=source, kind="mcp-json", origin=str(path), tools=tools)


def parse_infra(paths: Sequence[Path]) -> list[MCPServerConfig]:
    from mas.runtime.infra import load_infra_files

    try:
        return load_infra_files(paths)
    except ConfigError as exc:
        raise GenerateError(str(exc)) from exc


def read_live(configs: Sequence[MCPServerConfig], lock: Path, progress: Progress | None = None) -> list[SourceTools]:
    """List every server through the runtime's provider (same pagination, headers and timeouts).

    Servers are listed side by side (``mas.runtime.side_by_side``: bounded, results in config
    order, so the lock and the package never depend on who answered first); a failure is the
    first failing server in config order. ``lock`` is the lock path: a failure suggests
    ``--offline`` only when that lock exists.
    """
    from mas.runtime.side_by_side import map_side_by_side

    shown = progress or Progress("toolgen", quiet=True)
    listings = map_side_by_side(lambda config: _list_one(config, lock, shown), configs)
    return [
        _server_source(config, _quieted(config, tools, lock), dialect, surface)
        for config, (tools, dialect, surface) in zip(configs, listings, strict=True)
    ]


#: What a server may serve besides tools, as the lock names each listing (docs/lock.md).
SURFACE_LISTINGS = tuple(LISTINGS)


def _list_surface(
    provider: Any, config: MCPServerConfig, lock: Path | None = None
) -> dict[str, tuple[Mapping[str, Any], ...]]:
    """The server's resources, templates and prompts (only the non-empty listings), and the closed
    completion sets of their variables and arguments (``codegen.surface.completion_items``, compared
    with the lock file ``lock``). A listing that fails is one warning line, and the server's tools
    are generated as usual."""
    found: dict[str, tuple[Mapping[str, Any], ...]] = {}
    if config.tools is not None:  # an explicit tool list: the server is not asked anything
        return found
    for which in SURFACE_LISTINGS:
        try:
            items = getattr(provider, f"list_{which}")()
        except Exception as exc:
            logger.warning("%s; its %s are left out of the lock and the package", exc, which.replace("_", " "))
            continue
        if items:
            found[which] = tuple(items)
    if found.get("resource_templates") or found.get("prompts"):
        from codegen.surface import completion_items

        def complete(ref: Mapping[str, Any], argument: str, value: str) -> Any:
            return provider.complete(ref, argument, value, timeout_seconds=config.connect_timeout_seconds)

        locked: Sequence[Mapping[str, Any]] = ()
        if lock is not None and lock.is_file():
            from codegen.lock import load_lock

            locked = load_lock(lock).surface.get(config.name, {}).get("completions", ())
        if completions := completion_items(complete, found, locked):
            found["completions"] = completions
    return found


def _list_one(
    config: MCPServerConfig, lock: Path, shown: Progress
) -> tuple[list[dict[str, Any]], str | None, dict[str, tuple[Mapping[str, Any], ...]]]:
    """The server's tools, the task dialect it advertises, and its resources, templates and prompts
    (all recorded in the lock)."""
    from mas.runtime.mcp.provider import MCPToolProvider

    provider = MCPToolProvider(config)
    try:
        with shown.server(config.name) as task:
            provider.on_page = task.page
            tools = provider.list_mcp_tools()
            # Explicit infra `tools` skip discovery: no session, so no dialect is known.
            dialect = provider.task_dialect() if config.tools is None else None
            task.done(len(tools))
        return tools, dialect, _list_surface(provider, config, lock)
    except Exception as exc:  # any failure to list is one clear line, with the way out
        raise GenerateError(
            f"cannot list MCP server {config.name!r}: {exc}; {_way_out(lock)}",
            str(config.location) if config.location else None,
        ) from exc
    finally:
        provider.close()


def _quieted(config: MCPServerConfig, tools: Sequence[Mapping[str, Any]], lock: Path) -> list[Mapping[str, Any]]:
    """The live tools with the infra entry's ``drift_ignore`` spots as the lock on disk has them, so
    a known-noisy value changes neither the lock, nor drift, nor the generated code."""
    if not config.drift_ignore or not lock.is_file():
        return list(tools)
    from codegen.lock import load_lock

    locked = {str(t.get("name")): t for t in load_lock(lock).servers.get(config.name, ())}
    return [keep_locked(t, locked.get(str(t.get("name"))), config.ignored(str(t.get("name")))) for t in tools]


def _way_out(lock: Path) -> str:
    """Advice that works: --offline needs a lock, so without one say how to get one."""
    if lock.is_file():
        return f"use --offline to generate from the lock ({lock}) instead"
    return (
        f"there is no lock ({lock}) to fall back on: fix the server (or its environment) and run again "
        "to create one, or generate from a saved tools/list with --mcp-json"
    )


def read_locked_sources(configs: Sequence[MCPServerConfig], lock: Lock) -> list[SourceTools]:
    sources = []
    for config in configs:
        tools = lock.servers.get(config.name)
        if tools is None:
            raise GenerateError(
                f"the lock has no listing for MCP server {config.name!r}; run once without --offline",
                str(lock.path),
            )
        surface = {which: tuple(items) for which, items in lock.surface.get(config.name, {}).items()}
        sources.append(_server_source(config, tools, lock.tasks.get(config.name), surface))
    return sources


def _server_source(
    config: MCPServerConfig,
    tools: Sequence[Mapping[str, Any]],
    task_dialect: str | None = None,
    surface: Mapping[str, tuple[Mapping[str, Any], ...]] | None = None,
) -> SourceTools:
    return SourceTools(
        name=config.name,
        kind="mcp-live",
        origin=f"MCP server {config.name!r}",
        tools=tuple(tools),
        wire_prefix=config.prefix,
        location=str(config.location) if config.location else None,
        task_dialect=task_dialect,
        surface=dict(surface or {}),
    )
