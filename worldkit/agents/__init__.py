"""Agents: what works a task through the seat's tools, behind one Protocol with a registry.

- `registry`: the `Agent` Protocol, `register_agent`, the entry-point registry, and the built-in
  offline agents (`noop`, `oracle`);
- `session`: the agent's side of the tools (`ToolSession`, over an MCP client session);
- `openai_agent`: an agent over any OpenAI-compatible chat endpoint (`worldkit.chat`);
- `infoorg`: InfoOrgBench's ReAct-FC harness and its text-only baselines as agents.

May import the layers below it (`grade`, `record`, `mcp`, `infoorg`, `overlay`, …) and
`worldkit.chat`; never `run`, `campaign`, `analysis`, `report`, `verify`, `interop` or the CLI.
An agent never sees grading material: it gets the request and a `ToolSession`, nothing else.
"""
