"""The 98-tool capture: mcp-atlassian's ``tools/list``, as ``benchmarks/captures/mcp-atlassian.json``.

Run ``python benchmarks/atlassian.py`` to refresh it (``--check`` only compares). The published
server (``tests/old_sdk.py``, ``PUBLISHED["mcp-atlassian"]``: an exact version, in a cached venv of
its own) is started over stdio with dummy settings that point at 127.0.0.1: it lists its tools
without reaching anything (listing needs only a URL and a token per service; nothing is called).
``TOOLSETS=all`` lists every tool, and ``PYTHONHASHSEED=0`` fixes the order of the one default it
rebuilds from a set at every start (docs/drift.md), so a refresh is byte-identical.
The tools are kept as listed, in their order; the file is JSON with sorted keys.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CAPTURE = HERE / "captures" / "mcp-atlassian.json"
#: Enough for the server to list Jira's and Confluence's tools; 127.0.0.1:9 (discard) answers nothing.
DUMMY_ENV = {
    "JIRA_URL": "http://127.0.0.1:9",
    "JIRA_PERSONAL_TOKEN": "not-a-token",
    "CONFLUENCE_URL": "http://127.0.0.1:9/wiki",
    "CONFLUENCE_PERSONAL_TOKEN": "not-a-token",
    "TOOLSETS": "all",
    "PYTHONHASHSEED": "0",
}


def server_command() -> list[str]:
    """The published server's console script, from its cached venv (made on first use)."""
    sys.path.insert(0, str(HERE.parent / "tests"))
    from old_sdk import published_python

    return [str(published_python("mcp-atlassian").parent / "mcp-atlassian")]


async def listing(command: list[str], home: Path) -> list[dict[str, Any]]:
    """Every tool the server lists (all pages), as JSON data."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.types import PaginatedRequestParams

    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), **DUMMY_ENV}
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    tools: list[dict[str, Any]] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await asyncio.wait_for(session.initialize(), 60)
        cursor = None
        while True:
            params_ = PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await asyncio.wait_for(session.list_tools(params=params_), 60)
            tools += [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in page.tools]
            cursor = page.next_cursor
            if not cursor:
                return tools


def render(tools: list[dict[str, Any]]) -> str:
    return json.dumps({"tools": tools}, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="compare with the capture; write nothing")
    args = parser.parse_args(argv)
    import tempfile

    with tempfile.TemporaryDirectory() as home:
        text = render(asyncio.run(listing(server_command(), Path(home))))
    if args.check:
        same = CAPTURE.is_file() and CAPTURE.read_text(encoding="utf-8") == text
        print(f"{CAPTURE.relative_to(HERE.parent)}: {'up to date' if same else 'differs from the server'}")
        return 0 if same else 1
    CAPTURE.parent.mkdir(exist_ok=True)
    CAPTURE.write_text(text, encoding="utf-8")
    print(f"{CAPTURE.relative_to(HERE.parent)}: {len(json.loads(text)['tools'])} tools")
    return 0


if __name__ == "__main__":
    sys.exit(main())
