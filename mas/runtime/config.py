"""Configuration data shared by the runtime's loaders and providers.

Frozen dataclasses only: parsing lives in ``infra.py`` / ``yaml_source.py``; behaviour lives in the
providers. Keeping these apart lets the code generator reuse the same server settings.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "AuthGrant",
    "ConfigError",
    "MCPServerConfig",
    "OAuthConfig",
    "SourceLocation",
    "Transport",
    "positive_seconds",
]

Transport = Literal["stdio", "streamable-http", "sse"]
AuthGrant = Literal["authorization_code", "client_credentials", "token_exchange"]


@dataclass(frozen=True)
class SourceLocation:
    """Where a piece of configuration came from: a file, a 1-based line and a field path."""

    file: str
    line: int | None = None
    field: str | None = None

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return where if not self.field else f"{where}: {self.field}"


class ConfigError(ValueError):
    """Bad configuration. ``str()`` is one line: ``file:line: field: what is wrong``."""

    def __init__(self, message: str, location: SourceLocation | None = None) -> None:
        self.message = message
        self.location = location
        super().__init__(f"{location}: {message}" if location else message)


@dataclass(frozen=True)
class OAuthConfig:
    """An infra entry's ``auth:`` block: OAuth 2.1 for an HTTP server (``docs/infra.md``, "OAuth").

    Secret values (``client_secret``, ``private_key``, ``id_token``, ``idp_client_secret``) are
    ``env:VAR`` references, resolved when the provider connects and never stored resolved.
    """

    grant: AuthGrant = "authorization_code"
    client_id: str | None = None
    client_secret: str | None = None
    #: client_secret_basic, client_secret_post, none or private_key_jwt (pre-registered clients).
    token_endpoint_auth_method: str | None = None
    #: A client ID metadata document URL (CIMD), used as client_id where the server supports it.
    client_metadata_url: str | None = None
    client_name: str = "toolgen"
    #: The loopback redirect for the authorization code flow (``http://127.0.0.1:PORT/path``).
    redirect_uri: str | None = None
    #: The authorization server the client credentials belong to (recommended; discovered if absent).
    issuer: str | None = None
    private_key: str | None = None
    private_key_file: str | None = None
    signing_algorithm: str = "RS256"
    idp_token_endpoint: str | None = None
    idp_client_id: str | None = None
    idp_client_secret: str | None = None
    id_token: str | None = None
    #: ``file`` (the user cache folder, mode 0600) or ``memory`` (nothing kept after the process).
    token_store: Literal["file", "memory"] = "file"
    #: How long the authorization code flow waits for the person to finish in the browser.
    authorize_timeout_seconds: float = 300.0


@dataclass(frozen=True)
class MCPServerConfig:
    """One ``protocol: mcp`` entry of an infra ToolServerRegistry file.

    ``headers`` values may be ``env:VAR``; they are resolved at connect time and never stored
    resolved, so a config object can be printed or logged without leaking a secret.
    """

    name: str
    transport: Transport
    url: str | None = None
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    connect_timeout_seconds: float = 30.0
    #: The handshake, named as the SDK's ``Client(mode=...)``: ``auto`` probes ``server/discover`` and
    #: falls back to ``initialize``; ``legacy`` sends only ``initialize``; a modern protocol version
    #: (``2026-07-28``) is adopted without a probe.
    connect_mode: str = "auto"
    follow_pagination: bool = True
    max_pages: int = 100
    cache_ttl_ms: int = 0
    cache_scope: Literal["provider", "process"] = "provider"
    #: A 2026 server's own list-result hints (``ttlMs``, ``cacheScope``): ``honour`` lets them only
    #: shorten ``cache_ttl_ms`` and keep a ``private`` listing out of the process-wide cache.
    cache_hints: Literal["honour", "ignore"] = "honour"
    #: Tools whose ``_meta.ui.visibility`` leaves out the model (MCP Apps): ``drop`` or ``keep``.
    app_only_tools: Literal["drop", "keep"] = "drop"
    #: Limits on what a server may send (docs/security.md): a stdio message longer than this many
    #: bytes fails the call as a ``protocol`` error and replaces the connection.
    max_result_bytes: int = 16 * 1024 * 1024
    #: Deepest nesting of arrays/objects accepted in one message; deeper answers are ``protocol`` errors.
    max_json_depth: int = 256
    #: A server's error message is cut to this many characters in envelopes and exception text.
    max_error_chars: int = 4096
    #: Progress older than this is skipped when newer progress waits, and the relay gives up this
    #: long after the call ended: a slow progress callback never delays or fails the result.
    max_progress_lag_seconds: float = 2.0
    #: Server-to-client requests (elicitation, sampling, roots) one tools/call may make; later ones
    #: are refused at once, so a flood can neither grow memory nor the caller's input round.
    max_client_requests: int = 64
    #: Longest ``Mcp-Param-*`` header line (name, ``: ``, value) an ``x-mcp-header`` argument may
    #: become; a longer one fails the call as ``invalid_arguments`` before anything is sent.
    max_header_bytes: int = 8192
    #: The whole of one ``tools/list`` (every page) must arrive within this many seconds; each
    #: page within ``connect_timeout_seconds`` as well.
    list_timeout_seconds: float = 120.0
    #: A stdio server's time to exit after its stdin is closed, before SIGTERM (then, 2 s later,
    #: SIGKILL). Some servers never exit on stdin EOF (mcp 1.6's FastMCP, the TypeScript reference
    #: server): each close of one waits this long.
    exit_grace_seconds: float = 2.0
    #: Put before this server's tool names by the registry (``prefix.tool``); infra ``prefix``.
    prefix: str | None = None
    #: Run-time pinning against a toolgen lock (``mas.runtime.pinning``): off, warn or refuse.
    pin: Literal["off", "warn", "refuse"] = "off"
    #: The lock file pinned against (resolved against the infra file's folder).
    lock: str | None = None
    #: ``drift_ignore``: (tool name or ``*``, JSON pointer into the tool) spots that change on their
    #: own; their locked value is kept (``mas.runtime.lockfile.keep_locked``).
    drift_ignore: tuple[tuple[str, str], ...] = ()

    def ignored(self, tool: str) -> tuple[str, ...]:
        """The ``drift_ignore`` pointers of ``tool``."""
        return tuple(p for name, p in self.drift_ignore if name in (tool, "*"))

    @property
    def namespace(self) -> str | None:
        """``prefix`` by its older name, kept for code that reads it ("namespace" now means only a
        generated package's attribute of one source: docs/generator.md, "Words used here")."""
        return self.prefix

    #: Explicit tool list (MCP tool objects) that skips discovery; None means discover.
    tools: tuple[Mapping[str, Any], ...] | None = None
    #: Server-to-client requests the caller answers (``elicitation``, ``sampling``, ``roots``):
    #: declared to the server as the client's capabilities; any other kind is refused.
    client_capabilities: tuple[str, ...] = ()
    #: OAuth 2.1 (``auth:``); None: no OAuth (fixed ``headers`` only).
    auth: OAuthConfig | None = None
    location: SourceLocation | None = None


def positive_seconds(text: str) -> float:
    """A CLI ``--timeout`` value: a positive, finite number of seconds (argparse ``type=``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text!r}")
    return value
