"""Argument omission: ``NOT_GIVEN``, the default of every optional parameter, is never sent."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

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


def _same(value: object, marker: object) -> bool:
    """Strict equality: same type and equal, recursively (so True is not 1 and 1.0 is not 1)."""
    if value is None or marker is None:
        return value is marker
    if type(value) is not type(marker):
        return False
    if isinstance(value, list | tuple):
        left, right = cast("Sequence[object]", value), cast("Sequence[object]", marker)
        return len(left) == len(right) and all(_same(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(value, dict):
        left_map, right_map = cast("dict[object, object]", value), cast("dict[object, object]", marker)
        return left_map.keys() == right_map.keys() and all(_same(left_map[k], right_map[k]) for k in left_map)
    return value == marker


def without_omitted(arguments: Mapping[str, Any], omit: Mapping[str, object]) -> dict[str, Any]:
    if not omit:  # a tool without optional arguments
        return dict(arguments)
    return {key: value for key, value in arguments.items() if not (key in omit and _same(value, omit[key]))}
