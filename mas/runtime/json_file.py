"""Reading a JSON file the one way: every failure is one line naming the file (and the line).

The generator's inputs (saved listings, the lock) and the runtime's (samples) are read through
:func:`read_json`, each raising its own error type, so all of them say the same three things the
same way: the file cannot be read, it is not JSON (at ``file:LINE``), or it is nested too deeply.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["read_json"]


def read_json(path: Path, error: Callable[[str, str], Exception], *, text: str | None = None) -> Any:
    """The JSON document in ``path`` (or in ``text``, already read from it).

    A failure is raised as ``error(message, where)``: ``where`` is the file, or ``file:LINE`` for
    a syntax error.
    """
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise error(f"cannot read: {exc.strerror}", str(path)) from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"not JSON: {exc.msg}", f"{path}:{exc.lineno}") from exc
    except RecursionError as exc:
        raise error("JSON nested too deeply", str(path)) from exc
