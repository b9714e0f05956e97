"""`worldkit report` over a packet campaign: two scripted models through ReAct-FC and the
text-only baselines on one packet of each family, twice each, print Tables 3, 4, 10, 11, 12,
13, 16 and Figure 2's data (and the figure in --html); Avg only over all three families."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.jira_export import write_jira_export
from tests.func.scripted_organizer import Models
from tests.scripted_chat import ScriptedChat
from worldkit._cli.main import run

REPO = Path(__file__).resolve().parents[2]
THREAD_FIXTURE_MANIFEST = REPO / "manifests" / "infoorg" / "thread-fixture.json"

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("restore_check_registry")]


def build_three_families(root: Path, shared_data: Path) -> dict[str, Path]:
    """One packet of each family: Thread from the fixture export, Design and Recap from the shared data."""
    sources = {"thread": write_jira_export(root / "export"), "design": shared_data / "kep", "recap": shared_data / "ami"}
    found = {}
    for family, source in sources.items():
        extra = ["--manifest", str(THREAD_FIXTURE_MANIFEST)] if family == "thread" else []
        assert run(["infoorg", "build", "--family", family, "--source", str(source), "--out", str(root / family),
                    "--tasks", "1", *extra]) == 0
        found[family] = root / family / f"{family}-001"
    return found


@pytest.fixture(scope="module")
def packets(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> dict[str, Path]:
    return build_three_families(tmp_path_factory.mktemp("families"), shared_data)


def test_report_of_a_packet_campaign_prints_every_table(capsys, packets: dict[str, Path], tmp_path: Path) -> None:
    models = Models(list(packets.values()))
    with ScriptedChat(models.reply) as chat:
        agents = "".join(f"  - {{agent: openai:{m}, options: {{base_url: '{chat.url}'}}}}\n" for m in ("model-a", "model-b"))
        agents += "".join(f"  - {{agent: {b}}}\n" for b in ("baseline:silhouette", "baseline:random", "baseline:random:1"))
        design = tmp_path / "design.yaml"
        design.write_text("tasks: [" + ", ".join(str(p) for p in packets.values()) + "]\n"
                          f"agents:\n{agents}conditions: {{full: 2}}\nseed: 1\n")
        code = run(["campaign", "run", str(design), "--out", str(tmp_path / "c"), "--workers", "2"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith("30 planned, 30 done, 0 failed")

    html = tmp_path / "report.html"
    assert run(["report", str(tmp_path / "c"), "--html", str(html)]) == 0
    text, err = capsys.readouterr()
    assert err == f"wrote {html}\n"
    for title in ("Table 3:", "Table 4:", "Table 10:", "Table 11:", "Table 12:", "Table 13:", "Table 16:", "Figure 2 data:"):
        assert title in text, title
    lines = text.splitlines()
    assert any(line.split()[:3] == ["model-a", "ReAct-FC", "Vote"] and line.split()[3] == "100.0" for line in lines)
    # Table 3: Model and Harness as two columns; Avg over the three families.
    row_a = next(line for line in lines if line.startswith("model-a") and "ReAct-FC" in line)
    assert row_a.split()[:2] == ["model-a", "ReAct-FC"] and row_a.split()[-1] == "100.0"
    assert "no Avg" not in text
    # Table 11 ranks model-a first; Table 12 averages random shape over the two seeds run and says five are wanted.
    assert "random shape: 2–2 seed(s) per task, Table 12 averages 5" in text
    assert any(line.startswith("Silhouette") for line in lines) and any(line.startswith("Random shape") for line in lines)

    assert run(["report", str(tmp_path / "c"), "--json"]) == 0
    tables = json.loads(capsys.readouterr()[0])
    assert tables["runs"] == 30 and tables["failed"] == 0
    rows3 = {(r["model"], r["harness"]): r for r in tables["table3"]}
    assert set(rows3) == {("model-a", "ReAct-FC"), ("model-b", "ReAct-FC")}
    assert rows3[("model-a", "ReAct-FC")]["avg"]["score"] == 100.0
    assert 0 < rows3[("model-b", "ReAct-FC")]["avg"]["score"] < 100
    assert [m["model"] for m in tables["table11"]["models"]] == ["model-a", "model-b"]
    t4 = {(r["model"], r["harness"]): r for r in tables["table4"]}
    assert t4[("model-a", "ReAct-FC")]["repeats"] == 2
    assert t4[("model-a", "ReAct-FC")]["columns"]["all"]["spread"] == 0.0
    assert t4[("model-a", "ReAct-FC")]["columns"]["all"]["consensus"] == 100.0
    # Vote: the agreed co-placements of model-a's two exact runs rebuild the reference; model-b's agree with each
    # other, so its vote scores as they do; both scored against the references the campaign froze.
    assert t4[("model-a", "ReAct-FC")]["columns"]["all"]["vote"] == 100.0
    assert 0 <= t4[("model-b", "ReAct-FC")]["columns"]["all"]["vote"] < 100 and not tables["vote_notes"]
    exact = {(r["family"], r["model"]): r["exact"] for r in tables["table10"]}
    assert all(exact[(f, "model-a")] == 2 for f in ("recap", "thread", "design"))
    assert all(exact[(f, "model-b")] == 0 for f in ("recap", "thread", "design"))
    t16 = tables["table16"]["models"]
    assert set(t16) == {"model-a", "model-b"} and t16["model-a"]["recap"]["ktokens"] > 0
    bars = {(b["family"], b["level"]): b for b in tables["figure2"]}
    # Median over the two models: model-a leaves no leaf triple unresolved, model-b all of them.
    assert bars[("recap", "leaf")]["unresolved"] == 0.5 and bars[("recap", "leaf")]["conflicting"] == 0.0
    assert bars[("recap", "leaf")]["outputs_with_error"] == 0.5  # model-b's two outputs of four
    assert set(tables["table12"]["baselines"]) == {"random", "silhouette"}

    page = html.read_text(encoding="utf-8")
    assert "<svg" in page and "Figure 2" in page and "Table 16" in page

    # One family only: no Avg, and the report says which families are missing.
    assert run(["report", str(tmp_path / "c" / "runs"), "--run-id", _first_run(tmp_path, "thread")]) == 0
    text = capsys.readouterr()[0]
    assert "no Avg, it needs all three families (missing recap, design)" in text

    # Packets moved away from where the design named them: Vote is scored only once --packets shows where they are.
    import shutil

    moved = tmp_path / "moved"
    shutil.move(str(packets["thread"].parent.parent), moved)
    assert run(["report", str(tmp_path / "c"), "--json"]) == 0
    lost = json.loads(capsys.readouterr()[0])
    assert all(c["vote"] is None for config in lost["table4"] for c in config["columns"].values())
    assert len(lost["vote_notes"]) == 3 and all("no packet at" in note for note in lost["vote_notes"])
    assert run(["report", str(tmp_path / "c"), "--json", *(f"--packets={moved / f}" for f in ("recap", "thread", "design"))]) == 0
    found = json.loads(capsys.readouterr()[0])
    assert found["table4"] == tables["table4"] and not found["vote_notes"]

    # A campaign whose plan no longer matches its digest gives no reference to score a Vote with.
    from worldkit.report.infoorg import find_packet_runs, packet_tables

    plan = tmp_path / "c" / "plan.json"
    plan.write_bytes(plan.read_bytes() + b"\n")
    tampered = packet_tables(find_packet_runs([tmp_path / "c"]))
    assert all(c["vote"] is None for config in tampered.table4 for c in config["columns"].values())
    assert tampered.vote_notes == [f"{plan} does not match plan.sha256: its packets' references are not used"]


def _first_run(tmp_path: Path, family: str) -> str:
    results = [json.loads(p.read_bytes()) for p in sorted((tmp_path / "c" / "runs").glob("*/result.json"))]
    return next(r["run_id"] for r in results if r["task_id"].startswith(family) and r["agent"] == "openai:model-a")
