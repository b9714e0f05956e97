"""Every task of every shipped world as an inspect_ai task: `inspect eval worldkit/<id with _>`.

Generated from the shipped overlays by `python -m worldkit.interop.inspect_tasks --write` (a test keeps
it current); the entry point `inspect_ai` names this module, so importing it registers these tasks and
`worldkit/task` and `worldkit/infoorg` (worldkit.interop.inspect_tasks). `-T world=W` looks for the
same overlay id in another world's overlays; `-T condition`, `-T judge` and `-T runs` as for any task.
(`reachable` makes each also `worldkit/<name>` in a checkout, where inspect adds no package prefix.)
"""

from __future__ import annotations

from inspect_ai import Task, task

from worldkit.interop.inspect_tasks import PHARMACO_TASKS, infoorg_task, overlay_task, reachable, shipped_task

__all__ = ["PHARMACO_TASKS", "SHIPPED", "infoorg_task", "overlay_task"]

SHIPPED: dict[str, str] = {
    "activation-readiness": "clinical_site",
    "analytical-summary": "diagnostics_pma",
    "authority-response": "pharmaco_demo",
    "clinical-performance": "diagnostics_pma",
    "consent-version-status": "clinical_site",
    "delegation-training-check": "clinical_site",
    "ild-warning": "oncology_regwriting",
    "label-comments-tracker": "oncology_regwriting",
    "label-efficacy-update": "oncology_regwriting",
    "labeling-review": "diagnostics_pma",
    "lot-disposition": "diagnostics_pma",
    "overwrap-position": "pharmaco_demo",
    "qualification-sweep": "pharmaco_demo",
    "records-integrity": "pharmaco_demo",
    "shelf-life-assessment": "pharmaco_demo",
    "stability-update": "pharmaco_demo",
    "supplier-change-audit": "pharmaco_demo",
    "validation-defense": "pharmaco_demo",
}
"""Shipped overlay id → its world."""


@reachable
@task(name="activation_readiness")
def activation_readiness(condition: str = "full", world: str = "clinical_site", judge: str = "none", runs: str = "runs") -> Task:
    """worldkit task activation-readiness of clinical_site, served over MCP and graded by worldkit."""
    return shipped_task("activation-readiness", world, condition, judge, runs)


@reachable
@task(name="analytical_summary")
def analytical_summary(condition: str = "full", world: str = "diagnostics_pma", judge: str = "none", runs: str = "runs") -> Task:
    """worldkit task analytical-summary of diagnostics_pma, served over MCP and graded by worldkit."""
    return shipped_task("analytical-summary", world, condition, judge, runs)


@reachable
@task(name="authority_response")
def authority_response(condition: str = "full", world: str = "pharmaco_demo", judge: str = "none", runs: str = "runs") -> Task:
    """worldkit task authority-response of pharmaco_demo, served over MCP and graded by worldkit."""
    return shipped_task("authority-response", world, condition, judge, runs)


@reachable
@task(name="clinical_performance")
def clinical_performance(condition: str = "full", world: str = "diagnostics_pma", judge: str = "none", runs: str = "runs") -> Task:
    """worldkit task clinical-performance of diagnostics_pma, served over MCP and graded by worldkit."""
    return shipped_task("clinical-performance", world, condition, judge, runs)


@reachable
@task(name="consent_version_status")
def consent_version_status(condition: str = "full", world: str = "clinical_site", judge: str = "none", runs: str = "runs") -> Task:
    """worldkit task consent-version-status of clinical_site, served over MCP and graded by worldkit."""
    return shipped_task("consent-version-status", world, condition, judge, runs)


@reachable
@task(name="delegation_training_check")
def delegation_training_check(condition: str = "full", world: str = "clinical_site", judge: str = "none", runs: str = "runs") -> Task:
    """worldkit task delegation-training-check of clinical_site, served over MCP and graded by worldkit."""
    return shipped_task("delegation-training-check", world, condition, judge, runs)


