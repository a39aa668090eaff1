"""The generator's one error type: bad input, reported as one line with where and what."""

from __future__ import annotations

__all__ = ["GenerateError"]


class GenerateError(Exception):
    """Bad input. ``str()`` is one line: ``where: pointer-or-field: message``; the CLI exits 2."""

    def __init__(self, message: str, where: str | None = None, field: str | None = None) -> None:
        self.message = message
        self.where = where
        self.field = field
        parts = [p for p in (where, field) if p]
        # Untrusted text can carry newlines; the report stays one line.
        text = ": ".join([*parts, message])
        super().__init__(" ".join(text.split()))
