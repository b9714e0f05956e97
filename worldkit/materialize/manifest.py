"""The projection manifest: one entry per file, sorted by path, and the fingerprint over it.

The fingerprint covers the inputs, every entry and the tool-bundle digest; the rendering
environment is recorded beside it but not fingerprinted, so an identical tree always has the
same fingerprint. The only times are each file's intended modification time (`Entry.mtime`, a
function of the world and the date, never of the clock), which materialize sets on disk.
"""

from __future__ import annotations

import hashlib
import json
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, overload

from pydantic import SerializerFunctionWrapHandler, ValidationError, field_serializer

from worldkit._model import Model
from worldkit.canon import canonical_json, pretty_json, sha256_file, sha256_json
from worldkit.errors import InvalidWorld

MANIFEST_NAME = "manifest.json"


class Entry(Model):
    path: str
    """Path relative to the projection root, `/`-separated."""
    sha256: str
    """Digest of the file's bytes."""
    size: int
    """Size in bytes."""
    surface: str
    """files, records, mail, chat, tools, seat, …"""
    source: str
    """Entity id the file was produced from."""
    mtime: str | None = None
    """The file's intended modification time, `YYYY-MM-DDTHH:MM:SSZ` (UTC): its last change on or before the
    projection date (a document's own date, a record's last event, a mail's date and time). Set on disk.
    None only in a manifest frozen before worldkit recorded dates (it fingerprints as it did then)."""


class Inputs(Model):
    world: str
    """World id."""
    rev: str
    """Revision name."""
    revision_digest: str
    """Canonical digest of the revision."""
    date: str
    """Projection date (ISO)."""
    seat: str
    """Seat id."""
    person: str
    """The seat's person."""


class Environment(Model):
    worldkit: str
    """worldkit version."""
    python: str
    """Python version."""
    jinja2: str
    """jinja2 version."""
    templates: dict[str, str]
    """Template name → sha256."""


class Manifest(Model):
    schema_version: Literal[1] = 1
    """Manifest format version."""
    inputs: Inputs
    """What the projection is a function of."""
    environment: Environment
    """The rendering environment (recorded, not fingerprinted)."""
    tool_bundle_sha256: str
    """Digest of the tool bundle in `tools.json`."""
    files: list[Entry]
    """Entries sorted by path."""
    fingerprint: str
    """SHA-256 of the canonical {inputs, files, tool_bundle_sha256}."""

    @field_serializer("files", mode="wrap")
    def _files(self, files: Sequence[Entry], handler: SerializerFunctionWrapHandler) -> Any:
        # A manifest materialize built holds its entries as `Entries` (a compact sequence): dumped as the list.
        return handler(files if type(files) is list else list(files))

    @staticmethod
    def compute_fingerprint(inputs: Inputs, files: list[Entry], tool_bundle_sha256: str) -> str:
        return sha256_json(
            {
                "inputs": inputs.model_dump(mode="json"),
                "files": [e.model_dump(mode="json", exclude_none=True) for e in files],
                "tool_bundle_sha256": tool_bundle_sha256,
            }
        )

    def expected_fingerprint(self) -> str:
        return self.compute_fingerprint(self.inputs, self.files, self.tool_bundle_sha256)

    def by_path(self) -> dict[str, Entry]:
        return {e.path: e for e in self.files}


def read_manifest(path: Path) -> Manifest:
    """Read and check a manifest; a corrupted or tampered one is an error naming the fix."""
    from worldkit.materialize.scan import read_regular

    file = path / MANIFEST_NAME if path.is_dir() else path
    data = read_regular(file)
    if data is None:
        if not file.exists() and not file.is_symlink():
            raise InvalidWorld(f"no {MANIFEST_NAME}; materialize the projection first", file=file)
        raise InvalidWorld(f"{MANIFEST_NAME} is not a regular file (a link, FIFO or device?); rebuild it", file=file)
    digest = hashlib.sha256(data).digest()
    known = _READ.get(digest)
    if known is not None:  # the very same bytes were read and checked before (a frozen model)
        _READ.move_to_end(digest)
        return known
    try:
        manifest = Manifest.model_validate_json(data)
    except (ValidationError, json.JSONDecodeError) as error:
        raise InvalidWorld(f"corrupted manifest ({str(error).splitlines()[0]}); rebuild it", file=file) from None
    if manifest.expected_fingerprint() != manifest.fingerprint:
        raise InvalidWorld(
            "fingerprint does not match the manifest's entries (tampered or corrupted); rebuild it",
            file=file,
            field="fingerprint",
        )
    _READ[digest] = manifest
    while len(_READ) > _READ_KEEP:
        _READ.popitem(last=False)
    return manifest


