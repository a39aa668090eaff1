"""Small skill handlers for the contract tests (imported by ``spec.handler``; tests/ is on sys.path)."""

from __future__ import annotations

import asyncio
import time


def sleep_for(secs: float) -> str:
    time.sleep(secs)
    return f"slept {secs}"


async def asleep_for(secs: float) -> str:
    await asyncio.sleep(secs)
    return f"slept {secs}"
