"""Runs, grading and reports: what happened when an agent worked a task, and what it adds up to.

`results` holds the normalized row every report is built from (one row per run × criterion);
`record` is the execution record a run leaves on disk; `ledgers` reads the public WorkWorlds
ledgers into the same rows; `report` turns rows into the paper's tables (text, JSON, HTML).

`runner` runs an agent on a task overlay, `infoorg_packet` on an InfoOrgBench packet
(`infoorg_agent` holds that benchmark's agents).

Nothing here imports the CLI or `verify`. Runs drive the MCP servers (`worldkit.mcp`) in process
and grade from their state, so `mcp` is the layer below this one (pyproject's import-linter
contract: verify → run → mcp → infoorg → frozen → overlay).
"""
