"""MCP servers: thin adapters that expose worldkit library functions as tools to agents."""
