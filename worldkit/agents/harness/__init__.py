"""Public agent harnesses (paper Table 7) run as their own processes against worldkit's tools.

A harness adapter is an `Agent`: it serves the run's `ToolSession` (the organizer, or a seat's
tools) over MCP streamable HTTP on 127.0.0.1 (`bridge`), starts the real harness pointed at an
OpenAI-compatible endpoint and at that MCP server, and reads back what the harness reports. Every
tool call still goes through the run's own server, so it is logged like any other agent's.
"""
