"""Every JSON output carries `schema_version`, and `worldkit schema` exports the shapes it can check."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.fixtures.overlays.paths import GOOD
from worldkit._cli.main import run

pytestmark = pytest.mark.usefixtures("fixture_overlays_on_path")


def _json(capsys, argv: list[str], code: int = 0) -> dict:
    assert run(argv) == code, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def schemas(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    out = tmp_path_factory.mktemp("schemas")
    assert run(["schema", "--out", str(out)]) == 0
    return {p.name.removesuffix(".schema.json"): json.loads(p.read_text()) for p in out.glob("*.schema.json")}


def _check(schema: dict, value: dict) -> None:
    jsonschema.validators.validator_for(schema)(schema).validate(value)


def test_every_schema_names_its_dialect_and_id(schemas: dict[str, dict]) -> None:
    assert {"execution-record", "report", "verify-output", "log-list", "log-verify", "world", "overlay"} <= set(schemas)
    for name, schema in schemas.items():
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["$id"] == f"urn:worldkit:schema:{name}"
        jsonschema.validators.validator_for(schema).check_schema(schema)


def test_run_record_regrade_log_and_report_outputs_match_their_schemas(
    capsys, tmp_path: Path, schemas: dict[str, dict]
) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    summary = _json(capsys, ["run", "--overlay", str(GOOD), "--agent", "oracle", "--out", str(tmp_path / "runs"),
                             "--store", store, "--json"])
    assert summary["schema_version"] == 1
    _check(schemas["run-output"], summary)
    with pytest.raises(jsonschema.ValidationError):
        _check(schemas["run-output"], {**summary, "criteria": {"C1": "passed"}})
    record_path = Path(summary["record"])
    record = json.loads(record_path.read_text())
    _check(schemas["execution-record"], record)
    broken = {**record, "schema_version": 99}
    with pytest.raises(jsonschema.ValidationError):
        _check(schemas["execution-record"], broken)

    assert _json(capsys, ["regrade", str(record_path.parent), "--json"])["schema_version"] == 1
    verified = _json(capsys, ["log", "verify", summary["run_id"], "--store", store, "--json"])
    _check(schemas["log-verify"], verified)
    with pytest.raises(jsonschema.ValidationError):
        _check(schemas["log-verify"], {k: v for k, v in verified.items() if k != "head_hash"})
    listed = _json(capsys, ["log", "list", "--store", store, "--json"])
    _check(schemas["log-list"], listed)
    assert listed["schema_version"] == 1 and len(listed["runs"]) == 1

    report = _json(capsys, ["report", str(tmp_path / "runs"), "--json"])
    _check(schemas["report"], report)
    assert report["schema_version"] == 2  # the report keeps its own version


def test_verify_output_matches_its_schema(capsys, schemas: dict[str, dict]) -> None:
    report = _json(capsys, ["verify", "--world", "pharmaco_demo", "--only", "revision-digests", "--json"])
    assert report["schema_version"] == 1
    _check(schemas["verify-output"], report)
    with pytest.raises(jsonschema.ValidationError):
        _check(schemas["verify-output"], {**report, "checks": [{"id": "x"}]})


def test_materialize_output_matches_its_schema(capsys, tmp_path: Path, schemas: dict[str, dict]) -> None:
    from tests.builders import WorldSpec

    world = WorldSpec().write(tmp_path / "world")
    made = _json(capsys, ["materialize", "--world", str(world), "--rev", "r1", "--date", "2025-07-01", "--seat", "S1",
                          "--out", str(tmp_path / "p"), "--json"])
    _check(schemas["materialize-output"], made)
    assert made["schema_version"] == 1 and made["files"] > 0
    with pytest.raises(jsonschema.ValidationError):
        _check(schemas["materialize-output"], {k: v for k, v in made.items() if k != "fingerprint"})
