"""The generator's one error type, and its one warning record.

Bad input is reported as one line with where and what (``GenerateError``, exit 2). A schema spot
that toolgen cannot type is not bad input: it degrades to the widest honest type and is recorded
as a ``Degradation``, printed by the CLI as one warning line (``--strict-schemas`` makes it exit 2).
"""

from __future__ import annotations

from dataclasses import dataclass

from mas.runtime.contracts._rules import one_line

__all__ = ["Degradation", "GenerateError", "one_line"]


class GenerateError(Exception):
    """Bad input. ``str()`` is one line: ``where: pointer-or-field: message``; the CLI exits 2."""

    def __init__(self, message: str, where: str | None = None, field: str | None = None) -> None:
        self.message = message
        self.where = where
        self.field = field
        parts = [p for p in (where, field) if p]
        super().__init__(one_line(": ".join([*parts, message])))


@dataclass(frozen=True, order=True)
class Degradation:
    """A schema spot typed wider than its schema says (``Any``), or a model left out.

    ``kind`` is a short stable tag (see docs/schema-coverage.md); ``pointer`` is a JSON pointer
    into the tool object (``/inputSchema/properties/a/$ref``).
    """

    source: str
    tool: str
    pointer: str
    kind: str
    what: str

    def __str__(self) -> str:
        # The kind in brackets names the row of docs/schema-coverage.md ("Warning kinds").
        return one_line(f"{self.source}: tool {self.tool!r}: {self.pointer or '/'}: {self.what} [{self.kind}]")
