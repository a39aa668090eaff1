"""The runtime's MCP client: one ``MCPToolProvider`` per configured server (``provider.py``).

Its private modules, each used only from within this package (and its tests):

- ``_session.py``: the connection machinery: one SDK session per provider, reconnected on demand.
- ``_stdio.py``: the stdio transport; ``_http_limits.py``: size and depth limits over HTTP.
- ``_oauth.py``: sign-in, token storage and refresh for HTTP servers.
- ``_tasks.py``: long-running tools as MCP tasks; ``_input.py``: server-to-client requests
  during a call, answered by the caller the way input rounds are.
- ``_convert.py``: MCP types to the contract's entries and envelopes, headers, scrubbing.
- ``_lenient_listing.py``: listings that do not match the MCP schema, taken as sent.
- ``_error_kinds.py``: the contract's error kind of each failure; ``_wire.py``: what may go on the wire as JSON.
- ``_server_stderr.py``: a server's stderr as summary lines; ``_loop.py``: the background event loop.

Nothing is imported here, so importing one module does not import the MCP SDK.
"""
