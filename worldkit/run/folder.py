"""The run folder: what a run leaves on disk, and what `worldkit grade RUN_DIR` grades.

`worldkit run` writes one, and so may any server that stages a task for an outside agent
(`worldkit serve --overlay T --out DIR`). The layout:

    RUN_DIR/
      run.json                the `RunFolder` below: task, condition, seat, log run id, store
      package/                the applied overlay, exactly as `worldkit overlay apply` writes it:
        package.json            what was applied and the two package digests
        candidate/              request.md, tool-config.json, projection/, workspace/ (the seed)
        verifier/               rubric, evidence, truth, reference (never served)
      workspace/              the seat's working copy of candidate/workspace: the agent writes here
      execution-record.json   written by grading (`run`, `grade RUN_DIR`); absent until graded

A writer stages with `stage_run_folder` (or stages `package/` and `workspace/` itself, e.g. with
`worldkit.mcp.session.stage_seat(overlay=…, out=DIR)`, and then writes
`write_run_folder(DIR, folder_for_package(DIR, run_id=…, store=…, overlay_path=…))`), serves `candidate/projection` with `workspace/` as the workspace, and logs
every call under `run_id` in the store named in `run.json`. The grader trusts none of it: the
package is verified against its manifests, the overlay's digest must equal the one applied, and
the workspace must equal what the logged writes produce.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from worldkit._model import Model
from worldkit.canon import pretty_json
from worldkit.materialize.manifest import read_manifest
from worldkit.overlay import apply_overlay, overlay_digest
from worldkit.overlay.apply import ALWAYS_KEPT
from worldkit.record.results import InvalidResults

__all__ = [
    "RUN_FILE",
    "RunFolder",
    "RunPaths",
    "folder_for_package",
    "public_store_url",
    "read_run_folder",
    "seat_file_count",
    "stage_run_folder",
    "write_run_folder",
]

RUN_FILE = "run.json"
RECORD_FILE = "execution-record.json"


class RunFolder(Model):
    """`RUN_DIR/run.json`: which task was staged, for whom, and where its event log lives."""


    schema_version: Literal[1] = 1
    """Format version."""
    run_id: str = Field(min_length=1)
    """The run's id: its event log's run id in the store."""
    overlay: str = Field(min_length=1)
    """The overlay (task) id."""
    overlay_path: str = ""
    """The overlay file that was applied (grading loads it from here, else by id)."""
    overlay_sha256: str
    """Digest of the overlay as applied (must equal `package/package.json`'s)."""
    condition: str = "full"
    """`full` or `curated:NAME`."""
    seat: str
    """The seat the servers act as."""
    store: str | None = None
    """Store URL of the event log (password hidden); None when no log was kept."""
    agent: str = "external"
    """The agent's id (`openai:MODEL`, `oracle`, …); `external` for a session driven from outside."""
    agent_config: dict[str, Any] = Field(default_factory=dict)
    """The agent's configuration (never secrets)."""


@dataclass(frozen=True)
class RunPaths:
    """Where everything of one run folder lives."""

    root: Path

    @property
    def manifest(self) -> Path:
        return self.root / RUN_FILE

    @property
    def package(self) -> Path:
        return self.root / "package"

    @property
    def candidate(self) -> Path:
        return self.package / "candidate"

    @property
    def projection(self) -> Path:
        return self.candidate / "projection"

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def record(self) -> Path:
        return self.root / RECORD_FILE


def public_store_url(url: str | None) -> str | None:
    """The store URL with any password masked (what a folder or record may carry)."""
    if not url:
        return url
    try:
        from sqlalchemy.engine import make_url

        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - an unparsable URL is recorded as given, minus nothing secret
        return url.split("@")[-1] if "@" in url else url


def write_run_folder(root: Path, folder: RunFolder) -> Path:
    """Write `root/run.json` (deterministic JSON)."""
    path = RunPaths(Path(root)).manifest
    path.write_text(pretty_json(folder.model_dump(mode="json")), encoding="utf-8")
    return path


def read_run_folder(root: Path) -> RunFolder:
    """Read and validate `root/run.json`; errors name the file, the field and the fix."""
    path = RunPaths(Path(root)).manifest
    if not Path(root).is_dir():
        from worldkit.errors import UsageError

        raise UsageError(f"{root}: no such folder; pass a run folder written by `worldkit run` or "
                         "`worldkit serve --overlay T --out DIR`")
    if not path.is_file():
        raise InvalidResults(
            f"not a run folder: no {RUN_FILE}; pass a folder written by `worldkit run` or "
            "`worldkit serve --overlay T --out DIR`, or grade a workspace with --overlay and --workspace",
            file=path,
        )
    try:
        return RunFolder.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise InvalidResults("not valid UTF-8 JSON; restore it from the run", file=path) from None
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or None
        raise InvalidResults(f"{first['msg']}; restore run.json from the run", file=path, field=field) from None


def seat_file_count(projection: Path) -> int:
    """How many of the seat's files a staged projection serves (its manifest's files, less those
    every package keeps): Table 1's denominator for the share a curated packet retains."""
    return sum(entry.path not in ALWAYS_KEPT for entry in read_manifest(projection).files)


def folder_for_package(
    root: Path,
    *,
    run_id: str,
    store: str | None,
    overlay_path: str = "",
    agent: str = "external",
    agent_config: dict[str, Any] | None = None,
) -> RunFolder:
    """The `RunFolder` for a folder whose `package/` is already staged (e.g. by `worldkit serve
    --overlay T --out DIR`): task, digest, condition and seat are read from `package/package.json`."""
    package_json = RunPaths(Path(root)).package / "package.json"
    try:
        summary = json.loads(package_json.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise InvalidResults("missing or unreadable; stage the overlay into package/ first", file=package_json) from None
    return RunFolder(
        run_id=run_id,
        overlay=summary["overlay"],
        overlay_path=overlay_path,
        overlay_sha256=summary["overlay_sha256"],
        condition=summary["condition"],
        seat=summary["seat"],
        store=public_store_url(store),
        agent=agent,
        agent_config=dict(agent_config or {}),
    )


def stage_run_folder(
    overlay: Any,
    root: Path,
    *,
    run_id: str,
    condition: str = "full",
    store: str | None = None,
    agent: str = "external",
    agent_config: dict[str, Any] | None = None,
) -> tuple[RunFolder, Any]:
    """Apply `overlay` into `root/package`, copy its workspace to `root/workspace`, write run.json.

    Returns the folder manifest and the `PackageResult`."""
    paths = RunPaths(Path(root).absolute())
    package = apply_overlay(overlay, paths.package, condition)
    model = package.overlay
    shutil.copytree(paths.candidate / "workspace", paths.workspace)
    folder = RunFolder(
        run_id=run_id,
        overlay=model.id,
        overlay_path=str(model.source or ""),
        overlay_sha256=overlay_digest(model),
        condition=condition,
        seat=model.seat,
        store=public_store_url(store),
        agent=agent,
        agent_config=dict(agent_config or {}),
    )
    write_run_folder(paths.root, folder)
    return folder, package
