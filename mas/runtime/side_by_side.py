"""Listing many servers side by side, with bounded concurrency, and results in the order given.

Every MCP provider runs on its own event loop thread, so waiting for several listings at once
only needs threads to wait in: most of a listing is a server starting up (a Python interpreter,
``npx``) and answering. The results and the first failure come back in input order, so what is
written (packages, the lock, reports) and which error is reported never depend on which server
answered first. Used by ``toolgen generate``/``diff``/``record``/``--check`` (codegen/sources.py)
and by the registry at start-up (registry.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["DEFAULT_LIMIT", "ENV_LIMIT", "limit", "map_side_by_side"]

T = TypeVar("T")
R = TypeVar("R")

#: At most this many servers are listed at once (each may start a process).
DEFAULT_LIMIT = 8
#: Overrides the limit: ``TOOLGEN_LIST_CONCURRENCY=1`` lists one server after another.
ENV_LIMIT = "TOOLGEN_LIST_CONCURRENCY"


def limit() -> int:
    text = os.environ.get(ENV_LIMIT, "").strip()
    if not text:
        return DEFAULT_LIMIT
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{ENV_LIMIT} must be a whole number of servers, not {text!r}") from None
    if value < 1:
        raise ValueError(f"{ENV_LIMIT} must be at least 1, not {value}")
    return value


def map_side_by_side(work: Callable[[T], R], items: Sequence[T], max_workers: int | None = None) -> list[R]:
    """``[work(item) for item in items]``, up to ``max_workers`` at a time (default :func:`limit`).

    Every item runs to the end even when one fails (so nothing is left half-started); then the
    first failure in input order is raised, else the results are returned in input order.
    """
    workers = min(max_workers or limit(), len(items))
    if workers <= 1:
        return [work(item) for item in items]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="toolgen-list") as pool:
        futures = [pool.submit(work, item) for item in items]
    # Leaving the block waited for every future, so each is done here.
    for future in futures:
        error = future.exception()
        if error is not None:
            raise error
    return [future.result() for future in futures]
