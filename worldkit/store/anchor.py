"""The head of a run's log, anchored outside the database, optionally signed with the user's key.

A database can be edited by anyone who can write its file or has DDL rights: rows deleted with
the guards dropped, the chain recomputed after an edit. The anchor is a small JSON file
(`log-anchor.json` in the run folder, and a copy in the execution record) naming the run, its
seat and session and the head (seq and hash) the log had when the anchor was written: at open,
about once a second while events are appended, and — `final` — when the log was closed. A log
checked against its anchor must hold that event with that hash, and, for a final anchor, end
exactly there, so a log cut short, rewritten or recomputed no longer matches.

An anchor in a folder can be rewritten as easily as the log; with `WORLDKIT_LOG_KEY` set, the
anchor carries an HMAC-SHA256 over its canonical JSON, and a checker holding the same key refuses
an anchor it does not sign (so a recomputed chain with a rewritten anchor is caught). Only the
key's fingerprint is written, never the key.

This module must never read the store: comparing an anchor with a chain is `chain`'s job.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from worldkit.canon import canonical_json
from worldkit.errors import LogTampered

__all__ = [
    "ANCHOR_FILENAME",
    "KEY_ENV_VAR",
    "AnchorSignature",
    "LogAnchor",
    "key_id",
    "log_key",
    "make_anchor",
    "read_anchor",
    "signature_problem",
    "write_anchor",
]

ANCHOR_FILENAME = "log-anchor.json"
KEY_ENV_VAR = "WORLDKIT_LOG_KEY"
_HEX64 = r"^[0-9a-f]{64}$"
_MODEL = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class AnchorSignature(BaseModel):
    """An HMAC over the anchor's other fields, with the fingerprint of the key that made it."""

    model_config = _MODEL

    alg: Literal["hmac-sha256"] = "hmac-sha256"
    """The MAC algorithm."""
    key_id: str = Field(pattern=r"^[0-9a-f]{16}$")
    """First 16 hex digits of SHA-256 of the key: names the key without revealing it."""
    mac: str = Field(pattern=_HEX64)
    """HMAC-SHA256 (hex) of the canonical JSON of the anchor without its signature."""


class LogAnchor(BaseModel):
    """Where a run's log ended when the anchor was written."""

    model_config = _MODEL

    format: Literal["worldkit.log-anchor"] = "worldkit.log-anchor"
    """Identifies the file."""
    version: Literal[1] = 1
    """Version of this format."""
    run_id: str = Field(min_length=1)
    """The run."""
    seat: str = Field(min_length=1)
    """The seat the run acts as."""
    session: str = Field(pattern=r"^[0-9a-f]{32}$")
    """The session of the writer that anchored the log."""
    seq: int = Field(ge=0)
    """Sequence number of the last event at the time (0: none yet)."""
    hash: str = Field(pattern=_HEX64)
    """Hash of that event (the run's genesis hash when seq is 0)."""
    final: bool
    """True if written when the log was closed: the log must end exactly here."""
    signature: AnchorSignature | None = None
    """Present when the writer held a key (`WORLDKIT_LOG_KEY`)."""

    def payload(self) -> bytes:
        """The bytes the signature covers."""
        return canonical_json(self.model_dump(mode="json", exclude={"signature"})).encode()

    def describe(self) -> str:
        state = "final" if self.final else "in-progress"
        signed = "signed" if self.signature is not None else "unsigned"
        return f"{state} {signed} anchor of run {self.run_id} at event {self.seq}"


def log_key(environ: Mapping[str, str] | None = None) -> bytes | None:
    """The anchor key from `WORLDKIT_LOG_KEY` (its UTF-8 bytes), or None when unset or empty."""
    value = (os.environ if environ is None else environ).get(KEY_ENV_VAR, "")
    return value.encode("utf-8") if value.strip() else None


def key_id(key: bytes) -> str:
    return hashlib.sha256(key).hexdigest()[:16]


def _mac(key: bytes, payload: bytes) -> str:
    return hmac.new(key, payload, hashlib.sha256).hexdigest()


def make_anchor(
    *, run_id: str, seat: str, session: str, seq: int, head_hash: str, final: bool,
    key: bytes | None,
) -> LogAnchor:  # fmt: skip
    """An anchor of the given head, signed when `key` is given."""
    anchor = LogAnchor(
        run_id=run_id, seat=seat, session=session, seq=seq, hash=head_hash, final=final
    )
    if key is None:
        return anchor
    signature = AnchorSignature(key_id=key_id(key), mac=_mac(key, anchor.payload()))
    return anchor.model_copy(update={"signature": signature})


def signature_problem(anchor: LogAnchor, key: bytes | None) -> str | None:
    """Why the anchor's signature cannot be trusted with `key` (None: fine).

    With a key, the anchor must be signed by that key; without one, a signed anchor cannot be
    checked and is refused rather than half-trusted; an unsigned anchor is taken as it is.
    """
    signature = anchor.signature
    if key is None:
        if signature is None:
            return None
        return (
            f"the anchor is signed (key {signature.key_id}) but no key is set: set "
            f"{KEY_ENV_VAR} to the key the run was made with to check it"
        )
    if signature is None:
        return (
            f"the anchor is not signed although {KEY_ENV_VAR} is set: an unsigned anchor may "
            "have been rewritten together with the log"
        )
    if signature.key_id != key_id(key):
        return (
            f"the anchor was signed with key {signature.key_id}, not with the key in "
            f"{KEY_ENV_VAR} ({key_id(key)})"
        )
    if not hmac.compare_digest(signature.mac, _mac(key, anchor.payload())):
        return "the anchor's signature does not match its contents: the anchor was rewritten"
    return None


def write_anchor(anchor: LogAnchor, path: Path, *, durable: bool = False) -> None:
    """Replace `path` with the anchor atomically (a reader sees the old or the new file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    data = canonical_json(anchor.model_dump(mode="json", exclude_none=True)).encode()
    with open(temporary, "wb") as handle:
        handle.write(data)
        if durable:
            handle.flush()
            os.fsync(handle.fileno())
    os.replace(temporary, path)


def read_anchor(path: Path) -> LogAnchor:
    """Read an anchor file; an unreadable or malformed one is a `LogTampered` naming the file."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise LogTampered(
            f"cannot read the log anchor {path}: {error.strerror}; the run folder must keep the "
            f"{ANCHOR_FILENAME} its run wrote"
        ) from error
    except ValueError as error:
        raise LogTampered(f"log anchor {path} is not valid UTF-8 JSON; it was edited") from error
    return parse_anchor(data, source=str(path))


def parse_anchor(data: Any, *, source: str) -> LogAnchor:
    try:
        return LogAnchor.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(top)"
        raise LogTampered(
            f"log anchor in {source} is malformed (field {field}: {first['msg']}); it was edited "
            "or is not a worldkit log anchor"
        ) from error
