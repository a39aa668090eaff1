"""``ToolEnvelope``: a call's whole result, in the contract's dict form, read like the runtime's envelope.

The runtime's registry returns a ``ToolResultEnvelope`` (a frozen object); a generated package
normalizes whatever a provider returns by the same rule (``_rules.to_envelope``) into its dict
form, ``ToolResultEnvelope.to_dict()``. ``ToolEnvelope`` is that dict with the object's attributes
on top, so code reads both alike (``envelope.is_error``, ``envelope.content``, ``envelope.text``,
``envelope.error_kind``) and ``ToolResultEnvelope.from_dict(envelope)`` gives the object back.
On both, ``content`` is the wire form (a list of dicts); ``ToolResult.content`` is the decoded
one (content-block models).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import _rules
from ._text import as_list, joined_text

__all__ = ["ToolEnvelope", "as_envelope"]


class ToolEnvelope(dict[str, Any]):
    """The envelope dict, with ``ToolResultEnvelope``'s attributes (and its defaults for absent keys)."""

    __slots__ = ()

    @property
    def status(self) -> str:
        value: str = self.get("status") or ("error" if self.get("is_error") else "success")
        return value

    @property
    def result(self) -> Any:
        return self.get("result")

    @property
    def is_error(self) -> bool:
        return bool(self.get("is_error")) or self.get("status") == "error"

    @property
    def result_mode(self) -> str:
        value: str = self.get("result_mode") or "inline"
        return value

    @property
    def execution_mode(self) -> str:
        value: str = self.get("execution_mode") or "sync"
        return value

    @property
    def events(self) -> list[Any] | None:
        return self.get("events")

    @property
    def session_id(self) -> str | None:
        return self.get("session_id")

    @property
    def session_status(self) -> str | None:
        return self.get("session_status")

    @property
    def metadata(self) -> dict[str, Any] | None:
        return self.get("metadata")

    @property
    def content(self) -> list[dict[str, Any]] | None:
        """The content blocks as sent (dicts); ``ToolResult.content`` decodes them into models."""
        return self.get("content")

    @property
    def structured_content(self) -> Any:
        return self.get("structured_content")

    @property
    def result_type(self) -> str:
        """``"complete"`` unless the provider said otherwise (e.g. ``"input_required"``)."""
        value: str = self.get("result_type") or "complete"
        return value

    @property
    def meta(self) -> dict[str, Any] | None:
        return self.get("meta")

    @property
    def error_kind(self) -> str | None:
        """Why the call failed (``timeout``, ``unavailable``, ...), or None when it did not."""
        return _rules.error_kind(self)

    @property
    def text(self) -> str:
        """The text blocks joined with newlines, else ``str(result)``, else ``""``."""
        joined = joined_text(as_list(self.get("content")) or [])
        if joined is not None:
            return joined
        result = self.get("result")
        return "" if result is None else str(result)


def as_envelope(envelope: Mapping[str, Any] | None) -> ToolEnvelope:
    """``envelope`` as a :class:`ToolEnvelope` (itself when it is one already: no copy)."""
    if type(envelope) is ToolEnvelope:
        return envelope
    return ToolEnvelope(envelope or {})
