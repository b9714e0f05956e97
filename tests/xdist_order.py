"""Longest tests first on every xdist worker (`--dist worksteal`, as `make test` runs).

Worksteal hands worker i the i-th contiguous slice of the collection and, when a worker runs dry,
moves the *tail* of the busiest worker's queue to it: a long test runs where and when its slice
puts it, and one near the end of a slice is the last thing the session waits for. So the collection
is reordered (the same order in every worker, as xdist requires): the long tests are dealt out to
the slices longest first, each to the slice with the least long work so far, and open their
slice; the other tests keep their order and fill the slices. The tests and what they check are
unchanged; only when each one starts.

`LONG` holds about the seconds a test takes on a quiet 2-core machine (`pytest --durations`, setup
included); a test marked `slow` that is not listed counts as `SLOW_DEFAULT` seconds. A key is a
node id, or a node id without its `[parameters]` (then it covers every parameter set).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

SLOW_DEFAULT = 5.0
DIST_KEY = "worldkit_dist"

# From one `-n 2 --durations=60` run of the whole suite under load (1067 s for the session, load 5-7
# from other work; each figure is that run's call + setup divided by 2.25, about the ratio of that
# session to a quiet one). Tests below its 60th entry keep their earlier figure, at most 3.4 s.
# test_report_paper's figure is its module's report, made once per session (tests/session_results.py).
# test_kill_organizer: 40.1 scaled by its CPU after keeping the replayed tree (63.6 s / 74.0 s).
LONG: dict[str, float] = {
    'tests/func/test_kill_serve.py::test_thirty_kills_of_the_seat_server_lose_no_answered_call': 59.6,
    'tests/func/test_kill_organizer.py::test_thirty_kills_of_the_organizer_keep_replay_equal_to_disk': 34.5,
    'tests/func/test_world_diagnostics_pma.py::test_full_verify_seeded_and_mutations': 35.8,
    'tests/func/test_wheel_install.py::test_the_installed_wheel_finds_the_shipped_worlds_from_an_empty_folder': 29.6,
    'tests/func/test_verify_cli.py::test_demo_world_verifies': 26.6,
    'tests/func/test_world_oncology_regwriting.py::test_verify_seeded_catches_every_applicable_fault': 18.2,
    'tests/func/test_export_harbor.py::test_the_oracle_solution_through_the_http_sidecar_earns_full_reward': 14.9,
    'tests/func/test_world_stats_cli.py::test_pharmaco_demo_stats_json': 8.9,
    # issue 44's tests (one quiet run)
    'tests/func/test_authoring_guide.py::test_the_guide_runs_in_order_on_a_fresh_folder': 14.5,
    'tests/func/test_permits_world.py::test_the_permits_office_freezes_and_verifies_clean': 4.7,
    'tests/unit/world/test_pharmaco_dates.py::test_every_seat_twice_in_separate_processes_gives_identical_bytes_and_mtimes': 8.8,
    'tests/func/test_infoorg_react_fc.py::test_campaign_over_packets_prints_the_tables': 8.7,
    'tests/unit/verify/test_verify_mutations.py::test_same_seed_same_campaign': 8.6,
    'tests/unit/world/test_pharmaco_dates.py::test_two_quiet_dates_differ_only_in_the_seat_card': 8.6,
    'tests/func/test_campaign_cli.py::test_a_second_coordinator_of_a_campaign_is_refused[postgresql]': 8.4,
    'tests/func/test_campaign_ray.py::test_a_campaign_on_a_ray_cluster_survives_a_lost_node': 95.0,
    'tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[authority-response-curated:curator-2]': 7.5,
    'tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[shelf-life-assessment-curated:curator-1]': 6.9,
    'tests/func/test_inspect_tasks.py::test_inspect_eval_from_the_command_line_in_any_directory': 6.8,
    'tests/func/test_serve_signals.py::test_the_server_ends_cleanly[sigterm-143]': 6.8,
    'tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[supplier-change-audit-curated:curator-2]': 6.3,
    'tests/func/test_grade_counterfactuals.py::test_grade_cli_grades_the_counterfactual_workspaces_as_declared[qualification-sweep]': 6.2,
    'tests/func/test_report_paper.py::test_headline_estimates': 8.7,
    'tests/unit/infoorg/test_sources_kep.py::test_shared_kep_data': 5.9,
    'tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[stability-update-curated:curator-2]': 5.8,
    'tests/func/test_grade_counterfactuals.py::test_grade_cli_grades_the_counterfactual_workspaces_as_declared[supplier-change-audit]': 5.7,
    'tests/unit/world/test_pharmaco_demo.py::test_nothing_rendered_names_a_later_day[date2]': 5.6,
    'tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[stability-update-full]': 5.5,
    'tests/func/test_campaign_cli.py::test_a_finished_campaign_restarted_runs_nothing_and_a_busy_folder_is_refused': 5.4,
    'tests/func/test_export_harbor.py::test_the_verifier_step_writes_worldkit_grade_as_the_reward[# Triage\\n\\nSOP checked: SOP-002\\nNeeds revision (yes/no): no\\n-False-expected1]': 5.3,
    'tests/unit/world/test_pharmaco_demo.py::test_nothing_rendered_names_a_later_day[date1]': 5.3,
    'tests/func/test_export_harbor_infoorg.py::test_the_oracle_through_the_organizer_sidecar_scores_one': 5.2,
    'tests/func/test_world_stats_cli.py::test_default_date_and_text_output': 5.2,
    'tests/func/test_export_harbor.py::test_a_workspace_changed_outside_the_tools_is_refused_without_a_reward': 5.1,
    'tests/unit/materialize/test_invariants.py::test_killed_materialize_leaves_nothing': 5.1,
    'tests/unit/world/test_pharmaco_dates.py::test_mtimes_are_the_last_change_on_or_before_the_date': 5.1,
    'tests/unit/verify/test_verify_mutations.py::test_the_report_shape': 5.0,
    'tests/func/test_export_harbor.py::test_the_verifier_step_writes_worldkit_grade_as_the_reward[# Triage\\n\\nSOP checked: SOP-001\\nNeeds revision (yes/no): yes\\n-True-expected0]': 4.9,
    'tests/func/test_campaign_cli.py::test_kill_9_during_a_two_worker_campaign_then_resume': 4.8,
    'tests/func/test_inspect_tasks.py::test_a_scripted_mock_model_is_scored_as_worldkit_grade_scores_the_workspace[# Triage\\n\\nSOP checked: SOP-001\\nNeeds revision (yes/no): yes\\n-True-value0]': 4.8,
    'tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[validation-defense-curated:curator-1]': 4.8,
    'tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[qualification-sweep-curated:curator-2]': 4.7,
    'tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[authority-response-full]': 4.6,
    'tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[overwrap-position-curated:curator-1]': 4.6,
    'tests/unit/materialize/test_render_dating.py::test_lazy_as_of_lists_what_the_timeline_folds_on_every_day': 4.5,
    'tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[shelf-life-assessment-curated:curator-2]': 4.3,
    'tests/unit/infoorg/test_scoring_oracle.py::test_fast_equals_oracle_on_1200_random_pairs': 4.3,
    'tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[supplier-change-audit-full]': 4.2,
    'tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[records-integrity-full]': 4.1,
    'tests/func/test_world_clinical_site.py::test_full_verify_passes': 4.1,
    'tests/unit/store/test_eventlog_concurrency.py::test_several_processes_append_to_one_run[postgresql]': 4.1,
    'tests/unit/infoorg/test_organizer_sigkill.py::test_the_kill_lands_mid_move_at_least_once': 4.0,
    'tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[overwrap-position-curated:curator-2]': 3.7,
    'tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[records-integrity-curated:curator-1]': 3.7,
    'tests/func/test_world_clinical_site.py::test_core_verify_checks_pass': 3.6,
    'tests/func/test_export_cli.py::test_report_on_real_runs': 3.5,
    'tests/func/test_grade_counterfactuals.py::test_oracle_and_noop_through_run_with_the_facts_judge': 3.5,
    'tests/func/test_infoorg_build_cli.py::test_first_tasks_match_the_committed_manifest[design-kep]': 3.5,
    'tests/func/test_judge_endpoints.py::test_agent_and_judge_on_their_own_endpoints': 3.5,
    'tests/func/test_report_store.py::test_a_store_reports_exactly_what_its_run_folders_do[postgresql]': 3.5,
    'tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[authority-response-curated:curator-1]': 3.5,
    'tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[overwrap-position-full]': 3.5,
    'tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[qualification-sweep-full]': 3.5,
    'tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[records-integrity-curated:curator-2]': 3.5,
    'tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[stability-update-curated:curator-1]': 3.5,
    'tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[validation-defense-curated:curator-2]': 3.5,
    'tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[validation-defense-full]': 3.5,
    'tests/func/test_schema_files.py::test_every_shipped_yaml_names_its_schema_on_its_first_line_and_fits_it': 3.5,
    'tests/func/test_serve_cli.py::test_a_second_server_with_the_same_run_id_refuses_to_start': 3.5,
    'tests/func/test_serve_signals.py::test_the_server_ends_cleanly[eof-0]': 3.5,
    'tests/func/test_verify_cli.py::test_seeded_json': 3.5,
    'tests/func/test_verify_cli.py::test_verify_json_shape': 3.5,
    'tests/func/test_world_oncology_regwriting.py::test_verify_passes': 3.5,
    'tests/func/test_world_stats_cli.py::test_files_per_seat_grow_with_the_date': 3.5,
    'tests/unit/infoorg/test_packets_shared_data.py::test_design_packets_follow_the_recipe': 3.5,
    'tests/unit/infoorg/test_packets_shared_data.py::test_first_tasks_equal_the_committed_manifest[design]': 3.5,
    'tests/unit/infoorg/test_packets_shared_data.py::test_full_families_rebuild_and_their_spread': 3.5,
    'tests/unit/overlay/test_pharmaco_rubrics.py::test_counterfactuals_grade_as_declared[authority-response]': 3.5,
    'tests/unit/verify/test_verify_mutations.py::test_every_projection_changing_mutation_is_detected': 3.5,
    'tests/unit/verify/test_verify_mutations_reuse.py::test_the_incremental_campaign_equals_verifying_each_mutation_from_scratch': 3.5,
    'tests/unit/verify/test_verify_mutations_reuse.py::test_without_overlays_too': 3.5,
    'tests/unit/verify/test_verify_schedule.py::test_parallel_and_sequential_runs_report_the_same': 3.5,
    'tests/unit/verify/test_verify_seeded.py::test_every_case_is_caught': 3.5,
    'tests/func/test_world_new_cli.py::test_new_world_verifies_at_once_and_catches_every_seeded_fault': 3.4,
}


def weight(item: pytest.Item) -> float:
    nodeid = item.nodeid
    if nodeid in LONG:
        return LONG[nodeid]
    base = nodeid.split("[", 1)[0]
    if base in LONG:
        return LONG[base]
    return SLOW_DEFAULT if item.get_closest_marker("slow") is not None else 0.0


def slice_sizes(count: int, workers: int) -> list[int]:
    """How many tests worksteal's first hand-out gives each worker (`len(pending) // nodes_left`)."""
    sizes = []
    for i in range(workers):
        sizes.append(count // (workers - i))
        count -= sizes[-1]
    return sizes


def order(weights: Sequence[float], workers: int) -> list[int]:
    """A permutation of `range(len(weights))`: per worker slice, its share of the weighted (long)
    indices, longest first, then unweighted ones in their original order."""
    sizes = slice_sizes(len(weights), workers)
    long = sorted((i for i, w in enumerate(weights) if w > 0), key=lambda i: (-weights[i], i))
    dealt: list[list[int]] = [[] for _ in sizes]
    load = [0.0] * len(sizes)
    for i in long:
        open_slices = [s for s in range(len(sizes)) if len(dealt[s]) < sizes[s]]
        target = min(open_slices, key=lambda s: (load[s], s))
        dealt[target].append(i)
        load[target] += weights[i]
    rest = iter(i for i, w in enumerate(weights) if w <= 0)
    result: list[int] = []
    for size, mine in zip(sizes, dealt, strict=True):
        result += mine
        result += [next(rest) for _ in range(size - len(mine))]
    return result


def tell_worker(config: pytest.Config, workerinput: dict) -> None:
    """In the controller: the worker's own config says `--dist no`, so pass it the real mode."""
    workerinput[DIST_KEY] = config.getoption("dist", None)


def reorder(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Reorder `items` in place, in an xdist worker under `--dist worksteal` with 2+ workers."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None or workerinput.get(DIST_KEY) != "worksteal":
        return
    workers = int(workerinput["workercount"])
    if workers < 2 or not items:
        return
    items[:] = [items[i] for i in order([weight(item) for item in items], workers)]