_READ: OrderedDict[bytes, Manifest] = OrderedDict()
"""SHA-256 of manifest bytes → the manifest they parse and check to: verify reads each frozen,
rebuilt and staged manifest several times, and parsing and re-fingerprinting one costs ~10 ms."""
_READ_KEEP = 64


def manifest_bytes(manifest: Manifest) -> bytes:
    """Deterministic bytes: sorted keys, one file entry per line (readable, diffable, fast)."""
    return _layout(manifest, [entry_line(e.path, e.sha256, e.size, e.surface, e.source, e.mtime) for e in manifest.files])


def _head(manifest: Manifest) -> str:
    """The manifest file up to its `files` list: everything but the entries, without the closing brace."""
    return pretty_json(manifest.model_dump(mode="json", exclude={"files"})).rstrip().rstrip("}").rstrip()


def _layout(manifest: Manifest, lines: list[str]) -> bytes:
    body = _head(manifest)
    files = ",\n    ".join(lines)
    return (body + ',\n  "files": [\n    ' + files + "\n  ]\n}\n").encode("utf-8") if lines else (
        body + ',\n  "files": []\n}\n'
    ).encode("utf-8")


_STRING = json.encoder.encode_basestring  # what json.dumps(ensure_ascii=False) writes a string as


def entry_line(path: str, sha256: str, size: int, surface: str, source: str, mtime: str | None) -> str:
    """`canonical_json` of one entry (without its newline), written directly: it is built for every file."""
    head = '{"mtime":' + _STRING(mtime) + "," if mtime is not None else "{"
    return (
        head + '"path":' + _STRING(path) + ',"sha256":' + _STRING(sha256) + ',"size":' + int.__repr__(size)
        + ',"source":' + _STRING(source) + ',"surface":' + _STRING(surface) + "}"
    )


_ENTRY_FIELDS = ("path", "sha256", "size", "surface", "source", "mtime")
Row = tuple[str, str, int, str, str, str | None]
"""(path, sha256, size, surface, source, mtime) of one written file."""


def assemble(
    inputs: Inputs, environment: Environment, tool_bundle_sha256: str, rows: Iterable[Row]
) -> tuple[Manifest, bytearray]:
    """The manifest of `rows` (sorted by path) and its bytes; each entry is serialized once, for both the
    fingerprint and the file (the same bytes as `compute_fingerprint` and `manifest_bytes`)."""
    data = bytearray()
    builder = ManifestBuilder(inputs, environment, tool_bundle_sha256, data.extend)
    for row in rows:
        builder.add(*row)
    manifest = builder.finish()
    data[builder.fingerprint_at : builder.fingerprint_at + 64] = manifest.fingerprint.encode("ascii")
    return manifest, data


_LINE_SEP = b",\n    "


def run_lines(lines: list[bytes]) -> bytes:
    """Entry lines (`entry_line`, UTF-8) joined as the manifest file joins them (`ManifestBuilder.add_run`)."""
    return _LINE_SEP.join(lines)
_PLACEHOLDER = "0" * 64
"""Stands for the fingerprint (64 hex digits, known only after the last entry) in the head as it is written."""
_EVERY_FIELD = set(_ENTRY_FIELDS)
"""Every entry sets every field: one shared fields-set (entries are frozen) instead of a set per file."""
_NEW = object.__new__
_SET = object.__setattr__


def _entry(path: str, sha256: str, size: int, surface: str, source: str, mtime: str | None) -> Entry:
    """`Entry.model_construct` of trusted values (what materialize computed), at a fraction of its cost."""
    entry = _NEW(Entry)
    _SET(entry, "__dict__", {"path": path, "sha256": sha256, "size": size, "surface": surface, "source": source,
                             "mtime": mtime})
    _SET(entry, "__pydantic_fields_set__", _EVERY_FIELD)
    _SET(entry, "__pydantic_extra__", None)
    _SET(entry, "__pydantic_private__", None)
    return entry


