"""Pure helpers for the MCP provider: MCP wire objects <-> contract shapes, header secrets, error text.

Kept apart from ``mcp_provider`` so the conversions can be read (and tested) without the
connection machinery.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any

from mas.runtime import redact
from mas.runtime.config import MCPServerConfig
from mas.runtime.contracts._rules import one_line
from mas.runtime.contracts.tool_contract import ToolResultEnvelope

if TYPE_CHECKING:
    import mcp_types as types

__all__ = [
    "ToolServerError",
    "clip",
    "dump_wire",
    "envelope_from_result",
    "exception_text",
    "resolve_env",
    "resolve_headers",
    "scrub_envelope",
    "server_identity",
]

_ENV_PREFIX = "env:"
# Literal (non env:) header values under these names are treated as secrets too when scrubbing.
_SENSITIVE_HEADER_WORDS = ("authorization", "cookie", "token", "key", "secret", "password")


class ToolServerError(RuntimeError):
    """A tool server could not be reached or answered badly. ``str()`` is one line naming the server."""

    #: The failure kind a registry reports when a provider raises this (``docs/tool.md``).
    error_kind = "unavailable"

    def __init__(self, server: str, detail: str) -> None:
        self.server = server
        self.detail = one_line(detail)
        super().__init__(f"MCP server {server!r}: {self.detail}")


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut (infra ``max_error_chars``).

    Cut after blanking secrets, never before: a cut through a secret would leave a piece of it.
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters cut; max_error_chars={limit})"


def dump_wire(model: Any) -> Any:
    """A pydantic MCP object as JSON with camelCase wire keys and unset optionals left out."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def server_identity(config: MCPServerConfig) -> tuple[Any, ...]:
    """What makes two configs "the same server" for the process-wide listing cache."""
    target: tuple[Any, ...]
    if config.transport == "stdio":
        target = (config.command, tuple(config.args), config.cwd)
    else:
        target = (config.url,)
    # follow_pagination changes what a listing contains, so it is part of the key.
    return (config.name, config.transport, *target, config.follow_pagination)


def envelope_from_result(result: types.Result) -> ToolResultEnvelope:
    """A tools/call result as an envelope, by the one envelope rule (content blocks keep wire keys).

    An ``input_required`` result (or an extension's claimed one) travels whole in ``result``.
    """
    # Imported here, not at the top: the generator reads samples through this module (resolve_headers,
    # ToolServerError) and must not pay the SDK's import; by the time a result exists it is loaded.
    import mcp_types as types

    wire = dump_wire(result)
    if isinstance(result, types.CallToolResult):
        # Read from the typed result, which the SDK has checked: the envelope's own keys, so the
        # envelope rule takes its short path (no wire spellings to rename or skip).
        fields: dict[str, Any] = {
            "content": wire["content"],
            "is_error": bool(result.is_error),
            "result_type": result.result_type,
        }
        # The JSON copies (a NaN a server slipped in is null there, as everywhere on the wire).
        if "structuredContent" in wire:
            fields["structured_content"] = wire["structuredContent"]
        if "_meta" in wire:
            fields["meta"] = wire["_meta"]
        return ToolResultEnvelope.coerce(fields)
    if not isinstance(result, types.InputRequiredResult):
        return ToolResultEnvelope(result=wire, meta=result.meta, result_type=str(wire.get("resultType") or "complete"))
    return ToolResultEnvelope.coerce(wire)


def resolve_headers(config: MCPServerConfig) -> tuple[dict[str, str], set[str]]:
    """Resolve ``env:VAR`` header values; return the headers and the values to scrub from text.

    A value is either ``env:VAR`` (the whole value comes from ``$VAR``) or ``<prefix> env:VAR``
    (e.g. ``Bearer env:TOKEN``: the prefix is kept and ``$VAR`` holds just the token). A missing
    variable raises :class:`ToolServerError` naming the variable and the header, never a value.
    """
    headers: dict[str, str] = {}
    secrets: set[str] = set()
    for key, raw in config.headers.items():
        prefix, _, last = raw.rstrip().rpartition(" ")
        if last.startswith(_ENV_PREFIX):
            var = last[len(_ENV_PREFIX) :]
            secret = os.environ.get(var)
            if not secret:
                raise ToolServerError(
                    config.name, f"header {key!r} needs environment variable {var}, which is not set (or empty)"
                )
            secrets.add(secret)
            value = f"{prefix} {secret}" if prefix else secret
        else:
            value = raw
            if any(word in key.lower() for word in _SENSITIVE_HEADER_WORDS):
                # The whole value and the bare credential; very short values would garble messages.
                secrets.update(v for v in (value, last) if len(v) >= 4)
        headers[key] = value
    redact.remember(secrets)  # blanked from every output of the process from now on
    return headers, secrets


def resolve_env(config: MCPServerConfig) -> tuple[dict[str, str], set[str]]:
    """Resolve a stdio server's ``env``, as :func:`resolve_headers` does headers: a value that is
    ``env:VAR`` as a whole comes from ``$VAR`` (a missing or empty variable raises
    :class:`ToolServerError` naming it and the entry, never a value) and is a secret; so is a literal
    value of a variable whose name says it holds one (``API_KEY``, ``GITHUB_TOKEN``...)."""
    env: dict[str, str] = {}
    secrets: set[str] = set()
    for key, raw in config.env.items():
        if raw.startswith(_ENV_PREFIX) and " " not in raw:
            var = raw[len(_ENV_PREFIX) :]
            value = os.environ.get(var)
            if not value:
                raise ToolServerError(
                    config.name, f"env {key!r} needs environment variable {var}, which is not set (or empty)"
                )
            secrets.add(value)
        else:
            value = raw
            if any(word in key.lower() for word in _SENSITIVE_HEADER_WORDS) and len(value) >= 4:
                secrets.add(value)
        env[key] = value
    redact.remember(secrets)
    return env, secrets


def leaf_exception(exc: BaseException) -> BaseException:
    """The first real error inside (possibly nested) exception groups raised by task groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def exception_text(exc: BaseException, secrets: Iterable[str] = ()) -> str:
    """``Type: message`` on one line with every secret value blanked out."""
    leaf = leaf_exception(exc)
    message = str(leaf)
    text = f"{type(leaf).__name__}: {message}" if message else type(leaf).__name__
    return scrub(one_line(text), secrets)


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every secret blanked: the process's remembered ones and ``secrets`` (``redact``)."""
    return redact.blank(text, secrets)


def scrub_envelope(envelope: ToolResultEnvelope, secrets: Collection[str] = ()) -> ToolResultEnvelope:
    """The envelope with every secret blanked out of its strings: a server may echo a header back."""
    if not redact.any_secret(secrets):  # nothing to blank (the common case): not even a copy to make
        return envelope
    data = envelope.to_dict()
    blanked = redact.blank_json(data, secrets)
    return envelope if blanked is data else ToolResultEnvelope.from_dict(blanked)
