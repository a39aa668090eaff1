"""Runnable samples that ship with the runtime (the sample MCP server lives in ``mcp_server``)."""
