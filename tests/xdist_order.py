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

# From one `-n 2 --durations=200` run of the whole suite under load (5623 s for the session; each
# figure is that run's call + setup divided by 12, the ratio of that session to a quiet one).
LONG: dict[str, float] = {
    "tests/func/test_world_diagnostics_pma.py::test_full_verify_seeded_and_mutations": 47.4,
    "tests/func/test_kill_serve.py::test_thirty_kills_of_the_seat_server_lose_no_answered_call": 46.0,
    "tests/func/test_kill_organizer.py::test_thirty_kills_of_the_organizer_keep_replay_equal_to_disk": 43.5,
    "tests/func/test_world_oncology_regwriting.py::test_verify_seeded_catches_every_applicable_fault": 37.1,
    "tests/func/test_verify_cli.py::test_demo_world_verifies": 19.6,
    "tests/func/test_wheel_install.py::test_the_installed_wheel_finds_the_shipped_worlds_from_an_empty_folder": 18.1,
    "tests/unit/materialize/test_invariants.py::test_killed_materialize_leaves_nothing": 13.8,
    "tests/unit/overlay/test_pharmaco_rubrics.py::test_counterfactuals_grade_as_declared[authority-response]": 12.5,
    "tests/unit/verify/test_verify_mutations_reuse.py::test_the_incremental_campaign_equals_verifying_each_mutation_from_scratch": 10.3,
    "tests/func/test_grade_counterfactuals.py::test_grade_cli_grades_the_counterfactual_workspaces_as_declared[supplier-change-audit]": 10.3,
    "tests/func/test_world_stats_cli.py::test_files_per_seat_grow_with_the_date": 10.1,
    "tests/func/test_campaign_cli.py::test_kill_9_during_a_two_worker_campaign_then_resume": 9.9,
    "tests/func/test_report_paper.py::test_headline_estimates": 8.1,
    "tests/func/test_grade_counterfactuals.py::test_grade_cli_grades_the_counterfactual_workspaces_as_declared[qualification-sweep]": 8.1,
    "tests/func/test_inspect_tasks.py::test_inspect_eval_from_the_command_line_in_any_directory": 7.8,
    "tests/func/test_campaign_cli.py::test_two_hosts_share_one_postgresql_store[postgresql]": 7.7,
    "tests/func/test_infoorg_react_fc.py::test_campaign_over_packets_prints_the_tables": 7.6,
    "tests/func/test_export_harbor_infoorg.py::test_the_oracle_through_the_organizer_sidecar_scores_one": 7.1,
    "tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[records-integrity-full]": 6.6,
    "tests/func/test_verify_cli.py::test_verify_json_shape": 6.5,
    "tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[validation-defense-full]": 6.3,
    "tests/unit/infoorg/test_organizer_sigkill.py::test_the_kill_lands_mid_move_at_least_once": 6.3,
    "tests/func/test_world_stats_cli.py::test_default_date_and_text_output": 6.2,
    "tests/func/test_grade_counterfactuals.py::test_oracle_and_noop_through_run_with_the_facts_judge": 6.1,
    "tests/func/test_verify_cli.py::test_seeded_json": 6.1,
    "tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[overwrap-position-full]": 5.7,
    "tests/unit/verify/test_verify_schedule.py::test_parallel_and_sequential_runs_report_the_same": 5.6,
    "tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[qualification-sweep-full]": 5.5,
    "tests/unit/verify/test_verify_seeded.py::test_every_case_is_caught": 5.4,
    "tests/unit/verify/test_verify_mutations.py::test_every_projection_changing_mutation_is_detected": 5.4,
    "tests/unit/infoorg/test_packets_shared_data.py::test_full_families_rebuild_and_their_spread": 5.3,
    "tests/func/test_export_harbor.py::test_the_oracle_solution_through_the_http_sidecar_earns_full_reward": 5.2,
    "tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[stability-update-curated:curator-1]": 5.2,
    "tests/func/test_world_stats_cli.py::test_pharmaco_demo_stats_json": 5.1,
    "tests/unit/verify/test_verify_mutations.py::test_same_seed_same_campaign": 5.0,
    "tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[stability-update-full]": 4.7,
    "tests/func/test_world_oncology_regwriting.py::test_verify_passes": 4.6,
    "tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[validation-defense-curated:curator-2]": 4.5,
    "tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[stability-update-curated:curator-2]": 4.5,
    "tests/func/test_infoorg_build_cli.py::test_first_tasks_match_the_committed_manifest[design-kep]": 4.4,
    "tests/func/test_serve_cli.py::test_a_second_server_with_the_same_run_id_refuses_to_start": 4.2,
    "tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[validation-defense-curated:curator-1]": 4.2,
    "tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[records-integrity-curated:curator-2]": 4.1,
    "tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[authority-response-full]": 4.1,
    "tests/unit/verify/test_verify_mutations_reuse.py::test_without_overlays_too": 4.0,
    "tests/func/test_report_store.py::test_a_store_reports_exactly_what_its_run_folders_do[postgresql]": 4.0,
    "tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[records-integrity-curated:curator-1]": 4.0,
    "tests/unit/infoorg/test_packets_shared_data.py::test_first_tasks_equal_the_committed_manifest[design]": 3.9,
    "tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[authority-response-curated:curator-1]": 3.9,
    "tests/unit/world/test_pharmaco_demo.py::test_nothing_rendered_names_a_later_day[date2]": 3.8,
    "tests/func/test_export_cli.py::test_report_on_real_runs": 3.8,
    "tests/func/test_campaign_cli.py::test_a_finished_campaign_restarted_runs_nothing_and_a_busy_folder_is_refused": 3.7,
    "tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[authority-response-curated:curator-2]": 3.7,
    "tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[overwrap-position-curated:curator-1]": 3.7,
    "tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[overwrap-position-curated:curator-2]": 3.6,
    "tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[supplier-change-audit-curated:curator-2]": 3.6,
    "tests/func/test_world_clinical_site.py::test_full_verify_passes": 3.6,
    "tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[supplier-change-audit-full]": 3.6,
    "tests/unit/world/test_pharmaco_dates.py::test_two_quiet_dates_differ_only_in_the_seat_card": 3.6,
    "tests/func/test_run_pharmaco_demo.py::test_oracle_and_noop[shelf-life-assessment-curated:curator-2]": 3.5,
    "tests/func/test_schema_files.py::test_every_shipped_yaml_names_its_schema_on_its_first_line_and_fits_it": 3.5,
    "tests/func/test_world_new_cli.py::test_new_world_verifies_at_once_and_catches_every_seeded_fault": 3.4,
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
