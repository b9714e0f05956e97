"""The paper's human audit (WorkWorlds Appendix D) as a workflow over a campaign's run folders.

- `sample`: a stratified, blinded sample of criterion executions and access labels, written as
  one coding sheet per coder (CSV and .xlsx) and a sealed key (`worldkit audit sample`);
- `sheets`: writing the sheets and reading them back once filled;
- `score`: inter-coder agreement, Cohen's κ, Gwet's AC1 (task-cluster bootstrap intervals) and
  each coder's agreement with the automated verdicts and labels (`worldkit audit score`).

May import `run`, `grade`, `record` and the layers below; never `campaign`, `analysis`,
`report`, `verify`, `interop` or the CLI.
"""

from worldkit.audit.sample import AuditSample, draw_sample
from worldkit.audit.score import AuditScore, score_audit

__all__ = ["AuditSample", "AuditScore", "draw_sample", "score_audit"]
