"""Deprecated call sites (PEP 702) in the package generated from the sample server before and after
``--drift upgrade`` (``keep_removed_tools = 1``) and tests/fixtures/upgrades/deprecations.json; the
test snapshots every diagnostic: the marked lines and nothing else (not the package itself)."""

from __future__ import annotations

from upgraded import AsyncTools, Tools


def deprecated_calls(tools: Tools) -> None:
    tools.idx.current(key="a")
    tools.idx.search(query="q")
    tools.idx.search(query="q", page_size=3)
    tools.idx.search(query="q", limit=3)  # deprecated parameter (the overload that takes it)
    tools.idx.old_lookup(key="k")  # deprecated tool
    tools.results.idx.old_lookup(key="k")  # deprecated tool, whole result
    tools.tasks.idx.search(query="q", limit=3)  # deprecated parameter, as a task
    tools.sample.search_docs(query="q")
    tools.sample.search_docs(query="q", limit=3)  # parameter the live server marked deprecated
    tools.sample.whoami()  # tool the server removed, kept by keep_removed_tools


async def deprecated_async_calls(tools: AsyncTools) -> None:
    await tools.sample.whoami()  # kept removed tool, async
    await tools.idx.old_lookup(key="k")  # deprecated tool, async
