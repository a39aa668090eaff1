"""black, pinned and configured here only: the user's own formatter settings never apply."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import black

__all__ = ["format_python"]


@cache
def _black_mode() -> black.Mode:
    # Imported on first use: a run served from the cache never loads black (a quarter second).
    import black
    from black.mode import TargetVersion

    # black's own defaults, set explicitly so no pyproject.toml of the user's can change them.
    return black.Mode(target_versions={TargetVersion.PY311}, line_length=88)


def format_python(source: str) -> str:
    import black
    from black.report import NothingChanged

    # fast=True skips black's AST-equivalence self-check; generated trees are compiled in tests instead.
    try:
        return black.format_file_contents(source, fast=True, mode=_black_mode())
    except NothingChanged:
        return source
