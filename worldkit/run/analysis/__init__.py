"""The WorkWorlds paper's statistical analysis on any set of criterion executions.

- `executions`: result rows as arrays, and whether they support a contrast at all;
- `gee`: the logistic GEE (condition + agent, exchangeable, task clusters), standardized;
- `bootstrap`: task-cluster resampling (GEE refits in worker processes; raw count sums);
- `raw`: equal task weighting, leave-one-task-out, unknown-label recoding, curators, agents;
- `packets`: the curated packets' characteristics (the paper's Table 1);
- `analyze`: all of it for each source of rows.

Imports only the models and results layers below it; never the CLI.
"""

from worldkit.run.analysis.analyze import DEFAULT_REPLICATES, DEFAULT_SEED, analyze
from worldkit.run.analysis.models import Analysis

__all__ = ["DEFAULT_REPLICATES", "DEFAULT_SEED", "Analysis", "analyze"]
