"""The head of a run's log, anchored outside the database, optionally signed with the user's key.

A database can be edited by anyone who can write its file or has DDL rights: rows deleted with
the guards dropped, the chain recomputed after an edit. The anchor is a small JSON file
(`log-anchor.json` in the run folder, and a copy in the execution record) naming the run, its
seat and session and the head (seq and hash) the log had when the anchor was written: at open,
about once a second while events are appended, and — `final` — when the log was closed. A log
checked against its anchor must hold that event with that hash, and, for a final anchor, end
exactly there, so a log cut short, rewritten or recomputed no longer matches.

An anchor in a folder can be rewritten as easily as the log, so it can be signed with a key the
user holds, from the environment:

- `WORLDKIT_LOG_KEY` (a shared secret): an HMAC-SHA256 over the anchor's canonical JSON; the
  checker needs the same secret;
- `WORLDKIT_LOG_SIGNING_KEY` (path to a PEM Ed25519 private key): an Ed25519 signature; the
  checker needs only the public key (`WORLDKIT_LOG_VERIFY_KEY`, a PEM public key; a private key
  file works too), so whoever checks a run cannot forge its anchor.

A checker holding a key refuses an anchor that key does not sign (so a recomputed chain with a
rewritten anchor is caught). Only the key's fingerprint is written, never the key.

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

from pydantic import Field, ValidationError

from worldkit._model import Model
from worldkit.canon import canonical_json
from worldkit.errors import LogTampered, UsageError

__all__ = [
    "ANCHOR_FILENAME",
    "KEY_ENV_VAR",
    "SIGNING_KEY_ENV_VAR",
    "VERIFY_KEY_ENV_VAR",
    "AnchorKey",
    "AnchorSignature",
    "Ed25519Key",
    "HmacKey",
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
SIGNING_KEY_ENV_VAR = "WORLDKIT_LOG_SIGNING_KEY"
VERIFY_KEY_ENV_VAR = "WORLDKIT_LOG_VERIFY_KEY"
_HEX64 = r"^[0-9a-f]{64}$"


class AnchorSignature(Model):
    """A signature over the anchor's other fields, with the fingerprint of the key that made it."""


    alg: Literal["hmac-sha256", "ed25519"] = "hmac-sha256"
    """`hmac-sha256` (a shared secret) or `ed25519` (a private key; checked with its public key)."""
    key_id: str = Field(pattern=r"^[0-9a-f]{16}$")
    """First 16 hex digits of SHA-256 of the secret (HMAC) or of the raw public key (Ed25519)."""
    mac: str = Field(pattern=r"^[0-9a-f]{64}$|^[0-9a-f]{128}$")
    """The signature (hex) of the canonical JSON of the anchor without its signature: the HMAC
    (64 hex digits) or the Ed25519 signature (128)."""


class LogAnchor(Model):
    """Where a run's log ended when the anchor was written."""


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
    """Present when the writer held a key (`WORLDKIT_LOG_KEY` or `WORLDKIT_LOG_SIGNING_KEY`)."""

    def payload(self) -> bytes:
        """The bytes the signature covers."""
        return canonical_json(self.model_dump(mode="json", exclude={"signature"})).encode()

    def describe(self) -> str:
        state = "final" if self.final else "in-progress"
        signed = "signed" if self.signature is not None else "unsigned"
        return f"{state} {signed} anchor of run {self.run_id} at event {self.seq}"


class HmacKey:
    """A shared secret: signs and checks HMAC-SHA256 anchors."""

    alg = "hmac-sha256"
    source = KEY_ENV_VAR

    def __init__(self, secret: bytes) -> None:
        self._secret = secret
        self.key_id = hashlib.sha256(secret).hexdigest()[:16]
        self.can_sign = True

    def sign(self, payload: bytes) -> str:
        return _mac(self._secret, payload)

    def verifies(self, mac: str, payload: bytes) -> bool:
        return hmac.compare_digest(mac, _mac(self._secret, payload))


class Ed25519Key:
    """An Ed25519 key pair (signs and checks) or public key (checks only)."""

    alg = "ed25519"

    def __init__(self, public: Any, private: Any = None, *, source: str = SIGNING_KEY_ENV_VAR) -> None:
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

        self._public, self._private = public, private
        raw = public.public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.key_id = hashlib.sha256(raw).hexdigest()[:16]
        self.can_sign = private is not None
        self.source = source

    @classmethod
    def from_pem(cls, data: bytes, *, source: str, where: str) -> Ed25519Key:
        """A key from PEM text: a private key (signs and checks) or a public key (checks)."""
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
        from cryptography.hazmat.primitives.serialization import load_pem_private_key, load_pem_public_key

        loaded: Any
        try:
            loaded = load_pem_private_key(data, password=None) if b"PRIVATE KEY" in data else load_pem_public_key(data)
        except (ValueError, TypeError) as error:
            raise UsageError(
                f"{source}: {where} is not an unencrypted PEM key ({str(error).splitlines()[0][:120]}); make one "
                "with `openssl genpkey -algorithm ed25519 -out key.pem` (public: `openssl pkey -in key.pem -pubout`)"
            ) from None
        if isinstance(loaded, Ed25519PrivateKey):
            return cls(loaded.public_key(), loaded, source=source)
        if isinstance(loaded, Ed25519PublicKey):
            return cls(loaded, source=source)
        raise UsageError(
            f"{source}: {where} holds a {type(loaded).__name__.lstrip('_')}, not an Ed25519 key; make one with "
            "`openssl genpkey -algorithm ed25519 -out key.pem`"
        )

    def sign(self, payload: bytes) -> str:
        if self._private is None:
            raise UsageError(
                f"{self.source} is a public key: it checks anchors but cannot sign them; set "
                f"{SIGNING_KEY_ENV_VAR} to the private key to sign"
            )
        signature: bytes = self._private.sign(payload)
        return signature.hex()

    def verifies(self, mac: str, payload: bytes) -> bool:
        from cryptography.exceptions import InvalidSignature

        try:
            self._public.verify(bytes.fromhex(mac), payload)
        except (InvalidSignature, ValueError):
            return False
        return True


