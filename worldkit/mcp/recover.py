"""Settle a killed seat server's workspace with its run's log: the next start's crash recovery.

The seat writes ahead: a `write_file` stages the new bytes in a temp file beside the target,
commits the call's event (with the content and its digest), and only then renames the temp file
into place. A kill -9 can therefore leave one temp file of a dead server, and two cases:

- the event was not committed: the write never happened (no answer, nothing logged); the temp
  file is removed;
- the event was committed but the rename did not run: the log says the file holds the new
  content; the rename is completed.

Which case it is, only the log can say: the last logged write of each file is compared with the
temp file's content and the file on disk (`worldkit.mcp.confine.settle_temp_files`). After this,
replaying the run's log gives exactly the workspace on disk.

This module must never write to the store, and never touch a file the log does not explain.
"""

from __future__ import annotations

from pathlib import Path

from worldkit._model import Model
from worldkit.errors import UsageError
from worldkit.mcp.confine import settle_temp_files
from worldkit.mcp.state import WriteFileChange, parse_change
from worldkit.store import Store, state_changes
from worldkit.store.anchor import LogAnchor

__all__ = ["Recovery", "logged_writes", "recover_workspace"]


class Recovery(Model):
    """What settling a workspace with its run's log did."""


    run_id: str
    """The run whose log decided."""
    workspace: str
    """The workspace folder settled."""
    completed: list[str]
    """Files whose logged write was renamed into place (killed after the event was committed)."""
    removed: list[str]
    """Temp files removed (writes killed before their event was committed)."""

    @property
    def message(self) -> str:
        if not self.completed and not self.removed:
            return f"workspace {self.workspace}: nothing to recover (run {self.run_id})"
        return (
            f"workspace {self.workspace} settled with run {self.run_id}'s log: "
            f"{len(self.completed)} logged write(s) completed ({', '.join(self.completed) or '-'}), "
            f"{len(self.removed)} unlogged temp file(s) removed"
        )


def logged_writes(store: Store, run_id: str, *, anchor: LogAnchor | None = None) -> dict[str, str]:
    """path → SHA-256 of the last logged write of each workspace file (chain verified first)."""
    found: dict[str, str] = {}
    for event in state_changes(store, run_id, anchor=anchor):
        if event.tool != "write_file" or event.state_change is None:
            continue
        change = parse_change(event.state_change)
        if isinstance(change, WriteFileChange):
            found[change.path] = change.sha256
    return found


def recover_workspace(
    store: Store, run_id: str, workspace: Path, *, anchor: LogAnchor | None = None
) -> Recovery:
    """Complete or drop the writes a killed server left in `workspace`, as run `run_id`'s log says.

    Only temp files of processes no longer alive are touched, so a live server's in-flight write
    is left alone. Raises `LogTampered` if the chain (or its `anchor`) does not check out.
    """
    root = Path(workspace)
    if not root.is_dir():
        raise UsageError(f"--workspace {root} is not a folder; pass the workspace the server wrote in")
    completed, removed = settle_temp_files(root, logged_writes(store, run_id, anchor=anchor))
    return Recovery(run_id=run_id, workspace=str(root), completed=completed, removed=removed)
