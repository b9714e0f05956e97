"""Canonical bytes and digests: the one place that decides how anything is serialized for hashing.

Never put wall-clock time, process ids or unordered iteration into what passes through here.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, fixed separators, UTF-8 kept, and a trailing newline."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def canonical_bytes(value: Any) -> bytes:
    return canonical_json(value).encode("utf-8")


def pretty_json(value: Any) -> str:
    """Deterministic, human-readable JSON (sorted keys, 2-space indent, trailing newline).

    Exactly `json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\\n"`, built by a
    direct recursion over plain dicts, lists, strings and numbers (json's indenting encoder is pure
    Python and about twice as slow); anything else (non-string keys, other types) takes json's path.
    """
    try:
        return _pretty(value, "\n") + "\n"
    except _Unusual:
        return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


class _Unusual(Exception):
    """A value `_pretty` leaves to json itself."""


_STRING = json.encoder.encode_basestring  # what json uses with ensure_ascii=False


def _pretty(value: Any, newline: str) -> str:
    kind = type(value)
    if kind is str:
        return _STRING(value)
    if kind is dict:
        if not value:
            return "{}"
        inner = newline + "  "
        try:
            keys = sorted(value)
        except TypeError:
            raise _Unusual from None
        parts = []
        for key in keys:
            if type(key) is not str:
                raise _Unusual
            parts.append(_STRING(key) + ": " + _pretty(value[key], inner))
        return "{" + inner + ("," + inner).join(parts) + newline + "}"
    if kind is list or kind is tuple:
        if not value:
            return "[]"
        inner = newline + "  "
        return "[" + inner + ("," + inner).join([_pretty(item, inner) for item in value]) + newline + "]"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float and value == value and value not in (float("inf"), float("-inf")):
        return float.__repr__(value)
    raise _Unusual


class DuplicateKey(ValueError):
    """A JSON object names one key twice: which value counts depends on the reader, so it is refused."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(f"duplicate key {key!r}")
        out[key] = value
    return out


def strict_loads(data: str | bytes) -> Any:
    """`json.loads` that refuses an object naming a key twice (`DuplicateKey`, a ValueError).

    Everything worldkit reads back from a file it wrote goes through here: with duplicate keys the
    first and the last value could both be "the" value, and a checker and a server could disagree."""
    return json.loads(data, object_pairs_hook=_no_duplicates)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_parts(*parts: str | bytes) -> str:
    """The digest of a sequence of strings (UTF-8) or bytes, each length-prefixed so that no two
    sequences collide by shifting a boundary."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8") if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def sha256_json(value: Any) -> str:
    return sha256_bytes(canonical_bytes(value))


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()
