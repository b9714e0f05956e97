"""Design and Recap packets from ../shared/data rebuild to the committed manifests.

Fast tests build the first few tasks (they must equal the committed manifest's first tasks);
one slow test builds both families in full and checks the family-level figures of issue 18.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from pathlib import Path

import pytest

from worldkit.infoorg.identical import identical_pairs
from worldkit.infoorg.packets import build_packets, compare_manifest, family_manifest
from worldkit.infoorg.sources.ami import is_placeholder
from worldkit.infoorg.sources.kep import load_keps, names_owner_or_proposal

MANIFESTS = Path(__file__).resolve().parents[3] / "manifests" / "infoorg"
FEW = 4


def record_sets(packets) -> list[set[str]]:
    return [{e.source for e in p.reference.records.values()} for p in packets]


def texts(packet) -> dict[str, str]:
    return {rid: packet.candidate[f"inbox/{rid}.txt"].decode("utf-8")
            for rid in packet.reference.records}


@pytest.fixture(scope="module")
def design(shared_data: Path):
    return build_packets("design", shared_data / "kep", FEW)


@pytest.fixture(scope="module")
def recap(shared_data: Path):
    return build_packets("recap", shared_data / "ami", FEW)


@pytest.mark.parametrize("family", ["design", "recap"])
def test_first_tasks_equal_the_committed_manifest(family: str, request) -> None:
    packets = request.getfixturevalue(family)
    built = family_manifest(family, 0, packets)  # type: ignore[arg-type]
    assert compare_manifest(built, MANIFESTS / f"{family}.json") == "prefix-match"


def check_design(packets, keps) -> None:
    uses: Counter[str] = Counter()
    for packet in packets:
        paths = Counter(entry.path for entry in packet.reference.records.values())
        assert len(paths) == 12 and set(paths.values()) == {3}
        assert len({sig for sig, _ in paths}) == 4
        uses.update(f"{sig}/{kep}" for sig, kep in paths)
        for rid, text in texts(packet).items():
            entry = packet.reference.records[rid]
            assert 400 <= len(text) <= 1600
            assert not names_owner_or_proposal(keps["/".join(entry.path)], text)
            # excerpt hygiene (issue 18): no link residue, template checklists or bare answers
            assert "](" not in text and not re.search(r"^\s*(?:[-*]\s*)?\[[ xX]\]", text, re.M)
            assert not re.search(r"^(?:None|N/A|TBD)\.?$", text, re.M | re.I)
    assert max(uses.values()) <= 3
    for a, b in itertools.combinations(record_sets(packets), 2):
        assert len(a & b) <= 18


def check_recap(packets) -> None:
    for packet in packets:
        assert 40 <= packet.info.record_count <= 60
        assert len({e.path[0] for e in packet.reference.records.values()}) >= 2
        assert not any(is_placeholder(text) for text in texts(packet).values())
    for a, b in itertools.combinations(record_sets(packets), 2):
        assert len(a & b) / min(len(a), len(b)) <= 0.5


def test_design_packets_follow_the_recipe(design, shared_data: Path) -> None:
    check_design(design, {kep.kep_id: kep for kep in load_keps(shared_data / "kep")})


def test_recap_packets_follow_the_recipe(recap) -> None:
    check_recap(recap)


@pytest.mark.slow
def test_full_families_rebuild_and_their_spread(shared_data: Path) -> None:
    """All 50 + 50 tasks: byte-equal manifests and the figures reported for issue 18."""
    design = build_packets("design", shared_data / "kep", 50)
    recap = build_packets("recap", shared_data / "ami", 50)
    for family, packets in (("design", design), ("recap", recap)):
        built = family_manifest(family, 0, packets).to_bytes()  # type: ignore[arg-type]
        assert built == (MANIFESTS / f"{family}.json").read_bytes()
    check_design(design, {kep.kep_id: kep for kep in load_keps(shared_data / "kep")})
    check_recap(recap)
    owners = {e.path[0] for p in design for e in p.reference.records.values()}
    proposals = {e.path for p in design for e in p.reference.records.values()}
    assert (len(owners), len(proposals)) == (19, 300)  # paper: 16 owners, 294 proposals
    busiest = Counter(sig for p in design for sig in {e.path[0] for e in p.reference.records.values()})
    assert max(busiest.values()) == 20  # sig-node; no owner in (nearly) every task (was 48)
    assert sum(p.info.record_count for p in recap) == 2471  # paper: 2,436
    assert len({e.path[0] for p in recap for e in p.reference.records.values()}) == 136  # 124
    assert len({e.path for p in recap for e in p.reference.records.values()}) == 489  # 450
    # Table 15: Design packets hold no identical records; a few Recap packets do (paper: 5).
    assert not any(identical_pairs(p.reference.paths(), texts(p)) for p in design)
    assert sum(bool(identical_pairs(p.reference.paths(), texts(p))) for p in recap) == 6
