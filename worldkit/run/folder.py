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
`write_run_folder(DIR, folder_for_package(DIR, run_id=…, store=…))`), serves `candidate/projection` with `workspace/` as the workspace, and logs
every call under `run_id` in the store named in `run.json`. The grader trusts none of it: the
folder names its task by id and digest only, and the overlay is resolved on worldkit's own path
(`resolve_run_task`); the package is verified against the frozen manifests, and the workspace must
equal what the logged writes produce.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from worldkit._model import Model
from worldkit.canon import pretty_json, strict_loads
from worldkit.errors import CheckFailed
from worldkit.frozen.resolve import ResolvedTask, resolve_task
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
    "package_summary",
    "read_run_folder",
    "resolve_run_task",
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
    """Kept so that older run folders still read; never used: the overlay is resolved by id and
    digest on worldkit's own path (`worldkit.frozen.resolve`), and worldkit writes it empty."""
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
    unanchored: bool = False
    """Declares that the session was served without a log anchor (no `log-anchor.json` was ever
    written): only then may a run have no anchor anywhere and pass the event-logs check."""


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
        data = path.read_bytes()
        body = strict_loads(data)
        if pretty_json(body).encode("utf-8") != data:
            raise InvalidResults("not the canonical bytes worldkit writes (edited by hand?); restore run.json from "
                                 "the run or stage the folder afresh", file=path)  # fmt: skip
        return RunFolder.model_validate(body)
    except (UnicodeDecodeError, ValueError) as error:
        if isinstance(error, ValidationError):
            first = error.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or None
            raise InvalidResults(f"{first['msg']}; restore run.json from the run", file=path, field=field) from None
        raise InvalidResults(f"not valid UTF-8 JSON ({error}); restore it from the run", file=path) from None


def package_summary(paths: RunPaths) -> dict[str, Any]:
    """`package/package.json` of a run folder (duplicate keys refused); CheckFailed if unreadable."""
    package_json = paths.package / "package.json"
    try:
        body = strict_loads(package_json.read_bytes())
    except (OSError, ValueError) as error:
        raise CheckFailed(f"{package_json} is missing or unreadable ({error}); the run folder is incomplete or "
                          "altered — stage it afresh") from None  # fmt: skip
    if not isinstance(body, dict):
        raise CheckFailed(f"{package_json} is not a JSON object; the run folder was altered — stage it afresh")
    return body


def resolve_run_task(root: Path, named: dict[str, Any], where: Path | None = None) -> ResolvedTask:
    """The task a run folder was staged from, resolved by id and digest on worldkit's own path.

    `named`: what run.json or the execution record claims (`overlay`, `overlay_sha256`, `seat`,
    `condition`); each must equal `package/package.json`'s, and the overlay is found by the id
    package.json names (with its world) on the configured path — never at a path the folder gives,
    never inside the folder — and must digest to what both name (`worldkit.frozen.resolve`)."""
    paths = RunPaths(Path(root).absolute())
    summary = package_summary(paths)
    source = where or paths.manifest
    for key in ("overlay", "overlay_sha256", "seat", "condition"):
        if key in named and named[key] != summary.get(key):
            raise CheckFailed(f"{source} and {paths.package / 'package.json'} name different {key} "
                              f"({named[key]!r} vs {summary.get(key)!r}); the run folder was altered")  # fmt: skip
    return resolve_task(paths.package / "package.json", world=summary.get("world"), overlay=summary.get("overlay"),
                        overlay_sha256=summary.get("overlay_sha256"), seat=summary.get("seat"),
                        condition=summary.get("condition"), inside=paths.root)  # fmt: skip


def seat_file_count(projection: Path) -> int:
    """How many of the seat's files a staged projection serves (its manifest's files, less those
    every package keeps): Table 1's denominator for the share a curated packet retains."""
    return sum(entry.path not in ALWAYS_KEPT for entry in read_manifest(projection).files)


def folder_for_package(
    root: Path,
    *,
    run_id: str,
    store: str | None,
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
        overlay_sha256=overlay_digest(model),
        condition=condition,
        seat=model.seat,
        store=public_store_url(store),
        agent=agent,
        agent_config=dict(agent_config or {}),
    )
    write_run_folder(paths.root, folder)
    return folder, package
