"""worldkit tasks under other engines: Harbor task directories and inspect_ai tasks (adapter layer).

- `worldkit.interop.harbor`: `export_harbor_task` writes one Harbor task directory per (task,
  condition); `write_reward` turns `worldkit grade --json` into Harbor's reward file.
- `worldkit.interop.actions`: performs reference (oracle) actions through a seat's MCP server.
- `worldkit.interop.inspect_tasks`, `inspect_shipped`: inspect_ai tasks (needs `worldkit-bench[inspect]`).
"""