class Entries(Sequence[Entry]):
    """A manifest's entries as columns (path, raw digest, size, surface, source, date), each `Entry`
    made when read: 100,000 `Entry` objects held ~50 MB, these ~8 MB beside the strings they share
    with the plan and the world. A sequence equal to the list of the same entries."""

    __slots__ = ("_paths", "_digests", "_sizes", "_surfaces", "_sources", "_mtimes")

    def __init__(self) -> None:
        self._paths: list[str] = []
        self._digests = bytearray()
        self._sizes = array("q")
        self._surfaces: list[str] = []
        self._sources: list[str] = []
        self._mtimes: list[str | None] = []

    def append(self, path: str, sha256: str, size: int, surface: str, source: str, mtime: str | None) -> None:
        self._paths.append(path)
        self._digests += bytes.fromhex(sha256)
        self._sizes.append(size)
        self._surfaces.append(surface)
        self._sources.append(source)
        self._mtimes.append(mtime)

    def extend(
        self, paths: list[str], digests: bytes, sizes: list[int], surfaces: list[str], sources: list[str],
        mtimes: list[str | None],
    ) -> None:
        """`append` of each entry of a run, given as columns (`digests`: 32 raw bytes each)."""
        self._paths += paths
        self._digests += digests
        self._sizes.extend(sizes)
        self._surfaces += surfaces
        self._sources += sources
        self._mtimes += mtimes

    def __len__(self) -> int:
        return len(self._paths)

    def _at(self, i: int) -> Entry:
        return _entry(self._paths[i], self._digests[32 * i : 32 * i + 32].hex(), self._sizes[i], self._surfaces[i],
                      self._sources[i], self._mtimes[i])

    @overload
    def __getitem__(self, index: int) -> Entry: ...
    @overload
    def __getitem__(self, index: slice) -> list[Entry]: ...
    def __getitem__(self, index: int | slice) -> Entry | list[Entry]:
        if isinstance(index, slice):
            return [self._at(i) for i in range(*index.indices(len(self)))]
        n = len(self._paths)
        if not -n <= index < n:
            raise IndexError("manifest entry index out of range")
        return self._at(index % n)

    def __iter__(self) -> Iterator[Entry]:
        for i in range(len(self._paths)):
            yield self._at(i)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Entries):
            return (self._paths, self._digests, self._sizes, self._surfaces, self._sources, self._mtimes) == (
                other._paths, other._digests, other._sizes, other._surfaces, other._sources, other._mtimes)
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # like the list it stands for

    def __repr__(self) -> str:
        return repr(list(self))


class ManifestBuilder:
    """A manifest built one entry at a time as files are written, its bytes streamed to `sink`.

    Each entry is serialized once, for both the fingerprint and the file. The head of the file holds
    the fingerprint, which is known only after the last entry: it is streamed with a placeholder of
    the same length at byte `fingerprint_at`, which the caller overwrites with `Manifest.fingerprint`
    once `finish` returns (so no list of lines, nor the file's bytes, is ever held).
    """

    def __init__(
        self, inputs: Inputs, environment: Environment, tool_bundle_sha256: str, sink: Callable[[bytes], object]
    ) -> None:
        self._inputs, self._environment, self._bundle = inputs, environment, tool_bundle_sha256
        self._sink = sink
        self._digest = hashlib.sha256(b'{"files":[')
        self.entries = Entries()
        head = _head_text(inputs, environment, tool_bundle_sha256, _PLACEHOLDER)
        key = '\n  "fingerprint": "'  # a top-level key: a template named `fingerprint` sits deeper
        self.fingerprint_at = len(head[: head.index(key + _PLACEHOLDER) + len(key)].encode("utf-8"))
        self._head = head.encode("utf-8")
        self._pending: list[bytes] = [self._head]
        self._pending_size = 0

    def add(self, path: str, sha256: str, size: int, surface: str, source: str, mtime: str | None) -> None:
        """The next entry (entries come in path order)."""
        line = entry_line(path, sha256, size, surface, source, mtime).encode("utf-8")
        if self.entries:
            self._digest.update(b",")
            self._pending.append(_LINE_SEP)
        else:
            self._pending.append(b',\n  "files": [\n    ')
        self._digest.update(line)
        self._pending.append(line)
        self._pending_size += len(line)
        if self._pending_size > _FLUSH_BYTES:
            self._flush()
        self.entries.append(path, sha256, size, surface, source, mtime)

    def add_run(
        self, lines: bytes, paths: list[str], digests: bytes, sizes: list[int], surfaces: list[str],
        sources: list[str], mtimes: list[str | None],
    ) -> None:
        """The next entries at once, as `add` of each would: `lines` their `entry_line`s (UTF-8) joined
        as the file joins them (`run_lines`), the rest their fields as columns (`digests`: 32 raw bytes each)."""
        if not paths:
            return
        # An entry line holds no newline (JSON escapes it), the separator one: one line per entry.
        if not lines.count(b"\n") + 1 == len(paths) == len(sizes) == len(surfaces) == len(sources) == len(mtimes) == len(digests) // 32:
            raise ValueError("a run's entry lines and columns differ in length")
        if self.entries:
            self._digest.update(b",")
            self._pending.append(_LINE_SEP)
        else:
            self._pending.append(b',\n  "files": [\n    ')
        self._digest.update(lines.replace(_LINE_SEP, b","))  # the fingerprint joins entries with a bare comma
        self._pending.append(lines)
        self._pending_size += len(lines)
        if self._pending_size > _FLUSH_BYTES:
            self._flush()
        self.entries.extend(paths, digests, sizes, surfaces, sources, mtimes)

    def _flush(self) -> None:
        self._sink(b"".join(self._pending))
        self._pending.clear()
        self._pending_size = 0

    def finish(self) -> Manifest:
        """The manifest of the entries added (its bytes all sent to the sink, with the placeholder)."""
        self._digest.update(
            ('],"inputs":' + canonical_json(self._inputs.model_dump(mode="json")).rstrip("\n")
             + ',"tool_bundle_sha256":' + _STRING(self._bundle) + "}\n").encode("utf-8")
        )
        self._pending.append(b"\n  ]\n}\n" if self.entries else b',\n  "files": []\n}\n')
        self._flush()
        # Built from trusted parts (what materialize computed), the entries kept as `Entries`.
        return Manifest.model_construct(
            inputs=self._inputs, environment=self._environment, tool_bundle_sha256=self._bundle,
            files=self.entries, fingerprint=self._digest.hexdigest(),
        )


