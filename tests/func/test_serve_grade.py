"""An outside agent, graded like a built-in one: a Python MCP client drives `worldkit serve --overlay T
--out DIR` (a run folder), then `worldkit grade DIR` turns the session into an execution record."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.fixtures.overlays.paths import TRIAGE
from worldkit._cli.main import run as cli
from worldkit.record.execution import read_record
from worldkit.run.folder import read_run_folder

RIGHT = "# Triage\n\nSOP checked: SOP-001\nNeeds revision (yes/no): yes\n"
WRONG = "# Triage\n\nSOP checked: SOP-002\nNeeds revision (yes/no): no\n"


pytestmark = pytest.mark.usefixtures("fixture_overlays_on_path")


def drive(out: Path, store: str, note: str, *, read_sop: bool) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "worldkit", "serve", "--overlay", str(TRIAGE), "--out", str(out), "--store", store],
        env={"PYTHONPATH": os.pathsep.join(sys.path)},
        cwd=str(out.parent),
    )

    async def agent() -> None:
        async with Client(params) as client:
            assert "write_file" in {t.name for t in (await client.list_tools()).tools}
            if read_sop:
                sop = await client.call_tool("read_file", {"path": "Shared/SOPs/SOP-001.md"})
                assert not sop.is_error
            written = await client.call_tool("write_file", {"path": "triage.md", "content": note})
            assert not written.is_error

    anyio.run(agent)


@pytest.mark.parametrize(("note", "read_sop", "expected", "t1_access"), [
    (RIGHT, True, {"T1": "pass", "T2": "pass", "T3": "ungraded"}, "accessed"),
    (WRONG, False, {"T1": "fail", "T2": "fail", "T3": "ungraded"}, "not_accessed"),
])
def test_an_external_mcp_session_is_graded_from_its_run_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], note: str, read_sop: bool, expected: dict, t1_access: str
) -> None:
    out, store = tmp_path / "session", f"sqlite:///{tmp_path / 'store.db'}"
    drive(out, store, note, read_sop=read_sop)
    folder = read_run_folder(out)  # a complete run folder: package, workspace, log reference
    assert folder.agent == "external" and folder.overlay == "cc1-triage" and folder.store == store
    assert (out / "package" / "package.json").is_file() and (out / "workspace" / "triage.md").read_text() == note
    assert not (out / "execution-record.json").exists()
    capsys.readouterr()
    assert cli(["grade", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["criteria"] == expected and summary["run_id"] == folder.run_id
    assert summary["access"]["T1"] == t1_access
    record = read_record(out / "execution-record.json")
    assert record.agent == "external" and record.run_id == folder.run_id
    assert [e["tool"] for e in record.trajectory] == (["read_file"] if read_sop else []) + ["write_file"]


def test_serve_out_refuses_a_folder_in_use(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x").write_text("x")
    code = cli(["serve", "--overlay", str(TRIAGE), "--out", str(tmp_path / "busy"), "--store", f"sqlite:///{tmp_path / 's.db'}"])
    assert code == 2 and "is not empty; a run folder is staged fresh" in capsys.readouterr().err
