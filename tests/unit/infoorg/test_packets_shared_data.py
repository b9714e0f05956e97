"""50 Design and 50 Recap packets from ../shared/data rebuild to the committed manifests."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pytest

from worldkit.infoorg.packets import build_packets, family_manifest
from worldkit.infoorg.sources.kep import load_keps, names_owner_or_proposal

MANIFESTS = Path(__file__).resolve().parents[3] / "manifests" / "infoorg"


def record_sets(packets) -> list[set[str]]:
    return [{e.source for e in p.reference.records.values()} for p in packets]


@pytest.fixture(scope="module")
def design(shared_data: Path):
    return build_packets("design", shared_data / "kep", 50)


@pytest.fixture(scope="module")
def recap(shared_data: Path):
    return build_packets("recap", shared_data / "ami", 50)


@pytest.mark.parametrize("family", ["design", "recap"])
def test_rebuild_reproduces_the_committed_manifest(family: str, request) -> None:
    packets = request.getfixturevalue(family)
    built = family_manifest(family, 0, packets).to_bytes()  # type: ignore[arg-type]
    assert built == (MANIFESTS / f"{family}.json").read_bytes()


def test_design_packets_follow_the_recipe(design, shared_data: Path) -> None:
    keps = {kep.kep_id: kep for kep in load_keps(shared_data / "kep")}
    uses: Counter[str] = Counter()
    for packet in design:
        paths = Counter(entry.path for entry in packet.reference.records.values())
        assert len(paths) == 12 and set(paths.values()) == {3}
        assert len({sig for sig, _ in paths}) == 4
        uses.update(f"{sig}/{kep}" for sig, kep in paths)
        for rid, entry in packet.reference.records.items():
            text = packet.candidate[f"inbox/{rid}.txt"].decode("utf-8")
            assert 400 <= len(text) <= 1600
            assert not names_owner_or_proposal(keps["/".join(entry.path)], text)
    assert max(uses.values()) <= 3
    for a, b in itertools.combinations(record_sets(design), 2):
        assert len(a & b) <= 18


def test_recap_packets_follow_the_recipe(recap) -> None:
    for packet in recap:
        assert 40 <= packet.info.record_count <= 60
        assert len({e.path[0] for e in packet.reference.records.values()}) >= 2
    for a, b in itertools.combinations(record_sets(recap), 2):
        assert len(a & b) / min(len(a), len(b)) <= 0.5
