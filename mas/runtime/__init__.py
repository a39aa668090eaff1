"""The ToolContract runtime: one ``call_tool`` path for local tools, YAML skills and MCP servers."""