_FLUSH_BYTES = 1 << 20


def _head_text(inputs: Inputs, environment: Environment, tool_bundle_sha256: str, fingerprint: str) -> str:
    """`_head` of the manifest with these parts and no entries."""
    return pretty_json(
        {"schema_version": 1, "inputs": inputs.model_dump(mode="json"), "environment": environment.model_dump(mode="json"),
         "tool_bundle_sha256": tool_bundle_sha256, "fingerprint": fingerprint}
    ).rstrip().rstrip("}").rstrip()


def write_manifest(root: Path, manifest: Manifest) -> None:
    (root / MANIFEST_NAME).write_bytes(manifest_bytes(manifest))


class TreeDiff(Model):
    missing: list[str]
    """In the manifest, not on disk."""
    changed: list[tuple[str, str, str]]
    """(path, expected sha256, actual sha256)."""
    unexpected: list[str]
    """On disk, not in the manifest."""

    @property
    def clean(self) -> bool:
        return not (self.missing or self.changed or self.unexpected)


def scan_tree(root: Path, ignore: frozenset[str] = frozenset({MANIFEST_NAME})) -> dict[str, str]:
    """path → sha256 for every regular file under root; any other entry (a link to a file or a
    directory, a FIFO, a socket, a device) maps to its kind and is never followed or opened."""
    from worldkit.materialize.scan import scan

    found = scan(root, ignore)
    return dict(sorted({**found.files, **found.special}.items()))


def disk_stamps(root: Path, paths: list[str]) -> dict[str, str]:
    """path → the on-disk modification time of each regular file, as an `Entry.mtime` stamp."""
    import datetime as dt
    import os

    out: dict[str, str] = {}
    for rel in paths:
        seconds = os.lstat(os.path.join(root, rel)).st_mtime_ns // 1_000_000_000
        out[rel] = dt.datetime.fromtimestamp(seconds, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return out


def diff_tree(root: Path, entries: list[Entry], ignore: frozenset[str] = frozenset({MANIFEST_NAME})) -> TreeDiff:
    actual = scan_tree(root, ignore)
    expected = {e.path: e.sha256 for e in entries}
    return TreeDiff(
        missing=sorted(set(expected) - set(actual)),
        changed=sorted((p, expected[p], actual[p]) for p in set(expected) & set(actual) if expected[p] != actual[p]),
        unexpected=sorted(set(actual) - set(expected)),
    )
