"""The MCP memory server (`memstore mcp`)."""
