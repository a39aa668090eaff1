"""Subscriptions in the generated package: ``tools.<source>.resources.subscribe(uri)`` (sync and
async), generated from the sample server with ``--with-resources --with-subscriptions`` (a real
process) and run through the runtime registry; a server that cannot be subscribed to raises the
package's error of that kind. Only the shim that packages with a surface carry changed: golden
trees of servers without resources are untouched (tests/codegen/test_golden.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import forked_python, generate, import_fresh

from mas.runtime.registry import RuntimeRegistry

COUNTER = "sample://counter"


def _infra(folder: Path, name: str, *flags: str) -> Path:
    run = forked_python("-m", "mas.samples.mcp_server", *flags)
    server = {"name": "sample", "protocol": "mcp", "transport": "stdio", **run, "connect_timeout_seconds": 30}
    path = folder / name
    path.write_text(json.dumps({"kind": "ToolServerRegistry", "spec": {"servers": [server]}}), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("subscribe")
    infra = _infra(folder, "infra.yaml", "--with-resources", "--with-subscriptions")
    args = ["--infra", str(infra), "--out", "out", "--package", "sp", "--lock", "toolgen.lock.json", "-q"]
    assert generate(folder, args) == 0
    return folder


def test_the_package_subscribes_sync_and_async_and_refusals_raise_their_kind(generated: Path) -> None:
    package = import_fresh(generated / "out", "sp")
    with RuntimeRegistry.from_sources(infra=[generated / "infra.yaml"]) as registry:
        tools = package.Tools(registry)
        assert tools.sample.resources.counter().text == "0"
        with tools.sample.resources.subscribe(COUNTER, max_queued=2) as sub:
            tools.sample.bump_counter(times=3)
            first = sub.get(10)
            assert first is not None and first.uri == COUNTER
            assert tools.sample.resources.counter().text == "3"  # an update says: read it again

        async def awaited() -> Any:
            atools = package.AsyncTools(registry)
            async with await atools.sample.resources.subscribe(COUNTER) as asub:
                await atools.sample.bump_counter()
                return await asub.aget(10)

        update = asyncio.run(awaited())
        assert update is not None and update.uri == COUNTER
    plain = _infra(generated, "plain.yaml", "--with-resources")  # no resources.subscribe declared
    with RuntimeRegistry.from_sources(infra=[plain]) as registry:
        tools = package.Tools(registry)
        with pytest.raises(package.ToolProtocolError, match="does not declare resources.subscribe"):
            tools.sample.resources.subscribe("sample://guide")

        async def refused() -> None:
            await package.AsyncTools(registry).sample.resources.subscribe("sample://guide")

        with pytest.raises(package.ToolProtocolError):
            asyncio.run(refused())
