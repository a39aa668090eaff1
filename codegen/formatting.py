"""black, pinned and configured here only: the user's own formatter settings never apply."""

from __future__ import annotations

import black
from black.mode import TargetVersion
from black.report import NothingChanged

__all__ = ["format_python"]

# black's own defaults, set explicitly so no pyproject.toml of the user's can change them.
_BLACK_MODE = black.Mode(target_versions={TargetVersion.PY311}, line_length=88)


def format_python(source: str) -> str:
    # fast=True skips black's AST-equivalence self-check; generated trees are compiled in tests instead.
    try:
        return black.format_file_contents(source, fast=True, mode=_BLACK_MODE)
    except NothingChanged:
        return source
