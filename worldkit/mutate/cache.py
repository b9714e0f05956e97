"""Campaign reports kept across processes, keyed by everything a report depends on.

A report is a function of the overlay (its digest), the seed, the projection (its manifest), the
generator's and the grader's source (`worldkit/mutate`, `worldkit/overlay`) and the versions of
the format libraries. `overlay freeze` runs the campaign anyway, so a later `verify` finds the
report under `<cache>/mutate/<k[:2]>/<k>.json` (the world cache's folder,
`worldkit.world.cache.cache_root`; `WORLDKIT_CACHE=off` disables it) instead of grading again.
An entry carries the digest of its payload and is used only when both match; anything else is
ignored and graded again. Nothing in the cache is needed for correctness.
"""

from __future__ import annotations

import hashlib
import json
from importlib import metadata
from pathlib import Path
from typing import Any

from worldkit._fs import replace_file
from worldkit.canon import canonical_json, sha256_parts

_LIBRARIES = ("python-docx", "openpyxl", "pydantic")
_CODE: dict[str, str] = {}


def code_digest() -> str:
    """The generator's and the grader's source and the format libraries' versions (once per process)."""
    if "code" not in _CODE:
        digest = hashlib.sha256()
        base = Path(__file__).resolve().parents[1]
        for package in ("mutate", "overlay"):
            for path in sorted((base / package).glob("*.py")):
                digest.update(f"{package}/{path.name}\0".encode() + path.read_bytes() + b"\0")
        for name in _LIBRARIES:
            try:
                digest.update(f"{name}={metadata.version(name)}\0".encode())
            except metadata.PackageNotFoundError:
                digest.update(f"{name}=-\0".encode())
        _CODE["code"] = digest.hexdigest()
    return _CODE["code"]


def _folder() -> Path | None:
    from worldkit.world.cache import cache_root

    root = cache_root()
    return None if root is None else root / "mutate"


def entry_key(*parts: str) -> str:
    return sha256_parts(code_digest(), *parts)


def load(key: str) -> dict[str, Any] | None:
    """The payload stored under `key`, or None (absent, unreadable or not matching its digest)."""
    folder = _folder()
    if folder is None:
        return None
    try:
        entry = json.loads((folder / key[:2] / f"{key}.json").read_text(encoding="utf-8"))
        payload = entry["payload"]
        if entry["key"] != key or entry["sha256"] != hashlib.sha256(canonical_json(payload).encode()).hexdigest():
            return None
        return payload if isinstance(payload, dict) else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store(key: str, payload: dict[str, Any]) -> None:
    """Keep `payload` under `key` (best effort: a cache that cannot be written is skipped)."""
    folder = _folder()
    if folder is None:
        return
    entry = {"key": key, "sha256": hashlib.sha256(canonical_json(payload).encode()).hexdigest(), "payload": payload}
    target = folder / key[:2] / f"{key}.json"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        replace_file(target, canonical_json(entry).encode("utf-8"))
    except OSError:
        return
