"""Runnable samples that ship with the runtime, such as the sample MCP server (``mcp_server``)."""
