"""The WorkWorlds paper's statistical analysis on any set of criterion executions.

- `executions`: result rows as arrays, and whether they support a contrast at all;
- `gee`: the logistic GEE (condition + agent, exchangeable, task clusters), standardized;
- `bootstrap`: task-cluster resampling (GEE refits in worker processes; raw count sums);
- `raw`: equal task weighting, leave-one-task-out, unknown-label recoding, curators, agents;
- `packets`: the curated packets' characteristics (the paper's Table 1);
- `analyze`: all of it for each source of rows.

- `ledgers`: the public WorkWorlds ledgers in; `export`: worldkit's runs out as such a ledger;
- `overlay_packets`: Table 1 for worldkit's own runs.

May import `campaign` (an export follows a campaign's plan), `run`, `record` and below; never
`report`, `verify`, `interop` or the CLI.
"""

from worldkit.analysis.analyze import DEFAULT_REPLICATES, DEFAULT_SEED, analyze
from worldkit.analysis.models import Analysis

__all__ = ["DEFAULT_REPLICATES", "DEFAULT_SEED", "Analysis", "analyze"]
