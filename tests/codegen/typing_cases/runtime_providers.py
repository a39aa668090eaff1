"""The runtime's own ToolContract satisfies the shim's provider protocols (checked like generated_usage.py).

The typing test puts the repository on the checkers' search path for this one import of ``mas``;
the shim itself never imports ``mas``.
"""

from __future__ import annotations

from mas.runtime.contracts.tool_contract import ToolContract

from . import _runtime as _rt


class Echo(ToolContract):
    name = "echo"


sync_tools = _rt.ToolsBase(Echo())
async_tools = _rt.AsyncToolsBase(Echo())
provider: _rt.SupportsCallTool = Echo()
async_provider: _rt.SupportsAsyncCallTool = Echo()
