"""The report as one self-contained HTML page: the paper's Figure 3 panels (inline SVG drawn
with matplotlib), every table, and the provenance of what it shows. No scripts, no external
resources; the bytes depend only on the report.
"""

from __future__ import annotations

import jinja2
from markupsafe import Markup

from worldkit import __version__
from worldkit.analysis.small_sample import MANCL_METHOD
from worldkit.report.build import (
    Report,
    analysis_reasons,
    analysis_specs,
    report_tables,
)
from worldkit.report.figures import figure_panels

__all__ = ["render_html"]

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>worldkit report</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:2em auto;
max-width:80em;padding:0 1.5em;color:#222;line-height:1.4}
h1{margin-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}
table{border-collapse:collapse;margin:0 0 1.5em;font-size:.9em}
caption{text-align:left;font-weight:bold;padding:.3em 0}
th,td{padding:.2em .7em;border-bottom:1px solid #e4e4e4;text-align:right;vertical-align:top}
th:first-child,td:first-child,.text2 th:nth-child(2),.text2 td:nth-child(2){text-align:left}
.panels{display:grid;grid-template-columns:repeat(auto-fill,minmax(30em,1fr));gap:1.2em 2em}
figure{margin:0}figcaption{font-size:.85em;color:#444;margin-bottom:.3em}
figure svg{max-width:100%;height:auto}
.note{color:#7a3b00}
dl.prov{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em;font-size:.9em}
dl.prov dt{font-weight:bold}dl.prov dd{margin:0;font-family:ui-monospace,monospace;
word-break:break-all}
</style></head>
<body><h1>worldkit report</h1>
<p>Made by worldkit {{ version }}. Differences are curated minus full, in percentage points.
Criterion pass and sufficient-evidence access are GEE-standardized marginal probabilities
(logistic GEE with condition and agent, exchangeable working correlation, task clusters);
pass given access is descriptive; access uses observable labels; intervals are 95%
task-cluster bootstrap intervals{% if mancl %}, and, as asked with <code>--interval mancl</code>, 95%
small-sample-corrected intervals (mancl: {{ mancl }}), in the panels under the bootstrap
interval and in their own table{% endif %}.</p>
{% for line in reasons %}<p class="note">{{ line }}</p>
{% endfor %}
{% for source, panels in figures %}<h2>Figure panels: {{ source }}</h2>
<div class="panels">{% for caption, svg in panels %}
<figure><figcaption>{{ caption }}</figcaption>{{ svg }}</figure>{% endfor %}
</div>
{% endfor %}
<h2>Tables</h2>
{% for title, header, rows in tables %}<table{% if header[1] == "Condition" %} class="text2"{% endif %}><caption>{{ title }}</caption>
<thead><tr>{% for cell in header %}<th>{{ cell }}</th>{% endfor %}</tr></thead><tbody>
{% for row in rows %}<tr>{% for cell in row %}<td>{{ cell }}</td>{% endfor %}</tr>
{% endfor %}</tbody></table>
{% endfor %}
{% if provenance %}<h2>Provenance</h2>
{% for p in provenance %}<h3>{{ p.source }} ({{ p.kind }})</h3><dl class="prov">
<dt>worldkit</dt><dd>{{ p.worldkit }}</dd>
{% if p.stores %}<dt>read from store</dt><dd>{{ p.stores | join(", ") }}</dd>{% endif %}
{% if p.worlds %}<dt>world@revision</dt><dd>{{ p.worlds | join(", ") }}</dd>{% endif %}
{% if p.revision_digests %}<dt>revision digests</dt><dd>{{ p.revision_digests | join(", ") }}</dd>{% endif %}
{% for overlay, digest in p.overlays.items() %}<dt>overlay {{ overlay }}</dt><dd>{{ digest }}</dd>
{% endfor %}{% if p.fingerprints %}<dt>projection fingerprints</dt><dd>{{ p.fingerprints | join(", ") }}</dd>{% endif %}
{% for name, digest in p.files.items() %}<dt>{{ name }}</dt><dd>sha256 {{ digest }}</dd>
{% endfor %}<dt>judge</dt><dd>{{ p.judges | join(", ") if p.judges else "none recorded (semantic criteria ungraded)" }}</dd>
{% if p.calibrations %}<dt>judge calibration</dt><dd>{{ p.calibrations | join("; ") }}</dd>{% endif %}
<dt>agents</dt><dd>{{ p.agents | join(", ") }}</dd>
<dt>runs ({{ p.run_ids | length }})</dt><dd>{{ p.run_ids | join(", ") }}</dd>
</dl>
{% endfor %}{% endif %}
</body></html>
"""


def _figures(report: Report) -> list[tuple[str, list[tuple[str, Markup]]]]:
    out = []
    multiple = len(report.analyses) > 1
    for analysis in report.analyses:
        if analysis.reason is not None:
            continue
        columns = [c for c in report.columns
                   if not multiple or c.rsplit(" ", 1)[0] == analysis.source]
        summaries = [report.overall[c] for c in columns]
        joint = [[s.accessed_pass, s.accessed_fail, s.not_accessed_pass, s.not_accessed_fail]
                 for s in summaries]
        burden = [[s.inspections.mean, s.tool_calls.mean, s.tool_calls_before_first_access.mean]
                  for s in summaries]
        names = [c.rsplit(" ", 1)[-1] for c in columns]
        robust = {e.outcome: (e.lower, e.upper) for e in report.small_sample
                  if e.source == analysis.source and e.lower is not None and e.upper is not None}
        panels = figure_panels(analysis, report.task_labels, names, joint, burden, robust)
        out.append((analysis.source, [(caption, Markup(svg)) for caption, svg in panels]))
    return out


def render_html(report: Report) -> str:
    """A self-contained HTML page: figure panels, tables and provenance, no scripts."""
    environment = jinja2.Environment(autoescape=True, keep_trailing_newline=True,
                                     undefined=jinja2.StrictUndefined)
    return environment.from_string(_PAGE).render(
        version=__version__, reasons=analysis_reasons(report), figures=_figures(report),
        mancl=MANCL_METHOD if report.small_sample else "",
        tables=report_tables(report) + analysis_specs(report), provenance=report.provenance)
