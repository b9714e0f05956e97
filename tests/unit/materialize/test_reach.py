"""What a shared file is rendered from, and the mutation oracle's re-render of only what a change reaches."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from tests.builders import WorldSpec
from worldkit.materialize.project import plan_projection
from worldkit.materialize.reach import ANY, TracingRenderer, change_between
from worldkit.render import Renderer
from worldkit.timeline import as_of
from worldkit.verify import freeze_world
from worldkit.verify.inject import edit_changeset
from worldkit.verify.mutations import Reach, changed_views, revision_digests, views
from worldkit.verify.scratch import ScratchCopy
from worldkit.world import load_world

DAY = dt.date(2025, 7, 1)


def _spec() -> WorldSpec:
    spec = WorldSpec()
    spec.templates.update({
        "status.md.j2": "# {{ world.records['CC-1'].title }}: {{ world.records['CC-1'].status }}\n"
                        "{% include 'footer.md.j2' %}",
        "footer.md.j2": "Filed by {{ world.people['P2'].name }}.\n",
        "index.md.j2": "{% for d in world.documents.values() %}- {{ d.title }}\n{% endfor %}",
    })
    spec.data["documents"] += [
        {"id": "D-STATUS", "path": "Notes/status.md", "system": "drive", "template": "status.md.j2",
         "visible_from": "2025-05-01"},
        {"id": "D-INDEX", "path": "Notes/index.md", "system": "drive", "template": "index.md.j2",
         "visible_from": "2025-05-01"},
    ]
    return spec


def _reads(world: Path, rev: str = "r1") -> tuple[dict, dict]:
    state = load_world(world).revision(rev)
    snap = as_of(state, DAY)
    tracer, plain = TracingRenderer(snap), Renderer(snap)
    texts = {d.id: (tracer.document_text(d), plain.document_text(d)) for d in snap.documents.values()}
    return {d: tracer.reads("files", d) for d in snap.documents}, texts


def test_the_tracing_renderer_renders_the_same_text_and_notes_what_it_read(tmp_path: Path) -> None:
    reads, texts = _reads(_spec().write(tmp_path / "mini"))
    assert all(traced == plain for traced, plain in texts.values())
    status = reads["D-STATUS"]
    assert {("documents", "D-STATUS"), ("records", "CC-1"), ("people", "P2")} <= status.entities
    assert status.templates == {"status.md.j2", "footer.md.j2"} and not status.whole
    assert "documents" in reads["D-INDEX"].whole  # iterating a collection reads all of it
    assert reads["D-NOTE"].whole == {"company"}  # departments live in the company
    assert reads["D-SOP"] == type(reads["D-SOP"])(frozenset({("documents", "D-SOP")}), frozenset(), frozenset())
    assert ANY not in set().union(*(r.whole for r in reads.values()))


def test_a_change_reaches_exactly_the_files_that_read_it(tmp_path: Path) -> None:
    world = _spec().write(tmp_path / "mini")
    reads, _ = _reads(world)
    before = load_world(world).revision("r1")
    edit_changeset(world, "r1", update={"records": [{"id": "CC-1", "set": {"title": "Widen window"}}]})
    change = change_between(before, load_world(world).revision("r1"))
    assert change.entities == {("records", "CC-1")}
    assert {d for d, r in reads.items() if change.reaches(r)} == {"D-STATUS"}
    edit_changeset(world, "r1", update={"people": [{"id": "P2", "set": {"name": "Quinn Q. A."}}]})
    change = change_between(before, load_world(world).revision("r1"))
    assert {d for d, r in reads.items() if change.reaches(r)} == {"D-STATUS"}


def test_the_oracle_renders_only_what_a_mutation_reaches_and_agrees_with_a_full_render(
        tmp_path: Path, monkeypatch) -> None:  # fmt: skip
    from worldkit.materialize import project

    world = _spec().write(tmp_path / "src" / "mini")
    manifests = tmp_path / "manifests" / "mini"
    freeze_world(world, [DAY.isoformat()], manifests=manifests)
    base = ScratchCopy.make(tmp_path / "base", world, "mini", manifests, None)
    package = load_world(base.world)
    keys = sorted((rev, DAY.isoformat(), seat) for rev in package.revision_names for seat in package.revision(rev).seats)
    before = views(base.world, keys)
    assert isinstance(before, dict)
    reach, digests = Reach.of(package, before), revision_digests(package)
    rendered: list[str] = []
    real = project.PlannedFile.produce
    monkeypatch.setattr(project.PlannedFile, "produce", lambda self: rendered.append(self.path) or real(self))
    edits = [
        {"records": [{"id": "CC-1", "set": {"title": "Widen window"}}]},
        {"people": [{"id": "P2", "set": {"name": "Quinn Q. A."}}]},
        {"documents": [{"id": "D-NOTE", "set": {"visible_from": "2025-08-01"}}]},
        {"permissions": [{"id": "R-QMS", "set": {"subject": {"everyone": True}}}]},
        {"messages": [{"id": "M1", "set": {"subject": "Hello again"}}]},
    ]
    for n, edit in enumerate(edits):
        copy = base.clone(tmp_path / f"m{n}")
        edit_changeset(copy.world, "r1", update=edit)
        rendered.clear()
        incremental = changed_views(before, copy.world, digests, reach)
        shared = {p for p in rendered if p not in ("tools.json", "seat.json", "records/_relations.json")}
        assert incremental == changed_views(before, copy.world), edit
        if "records" in edit:
            assert shared == {"files/Shared/Notes/status.md", "records/qms/CC-1.json"}
        if "permissions" in edit:
            assert shared == set() and incremental  # new files in a view, none of them rendered anew
    assert changed_views(before, base.clone(tmp_path / "same").world, digests, reach) == []
