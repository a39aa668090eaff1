"""Load infra files (``kind: ToolServerRegistry``) into :class:`MCPServerConfig` objects.

Format: ``docs/tool-server-registry.md`` and ``infra.schema.yaml``. Header values written as
``env:VAR`` are kept as written; the provider resolves them when it connects.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from mas.runtime.config import ConfigError, MCPServerConfig, OAuthConfig, SourceLocation
from mas.runtime.yaml_source import LineMap, dotted, load_schema, load_yaml_documents, validate_document

__all__ = ["load_infra", "load_infra_files"]


#: Server keys passed to MCPServerConfig as they are, when present (their defaults live there).
_OPTIONAL = (
    "connect_timeout_seconds",
    "connect_mode",
    "follow_pagination",
    "max_pages",
    "cache_ttl_ms",
    "cache_scope",
    "cache_hints",
    "app_only_tools",
    "max_result_bytes",
    "max_json_depth",
    "max_error_chars",
    "max_progress_lag_seconds",
    "max_client_requests",
    "max_header_bytes",
    "list_timeout_seconds",
    "exit_grace_seconds",
)


def _tool_object(item: str | Mapping[str, Any]) -> Mapping[str, Any]:
    """An MCP tool object; a bare name (or a missing inputSchema) means "takes any object"."""
    tool: dict[str, Any] = {"name": item} if isinstance(item, str) else dict(item)
    tool.setdefault("inputSchema", {"type": "object"})
    return tool


def _auth(entry: Mapping[str, Any] | None, file: str) -> OAuthConfig | None:
    if entry is None:
        return None
    settings = dict(entry)
    key_file = settings.get("private_key_file")
    if key_file is not None and not Path(key_file).is_absolute():
        settings["private_key_file"] = str(Path(file).parent / key_file)
    return OAuthConfig(**settings)  # the schema allows only OAuthConfig's fields


def _prefix(entry: Mapping[str, Any], index: int, lines: LineMap, file: str) -> str | None:
    """The server's ``prefix``. ``namespace`` is its older name: infra files still spell it, so it
    is still read ("namespace" now means only a generated package's attribute of one source)."""
    if "prefix" in entry and "namespace" in entry:
        path = ("spec", "servers", index, "namespace")
        where = SourceLocation(file, lines.line(path), dotted(path))
        raise ConfigError("give the prefix once: 'prefix' (or its older name 'namespace')", where)
    prefix = entry.get("prefix", entry.get("namespace"))
    return None if prefix is None else str(prefix)


def _server(entry: Mapping[str, Any], index: int, lines: LineMap, file: str) -> MCPServerConfig:
    path = ("spec", "servers", index)
    cwd = entry.get("cwd")
    if cwd is not None and not Path(cwd).is_absolute():
        cwd = str(Path(file).parent / cwd)  # relative to the infra file, not to wherever we run from
    tools = entry.get("tools")
    optional: dict[str, Any] = {key: entry[key] for key in _OPTIONAL if key in entry}
    lock = entry.get("lock")
    if lock is not None and not Path(lock).is_absolute():
        lock = str(Path(file).parent / lock)
    if entry.get("pin") not in (None, False, "off"):  # YAML 1.1 reads a bare `off` as false
        optional["pin"] = entry["pin"]
    return MCPServerConfig(
        name=entry["name"],
        transport=entry["transport"],
        url=entry.get("url", entry.get("endpoint")),
        command=entry.get("command"),  # `python` stays as written; MCPToolProvider maps it at spawn
        args=tuple(entry.get("args", ())),
        env=dict(entry.get("env", {})),
        cwd=cwd,
        headers=dict(entry.get("headers", {})),
        prefix=_prefix(entry, index, lines, file),
        tools=None if tools is None else tuple(_tool_object(t) for t in tools),
        client_capabilities=tuple(entry.get("client_capabilities", ())),
        auth=_auth(entry.get("auth"), file),
        lock=lock,
        drift_ignore=tuple((str(i["tool"]), str(i["pointer"])) for i in entry.get("drift_ignore", ())),
        location=SourceLocation(file, lines.line(path), dotted(path)),
        **optional,
    )


def _versions_as_text(doc: Any) -> None:
    """YAML reads a bare ``connect_mode: 2026-07-28`` as a date; the SDK's mode is that text."""
    spec = doc.get("spec") if isinstance(doc, Mapping) else None
    servers = spec.get("servers") if isinstance(spec, Mapping) else None
    for entry in servers if isinstance(servers, list) else ():
        if isinstance(entry, dict) and isinstance(entry.get("connect_mode"), datetime.date):
            entry["connect_mode"] = entry["connect_mode"].isoformat()


def load_infra(path: str | Path) -> list[MCPServerConfig]:
    """Every server of every ``ToolServerRegistry`` document in ``path``; names must be unique."""
    file = str(path)
    servers: list[MCPServerConfig] = []
    seen: dict[str, MCPServerConfig] = {}
    for doc, lines in load_yaml_documents(path):
        _versions_as_text(doc)
        validate_document(doc, lines, load_schema("mas.runtime", "infra.schema.yaml"), file)
        for index, entry in enumerate(doc["spec"]["servers"]):
            server = _server(entry, index, lines, file)
            if server.name in seen:
                name_path = ("spec", "servers", index, "name")
                where = SourceLocation(file, lines.line(name_path), dotted(name_path))
                raise ConfigError(
                    f"duplicate server name {server.name!r} (also at {seen[server.name].location})", where
                )
            seen[server.name] = server
            servers.append(server)
    return servers


def load_infra_files(paths: Iterable[str | Path]) -> list[MCPServerConfig]:
    """:func:`load_infra` over several files; a server name must be unique across all of them."""
    servers: list[MCPServerConfig] = []
    seen: dict[str, MCPServerConfig] = {}
    for path in paths:
        for server in load_infra(path):
            if server.name in seen:
                raise ConfigError(
                    f"duplicate server name {server.name!r} (also at {seen[server.name].location})", server.location
                )
            seen[server.name] = server
            servers.append(server)
    return servers
