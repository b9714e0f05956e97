"""Every error worldkit raises on purpose, and the exit code each one maps to.

    WorldkitError                     (exit 4 unless a subclass says otherwise)
    ├── UsageError                    bad command-line input: unknown seat, malformed date (exit 2)
    ├── InvalidWorld                  a world file fails validation (exit 3)
    ├── InvalidOverlay                an overlay file fails validation (exit 3)
    ├── OutputExists                  refusing to overwrite a non-empty output directory (exit 2)
    ├── PathRefused                   a path escapes its confinement (exit 2)
    ├── EnvironmentProblem            something worldkit needs outside itself failed (exit 5)
    │   ├── StoreError                the store could not be reached or is not a usable store
    │   │   ├── StoreUnusable         the store named cannot be reached or is not a database at all
    │   │   └── LogTampered           an event log's hash chain is broken (exit 1)
    │   ├── chat.EndpointError        a chat endpoint is down or keeps failing
    │   ├── PortUnavailable           a server cannot listen where it was told to
    │   └── render.office.LibraryFailed   a format library failed other than by refusing the text
    ├── ManifestMismatch              files on disk differ from a frozen manifest (exit 1)
    └── CheckFailed                   a verification check failed (exit 1)

Subsystems subclass these next to the code that raises them: `overlay.errors` (OverlayProblems,
StaleFingerprint), `mcp.seat.CallRefused`, `infoorg.organizer.OrganizerRefused` (and
`InterruptedMove`: a killed run's move to settle with `worldkit log recover`, exit 2),
`run.infoorg_packet.PacketRunFailed` (an agent could not finish a packet; its result says
`failed`, exit 1),
`infoorg.tree.InvalidHierarchy`, `infoorg.sources.records` (InvalidSource, NotEnoughTasks),
`run.results.InvalidResults`. Messages say what failed, where (file, entity id, field) and how
to fix it.
"""

from __future__ import annotations

from enum import IntEnum
from pathlib import Path


class ExitCode(IntEnum):
    """Exit codes, defined once for every command."""

    OK = 0
    CHECK_FAILED = 1
    USAGE = 2
    INVALID_INPUT = 3
    INTERNAL = 4
    """A worldkit bug: anything not raised on purpose."""
    ENVIRONMENT = 5
    """Something outside worldkit failed: the store, a chat endpoint, a port, an installed library."""


class WorldkitError(Exception):
    """Root of worldkit's errors; always carries a message that says how to fix the problem."""

    exit_code: ExitCode = ExitCode.INTERNAL

    def __init__(self, message: str) -> None:
        if not message:
            raise ValueError("WorldkitError needs a message")
        super().__init__(message)
        self.message = message


class UsageError(WorldkitError):
    """The command was called with an argument that cannot work (unknown seat, bad date…)."""

    exit_code = ExitCode.USAGE


class OutputExists(UsageError):
    """The output directory exists and is not empty; pass --force to replace it."""


class PathRefused(UsageError):
    """A path tried to leave its confinement (.., absolute, symlink, encoded separator…)."""


class InvalidWorld(WorldkitError):
    """A world package is malformed: the message names the file, entity id, field and fix."""

    exit_code = ExitCode.INVALID_INPUT

    def __init__(
        self,
        message: str,
        *,
        file: Path | str | None = None,
        entity: str | None = None,
        field: str | None = None,
    ) -> None:
        where = ", ".join(
            part
            for part in (
                f"file {file}" if file else "",
                f"entity {entity}" if entity else "",
                f"field {field}" if field else "",
            )
            if part
        )
        super().__init__(f"{where}: {message}" if where else message)
        self.file = str(file) if file else None
        self.entity = entity
        self.field = field


class InvalidOverlay(InvalidWorld):
    """A task overlay is malformed or inconsistent with its projection."""


class EnvironmentProblem(WorldkitError):
    """Something worldkit relies on outside itself failed (a database, an endpoint, a port, a library)."""

    exit_code = ExitCode.ENVIRONMENT


class StoreError(EnvironmentProblem):
    """The store could not be opened, or what it holds is not a store this worldkit can use."""


class PortUnavailable(EnvironmentProblem):
    """A server cannot listen on the host and port it was given (in use, or not this machine's)."""


class StoreUnusable(StoreError):
    """The store named (--store, WORLDKIT_STORE) cannot be reached, or is not a database at all."""


class LogTampered(StoreError):
    """An event log's hash chain is broken; the message names the first bad event."""

    exit_code = ExitCode.CHECK_FAILED


class ManifestMismatch(WorldkitError):
    """Files on disk differ from the frozen manifest."""

    exit_code = ExitCode.CHECK_FAILED


class CheckFailed(WorldkitError):
    """A verification check failed."""

    exit_code = ExitCode.CHECK_FAILED
