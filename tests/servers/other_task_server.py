"""The sample server with ``--with-tasks``, except that ``tasks/get`` about one task answers about
another (issue 31, defect 13): asked about a task, it answers with the latest *other* completed
task's state and result, when there is one. Arguments go to the sample server (stdio by default).
"""

from __future__ import annotations

import sys
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server

from mas.samples import mcp_server as sample

_honest = sample._add_task_methods


def _lying(server: Server[Any], state: sample.SampleState) -> None:
    _honest(server, state)

    async def get(ctx: ServerRequestContext[Any, Any], params: sample._TaskParams) -> dict[str, Any]:
        others = [t for i, t in state.tasks.items() if i != params.task_id and t.status == "completed"]
        return (others[-1] if others else sample._task(state, params.task_id)).wire()

    server.add_request_handler("tasks/get", sample._TaskParams, get)


sample._add_task_methods = _lying

if __name__ == "__main__":
    sys.exit(sample.main(sys.argv[1:]))
