"""Run one logged `move_files` in this process and SIGKILL it at a named step of the move.

Used by `test_kill_organizer_steps.py` as a subprocess:
`python tests/func/organizer_kill_driver.py PACKET WORKSPACE STORE RUN STEP IDS DEST`. Steps:
`journal` (the plan is durable, nothing renamed), `rename-N` (after the N-th rename), `logged`
(the move's event is stored, the journal not yet dropped), `dropped` (the move finished; the server
dies before closing its log). The kill is a real `kill -9` of this process at that instant.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path


def main(packet: str, workspace: str, store_url: str, run_id: str, step: str, ids: str, dest: str) -> None:
    from worldkit.infoorg import organizer as library
    from worldkit.infoorg.overlays import inbox_inventory
    from worldkit.mcp.organizer import EventMoveLog
    from worldkit.mcp.session import open_run
    from worldkit.store import Store

    def die_at(name: str) -> None:
        if name == step:
            os.kill(os.getpid(), signal.SIGKILL)

    write, rename, committed = library._write_durably, os.rename, EventMoveLog.committed
    renames = [0]

    def write_then(path: Path, data: bytes) -> None:
        write(path, data)
        if path.name == "journal.json":
            die_at("journal")

    def rename_then(source: object, dest: object) -> None:
        rename(source, dest)  # type: ignore[arg-type]
        renames[0] += 1
        die_at(f"rename-{renames[0]}")

    def committed_then(self: EventMoveLog, result: object, plan: object) -> None:
        committed(self, result, plan)  # type: ignore[arg-type]
        die_at("logged")

    library._write_durably = write_then  # type: ignore[assignment]
    os.rename = rename_then  # type: ignore[assignment]
    EventMoveLog.committed = committed_then  # type: ignore[method-assign]
    with Store.open(store_url) as store:
        log = open_run(store, run_id, "EMP-ORG-001")
        organizer = library.Organizer(
            Path(workspace), inventory=inbox_inventory(Path(packet)), move_log=EventMoveLog(log)
        )
        organizer.move_files(ids.split(","), dest.split("/"))
        die_at("dropped")
    raise SystemExit(f"step {step!r} was never reached")


if __name__ == "__main__":
    main(*sys.argv[1:])
