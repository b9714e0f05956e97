"""Grading: a captured run's criteria graded, its semantic criteria judged, its evidence access labelled.

- `grading`: capture a run's final state and grade it into an execution record (the one path
  behind `run`, `regrade`, `grade` and `judge-batch`);
- `judge`: the `Judge` Protocol, what a judge is shown, and the registry (`facts` offline);
- `llm_judge`: the `openai` judge over an endpoint of its own (`worldkit.chat`);
- `access`: evidence-access labels from the event log (accessed / not accessed / unknown).

May import `record`, `mcp`, `overlay` and the layers below; never `agents`, `run`, `campaign`,
`analysis`, `report`, `verify`, `interop` or the CLI.
"""
