"""Reports: the paper's tables, the HTML page with its figures, and where the rows came from.

- `build`: result rows → the report (pass, access, pass given access, joint counts, search
  burden; by condition, packet, task, agent) as text and JSON;
- `analysis_tables`: the analysis (`worldkit.analysis`) as titled tables;
- `html`, `figures`: one self-contained HTML page with the Figure 3 panels (matplotlib SVG);
- `provenance`: which runs, worlds and judges a report shows;
- `records`: execution records gathered from run folders and stores;
- `infoorg`: InfoOrgBench results in the paper's Table 3 and Table 13 layouts.

May import `analysis`, `campaign`, `run`, `record` and below; never `verify`, `interop` or the CLI.
"""