AnchorKey = HmacKey | Ed25519Key


def _load_pem(path_text: str, source: str) -> Ed25519Key:
    path = Path(path_text).expanduser()
    try:
        data = path.read_bytes()
    except OSError as error:
        raise UsageError(f"{source}={path_text}: cannot read the key file ({error.strerror}); point it at a PEM file") from None
    return Ed25519Key.from_pem(data, source=source, where=str(path))


def log_key(environ: Mapping[str, str] | None = None) -> AnchorKey | None:
    """The anchor key the environment names, or None.

    `WORLDKIT_LOG_SIGNING_KEY` (PEM Ed25519 private key file) or `WORLDKIT_LOG_VERIFY_KEY` (PEM
    public key file) for Ed25519, else `WORLDKIT_LOG_KEY` (its UTF-8 bytes) for HMAC. Setting
    both kinds is refused: a run is signed one way."""
    env = os.environ if environ is None else environ
    signing = env.get(SIGNING_KEY_ENV_VAR, "").strip()
    verifying = env.get(VERIFY_KEY_ENV_VAR, "").strip()
    secret = env.get(KEY_ENV_VAR, "")
    if (signing or verifying) and secret.strip():
        raise UsageError(
            f"both {KEY_ENV_VAR} (HMAC) and {SIGNING_KEY_ENV_VAR if signing else VERIFY_KEY_ENV_VAR} (Ed25519) are "
            "set; a log anchor is signed one way: unset one of them"
        )
    if signing:
        key = _load_pem(signing, SIGNING_KEY_ENV_VAR)
        if not key.can_sign:
            raise UsageError(
                f"{SIGNING_KEY_ENV_VAR} names a public key; it must be the Ed25519 private key (the public "
                f"key goes in {VERIFY_KEY_ENV_VAR} for checking)"
            )
        return key
    if verifying:
        return _load_pem(verifying, VERIFY_KEY_ENV_VAR)
    return HmacKey(secret.encode("utf-8")) if secret.strip() else None


def as_key(key: AnchorKey | bytes | None) -> AnchorKey | None:
    """A key given as raw bytes is an HMAC secret."""
    return HmacKey(key) if isinstance(key, bytes | bytearray) else key


def key_id(key: bytes) -> str:
    return hashlib.sha256(key).hexdigest()[:16]


def _mac(key: bytes, payload: bytes) -> str:
    return hmac.new(key, payload, hashlib.sha256).hexdigest()


def make_anchor(
    *, run_id: str, seat: str, session: str, seq: int, head_hash: str, final: bool,
    key: AnchorKey | bytes | None,
) -> LogAnchor:  # fmt: skip
    """An anchor of the given head, signed when `key` is given (bytes: an HMAC secret)."""
    anchor = LogAnchor(
        run_id=run_id, seat=seat, session=session, seq=seq, hash=head_hash, final=final
    )
    signer = as_key(key)
    if signer is None:
        return anchor
    signature = AnchorSignature(alg=signer.alg, key_id=signer.key_id, mac=signer.sign(anchor.payload()))
    return anchor.model_copy(update={"signature": signature})


def signature_problem(anchor: LogAnchor, key: AnchorKey | bytes | None) -> str | None:
    """Why the anchor's signature cannot be trusted with `key` (None: fine).

    With a key, the anchor must be signed by that key; without one, a signed anchor cannot be
    checked and is refused rather than half-trusted; an unsigned anchor is taken as it is.
    """
    signature = anchor.signature
    checker = as_key(key)
    if checker is None:
        if signature is None:
            return None
        wanted = KEY_ENV_VAR if signature.alg == "hmac-sha256" else f"{VERIFY_KEY_ENV_VAR} (or {SIGNING_KEY_ENV_VAR})"
        return (
            f"the anchor is signed ({signature.alg}, key {signature.key_id}) but no key is set: set "
            f"{wanted} to the key the run was made with to check it"
        )
    if signature is None:
        return (
            f"the anchor is not signed although {checker.source} is set: an unsigned anchor may "
            "have been rewritten together with the log"
        )
    if signature.alg != checker.alg:
        return (
            f"the anchor is signed with {signature.alg}, but the key in {checker.source} is an "
            f"{checker.alg} key: check it with the kind of key the run was made with"
        )
    if signature.key_id != checker.key_id:
        return (
            f"the anchor was signed with key {signature.key_id}, not with the key in "
            f"{checker.source} ({checker.key_id})"
        )
    if not checker.verifies(signature.mac, anchor.payload()):
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
