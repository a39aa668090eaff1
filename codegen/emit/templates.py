"""Where the Jinja2 templates are: read by the renderer, and fingerprinted by the cache (``codegen/cache.py``).

A module of its own, importing nothing of toolgen, so the cache does not import the renderer
(which names the cache's ``Memo``): no import cycle.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["templates_dir"]

_CODEGEN = Path(__file__).resolve().parents[1]


def templates_dir() -> Path:
    """Inside the wheel the templates sit in the package; in a checkout, at the top level."""
    packaged = _CODEGEN / "templates"
    return packaged if packaged.is_dir() else _CODEGEN.parent / "templates"
