"""`worldkit infoorg build` and `worldkit infoorg baselines` end to end."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.fixtures.jira_export import write_jira_export
from worldkit._cli.main import run

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests" / "infoorg"


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run(["infoorg", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def export(tmp_path: Path) -> Path:
    return write_jira_export(tmp_path / "export")


def test_build_thread_writes_then_matches_its_manifest(capsys, tmp_path: Path, export: Path) -> None:
    manifest = tmp_path / "thread.json"
    code, out, err = cli(capsys, "build", "--family", "thread", "--source", str(export),
                         "--out", str(tmp_path / "a"), "--tasks", "3", "--manifest", str(manifest),
                         "--write-manifest")
    assert (code, err) == (0, "")
    assert out == (f"built 3 thread packets (129 records) in {tmp_path / 'a'}\n"
                   f"manifest {manifest}: written\n")
    code, out, _ = cli(capsys, "build", "--family", "thread", "--source", str(export),
                       "--out", str(tmp_path / "b"), "--tasks", "3", "--manifest", str(manifest))
    assert code == 0 and out.endswith(f"manifest {manifest}: matches\n")
    packet = tmp_path / "b" / "thread-001"
    assert sorted(p.name for p in packet.iterdir()) == ["candidate", "overlay.json", "packet.json", "verifier"]
    assert (packet / "candidate" / "request.md").read_text(encoding="utf-8").startswith(
        "You are organizing a collection of text records")
    assert (packet / "candidate" / "inbox" / "F001.txt").is_file()


def test_build_reports_a_manifest_mismatch(capsys, tmp_path: Path, export: Path) -> None:
    manifest = tmp_path / "thread.json"
    cli(capsys, "build", "--family", "thread", "--source", str(export), "--out",
        str(tmp_path / "a"), "--tasks", "3", "--manifest", str(manifest), "--write-manifest")
    code, out, err = cli(capsys, "build", "--family", "thread", "--source", str(export),
                         "--out", str(tmp_path / "b"), "--tasks", "3", "--seed", "4",
                         "--manifest", str(manifest))
    assert code == 1 and out == ""
    assert err == (f"error: {manifest}: committed for family thread seed 0, built family thread "
                   "seed 4; rebuild from the pinned source with the committed seed, or "
                   "regenerate the manifest with --write-manifest if the change is intended\n")
    assert not (tmp_path / "b").exists()  # a build that fails its manifest check writes nothing
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # and leaves no scratch


def test_a_one_byte_source_change_writes_nothing_over_an_existing_out(
    capsys, tmp_path: Path, export: Path
) -> None:
    manifest = tmp_path / "thread.json"
    out = tmp_path / "packets"
    assert cli(capsys, "build", "--family", "thread", "--source", str(export), "--out", str(out),
               "--tasks", "2", "--manifest", str(manifest), "--write-manifest")[0] == 0
    before = sorted((p.relative_to(out), p.read_bytes()) for p in out.rglob("*") if p.is_file())
    changed = tmp_path / "changed"
    shutil.copytree(export, changed)
    text = sorted((out / "thread-001" / "candidate" / "inbox").glob("*.txt"))[0].read_text(encoding="utf-8")
    word = max(text.split(), key=len).encode("utf-8")  # one byte of a record that is in a packet changes
    (data,) = [p for p in sorted(changed.rglob("*.json")) if word in p.read_bytes()][:1]
    raw = data.read_bytes()
    at = raw.index(word)
    data.write_bytes(raw[:at] + (b"X" if word[:1] != b"X" else b"Y") + raw[at + 1:])
    code, _, err = cli(capsys, "build", "--family", "thread", "--source", str(changed), "--out", str(out),
                       "--tasks", "2", "--manifest", str(manifest), "--force")
    assert code == 1 and "differs in" in err
    assert sorted((p.relative_to(out), p.read_bytes()) for p in out.rglob("*") if p.is_file()) == before
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_build_absent_manifest_and_json(capsys, tmp_path: Path, export: Path) -> None:
    code, out, _ = cli(capsys, "build", "--family", "thread", "--source", str(export), "--out",
                       str(tmp_path / "a"), "--tasks", "2", "--manifest",
                       str(tmp_path / "none.json"), "--json")
    assert code == 0
    result = json.loads(out)
    assert result["manifest_status"] == "absent" and result["tasks"] == 2
    assert set(result) == {"family", "seed", "out", "tasks", "records", "manifest", "manifest_status", "schema_version"}


def test_build_usage_errors(capsys, tmp_path: Path, export: Path) -> None:
    out_dir = tmp_path / "a"
    args = ["build", "--family", "thread", "--source", str(export), "--out", str(out_dir),
            "--tasks", "1", "--manifest", str(tmp_path / "m.json")]
    assert cli(capsys, *args)[0] == 0
    code, _, err = cli(capsys, *args)
    assert code == 2 and err == f"error: {out_dir} is not empty; pass --force to replace the " \
                                "packets in it, or choose another --out\n"
    assert cli(capsys, *args, "--force")[0] == 0
    code, _, err = cli(capsys, "build", "--family", "thread", "--source", str(export), "--out",
                       str(tmp_path / "b"), "--tasks", "9")
    assert code == 3 and "yields only 5 eligible bundles" in err
    code, _, err = cli(capsys, "build", "--family", "recap", "--source", str(tmp_path / "nope"),
                       "--out", str(tmp_path / "c"))
    # A missing --source folder is a usage error (exit 2), named by the option.
    assert code == 2 and "--source" in err and "nope" in err


def test_baselines_table_beside_table_12_and_appendix_f(capsys, export: Path) -> None:
    code, out, err = cli(capsys, "baselines", "--family", "thread", "--source", str(export),
                         "--tasks", "2")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == ("thread: mean Structure Score of the text-only baselines over 2 tasks "
                        "(0-100, λ = 0.2)")
    rows = [re.split(r" {2,}", line.strip()) for line in lines if line.strip() and not line.strip().startswith("─")]
    assert rows[1] == ["baseline", "worldkit", "paper", "diff"]
    assert [row[0] for row in rows[2:6]] == ["Filed flat", "Fixed cuts", "Random shape", "Silhouette"]
    assert rows[2] == ["Filed flat", "0.0", "0.0", "+0.0"]
    assert rows[5][0] == "Silhouette" and rows[5][2] == "34.0" and re.fullmatch(r"[-+][0-9.]+", rows[5][3])
    assert rows[6] == ["Appendix F", "worldkit", "paper"]
    table = {row[0]: row[1:] for row in rows[7:]}
    assert table["silhouette > fixed cuts (tasks)"][1] == "50"
    assert table["silhouette > random mean (tasks)"][1] == "50"
    assert table["silhouette parent groups (mean)"][1] == "7.06"
    assert table["reference parent groups (mean)"][1] == "2.62"
    assert int(table["silhouette > fixed cuts (tasks)"][0]) <= 2


def test_baselines_json_is_the_same_whichever_way_moves_are_applied(capsys, export: Path) -> None:
    results = []
    for apply in ("tree", "mcp", "disk"):
        code, out, _ = cli(capsys, "baselines", "--family", "thread", "--source", str(export),
                           "--tasks", "1", "--apply", apply, "--json")
        assert code == 0
        results.append(json.loads(out))
    assert results[0] == results[1] == results[2]
    assert results[0]["per_task"][0]["task_id"] == "thread-001"


def test_baselines_lambda_and_per_task_file(capsys, export: Path, tmp_path: Path) -> None:
    by_lambda = {}
    for value in ("0", "0.2", "0.4"):
        target = tmp_path / f"per-task-{value}.json"
        code, out, _ = cli(capsys, "baselines", "--family", "thread", "--source", str(export),
                           "--tasks", "2", "--lambda", value, "--per-task", str(target), "--json")
        assert code == 0
        printed, written = json.loads(out), json.loads(target.read_text(encoding="utf-8"))
        # --json output carries the CLI envelope's schema_version; the per-task file is the payload.
        assert printed.pop("schema_version") == 1
        assert printed == written and printed["lambda"] == float(value)
        by_lambda[value] = printed
    assert by_lambda["0"]["paper_S"] == {"flat": 0.0, "silhouette": 37.2}
    assert by_lambda["0.4"]["paper_S"] == {"flat": 0.0, "silhouette": 30.8}
    assert by_lambda["0.2"]["paper_S"]["fixed"] == 16.6
    rows = [by_lambda[v]["per_task"][0] for v in ("0", "0.2", "0.4")]
    assert rows[0]["scores"]["silhouette"] >= rows[1]["scores"]["silhouette"] >= \
        rows[2]["scores"]["silhouette"]
    assert rows[0]["parents"]["flat"] == 1 and rows[0]["reference_parents"] >= 2
    code, _, err = cli(capsys, "baselines", "--family", "thread", "--source", str(export),
                       "--lambda", "1.5")
    assert code == 2 and "--lambda" in err


@pytest.mark.parametrize(("family", "folder"), [("design", "kep"), ("recap", "ami")])
def test_first_tasks_match_the_committed_manifest(
    capsys, tmp_path: Path, shared_data: Path, family: str, folder: str
) -> None:
    code, out, err = cli(capsys, "build", "--family", family, "--source",
                         str(shared_data / folder), "--out", str(tmp_path / "p"), "--tasks", "3",
                         "--manifest", str(MANIFESTS / f"{family}.json"))
    assert (code, err) == (0, "")
    assert out.endswith("matches (the first tasks of the committed manifest)\n")


@pytest.mark.parametrize("command", ["build", "baselines"])
def test_commands_have_help(capsys, command: str) -> None:
    code, out, _ = cli(capsys, command, "--help")
    assert code == 0 and "--family" in out and "--source" in out
