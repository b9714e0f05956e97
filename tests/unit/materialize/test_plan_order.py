"""A projection's plan is in path order whatever order its files were added in, each file's kind and id beside its path."""

from __future__ import annotations

import random

from worldkit.materialize.project import (
    _DOCUMENT,
    _MADE,
    _MAIL,
    _RECORD,
    PlannedFile,
    PlannedFiles,
)


def _made(path: str) -> PlannedFile:
    return PlannedFile(path, "tools", "SEAT-1", lambda: (path.encode(), "2026-01-01T00:00:00"))


def _files(seed: int) -> list[tuple[str, int, object]]:
    files = [(f"files/Drive/{i:03d}.md", _DOCUMENT, f"D-{999 - i}") for i in range(60)]
    files += [(f"records/crm/R-{i}.json", _RECORD, f"R-{i}") for i in range(30)]
    files += [(f"mail/M-{i}.json", _MAIL, f"M-{i}") for i in range(20)]
    files += [("tools.json", _MADE, _made("tools.json")), ("seat.json", _MADE, _made("seat.json"))]
    random.Random(seed).shuffle(files)
    return files


def _plan(files: list[tuple[str, int, object]]) -> PlannedFiles:
    def make(kind: int, key: object, path: str) -> PlannedFile:
        if kind == _MADE:
            return key  # type: ignore[return-value]
        return PlannedFile(path, {_DOCUMENT: "files", _RECORD: "records", _MAIL: "mail"}[kind], key, lambda: (b"", ""))  # type: ignore[arg-type]

    return PlannedFiles.sorted([p for p, _, _ in files], bytearray(k for _, k, _ in files), [x for _, _, x in files], make)


def test_the_plan_is_in_path_order_with_each_files_kind_and_id() -> None:
    files = _files(1)
    plan = _plan(files)
    expected = sorted(files, key=lambda f: f[0])
    assert len(plan) == len(files)
    assert [f.path for f in plan] == [p for p, _, _ in expected]
    by_path = {p: (k, x) for p, k, x in files}
    for planned in plan:
        kind, key = by_path[planned.path]
        assert planned.source == (key.source if kind == _MADE else key)  # type: ignore[union-attr]
    meta = list(plan.meta(0, len(plan)))
    assert meta == [(f.path, f.surface, f.source) for f in plan]
    # A run's columns and a worker's part agree with the whole, at any cut.
    for start, stop in [(0, 7), (7, 50), (50, len(plan)), (3, 3)]:
        paths, surfaces, sources = plan.columns(start, stop)
        assert list(zip(paths, surfaces, sources)) == meta[start:stop]
        assert [f.path for f in plan.part(start, stop)] == paths


def test_the_plan_and_its_digest_do_not_depend_on_the_order_files_were_added() -> None:
    first, second = _plan(_files(1)), _plan(_files(2))
    assert list(first.meta(0, len(first))) == list(second.meta(0, len(second)))
    assert first.digest() == second.digest()
    shorter = _plan(_files(1)[1:])
    assert shorter.digest() != first.digest()
