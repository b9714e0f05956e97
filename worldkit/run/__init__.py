"""Runs, grading and reports: what happened when an agent worked a task, and what it adds up to.

`results` holds the normalized row every report is built from (one row per run × criterion);
`record` is the execution record a run leaves on disk; `ledgers` reads the public WorkWorlds
ledgers into the same rows; `report` turns rows into the paper's tables (text, JSON, HTML).

Nothing here imports the CLI or the MCP servers; they are adapters over this package.
"""
