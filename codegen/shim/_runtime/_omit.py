"""Argument omission: ``NOT_GIVEN``, the default of every optional parameter, is never sent."""

from __future__ import annotations

import enum
from typing import Any, Final

__all__ = ["NOT_GIVEN", "NotGiven", "without_omitted"]


class NotGiven(enum.Enum):
    """The type of :data:`NOT_GIVEN`, the default of every optional parameter: "not passed", so
    the argument is left out and the server's default applies. ``None`` is a value like any other,
    sent as JSON ``null``; a parameter's type includes ``None`` only where its schema allows null,
    so a type checker rejects ``None`` where the server would. (Stainless's ``NOT_GIVEN``,
    openapi-python-client's ``UNSET``.) An enum of one member, so ``x is NOT_GIVEN`` narrows."""

    NOT_GIVEN = "NOT_GIVEN"

    def __repr__(self) -> str:
        return "NOT_GIVEN"


#: The value of an optional argument that was not passed; it is never sent.
NOT_GIVEN: Final = NotGiven.NOT_GIVEN


def without_omitted(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments to send: all but those left :data:`NOT_GIVEN` (``arguments`` itself when none is:
    a generated method builds them for one call)."""
    for value in arguments.values():
        if value is NOT_GIVEN:
            return {key: value for key, value in arguments.items() if value is not NOT_GIVEN}
    return arguments
