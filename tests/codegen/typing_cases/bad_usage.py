"""Misuses that mypy --strict and pyright (strict) must reject, each on a line marked ``# expect-error``.

Copied by tests/codegen/test_shim.py next to a verbatim ``_runtime/`` copy; the test asserts
that both checkers report errors on exactly the marked lines (so the typing check can fail).
"""

from __future__ import annotations

from typing import Any

from . import _runtime as _rt


class NoCallTool:
    def run(self, tool_name: str, arguments: dict[str, Any]) -> object:
        return None


class WrongArgumentType:
    def call_tool(self, tool_name: int, arguments: dict[str, Any]) -> object:
        return None


class RequiredExtraKeyword:
    def call_tool(self, tool_name: str, arguments: dict[str, Any], *, token: str) -> object:
        return None


class TooFewParameters:
    def call_tool(self, tool_name: str) -> object:
        return None


def misuse() -> None:
    _rt.ToolsBase(NoCallTool())  # expect-error
    _rt.ToolsBase(WrongArgumentType())  # expect-error
    _rt.ToolsBase(RequiredExtraKeyword())  # expect-error
    _rt.AsyncToolsBase(TooFewParameters())  # expect-error
    tools = _rt.ToolsBase(_rt_provider())
    tools.with_options(timeout_seconds="soon")  # expect-error
    tools.with_options(retries="3")  # expect-error
    _rt.ToolsBase(_rt_provider(), {"timeout": 1.0})  # expect-error
    info: _rt.ToolInfo[float] = _rt.ToolInfo(name="x", method="x")  # expect-error
    text: str = _rt.decode_result(_float_info(), {"result": 1}).value  # expect-error
    print(info, text)


def _rt_provider() -> _rt.SupportsCallTool:
    raise NotImplementedError


def _float_info() -> _rt.ToolInfo[float]:
    raise NotImplementedError
