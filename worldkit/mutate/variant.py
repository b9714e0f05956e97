"""A generated variant: which family made it, whether it is right or wrong, its files, what it touches.

A variant is the reference final state with some workspace files replaced (bytes, any encoding or
format) or deleted. `right` variants say the same thing in another form and must pass every
criterion; `wrong` ones make one plausible mistake and must fail every criterion in `touches`;
`nothing` variants (the do-nothing family) start from an untouched state and must pass nothing.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from typing import Literal

Kind = Literal["right", "wrong", "nothing"]


@dataclass(frozen=True)
class Variant:
    """One generated final state (see the module docstring)."""

    family: str
    """What was done, e.g. `csv-semicolon`, `values-swapped`, `request-as-deliverable`."""
    kind: Kind
    target: str
    """The workspace file changed (or `*` for the whole workspace)."""
    files: tuple[tuple[str, bytes | None], ...]
    """Workspace path → new bytes, or None to delete it (applied after the reference's files)."""
    touches: tuple[str, ...] = ()
    """wrong: the criteria (by id) whose declared rows, columns or claims the mistake changes."""
    detail: str = ""
    """What exactly changed, for a reviewer."""
    mails: tuple[tuple[int, str], ...] = ()
    """Index of a reference action (a `send_message`) → the body it sends instead."""
    keep_state_changes: bool = True
    """Replay the reference's record updates and mails (False for the do-nothing family)."""
    start_empty: bool = False
    """Start from an empty workspace instead of the reference's files."""

    @property
    def id(self) -> str:
        """Stable id: family, target and a short digest of the content."""
        digest = hashlib.sha256()
        for path, data in self.files:
            digest.update(path.encode() + b"\0" + (data if data is not None else b"<deleted>") + b"\0")
        for index, body in self.mails:
            digest.update(f"mail {index}\0{body}\0".encode())
        return f"{self.kind}:{self.family}:{self.target}:{digest.hexdigest()[:10]}"


def rng(seed: int, *parts: str) -> random.Random:
    """A generator seeded by the campaign seed and what it is for (stable across processes)."""
    return random.Random(":".join([str(seed), *parts]))
