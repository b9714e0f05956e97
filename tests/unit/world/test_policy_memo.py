"""The policy decides items alike in every field its rules read once (`Policy._decided`): each
decision equals the one made item by item, in every world shipped, for every person, document and
record; an item shared with someone, or on a system a rule matches by path, is decided on its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit.access import Policy
from worldkit.world import load_world

WORLDS = sorted(p.name for p in (Path(__file__).parents[3] / "worlds").iterdir() if (p / "world.yaml").is_file())


class _NothingMemoized(set):
    """A `_pathless` that never holds a system: every decision read item by item."""

    def add(self, item: object) -> None:
        pass


def _item_by_item(state: object) -> Policy:
    policy = Policy(state)  # type: ignore[arg-type]
    policy._pathless = _NothingMemoized()
    return policy


@pytest.mark.parametrize("world", WORLDS)
def test_every_decision_equals_the_one_made_item_by_item(world: str) -> None:
    package = load_world(world)
    state = package.revision(package.revision_names[-1])
    memo, plain = Policy(state), _item_by_item(state)
    for person in state.people:
        for doc in state.documents.values():
            assert memo.document(person, doc) == plain.document(person, doc), (person, doc.id)
        for rec in state.records.values():
            assert memo.record(person, rec) == plain.record(person, rec), (person, rec.id)
    assert memo._decided  # the memo was used


def test_owner_path_and_shares_each_decide(tmp_path: Path) -> None:
    spec = WorldSpec()
    spec.data["permissions"].append({"id": "R-QA-PATH", "description": "QA reads Shared/QA", "subject": {"roles": ["hr"]},
                                     "resource": {"systems": ["drive"], "path_prefixes": ["QA/"]}})
    base = {"system": "desk", "text": "x\n", "visible_from": "2025-01-01"}
    spec.data["documents"] += [
        {**base, "id": "D-OWN-1", "path": "P1/a.md", "owner": "P1"},
        {**base, "id": "D-OWN-2", "path": "P2/a.md", "owner": "P2"},
        {**base, "id": "D-SHARED", "path": "P2/b.md", "owner": "P2", "shared_with": [{"persons": ["P1"]}]},
        {**base, "id": "D-QA", "path": "QA/c.md", "system": "drive", "classification": "confidential"},
        {**base, "id": "D-QB", "path": "QB/c.md", "system": "drive", "classification": "confidential"},
    ]
    state = load_world(spec.write(tmp_path / "worlds" / "mini")).revision("r1")
    policy, docs = Policy(state), state.documents
    assert policy.document("P1", docs["D-OWN-1"]) is not None and policy.document("P1", docs["D-OWN-2"]) is None
    assert policy.document("P1", docs["D-SHARED"]).reason == "share"  # same fields as D-OWN-2 but for the share
    assert policy.document("P4", docs["D-QA"]).reason == "rule:R-QA-PATH" and policy.document("P4", docs["D-QB"]) is None
    assert policy.document("P1", docs["D-QA"]) is None
