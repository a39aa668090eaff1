"""Code mode: agents write Python against a generated package's tools (docs/code-mode.md).

- ``core.py``: ``CodeMode`` (``api``, ``search``, ``check``, ``run``), the sandbox and the stubs' index.
- ``server.py``: code mode as an MCP server (``search_tools``, ``run_code``).
- ``_cli.py``: ``mas-runtime code check|run`` and ``mas-runtime serve --code-mode``.
"""

from mas.runtime.code_mode.core import *  # noqa: F403  (core's __all__: CodeMode, CodeRun, Diagnostic, the limits...)