@reachable
@task(name="ild_warning")
def ild_warning(condition: str = "full", world: str = "oncology_regwriting", judge: str = "none", runs: str = "runs") -> Task:
    """worldkit task ild-warning of oncology_regwriting, served over MCP and graded by worldkit."""
    return shipped_task("ild-warning", world, condition, judge, runs)


@reachable
@task(name="label_comments_tracker")
def label_comments_tracker(condition: str = "full", world: str = "oncology_regwriting", judge: str = "none", runs: str = "runs") -> Task:
    """worldkit task label-comments-tracker of oncology_regwriting, served over MCP and graded by worldkit."""
    return shipped_task("label-comments-tracker", world, condition, judge, runs)


@reachable
@task(name="label_efficacy_update")
def label_efficacy_update(condition: str = "full", world: str = "oncology_regwriting", judge: str = "none", runs: str = "runs") -> Task:
    """worldkit task label-efficacy-update of oncology_regwriting, served over MCP and graded by worldkit."""
    return shipped_task("label-efficacy-update", world, condition, judge, runs)


@reachable
@task(name="labeling_review")
def labeling_review(condition: str = "full", world: str = "diagnostics_pma", judge: str = "none", runs: str = "runs") -> Task:
    """worldkit task labeling-review of diagnostics_pma, served over MCP and graded by worldkit."""
    return shipped_task("labeling-review", world, condition, judge, runs)


@reachable
@task(name="lot_disposition")
def lot_disposition(condition: str = "full", world: str = "diagnostics_pma", judge: str = "none", runs: str = "runs") -> Task:
    """worldkit task lot-disposition of diagnostics_pma, served over MCP and graded by worldkit."""
    return shipped_task("lot-disposition", world, condition, judge, runs)


@reachable
@task(name="overwrap_position")
def overwrap_position(condition: str = "full", world: str = "pharmaco_demo", judge: str = "none", runs: str = "runs") -> Task:
    """worldkit task overwrap-position of pharmaco_demo, served over MCP and graded by worldkit."""
    return shipped_task("overwrap-position", world, condition, judge, runs)


@reachable
@task(name="qualification_sweep")
def qualification_sweep(condition: str = "full", world: str = "pharmaco_demo", judge: str = "none", runs: str = "runs") -> Task:
    """worldkit task qualification-sweep of pharmaco_demo, served over MCP and graded by worldkit."""
    return shipped_task("qualification-sweep", world, condition, judge, runs)


@reachable
@task(name="records_integrity")
def records_integrity(condition: str = "full", world: str = "pharmaco_demo", judge: str = "none", runs: str = "runs") -> Task:
    """worldkit task records-integrity of pharmaco_demo, served over MCP and graded by worldkit."""
    return shipped_task("records-integrity", world, condition, judge, runs)


@reachable
@task(name="shelf_life_assessment")
def shelf_life_assessment(condition: str = "full", world: str = "pharmaco_demo", judge: str = "none", runs: str = "runs") -> Task:
    """worldkit task shelf-life-assessment of pharmaco_demo, served over MCP and graded by worldkit."""
    return shipped_task("shelf-life-assessment", world, condition, judge, runs)


@reachable
@task(name="stability_update")
def stability_update(condition: str = "full", world: str = "pharmaco_demo", judge: str = "none", runs: str = "runs") -> Task:
    """worldkit task stability-update of pharmaco_demo, served over MCP and graded by worldkit."""
    return shipped_task("stability-update", world, condition, judge, runs)


@reachable
@task(name="supplier_change_audit")
def supplier_change_audit(condition: str = "full", world: str = "pharmaco_demo", judge: str = "none", runs: str = "runs") -> Task:
    """worldkit task supplier-change-audit of pharmaco_demo, served over MCP and graded by worldkit."""
    return shipped_task("supplier-change-audit", world, condition, judge, runs)


@reachable
@task(name="validation_defense")
def validation_defense(condition: str = "full", world: str = "pharmaco_demo", judge: str = "none", runs: str = "runs") -> Task:
    """worldkit task validation-defense of pharmaco_demo, served over MCP and graded by worldkit."""
    return shipped_task("validation-defense", world, condition, judge, runs)
