"""`worldkit infoorg score` and `score-trees` end to end: JSON, tables, errors and exit codes."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from worldkit._cli.main import run
from worldkit.infoorg.reference import Reference, ReferenceRecord

D3_REFERENCE = {
    "a": ["A", "X"], "b": ["A", "X"], "c": ["A", "X"], "d": ["B", "Y"], "e": ["B", "Y"],
    "f": ["B", "Z"], "g": ["B", "Z"],
}  # fmt: skip
D3_OUTPUT = dict(D3_REFERENCE, a=["A", "Xa"], b=["A", "Xa"], c=["A", "Xb"])

D3_TABLE = """\
valid         yes
records       7
S             100.00
F1_bal        100.00  (recall 100.00, precision 100.00)
E             100.00  (penalty 0.00)
triplet F1    98.55
category      both
clade F1      88.89
exact         no

level          g        o        m   agreed conflict    unres
parent        30       30       30       30        0        0
leaf           4        4        4        4        0        0
2              0        1        0        0        0        0
unsupported refinement: 1 triples
"""


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run(["infoorg", *args])
    out, err = capsys.readouterr()
    return code, out, err


def write(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, Path]:
    return write(tmp_path / "ref.json", D3_REFERENCE), write(tmp_path / "out.json", D3_OUTPUT)


def test_score_trees_json(capsys, trees) -> None:
    code, out, err = cli(capsys, "score-trees", str(trees[0]), str(trees[1]), "--json")
    assert code == 0 and err == ""
    result = json.loads(out)
    assert result["S"] == 1.0 and result["f1_bal"] == 1.0 and result["E"] == 1.0
    assert result["clade_f1"] == pytest.approx(8 / 9) and result["exact"] is False
    assert result["category"] == "both"
    assert result["triplet_f1"] == pytest.approx(2 * (34 / 35) / (1 + 34 / 35))
    assert result["levels"]["0"] == {
        "g": 30, "o": 30, "m": 30, "agreed": 30, "conflicting": 0, "unresolved": 0
    }  # fmt: skip
    assert result["levels"]["1"]["g"] == 4 and result["levels"]["2"]["o"] == 1


def test_score_trees_table(capsys, trees) -> None:
    code, out, err = cli(capsys, "score-trees", str(trees[0]), str(trees[1]))
    assert (code, out, err) == (0, D3_TABLE, "")


def test_an_invalid_output_prints_s_zero_and_exits_1(capsys, tmp_path, trees) -> None:
    bad = write(tmp_path / "bad.json", dict(D3_OUTPUT, a=["A", "X1"]))
    code, out, err = cli(capsys, "score-trees", str(trees[0]), str(bad), "--json")
    assert code == 1
    assert json.loads(out)["S"] == 0.0 and json.loads(out)["valid"] is False
    assert err == (
        f"error: {bad} is not a valid output, so S = 0: record a: folder name 'X1' looks like a "
        "record id (a capital letter followed by digits); rename the folder\n"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"a": ', "not valid JSON (line 1, column 7: Expecting value)"),
        ('["a"]', "the top level is a JSON list; expected an object"),
        ("{}", "holds no records; add at least one record id"),
        ('{"a": "A/X"}', 'record a: the path must be a list of folder-name strings (got "A/X")'),
        ('{"a": ["A"], "b": ["A", 3]}', 'record b: the path must be a list of folder-name strings (got ["A", 3])'),
        ('{"a": ["A"], "b": [["A"]]}', 'record b: the path must be a list of folder-name strings (got [["A"]])'),
        ('{"a": ["A"], "": ["B"]}', "a record id is empty; give every record an id"),
    ],
)
def test_malformed_files_exit_3_naming_the_file(capsys, tmp_path, trees, content, message) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text(content)
    code, out, err = cli(capsys, "score-trees", str(trees[0]), str(broken))
    assert code == 3 and out == ""
    assert err.startswith(f"error: {broken}: {message}")


def test_a_bad_reference_name_exits_3(capsys, tmp_path, trees) -> None:
    ref = write(tmp_path / "r.json", dict(D3_REFERENCE, a=["A", "X1"]))
    code, _, err = cli(capsys, "score-trees", str(ref), str(trees[1]))
    assert code == 3
    assert err == (
        f"error: {ref}: reference record a: folder name 'X1' looks like a record id (a capital "
        "letter followed by digits); fix the reference hierarchy\n"
    )


def test_a_missing_file_exits_3(capsys, tmp_path, trees) -> None:
    code, _, err = cli(capsys, "score-trees", str(tmp_path / "nope.json"), str(trees[1]))
    assert code == 3 and "nope.json: file not found" in err


# ---- score --packet --workspace ---------------------------------------------------------------


def make_packet(root: Path) -> Path:
    packet = root / "packet"
    (packet / "candidate" / "inbox").mkdir(parents=True)
    (packet / "verifier").mkdir()
    records = {}
    for i, path in enumerate([("m1", "s1"), ("m1", "s1"), ("m1", "s2"), ("m2", "s1")], start=1):
        data = f"sentence {i}\n".encode()
        (packet / "candidate" / "inbox" / f"F00{i}.txt").write_bytes(data)
        records[f"F00{i}"] = ReferenceRecord(
            path=path, sha256=hashlib.sha256(data).hexdigest(), source="fixture"
        )
    reference = Reference(schema_version=1, records=records)
    (packet / "verifier" / "reference.json").write_text(reference.canonical_json())
    return packet


def test_score_a_workspace(capsys, tmp_path) -> None:
    packet = make_packet(tmp_path)
    ws = tmp_path / "ws"
    shutil.copytree(packet / "candidate", ws)
    for record, folder in {"F001": "a/b", "F002": "a/b", "F003": "a/c", "F004": "d"}.items():
        (ws / folder).mkdir(parents=True, exist_ok=True)
        (ws / "inbox" / f"{record}.txt").rename(ws / folder / f"{record}.txt")
    code, out, err = cli(capsys, "score", "--packet", str(packet), "--workspace", str(ws), "--json")
    assert (code, err) == (0, "")
    result = json.loads(out)
    assert result["valid"] and result["S"] == pytest.approx(1.0) and result["category"] == "both"


def test_score_an_invalid_workspace(capsys, tmp_path) -> None:
    packet = make_packet(tmp_path)
    ws = tmp_path / "ws"
    shutil.copytree(packet / "candidate", ws)
    (ws / "inbox" / "F002.txt").write_text("changed")
    code, out, err = cli(capsys, "score", "--packet", str(packet), "--workspace", str(ws))
    assert code == 1
    assert out.startswith("valid         no\nrecords       4\nS             0.00\nproblems:\n")
    assert err == (
        f"error: workspace {ws} is not a valid output, so S = 0: record F002 at inbox/F002.txt "
        "does not match its original bytes; records must not be edited\n"
    )


def test_score_needs_existing_directories(capsys, tmp_path) -> None:
    code, _, err = cli(
        capsys, "score", "--packet", str(tmp_path / "p"), "--workspace", str(tmp_path)
    )
    assert code == 2
    missing = tmp_path / "p"
    assert err == f"error: --packet {missing} is not a directory; pass an existing directory\n"


def test_a_packet_without_reference_exits_3(capsys, tmp_path) -> None:
    code, _, err = cli(capsys, "score", "--packet", str(tmp_path), "--workspace", str(tmp_path))
    assert code == 3 and "no reference found" in err and "verifier/reference.json" in err


@pytest.mark.parametrize("command", [["score"], ["score-trees"], []])
def test_every_infoorg_scoring_command_has_help(capsys, command) -> None:
    code = run(["infoorg", *command, "--help"])
    out, _ = capsys.readouterr()
    assert code == 0 and "Usage:" in out and len(out) > 200


@pytest.mark.parametrize("which", [0, 1])
def test_a_record_given_twice_exits_3_naming_it(capsys, tmp_path, trees, which: int) -> None:
    doubled = tmp_path / "doubled.json"
    doubled.write_text('{"a": ["A", "X"], "b": ["A", "X"], "c": ["A", "X"], "d": ["B", "Y"], '
                       '"e": ["B", "Y"], "f": ["B", "Z"], "g": ["B", "Z"], "c": ["B", "Z"]}',
                       encoding="utf-8")
    args = [str(doubled), str(trees[1])] if which == 0 else [str(trees[0]), str(doubled)]
    code, out, err = cli(capsys, "score-trees", *args)
    assert (code, out) == (3, "")
    assert err == (f"error: {doubled}: record c is given more than once; a hierarchy lists each "
                   "record id once — keep one entry for it\n")


def test_lambda_option_scales_only_the_economy(capsys, tmp_path) -> None:
    reference = write(tmp_path / "ref.json", {"a": ["P", "x"], "b": ["P", "x"], "c": ["Q", "y"],
                                              "d": ["Q", "y"]})
    # One extra single-child shell above a and b: u(O) - u(R) = 1, n(O) = 6 folders.
    output = write(tmp_path / "out.json", {"a": ["P", "x", "s"], "b": ["P", "x", "s"],
                                           "c": ["Q", "y"], "d": ["Q", "y"]})
    results = {}
    for value in ("0", "0.2", "0.4"):
        code, out, _ = cli(capsys, "score-trees", str(reference), str(output), "--json",
                           "--lambda", value)
        assert code == 0
        results[value] = json.loads(out)
    assert results["0"]["E"] == 1.0
    assert results["0.2"]["E"] == pytest.approx(1 - 0.2 * 1 / 6)
    assert results["0.4"]["E"] == pytest.approx(1 - 0.4 * 1 / 6)
    assert {r["f1_bal"] for r in results.values()} == {results["0"]["f1_bal"]}
    code, _, err = cli(capsys, "score-trees", str(reference), str(output), "--lambda", "-1")
    assert code == 2 and "--lambda" in err


def test_score_trees_skips_the_cli_toolkit_and_prints_the_same(capsys, trees) -> None:
    """The plain form is scored without typer/click/pydantic; every other form goes through
    typer, and both print the same thing."""
    import subprocess
    import sys

    from worldkit._cli.score_trees import score_trees_fast

    probe = (
        "import sys\nfrom worldkit._cli.main import run\n"
        f"code = run(['infoorg', 'score-trees', {str(trees[0])!r}, {str(trees[1])!r}, '--json'])\n"
        "print(code, sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'click', "
        "'rich', 'sqlalchemy', 'pydantic', 'numpy')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, cwd=Path(__file__).resolve().parents[2])
    assert done.stdout.splitlines()[-1] == "0 []"
    assert score_trees_fast(["r", "o", "--lambda=0.4", "--json"]) == (Path("r"), Path("o"), True, 0.4)
    for other in (["r", "o", "--help"], ["r", "o", "--lambda", "2"], ["r"], ["r", "o", "--x"],
                  ["r", "o", "--lambda", "a"], ["r", "o", "--lambda"]):
        assert score_trees_fast(other) is None
    # The same arguments through typer and through the fast path.
    fast = cli(capsys, "score-trees", str(trees[0]), str(trees[1]), "--lambda", "0.4")
    import typer

    from worldkit._cli import infoorg_group, infoorg_score

    app = typer.Typer()
    infoorg_group.register(app)
    infoorg_score.register(app)
    typer.main.get_command(app).main(
        args=["infoorg", "score-trees", str(trees[0]), str(trees[1]), "--lambda", "0.4"],
        standalone_mode=False)
    assert fast == (0, capsys.readouterr().out, "")
    code, _, err = cli(capsys, "score-trees", str(trees[0]), str(trees[1]), "--lambda", "2")
    assert code == 2 and "Invalid value for --lambda" in err.replace("'", "")


SCORE_TREES_BUDGET = 25
"""Modules `python -X importtime -m worldkit infoorg score-trees REF OUT --json` may import beyond
a bare interpreter's (issue 18: ≤ 0.5 s end to end; 18 when this budget was set)."""


def _imported_modules(*argv: str) -> list[str]:
    """The modules a fresh `python -X importtime ARGV` imports, in order."""
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-X", "importtime", *argv], capture_output=True,
                          text=True, env=env, check=True, timeout=120)  # fmt: skip
    return [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
            if line.startswith("import time:")]  # fmt: skip


def test_score_trees_from_the_shell_stays_within_its_import_budget(trees) -> None:
    bare = set(_imported_modules("-c", "pass"))
    modules = _imported_modules("-m", "worldkit", "infoorg", "score-trees", str(trees[0]),
                                str(trees[1]), "--json")  # fmt: skip
    extra = [m for m in modules if m not in bare]
    assert "worldkit.infoorg.structure" in extra  # it did score
    heavy = {"pydantic", "pydantic_core", "numpy", "typer", "click", "rich", "sqlalchemy", "yaml"}
    assert not {m.split(".")[0] for m in extra} & heavy, sorted(extra)
    assert len(extra) <= SCORE_TREES_BUDGET, f"{len(extra)} modules: {extra}"
